//! List filters as the user types them, shared by the downlink and binding screens: the four
//! time filters of every list (reference section 1, shared query conventions).

use dcs_api::model::Timestamp;
use dcs_api::TimeFilter;

use crate::FieldError;

/// A time typed in a filter: RFC 3339, or `YYYY-MM-DD[ HH:MM[:SS]]` (`T` or a space between;
/// what a date-time input gives) taken as UTC, as the lists show times. Empty is none.
pub fn parse_time(field: &str, text: Option<&str>) -> Result<Option<Timestamp>, FieldError> {
    use time::format_description::well_known::Rfc3339;
    use time::macros::format_description;
    let Some(s) = text.map(str::trim).filter(|s| !s.is_empty()) else { return Ok(None) };
    if let Ok(t) = Timestamp::parse(s, &Rfc3339) {
        return Ok(Some(t));
    }
    let s2 = s.replacen(' ', "T", 1);
    let forms = [
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]"),
        format_description!("[year]-[month]-[day]T[hour]:[minute]"),
    ];
    for f in forms {
        if let Ok(t) = time::PrimitiveDateTime::parse(&s2, f) {
            return Ok(Some(t.assume_utc()));
        }
    }
    if let Ok(d) = time::Date::parse(s, format_description!("[year]-[month]-[day]")) {
        return Ok(Some(d.midnight().assume_utc()));
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
    fn the_broken_time_filter_is_named() {
        let t = time_filter(None, Some("2026-01-05"), None, None).unwrap();
        assert_eq!(t.created_since, Some(datetime!(2026-01-05 00:00 UTC)));
        assert!(t.created_before.is_none() && t.modified_before.is_none() && t.modified_since.is_none());
        assert_eq!(time_filter(None, None, Some("soon"), None).unwrap_err().field, "modifiedBefore");
        assert_eq!(time_filter(None, None, None, Some("13/01/2026")).unwrap_err().field, "modifiedSince");
    }
}
