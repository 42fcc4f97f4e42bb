//! How timestamps are written. Every RFC 3339 form is read; the downlink answers are written in
//! one fixed-width shape (UTC, milliseconds), the one the simulator also stores, so that text
//! order is time order.

use time::OffsetDateTime;

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

/// `#[serde(with = "crate::timestamp::millis_option")]` on an `Option<Timestamp>`: written by
/// [`format_millis`], read as any RFC 3339 timestamp.
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
        time::serde::rfc3339::option::deserialize(d)
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
}
