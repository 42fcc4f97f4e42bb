//! Property tests of every parser and validator shared by the client and the simulator.

use std::time::Duration;

use dcs_model::duration::{format_duration, parse_duration, parse_feedback_timeout};
use dcs_model::{timestamp, validate, ActuatorDownlink, DeviceId, Problem, SortSpec};
use proptest::prelude::*;
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// A prefix with each letter in random case.
fn any_case(s: &'static str) -> impl Strategy<Value = String> {
    proptest::collection::vec(any::<bool>(), s.len())
        .prop_map(move |upper| s.chars().zip(upper).map(|(c, u)| if u { c.to_ascii_uppercase() } else { c }).collect())
}

proptest! {
    #[test]
    fn device_ids_of_every_form_parse_and_round_trip(
        digits in "[0-9]{15,16}",
        hex in "[0-9a-fA-F]{16}",
        uuid in any::<u128>(),
        imei_prefix in any_case("imei:"),
        eui_prefix in any_case("deveui:"),
        urn_prefix in any_case("urn:dev:"),
        colon in any::<bool>(),
    ) {
        let u = uuid::Uuid::from_u128(uuid);
        let tail = if colon { ":" } else { "" };
        for input in [
            u.to_string(),
            format!("{imei_prefix}{digits}"),
            format!("{eui_prefix}{hex}"),
            format!("dvnuuid:{u}"),
            format!("{urn_prefix}imei:{digits}{tail}"),
            format!("{urn_prefix}deveui:{hex}{tail}"),
            format!("{urn_prefix}dvnuuid:{u}{tail}"),
        ] {
            let id = DeviceId::parse(&input).unwrap();
            // The normalised form parses to the same id.
            prop_assert_eq!(DeviceId::parse(&id.to_string()).unwrap(), id.clone());
            if let Some(urn) = id.urn() {
                prop_assert!(urn.starts_with("urn:dev:") && urn.ends_with(':'));
            }
        }
    }

    #[test]
    fn device_id_parsing_never_panics_and_refuses_wrong_lengths(s in ".{0,60}", digits in "[0-9]{1,14}") {
        let _ = DeviceId::parse(&s);
        let short_imei = format!("imei:{}", digits);
        prop_assert!(DeviceId::parse(&short_imei).is_err());
    }

    #[test]
    fn durations_round_trip_through_their_canonical_form(secs in 0u64..10_000_000_000, nanos in 0u32..1_000_000_000) {
        let d = Duration::new(secs, nanos);
        prop_assert_eq!(parse_duration(&format_duration(d)).unwrap(), d);
    }

    #[test]
    fn duration_parsing_never_panics(s in "P?T?[0-9.DHMS]{0,20}") {
        let _ = parse_duration(&s);
    }

    #[test]
    fn feedback_timeouts_are_refused_exactly_below_ten_minutes(secs in 0u64..100_000) {
        let text = format!("PT{secs}S");
        prop_assert_eq!(parse_feedback_timeout(&text).is_ok(), secs >= 600);
    }

    #[test]
    fn sort_expressions_round_trip(fields in proptest::sample::subsequence(vec!["createdAt", "name", "id", "modifiedAt"], 1..4), desc in proptest::collection::vec(any::<bool>(), 4)) {
        let expr: Vec<String> = fields.iter().zip(desc).map(|(f, d)| format!("{}{f}", if d { "-" } else { "" })).collect();
        let expr = expr.join(",");
        let spec = SortSpec::parse(&expr, &["createdAt", "name", "id", "modifiedAt"]).unwrap();
        prop_assert_eq!(spec.to_string(), expr);
    }

    #[test]
    fn versions_and_file_names_follow_their_charsets(ok in "[A-Za-z0-9._-]{1,100}", bad in "[A-Za-z0-9._-]{0,10}[ /:@!#]{1}[A-Za-z0-9]{0,10}") {
        prop_assert!(validate::firmware_version(&ok).is_ok());
        prop_assert!(validate::file_name(&ok).is_ok());
        prop_assert!(validate::firmware_version(&bad).is_err());
        prop_assert!(validate::file_name(&bad).is_err());
        let too_long = "1".repeat(101);
        prop_assert!(validate::firmware_version(&too_long).is_err());
    }

    #[test]
    fn mqtt_passwords_need_length_and_every_class(
        lower in "[a-z]{6,10}", upper in "[A-Z]{6,10}", digit in "[0-9]{6,10}", special in "[!@#$%^&*]{6,10}",
    ) {
        let good = format!("{lower}{upper}{digit}{special}");
        prop_assert_eq!(validate::mqtt_password(&good).is_ok(), good.len() >= 24);
        let no_special = format!("{lower}{upper}{digit}{lower}");
        prop_assert!(validate::mqtt_password(&no_special).is_err());
    }

    #[test]
    fn hex_fields_need_their_exact_length(hex in "[0-9a-f]{0,40}") {
        prop_assert_eq!(validate::hex_exact(&hex, 16).is_ok(), hex.len() == 16);
        prop_assert_eq!(validate::hex_exact(&hex, 32).is_ok(), hex.len() == 32);
    }

    #[test]
    fn device_lists_read_every_id_in_order_whatever_the_separators(
        ids in proptest::collection::vec((0u8..4, any::<u128>(), "[0-9]{15}", "[0-9a-fA-F]{16}"), 0..20),
        separators in proptest::collection::vec("[ \t\r\n,;]{1,3}", 21),
    ) {
        let ids: Vec<DeviceId> = ids
            .into_iter()
            .map(|(form, u, digits, hex)| match form {
                0 => DeviceId::parse(&uuid::Uuid::from_u128(u).to_string()),
                1 => DeviceId::parse(&format!("imei:{digits}")),
                2 => DeviceId::parse(&format!("urn:dev:deveui:{hex}:")),
                _ => DeviceId::parse(&format!("dvnuuid:{}", uuid::Uuid::from_u128(u))),
            })
            .collect::<Result<_, _>>()
            .unwrap();
        let mut text = separators[0].clone();
        for (id, sep) in ids.iter().zip(&separators[1..]) {
            text.push_str(&id.to_string());
            text.push_str(sep);
        }
        let read: Vec<DeviceId> = DeviceId::parse_list(&text).into_iter().map(|(_, id)| id.unwrap()).collect();
        prop_assert_eq!(read, ids);
    }

    #[test]
    fn timestamps_round_trip_through_rfc3339_and_the_millisecond_form(
        secs in -62_167_132_800i64..253_402_214_400, // 0000-01-02 to 9999-12-31 in UTC
        nanos in 0u32..1_000_000_000,
        offset_minutes in -(23 * 60 + 59)..=(23 * 60 + 59i32),
    ) {
        let offset = UtcOffset::from_whole_seconds(offset_minutes * 60).unwrap();
        let t = OffsetDateTime::from_unix_timestamp(secs).unwrap().replace_nanosecond(nanos).unwrap().to_offset(offset);
        // RFC 3339 keeps the offset and every digit.
        if let Ok(text) = t.format(&Rfc3339) {
            prop_assert_eq!(timestamp::parse(&text), Ok(t));
        }
        // The millisecond form is UTC, fixed width, and drops what is below a millisecond.
        let millis = timestamp::format_millis(t);
        prop_assert_eq!(millis.len(), 24);
        let back = timestamp::parse(&millis).unwrap();
        prop_assert_eq!(back.offset(), UtcOffset::UTC);
        prop_assert_eq!(back, t.replace_nanosecond(nanos / 1_000_000 * 1_000_000).unwrap());
        prop_assert_eq!(timestamp::format_millis(back), millis);
    }

    #[test]
    fn problem_documents_round_trip(
        type_ in ".{0,20}", title in proptest::option::of(".{0,20}"), status in proptest::option::of(any::<u16>()),
        detail in proptest::option::of(".{0,40}"), params in proptest::collection::vec((".{0,10}", ".{0,20}"), 0..3),
    ) {
        let p = Problem {
            type_, title, status, detail, instance: None,
            invalid_params: params.into_iter().map(|(name, reason)| dcs_model::InvalidParam { name, reason }).collect(),
        };
        let text = serde_json::to_string(&p).unwrap();
        prop_assert_eq!(serde_json::from_str::<Problem>(&text).unwrap(), p);
    }

    #[test]
    fn a_senml_message_shows_the_same_records_sent_as_a_string_or_as_an_array(
        names in proptest::collection::vec("[a-z]{1,8}", 1..4), values in proptest::collection::vec(any::<i32>(), 4),
        text_value in ".{0,12}",
    ) {
        let records: Vec<serde_json::Value> = names
            .iter()
            .zip(&values)
            .map(|(n, v)| serde_json::json!({"n": n, "v": v, "vs": text_value}))
            .collect();
        let array = serde_json::Value::Array(records);
        let pretty = serde_json::to_string_pretty(&array).unwrap();
        let read = |message: serde_json::Value| {
            serde_json::from_value::<ActuatorDownlink>(serde_json::json!({"status": "PENDING", "message": message})).unwrap()
        };
        let as_string = read(serde_json::Value::String(pretty)).message_text().unwrap();
        let as_array = read(array.clone()).message_text().unwrap();
        prop_assert_eq!(&as_string, &as_array);
        prop_assert!(!as_string.contains('\n'));
        prop_assert_eq!(serde_json::from_str::<serde_json::Value>(&as_string).unwrap(), array);
    }
}
