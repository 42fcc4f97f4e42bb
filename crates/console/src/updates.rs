//! Updates of the app itself: where it looks for them, what an offer shows, and the bounds a
//! download is held to. The app checks with Tauri's updater (a manifest naming the newest
//! version, its release notes and a package per platform, each package signed with the
//! project's key); this module is what does not depend on the app shell:
//!
//! - [`UpdateSettings`]: the address of the manifest (empty: the one the build was made with,
//!   if any) and whether the app checks when it starts. Kept in the fleet database's settings,
//!   like the notification choices. Builds made without an address check nothing until the
//!   operator gives one.
//! - [`manifest_url`]: the address with Tauri's variables (`{{current_version}}`, `{{target}}`,
//!   `{{arch}}`, `{{bundle_type}}`) filled in.
//! - [`fetch_manifest`]: the manifest read within the client's bounds
//!   ([`dcs_api::answer::get_document`]): a server that sends without end, stalls or redirects
//!   in circles is an error, never memory or a hang.
//! - [`clean_notes`]: the release notes as shown (bounded, no control characters).
//! - [`DownloadBounds`]: a package larger than [`MAX_PACKAGE`] is refused, whether announced or
//!   read; a download with no byte for [`STALL`] stops.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use url::Url;

use crate::error::{Error, Result};
use crate::fleet::FleetDb;

/// Longest address of a manifest (characters).
pub const MAX_ENDPOINT: usize = 2_000;
/// Longest release notes shown (characters): the rest is cut, and said to be.
pub const MAX_NOTES: usize = 20_000;
/// Largest package downloaded (bytes): an installer of the app is about 15 MiB.
pub const MAX_PACKAGE: u64 = 512 * 1024 * 1024;
/// Longest a download may go without a byte.
pub const STALL: Duration = Duration::from_secs(30);

/// Where the app looks for updates, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct UpdateSettings {
    /// The manifest's address; `None` (or empty): the build's own, if it has one.
    pub endpoint: Option<String>,
    /// Check once when the app starts (when there is an address).
    pub check_at_start: bool,
}

impl Default for UpdateSettings {
    fn default() -> UpdateSettings {
        UpdateSettings { endpoint: None, check_at_start: true }
    }
}

const SETTING: &str = "updates";

impl UpdateSettings {
    /// As kept in `db`; the defaults when none is kept or it cannot be read (or no longer
    /// passes [`UpdateSettings::checked`]: a kept address is never trusted unchecked).
    pub fn load(db: &FleetDb, allow_local_http: bool) -> UpdateSettings {
        db.setting(SETTING)
            .ok()
            .flatten()
            .and_then(|v| serde_json::from_str::<UpdateSettings>(&v).ok())
            .and_then(|s| s.checked(allow_local_http).ok())
            .unwrap_or_default()
    }

    pub fn save(&self, db: &FleetDb) -> crate::fleet::Result<()> {
        db.set_setting(SETTING, &serde_json::to_string(self).expect("settings serialise"))
    }

    /// The settings with the address trimmed (empty: none), or the rule it breaks, named
    /// `endpoint`: an absolute `https` address of at most [`MAX_ENDPOINT`] characters, without a
    /// user name or password (they would be kept in plain text). `allow_local_http` (debug
    /// builds, for tests) lets `http` to this machine through too; release builds of the
    /// updater refuse plain `http` anywhere.
    pub fn checked(self, allow_local_http: bool) -> Result<UpdateSettings> {
        let endpoint = self.endpoint.as_deref().map(str::trim).filter(|e| !e.is_empty()).map(str::to_owned);
        if let Some(e) = &endpoint {
            check_endpoint(e, allow_local_http)?;
        }
        Ok(UpdateSettings { endpoint, ..self })
    }

    /// The address checked: the operator's, else the build's first; `None`: updates are off.
    pub fn effective(&self, built_in: Option<&str>) -> Option<String> {
        self.endpoint.clone().or_else(|| built_in.map(str::to_owned))
    }
}

fn check_endpoint(e: &str, allow_local_http: bool) -> Result<()> {
    let rule = |r: &str| Err(Error::invalid("endpoint", r));
    if e.chars().count() > MAX_ENDPOINT {
        return rule(&format!("must be at most {MAX_ENDPOINT} characters"));
    }
    // The variables are not URL syntax; they are checked as a value would be.
    let Ok(url) = Url::parse(&fill(e, "1.0.0", "linux", "x86_64", "deb")) else {
        return rule("must be an absolute address, such as https://updates.example.com/dcs-console/latest.json");
    };
    let local = matches!(url.host(), Some(url::Host::Ipv4(ip)) if ip.is_loopback())
        || matches!(url.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback())
        || url.host_str() == Some("localhost");
    match url.scheme() {
        "https" => {}
        "http" if allow_local_http && local => {}
        _ => return rule("must start with https:// (the manifest says which package to install)"),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return rule("must name a server");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return rule("must not hold a user name or password (they would be kept in the settings in plain text)");
    }
    Ok(())
}

/// `endpoint` with Tauri's variables filled in.
fn fill(endpoint: &str, version: &str, target: &str, arch: &str, bundle: &str) -> String {
    endpoint
        .replace("{{current_version}}", version)
        .replace("{{target}}", target)
        .replace("{{arch}}", arch)
        .replace("{{bundle_type}}", bundle)
}

/// The manifest's address for this app: `endpoint` (already [`UpdateSettings::checked`] or the
/// build's) with its variables filled in (`bundle` is `unknown` when the app was not installed
/// from a package, as Tauri's updater names it).
pub fn manifest_url(endpoint: &str, version: &str, target: &str, arch: &str, bundle: &str) -> Result<Url> {
    let version: String = url::form_urlencoded::byte_serialize(version.as_bytes()).collect();
    Url::parse(&fill(endpoint, &version, target, arch, bundle))
        .map_err(|e| Error::invalid("endpoint", format!("is not an address once filled in: {e}")))
}

/// The manifest at `url`, or `None` when the server says there is nothing newer (204).
pub async fn fetch_manifest(url: &Url) -> Result<Option<serde_json::Value>> {
    let limits = dcs_api::Limits { max_answer: 1024 * 1024, ..dcs_api::Limits::default() };
    Ok(dcs_api::answer::get_document(url, &limits).await?)
}

/// Release notes as shown: at most [`MAX_NOTES`] characters, without control characters other
/// than line breaks and tabs; whether they were cut.
pub fn clean_notes(notes: &str) -> (String, bool) {
    let mut out = String::with_capacity(notes.len().min(MAX_NOTES * 4));
    let mut cut = false;
    for (n, c) in notes.chars().filter(|c| !c.is_control() || matches!(c, '\n' | '\t')).enumerate() {
        if n == MAX_NOTES {
            cut = true;
            break;
        }
        out.push(c);
    }
    (out, cut)
}

/// What a download has received, held to [`MAX_PACKAGE`].
#[derive(Debug, Default)]
pub struct DownloadBounds {
    pub received: u64,
    pub announced: Option<u64>,
}

impl DownloadBounds {
    /// A chunk of `len` bytes arrived, the whole announced as `announced`: an error when the
    /// package is, or is announced as, larger than [`MAX_PACKAGE`].
    pub fn chunk(&mut self, len: usize, announced: Option<u64>) -> Result<()> {
        self.received += len as u64;
        self.announced = announced;
        let too_large = |size: String| {
            Err(Error::invalid(
                "package",
                format!("is too large: {size}, over the {} MiB an update of the app may be", MAX_PACKAGE >> 20),
            ))
        };
        if let Some(n) = announced.filter(|n| *n > MAX_PACKAGE) {
            return too_large(format!("{n} bytes announced"));
        }
        if self.received > MAX_PACKAGE {
            return too_large(format!("more than {} bytes received", self.received));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule_of(endpoint: &str, allow_local_http: bool) -> String {
        let s = UpdateSettings { endpoint: Some(endpoint.into()), check_at_start: true };
        match s.checked(allow_local_http) {
            Ok(_) => "ok".into(),
            Err(Error::Invalid(f)) => {
                assert_eq!(f[0].field, "endpoint");
                f[0].rule.clone()
            }
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn an_endpoint_must_be_https_without_credentials() {
        assert_eq!(rule_of("https://updates.example.com/dcs/latest.json", false), "ok");
        assert_eq!(rule_of(" https://u.example.com/{{target}}/{{arch}}/{{current_version}} ", false), "ok");
        assert!(rule_of("http://updates.example.com/latest.json", true).contains("https://"));
        assert!(rule_of("http://127.0.0.1:9/latest.json", false).contains("https://"), "http only in debug builds");
        assert_eq!(rule_of("http://127.0.0.1:9/latest.json", true), "ok");
        assert_eq!(rule_of("http://[::1]:9/latest.json", true), "ok");
        assert!(rule_of("ftp://updates.example.com/x", false).contains("https://"));
        assert!(rule_of("file:///etc/passwd", true).contains("https://"));
        assert!(rule_of("updates.example.com/latest.json", false).contains("absolute address"));
        assert!(rule_of("https://user:pw@updates.example.com/x", false).contains("user name or password"));
        assert!(rule_of(&format!("https://e.com/{}", "a".repeat(MAX_ENDPOINT)), false).contains("at most 2000"));
    }

    #[test]
    fn an_empty_endpoint_is_the_builds_own_and_none_is_off() {
        let s = UpdateSettings { endpoint: Some("  ".into()), check_at_start: false }.checked(false).unwrap();
        assert_eq!(s.endpoint, None);
        assert_eq!(s.effective(Some("https://b.example.com/l.json")).as_deref(), Some("https://b.example.com/l.json"));
        assert_eq!(s.effective(None), None, "a build without an address checks nothing");
        let own = UpdateSettings { endpoint: Some("https://mine.example.com/l.json".into()), check_at_start: true };
        assert_eq!(
            own.effective(Some("https://b.example.com/l.json")).as_deref(),
            Some("https://mine.example.com/l.json")
        );
    }

    #[test]
    fn the_manifest_url_has_its_variables_filled_in() {
        let u = manifest_url(
            "https://u.example.com/{{target}}-{{arch}}/{{bundle_type}}?v={{current_version}}",
            "1.2.0+b",
            "linux",
            "x86_64",
            "deb",
        )
        .unwrap();
        assert_eq!(u.as_str(), "https://u.example.com/linux-x86_64/deb?v=1.2.0%2Bb");
    }

    #[test]
    fn notes_are_bounded_and_without_control_characters() {
        let (n, cut) = clean_notes("Fixes\n\t- a \u{1b}[31mred\u{7} bug\r\n");
        assert_eq!((n.as_str(), cut), ("Fixes\n\t- a [31mred bug\n", false));
        let (n, cut) = clean_notes(&"é".repeat(MAX_NOTES + 5));
        assert_eq!((n.chars().count(), cut), (MAX_NOTES, true));
    }

    #[test]
    fn a_package_over_the_cap_is_refused_announced_or_read() {
        let mut b = DownloadBounds::default();
        assert!(b.chunk(1024, Some(4096)).is_ok());
        let e = b.chunk(10, Some(MAX_PACKAGE + 1)).unwrap_err().to_string();
        assert!(e.contains("announced") && e.contains("512 MiB"), "{e}");
        let mut b = DownloadBounds::default();
        for _ in 0..512 {
            b.chunk(1 << 20, None).unwrap();
        }
        assert!(b.chunk(1, None).unwrap_err().to_string().contains("received"));
    }

    #[test]
    fn kept_settings_that_no_longer_pass_are_not_trusted() {
        let db = FleetDb::in_memory().unwrap();
        assert_eq!(UpdateSettings::load(&db, false), UpdateSettings::default());
        let s = UpdateSettings { endpoint: Some("http://127.0.0.1:9/l.json".into()), check_at_start: false };
        s.save(&db).unwrap();
        assert_eq!(UpdateSettings::load(&db, true), s);
        assert_eq!(UpdateSettings::load(&db, false), UpdateSettings::default(), "a release build does not use it");
    }
}
