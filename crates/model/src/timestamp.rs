//! How timestamps are read and written.
//!
//! Read ([`parse`]): every RFC 3339 date-time, and the ISO 8601 extended forms the reference's
//! "RFC 3339 / ISO 8601 date-time" lets a service send besides: `t`/`z` in either case, a space
//! for `T`, seconds or fraction left out, an offset written `+01`, `+0100` or `+01:00`, and no
//! offset at all. **A date-time without an offset is read as UTC** (the service's zone is not
//! shown; UTC is the only zone a service can mean without saying so).
//!
//! Written: RFC 3339 ([`option`]), and the downlink answers in one fixed-width shape (UTC,
//! milliseconds, [`format_millis`]), the one the simulator also stores, so that text order is
//! time order.

use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, always UTC, always three fraction digits.
pub fn format_millis(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

/// Reads an RFC 3339 or ISO 8601 extended date-time (see the module's notes); the error says
/// what is wrong.
pub fn parse(s: &str) -> Result<OffsetDateTime, String> {
    let bad = |what: &str| format!("`{s}` is not an RFC 3339 / ISO 8601 date-time: {what}");
    let b = s.trim().as_bytes();
    let mut i = 0;
    let num = |i: &mut usize, n: usize, what: &str| -> Result<u32, String> {
        let digits = b.get(*i..*i + n).filter(|d| d.iter().all(u8::is_ascii_digit)).ok_or_else(|| bad(what))?;
        *i += n;
        Ok(digits.iter().fold(0, |acc, d| acc * 10 + u32::from(d - b'0')))
    };
    let expect = |i: &mut usize, c: &[u8], what: &str| -> Result<(), String> {
        match b.get(*i) {
            Some(x) if c.contains(x) => {
                *i += 1;
                Ok(())
            }
            _ => Err(bad(what)),
        }
    };
    let year = num(&mut i, 4, "the year needs 4 digits")?;
    expect(&mut i, b"-", "expected `-` after the year")?;
    let month = num(&mut i, 2, "the month needs 2 digits")?;
    expect(&mut i, b"-", "expected `-` after the month")?;
    let day = num(&mut i, 2, "the day needs 2 digits")?;
    expect(&mut i, b"Tt ", "expected `T` and a time after the date")?;
    let hour = num(&mut i, 2, "the hour needs 2 digits")?;
    expect(&mut i, b":", "expected `:` after the hour")?;
    let minute = num(&mut i, 2, "the minute needs 2 digits")?;
    let (mut second, mut nanos) = (0, 0);
    if b.get(i) == Some(&b':') {
        i += 1;
        second = num(&mut i, 2, "the second needs 2 digits")?;
        if matches!(b.get(i), Some(b'.' | b',')) {
            i += 1;
            let start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                if i - start < 9 {
                    nanos = nanos * 10 + u32::from(b[i] - b'0');
                }
                i += 1;
            }
            if i == start {
                return Err(bad("a fraction of a second needs digits"));
            }
            for _ in (i - start).min(9)..9 {
                nanos *= 10;
            }
        }
    }
    let offset = match b.get(i) {
        None => UtcOffset::UTC,
        Some(b'Z' | b'z') => {
            i += 1;
            UtcOffset::UTC
        }
        Some(sign @ (b'+' | b'-')) => {
            let negative = *sign == b'-';
            i += 1;
            let h = num(&mut i, 2, "the offset's hours need 2 digits")?;
            let m = match b.get(i) {
                None => 0,
                Some(b':') => {
                    i += 1;
                    num(&mut i, 2, "the offset's minutes need 2 digits")?
                }
                Some(_) => num(&mut i, 2, "the offset's minutes need 2 digits")?,
            };
            let (h, m) = (h as i8, m as i8);
            UtcOffset::from_hms(if negative { -h } else { h }, if negative { -m } else { m }, 0)
                .map_err(|e| bad(&e.to_string()))?
        }
        Some(_) => return Err(bad("unexpected text after the time")),
    };
    if i != b.len() {
        return Err(bad("unexpected text after the offset"));
    }
    let month = Month::try_from(month as u8).map_err(|e| bad(&e.to_string()))?;
    let date = Date::from_calendar_date(year as i32, month, day as u8).map_err(|e| bad(&e.to_string()))?;
    // A leap second (`:60`) is read as the last nanosecond of its minute.
    let (second, nanos) = if second == 60 { (59, 999_999_999) } else { (second, nanos) };
    let time = Time::from_hms_nano(hour as u8, minute as u8, second as u8, nanos).map_err(|e| bad(&e.to_string()))?;
    Ok(PrimitiveDateTime::new(date, time).assume_offset(offset))
}

/// `#[serde(with = "crate::timestamp::option")]` on an `Option<Timestamp>`: written as RFC 3339,
/// read by [`parse`].
pub mod option {
    use serde::{Deserialize, Deserializer, Serializer};
    use time::OffsetDateTime;

    pub fn serialize<S: Serializer>(t: &Option<OffsetDateTime>, s: S) -> Result<S::Ok, S::Error> {
        time::serde::rfc3339::option::serialize(t, s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<OffsetDateTime>, D::Error> {
        match Option::<std::borrow::Cow<'de, str>>::deserialize(d)? {
            None => Ok(None),
            Some(s) => super::parse(&s).map(Some).map_err(serde::de::Error::custom),
        }
    }
}

/// `#[serde(with = "crate::timestamp::millis_option")]` on an `Option<Timestamp>`: written by
/// [`format_millis`], read by [`parse`].
pub mod millis_option {
    use serde::{Deserializer, Serializer};
    use time::OffsetDateTime;

    pub fn serialize<S: Serializer>(t: &Option<OffsetDateTime>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_some(&super::format_millis(*t)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<OffsetDateTime>, D::Error> {
        super::option::deserialize(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn fixed_width_utc_with_milliseconds() {
        assert_eq!(format_millis(datetime!(2026-01-25 11:42:00 UTC)), "2026-01-25T11:42:00.000Z");
        assert_eq!(format_millis(datetime!(2026-01-25 13:42:00.5 +02:00)), "2026-01-25T11:42:00.500Z");
    }

    #[test]
    fn reads_rfc_3339_and_the_iso_8601_forms_a_service_may_send() {
        let t = datetime!(2026-01-02 03:04:05 UTC);
        for s in [
            "2026-01-02T03:04:05Z",
            "2026-01-02t03:04:05z",
            "2026-01-02T03:04:05",
            "2026-01-02 03:04:05",
            "2026-01-02T04:04:05+01:00",
            "2026-01-02T04:04:05+0100",
            "2026-01-02T04:04:05+01",
            "2026-01-02T01:34:05-01:30",
            "2026-01-02T03:04:05.000000000Z",
        ] {
            assert_eq!(parse(s), Ok(t), "{s}");
        }
        assert_eq!(parse("2026-01-02T03:04:05.123"), Ok(datetime!(2026-01-02 03:04:05.123 UTC)));
        assert_eq!(parse("2026-01-02T03:04:05,5Z"), Ok(datetime!(2026-01-02 03:04:05.5 UTC)));
        assert_eq!(parse("2026-01-02T03:04"), Ok(datetime!(2026-01-02 03:04 UTC)));
        assert_eq!(parse("2026-01-02T03:04:05.1234567891Z"), Ok(datetime!(2026-01-02 03:04:05.123456789 UTC)));
        assert_eq!(parse("2026-01-02T03:04:05+01:00").unwrap().offset(), time::macros::offset!(+1));
    }

    #[test]
    fn refuses_what_is_not_a_date_time() {
        for s in [
            "",
            "2026-01-02",
            "2026-13-02T03:04:05Z",
            "2026-02-30T03:04:05Z",
            "2026-01-02T25:00:00Z",
            "2026-01-02T03:04:05.Z",
            "2026-01-02T03:04:05Zx",
            "2026-01-02T03:04:05+1",
            "yesterday",
        ] {
            assert!(parse(s).is_err(), "{s}");
        }
        assert!(parse("2026-01-02T03").unwrap_err().contains("2026-01-02T03"));
    }

    #[test]
    fn answers_without_an_offset_are_read_through_serde() {
        #[derive(serde::Deserialize)]
        struct A {
            #[serde(default, with = "option")]
            t: Option<OffsetDateTime>,
            #[serde(default, with = "millis_option")]
            m: Option<OffsetDateTime>,
        }
        let a: A = serde_json::from_str(r#"{"t": "2026-01-02T03:04:05", "m": "2026-01-02t03:04:05.123z"}"#).unwrap();
        assert_eq!(a.t, Some(datetime!(2026-01-02 03:04:05 UTC)));
        assert_eq!(a.m, Some(datetime!(2026-01-02 03:04:05.123 UTC)));
        let a: A = serde_json::from_str(r#"{"t": null}"#).unwrap();
        assert_eq!((a.t, a.m), (None, None));
    }
}
