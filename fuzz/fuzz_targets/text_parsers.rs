//! Text a user types or the service sends: device ids, ISO-8601 durations, feedback timeouts,
//! RFC 3339 times, the time filters as typed, and sort expressions. Never a panic; what parses,
//! printed, parses the same. A time filter the console accepts is sent as RFC 3339 (the client
//! writes it so), which reads back as the same instant, in the console and in the model.
#![no_main]

use dcs_console::filters;
use dcs_model::{duration, ids::DeviceId, sort::SortSpec, timestamp};
use libfuzzer_sys::fuzz_target;
use time::format_description::well_known::Rfc3339;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    if let Ok(id) = DeviceId::parse(s) {
        assert_eq!(DeviceId::parse(&id.to_string()).as_ref(), Ok(&id), "{s:?}");
    }
    if let Ok(d) = duration::parse_duration(s) {
        assert_eq!(duration::parse_duration(&duration::format_duration(d)), Ok(d), "{s:?}");
    }
    let _ = duration::parse_feedback_timeout(s);
    let _ = timestamp::parse(s);
    if let Ok(Some(t)) = filters::parse_time("createdSince", Some(s)) {
        let sent = t.format(&Rfc3339).unwrap_or_else(|e| panic!("{s:?} read as {t} cannot be sent: {e}"));
        assert_eq!(filters::parse_time("createdSince", Some(&sent)), Ok(Some(t)), "{s:?}");
        assert_eq!(timestamp::parse(&sent), Ok(t), "{s:?}");
    }
    if let Ok(spec) = SortSpec::parse_syntax(s) {
        assert_eq!(SortSpec::parse_syntax(&spec.to_string()).as_ref(), Ok(&spec), "{s:?}");
    }
});
