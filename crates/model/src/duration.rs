//! The duration subset of section 1: `P<n>D` then `T<n>H<n>M<n>S`, every part optional but one
//! present, seconds with up to 9 fractional digits, a day exactly 24 hours.

use std::time::Duration;

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DurationError {
    #[error("must be an ISO 8601 duration of days, hours, minutes and seconds, e.g. PT10M or P1DT2H (got `{0}`)")]
    Syntax(String),
    #[error("must be at least {min} (got `{value}`)")]
    TooShort { value: String, min: String },
}

/// Parses the subset. Amounts are whole numbers except seconds.
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let err = || DurationError::Syntax(s.to_owned());
    let rest = s.strip_prefix('P').ok_or_else(err)?;
    let (date, time) = match rest.split_once('T') {
        Some((d, t)) => {
            if t.is_empty() {
                return Err(err());
            }
            (d, Some(t))
        }
        None => (rest, None),
    };
    let mut total_nanos: u128 = 0;
    let mut any = false;
    if !date.is_empty() {
        let days = date.strip_suffix('D').ok_or_else(err)?;
        total_nanos += whole(days).ok_or_else(err)? * 86_400 * 1_000_000_000;
        any = true;
    }
    if let Some(mut t) = time {
        for (unit, secs) in [('H', 3600u128), ('M', 60)] {
            if let Some(i) = t.find(unit) {
                total_nanos += whole(&t[..i]).ok_or_else(err)? * secs * 1_000_000_000;
                t = &t[i + 1..];
                any = true;
            }
        }
        if !t.is_empty() {
            let secs = t.strip_suffix('S').ok_or_else(err)?;
            let (int, frac) = secs.split_once('.').unwrap_or((secs, ""));
            if secs.contains('.') && (frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit())) {
                return Err(err());
            }
            total_nanos += whole(int).ok_or_else(err)? * 1_000_000_000;
            if !frac.is_empty() {
                total_nanos += format!("{frac:0<9}").parse::<u128>().map_err(|_| err())?;
            }
            any = true;
        }
    }
    if !any {
        return Err(err());
    }
    let secs = u64::try_from(total_nanos / 1_000_000_000).map_err(|_| err())?;
    Ok(Duration::new(secs, (total_nanos % 1_000_000_000) as u32))
}

fn whole(s: &str) -> Option<u128> {
    (!s.is_empty() && s.len() <= 12 && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

/// The shortest canonical form: `PT10M`, `P1DT2H`, `PT0.5S`.
pub fn format_duration(d: Duration) -> String {
    let mut secs = d.as_secs();
    let nanos = d.subsec_nanos();
    let days = secs / 86_400;
    secs %= 86_400;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = String::from("P");
    if days > 0 {
        out.push_str(&format!("{days}D"));
    }
    if h > 0 || m > 0 || s > 0 || nanos > 0 || days == 0 {
        out.push('T');
        if h > 0 {
            out.push_str(&format!("{h}H"));
        }
        if m > 0 {
            out.push_str(&format!("{m}M"));
        }
        if s > 0 || nanos > 0 || (h == 0 && m == 0) {
            if nanos > 0 {
                let frac = format!("{nanos:09}");
                out.push_str(&format!("{s}.{}S", frac.trim_end_matches('0')));
            } else {
                out.push_str(&format!("{s}S"));
            }
        }
    }
    out
}

/// Minimum of every `feedbackTimeout` (section 8).
pub const MIN_FEEDBACK_TIMEOUT: Duration = Duration::from_secs(600);

/// Parses a `feedbackTimeout`: the subset, and at least 10 minutes.
pub fn parse_feedback_timeout(s: &str) -> Result<Duration, DurationError> {
    let d = parse_duration(s)?;
    if d < MIN_FEEDBACK_TIMEOUT {
        return Err(DurationError::TooShort { value: s.to_owned(), min: "10 minutes (PT10M)".into() });
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_subset() {
        assert_eq!(parse_duration("PT10M").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("P1D").unwrap(), Duration::from_secs(86_400));
        assert_eq!(parse_duration("P1DT2H3M4S").unwrap(), Duration::from_secs(86_400 + 7200 + 184));
        assert_eq!(parse_duration("PT0.000000001S").unwrap(), Duration::new(0, 1));
        assert_eq!(parse_duration("PT1.5S").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("PT2H").unwrap(), Duration::from_secs(7200));
    }

    #[test]
    fn refuses_what_is_not_in_the_subset() {
        for bad in [
            "",
            "P",
            "PT",
            "10M",
            "P1Y",
            "P1M",
            "P1W",
            "PT1.S",
            "PT1.0000000001S",
            "PT-1M",
            "P1DT",
            "PT1M1H",
            "pt10m",
            "PT10 M",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn feedback_timeouts_are_at_least_ten_minutes() {
        assert!(parse_feedback_timeout("PT10M").is_ok());
        assert!(matches!(parse_feedback_timeout("PT9M59S"), Err(DurationError::TooShort { .. })));
        assert!(matches!(parse_feedback_timeout("PT599.999999999S"), Err(DurationError::TooShort { .. })));
    }

    #[test]
    fn formats_round_trip() {
        for d in [Duration::from_secs(600), Duration::from_secs(93_784), Duration::from_millis(1500), Duration::ZERO] {
            assert_eq!(parse_duration(&format_duration(d)).unwrap(), d);
        }
        assert_eq!(format_duration(Duration::from_secs(600)), "PT10M");
        assert_eq!(format_duration(Duration::from_secs(86_400)), "P1D");
    }
}
