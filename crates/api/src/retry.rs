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

/// Reads `Retry-After`: seconds, or an HTTP date (then the time until it, none if past).
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    parse_retry_after(headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?)
}

/// A `Retry-After` value as RFC 9110 says it: `delay-seconds` (digits only) or an HTTP date,
/// the time from now until it (nothing to wait for a date past); `None` for anything else. The
/// wait is then bounded by [`RetryPolicy::max_retry_after`].
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    parse_retry_after_at(value, std::time::SystemTime::now())
}

/// [`parse_retry_after`] as at `now`: a date's wait in whole seconds, rounded up.
pub fn parse_retry_after_at(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let v = value.trim();
    // Not `parse` alone: it also takes a leading `+`.
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return v.parse::<u64>().ok().map(Duration::from_secs);
    }
    let at = httpdate::parse_http_date(v).ok()?;
    let wait = at.duration_since(now).unwrap_or(Duration::ZERO);
    Some(Duration::from_secs(wait.as_secs() + u64::from(wait.subsec_nanos() > 0)))
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
        // A date past: nothing to wait for.
        h.insert(reqwest::header::RETRY_AFTER, "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
    }

    #[test]
    fn retry_after_as_an_http_date_is_the_time_until_it() {
        use std::time::{SystemTime, UNIX_EPOCH};
        // 2015-10-21T07:28:00Z, in the three forms RFC 9110 takes.
        let date = UNIX_EPOCH + Duration::from_secs(1_445_412_480);
        let now = date - Duration::from_millis(90_500);
        for v in ["Wed, 21 Oct 2015 07:28:00 GMT", "Wednesday, 21-Oct-15 07:28:00 GMT", "Wed Oct 21 07:28:00 2015"] {
            assert_eq!(parse_retry_after_at(v, now), Some(Duration::from_secs(91)), "{v}");
        }
        assert_eq!(
            parse_retry_after_at("Wed, 21 Oct 2015 07:28:00 GMT", date + Duration::from_secs(5)),
            Some(Duration::ZERO)
        );
        for v in ["Wed, 32 Oct 2015 07:28:00 GMT", "tomorrow", "2015-10-21T07:28:00Z"] {
            assert_eq!(parse_retry_after_at(v, SystemTime::now()), None, "{v}");
        }
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
