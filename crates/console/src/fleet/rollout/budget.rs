//! What each wave tolerates: the success and error thresholds as whole numbers of devices, in
//! the comparisons the step ([`advance`](super::advance)) makes. Pure.

use serde::Serialize;

/// What one wave of a plan tolerates, by the rules of [`advance`](super::advance).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct WaveBudget {
    pub size: u32,
    /// Devices that must succeed before the next wave starts (the last: before it completes).
    pub needed: u32,
    /// Devices that may fail (or be cancelled or refused) and the wave still goes on:
    /// `size - needed`.
    pub tolerates: u32,
    /// Devices of the waves up to this one.
    pub started_devices: u32,
    /// Failures among those the error threshold allows before the rollout pauses.
    pub failures_before_pause: u32,
}

/// The smallest number of a wave's `size` devices that meets the success threshold (in the
/// comparison [`advance`](super::advance) makes).
pub fn needed(size: u32, success_threshold: f64) -> u32 {
    let meets = |k: u32| pct(k, size) >= success_threshold;
    let mut k = ((size as f64 * success_threshold / 100.0).ceil().max(0.0) as u32).min(size);
    while k > 0 && meets(k - 1) {
        k -= 1;
    }
    while k < size && !meets(k) {
        k += 1;
    }
    k
}

/// How many failures among `devices` the error threshold allows before the rollout pauses (in
/// the comparison [`advance`](super::advance) makes: it pauses when the failed share passes the threshold).
pub fn failures_before_pause(devices: u32, error_threshold: f64) -> u32 {
    let pauses = |k: u32| k > 0 && pct(k, devices) > error_threshold;
    let mut k = ((devices as f64 * error_threshold / 100.0).floor().max(0.0) as u32).min(devices);
    while pauses(k) {
        k -= 1;
    }
    while k < devices && !pauses(k + 1) {
        k += 1;
    }
    k
}

/// The budget of each wave of `sizes`.
pub fn wave_budgets(sizes: &[u32], success_threshold: f64, error_threshold: f64) -> Vec<WaveBudget> {
    let mut started = 0;
    sizes
        .iter()
        .map(|&size| {
            started += size;
            let needed = needed(size, success_threshold);
            WaveBudget {
                size,
                needed,
                tolerates: size - needed,
                started_devices: started,
                failures_before_pause: failures_before_pause(started, error_threshold),
            }
        })
        .collect()
}

pub(super) fn pct(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wave_needs_the_fewest_successes_that_meet_the_threshold() {
        // The example: 95% of 39 devices is 37.05, so 38 must succeed: 1 may fail.
        assert_eq!(needed(39, 95.0), 38);
        assert_eq!(wave_budgets(&[39], 95.0, 5.0)[0].tolerates, 1);
        assert_eq!(needed(20, 95.0), 19, "exactly 95% meets it");
        assert_eq!(needed(3, 95.0), 3);
        assert_eq!(needed(1, 0.5), 1);
        assert_eq!(needed(100, 100.0), 100);
        assert_eq!(needed(0, 95.0), 0);
        // The same comparison as advance: the found count meets it, one fewer does not.
        for size in 1..300u32 {
            for t in [0.5, 1.0, 33.3, 50.0, 66.7, 90.0, 95.0, 99.0, 99.9, 100.0] {
                let k = needed(size, t);
                assert!(pct(k, size) >= t, "{size} {t}");
                assert!(k == 0 || pct(k - 1, size) < t, "{size} {t}");
            }
        }
    }

    #[test]
    fn the_error_threshold_allows_the_most_failures_that_do_not_pass_it() {
        assert_eq!(failures_before_pause(3, 5.0), 0, "1 of 3 is 33%: the first failure pauses");
        assert_eq!(failures_before_pause(20, 5.0), 1, "1 of 20 is exactly 5%: not above");
        assert_eq!(failures_before_pause(42, 5.0), 2);
        assert_eq!(failures_before_pause(275, 0.0), 0);
        assert_eq!(failures_before_pause(10, 100.0), 10);
        assert_eq!(failures_before_pause(0, 5.0), 0);
        for devices in 1..300u32 {
            for e in [0.0, 1.0, 5.0, 12.5, 50.0, 99.0] {
                let k = failures_before_pause(devices, e);
                assert!(!(k > 0 && pct(k, devices) > e), "{devices} {e}");
                assert!(k == devices || pct(k + 1, devices) > e, "{devices} {e}");
            }
        }
    }

    #[test]
    fn budgets_follow_the_waves() {
        let b = wave_budgets(&[3, 24, 111, 137], 95.0, 5.0);
        assert_eq!(b.iter().map(|w| w.needed).collect::<Vec<_>>(), [3, 23, 106, 131]);
        assert_eq!(b.iter().map(|w| w.tolerates).collect::<Vec<_>>(), [0, 1, 5, 6]);
        assert_eq!(b.iter().map(|w| w.started_devices).collect::<Vec<_>>(), [3, 27, 138, 275]);
        assert_eq!(b.iter().map(|w| w.failures_before_pause).collect::<Vec<_>>(), [0, 1, 6, 13]);
    }
}
