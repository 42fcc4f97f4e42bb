//! Text a user types or the service sends: device ids, ISO-8601 durations, feedback timeouts,
//! RFC 3339 times and sort expressions. Never a panic; what parses, printed, parses the same.
#![no_main]

use dcs_model::{duration, ids::DeviceId, sort::SortSpec, timestamp};
use libfuzzer_sys::fuzz_target;

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
    if let Ok(spec) = SortSpec::parse_syntax(s) {
        assert_eq!(SortSpec::parse_syntax(&spec.to_string()).as_ref(), Ok(&spec), "{s:?}");
    }
});
