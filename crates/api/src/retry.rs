//! The retry policy of the request loop ([`crate::client`]): which failures are retried, and
//! how long to wait before the next attempt.
//!
//! - GET, PUT and DELETE are retried on connection errors and on 502, 503 and 504, with jittered
//!   exponential backoff, a few attempts, within a bounded total time.
//! - A 429 waits for `Retry-After` (seconds) and is retried for every method: the service did
//!   not process the request. The number of such waits and the longest wait are bounded.
//! - A POST is never repeated after a connection error or a 5xx: it may have been processed
//!   (a downlink must never be sent twice). After a 429 it is (not processed), at most
//!   `max_rate_limit_waits` times.
//! - No other 4xx is sent again (a 401 renews the token once): it is the service's refusal.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use reqwest::Method;

/// How the client retries. `RetryPolicy::default()` suits interactive use; `RetryPolicy::none()`
/// turns retries off (a 401 still renews the token once).
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all (the first included) for a retryable failure of an idempotent request.
    pub max_attempts: u32,
    /// Wait before the first retry; doubled for each further one, then jittered.
    pub base_delay: Duration,
    /// Longest wait between two attempts (before jitter).
    pub max_delay: Duration,
    /// No retry starts once this much time has passed since the first attempt.
    pub max_total: Duration,
    /// Statuses retried for idempotent methods.
    pub retry_statuses: Vec<u16>,
    /// How many 429 answers are waited out for one call.
    pub max_rate_limit_waits: u32,
    /// The longest `Retry-After` honoured; a longer one ends the call with the 429.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(5),
            max_total: Duration::from_secs(30),
            retry_statuses: vec![502, 503, 504],
            max_rate_limit_waits: 8,
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries at all (429s end the call too).
    pub fn none() -> RetryPolicy {
        RetryPolicy { max_attempts: 1, max_rate_limit_waits: 0, ..RetryPolicy::default() }
    }

    /// Whether a request of this method may be sent again after a connection error or a 5xx.
    pub fn is_idempotent(method: &Method) -> bool {
        matches!(*method, Method::GET | Method::PUT | Method::DELETE)
    }

    /// Whether this status is retried (for an idempotent method).
    pub fn retries_status(&self, status: u16) -> bool {
        self.retry_statuses.contains(&status)
    }

    /// The wait before retry number `retry` (1 for the first retry): exponential, capped, with
    /// "equal jitter" (between half and all of the step).
    pub fn backoff(&self, retry: u32) -> Duration {
        let step = self.base_delay.saturating_mul(1u32 << retry.saturating_sub(1).min(16)).min(self.max_delay);
        let half = step / 2;
        let jitter_nanos = if half.is_zero() { 0 } else { random_u64() % (half.as_nanos() as u64 + 1) };
        half + Duration::from_nanos(jitter_nanos)
    }
}

/// A random number without a random-number dependency: the standard hasher's random keys.
fn random_u64() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0),
    );
    h.finish()
}

/// Reads `Retry-After` in seconds (the service's and the simulator's form). An HTTP date or
/// anything else gives `None`.
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    parse_retry_after(headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?)
}

/// A `Retry-After` value in seconds (RFC 9110 `delay-seconds`: digits only); `None` for an
/// HTTP date or anything else. The wait is then bounded by [`RetryPolicy::max_retry_after`].
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let v = value.trim();
    // Not `parse` alone: it also takes a leading `+`.
    v.bytes().all(|b| b.is_ascii_digit()).then(|| v.parse::<u64>().ok()).flatten().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_get_put_delete_are_idempotent() {
        assert!(RetryPolicy::is_idempotent(&Method::GET));
        assert!(RetryPolicy::is_idempotent(&Method::PUT));
        assert!(RetryPolicy::is_idempotent(&Method::DELETE));
        assert!(!RetryPolicy::is_idempotent(&Method::POST));
        assert!(!RetryPolicy::is_idempotent(&Method::PATCH));
    }

    #[test]
    fn backoff_grows_is_capped_and_jittered_within_bounds() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
            ..Default::default()
        };
        for _ in 0..50 {
            let d1 = p.backoff(1);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100), "{d1:?}");
            let d3 = p.backoff(3);
            assert!(d3 >= Duration::from_millis(200) && d3 <= Duration::from_millis(400), "{d3:?}");
            let d10 = p.backoff(10);
            assert!(d10 >= Duration::from_millis(250) && d10 <= Duration::from_millis(500), "{d10:?}");
        }
        assert!(p.retries_status(503) && p.retries_status(502) && p.retries_status(504));
        assert!(!p.retries_status(500) && !p.retries_status(429));
    }

    #[test]
    fn retry_after_is_read_in_seconds() {
        let mut h = reqwest::header::HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(reqwest::header::RETRY_AFTER, "3".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert(reqwest::header::RETRY_AFTER, "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn retry_after_is_digits_only() {
        // u64's parse also takes a `+` (found by fuzz/service_headers' seed corpus).
        for v in ["+5", "-1", "5s", "1.5", "", "18446744073709551616"] {
            assert_eq!(parse_retry_after(v), None, "{v:?}");
        }
        assert_eq!(parse_retry_after(" 120 "), Some(Duration::from_secs(120)));
    }
}
