//! The order of firmware versions and what counts as a downgrade. Pure.

use std::collections::HashMap;

use serde::Serialize;

use uuid::Uuid;

/// The devices a choice names that have a state of the module: (device, current, target, status).
pub(super) type Candidate = (Uuid, Option<String>, Option<String>, Option<String>);

/// A current version and how many of the chosen devices run it.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RunningVersion {
    pub version: String,
    pub devices: u32,
}

/// A target older than what some devices run: the newest version they run, how many run it,
/// and how many run any version newer than the target.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Downgrade {
    pub newest: String,
    pub newest_devices: u32,
    pub devices: u32,
}

impl Downgrade {
    /// The downgrade in words, for rolling out `version`.
    pub fn text(&self, version: &str) -> String {
        let rest = if self.devices > self.newest_devices {
            format!(" ({} in all run a version newer than {version})", crate::fleet::thousands(self.devices))
        } else {
            String::new()
        };
        format!(
            "{version} is a DOWNGRADE: {} of the chosen devices would go back from {} to {version}{rest}",
            crate::fleet::thousands(self.newest_devices),
            self.newest
        )
    }
}

/// The order of firmware versions (the service states none), the same as the app's
/// `ui/src/lib/version.ts` (both are checked against `version_order.json`): parts split at `.`
/// and `-`; two numeric parts compare as numbers, others as text; a version that is another
/// plus more parts is newer, unless the next part starts a pre-release (`1.2.0-rc1 < 1.2.0`).
pub fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    fn parts(v: &str) -> Vec<(&str, bool)> {
        let mut out = Vec::new();
        let mut pre = false;
        let mut start = 0;
        let v = v.trim();
        for (i, c) in v.char_indices() {
            if c == '.' || c == '-' {
                out.push((&v[start..i], pre));
                pre = c == '-';
                start = i + 1;
            }
        }
        out.push((&v[start..], pre));
        out
    }
    fn digits(a: &str, b: &str) -> std::cmp::Ordering {
        let (x, y) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
        x.len().cmp(&y.len()).then_with(|| x.cmp(y))
    }
    let is_num = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    let (pa, pb) = (parts(a), parts(b));
    for i in 0..pa.len().max(pb.len()) {
        match (pa.get(i), pb.get(i)) {
            (None, Some(y)) => return if y.1 { Greater } else { Less },
            (Some(x), None) => return if x.1 { Less } else { Greater },
            (Some(x), Some(y)) => {
                if x.1 != y.1 {
                    return if x.1 { Less } else { Greater };
                }
                let c = if is_num(x.0) && is_num(y.0) { digits(x.0, y.0) } else { x.0.cmp(y.0) };
                if c != Equal {
                    return c;
                }
            }
            (None, None) => break,
        }
    }
    Equal
}

/// Whether `target` is older than what some of `running` run.
pub fn downgrade_of(target: &str, running: &[RunningVersion]) -> Option<Downgrade> {
    let mut out: Option<Downgrade> = None;
    for r in running.iter().filter(|r| r.devices > 0 && compare_versions(&r.version, target).is_gt()) {
        match &mut out {
            None => out = Some(Downgrade { newest: r.version.clone(), newest_devices: r.devices, devices: r.devices }),
            Some(d) => {
                d.devices += r.devices;
                match compare_versions(&r.version, &d.newest) {
                    std::cmp::Ordering::Greater => {
                        d.newest = r.version.clone();
                        d.newest_devices = r.devices;
                    }
                    std::cmp::Ordering::Equal => d.newest_devices += r.devices,
                    std::cmp::Ordering::Less => {}
                }
            }
        }
    }
    out
}

/// The current versions of `candidates`, most devices first (ties by version text).
pub(super) fn running_versions(candidates: &[Candidate]) -> Vec<RunningVersion> {
    let mut counts: HashMap<&str, u32> = HashMap::new();
    for (_, current, _, _) in candidates {
        if let Some(v) = current.as_deref() {
            *counts.entry(v).or_default() += 1;
        }
    }
    let mut out: Vec<RunningVersion> =
        counts.into_iter().map(|(version, devices)| RunningVersion { version: version.to_owned(), devices }).collect();
    out.sort_by(|a, b| b.devices.cmp(&a.devices).then_with(|| a.version.cmp(&b.version)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_ordered_as_the_app_orders_them() {
        let fixture: serde_json::Value = serde_json::from_str(include_str!("../version_order.json")).unwrap();
        let cases = fixture["cases"].as_array().unwrap();
        assert!(cases.len() > 10);
        for c in cases {
            let (a, b, want) = (c[0].as_str().unwrap(), c[1].as_str().unwrap(), c[2].as_i64().unwrap());
            assert_eq!(compare_versions(a, b) as i64, want, "{a} vs {b}");
            assert_eq!(compare_versions(b, a) as i64, -want, "{b} vs {a}");
        }
    }

    #[test]
    fn a_target_older_than_what_devices_run_is_a_downgrade() {
        let running = |v: &[(&str, u32)]| {
            v.iter().map(|(v, n)| RunningVersion { version: (*v).into(), devices: *n }).collect::<Vec<_>>()
        };
        let fleet = running(&[("1.2.1", 240), ("1.2.0", 30), ("1.1.0", 5)]);
        assert_eq!(
            downgrade_of("1.2.0", &fleet),
            Some(Downgrade { newest: "1.2.1".into(), newest_devices: 240, devices: 240 })
        );
        assert_eq!(
            downgrade_of("1.1.0", &fleet),
            Some(Downgrade { newest: "1.2.1".into(), newest_devices: 240, devices: 270 })
        );
        assert_eq!(downgrade_of("1.2.1", &fleet), None);
        assert_eq!(downgrade_of("1.3.0", &fleet), None);
        assert_eq!(downgrade_of("1.0.0", &running(&[("1.10.0", 1)])).map(|d| d.devices), Some(1));
    }
}
