//! Property tests of every parser and validator shared by the client and the simulator.

use std::time::Duration;

use dcs_model::duration::{format_duration, parse_duration, parse_feedback_timeout};
use dcs_model::{validate, DeviceId, SortSpec};
use proptest::prelude::*;

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
}
