//! List filters as the user types them, shared by the downlink and binding screens: the four
//! time filters of every list (reference section 1, shared query conventions).

use dcs_api::model::Timestamp;
use dcs_api::TimeFilter;

use crate::FieldError;

/// A time typed in a filter: RFC 3339, or `YYYY-MM-DD[ HH:MM[:SS]]` (`T` or a space between;
/// what a date-time input gives) taken as UTC, as the lists show times. Empty is none. The year
/// has four digits (RFC 3339's, in which the time is sent).
pub fn parse_time(field: &str, text: Option<&str>) -> Result<Option<Timestamp>, FieldError> {
    use time::format_description::well_known::Rfc3339;
    use time::macros::format_description;
    let Some(s) = text.map(str::trim).filter(|s| !s.is_empty()) else { return Ok(None) };
    let plain = |s: &str| {
        let s2 = s.replacen(' ', "T", 1);
        let forms = [
            format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]"),
            format_description!("[year]-[month]-[day]T[hour]:[minute]"),
        ];
        forms.into_iter().find_map(|f| time::PrimitiveDateTime::parse(&s2, f).ok()).map(|t| t.assume_utc())
    };
    let read = Timestamp::parse(s, &Rfc3339).ok().or_else(|| plain(s)).or_else(|| {
        time::Date::parse(s, format_description!("[year]-[month]-[day]")).ok().map(|d| d.midnight().assume_utc())
    });
    // `[year]` also reads a sign (`-2026-01-05`, a time RFC 3339 cannot write, which was
    // refused only when the request was built): the text starts with the year's digits.
    if let Some(t) = read.filter(|_| s.starts_with(|c: char| c.is_ascii_digit())) {
        return Ok(Some(t));
    }
    Err(FieldError {
        field: field.to_owned(),
        rule: "must be a time such as 2026-01-05T08:00:00Z or 2026-01-05 08:00 (UTC)".into(),
    })
}

/// The four time filters as typed (`createdBefore`, `createdSince`, `modifiedBefore`,
/// `modifiedSince`); the first one that does not parse is named.
pub fn time_filter(
    created_before: Option<&str>,
    created_since: Option<&str>,
    modified_before: Option<&str>,
    modified_since: Option<&str>,
) -> Result<TimeFilter, FieldError> {
    Ok(TimeFilter {
        created_before: parse_time("createdBefore", created_before)?,
        created_since: parse_time("createdSince", created_since)?,
        modified_before: parse_time("modifiedBefore", modified_before)?,
        modified_since: parse_time("modifiedSince", modified_since)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn times_read_rfc3339_and_plain_utc() {
        let p = |s| parse_time("createdSince", Some(s));
        assert_eq!(p("2026-01-05T08:00:00+02:00").unwrap(), Some(datetime!(2026-01-05 06:00 UTC)));
        assert_eq!(p("2026-01-05 08:00").unwrap(), Some(datetime!(2026-01-05 08:00 UTC)));
        assert_eq!(p("2026-01-05T08:30").unwrap(), Some(datetime!(2026-01-05 08:30 UTC)), "a date-time input's value");
        assert_eq!(p("2026-01-05T08:00:30").unwrap(), Some(datetime!(2026-01-05 08:00:30 UTC)));
        assert_eq!(p("2026-01-05").unwrap(), Some(datetime!(2026-01-05 00:00 UTC)));
        assert_eq!(p("  ").unwrap(), None);
        assert_eq!(parse_time("x", None).unwrap(), None);
        assert_eq!(parse_time("modifiedBefore", Some("yesterday")).unwrap_err().field, "modifiedBefore");
    }

    #[test]
    fn only_times_the_client_can_send_are_read() {
        // RFC 3339 has four-digit years: `-2026-01-05` read as the year -2026 was refused only
        // when the request was built (found by fuzz/text_parsers).
        let p = |s| parse_time("createdSince", Some(s));
        for s in ["-2026-01-05", "-0001-12-31 23:00", "+2026-01-05T08:00:00", "-2026-01-05T08:00"] {
            assert_eq!(p(s).unwrap_err().field, "createdSince", "{s}");
        }
        assert_eq!(p("0000-01-01").unwrap(), Some(datetime!(0000-01-01 00:00 UTC)));
        assert_eq!(p("9999-12-31T23:59:59").unwrap(), Some(datetime!(9999-12-31 23:59:59 UTC)));
    }

    #[test]
    fn the_broken_time_filter_is_named() {
        let t = time_filter(None, Some("2026-01-05"), None, None).unwrap();
        assert_eq!(t.created_since, Some(datetime!(2026-01-05 00:00 UTC)));
        assert!(t.created_before.is_none() && t.modified_before.is_none() && t.modified_since.is_none());
        assert_eq!(time_filter(None, None, Some("soon"), None).unwrap_err().field, "modifiedBefore");
        assert_eq!(time_filter(None, None, None, Some("13/01/2026")).unwrap_err().field, "modifiedSince");
    }
}
