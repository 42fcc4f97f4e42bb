//! Downlinks in sentences: retries, feedback time, durations and device ids.

use dcs_api::model::duration::parse_duration;
use serde_json::Value;

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Retries and feedback time, in words.
pub(super) fn common_effect(body: &Value, default_timeout: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(n) = body.get("retryLimit").and_then(Value::as_u64) {
        out.push(if n == 0 {
            "No retries.".to_owned()
        } else {
            format!("Retried up to {n} time{}.", plural(n as usize))
        });
    }
    match body.get("feedbackTimeout").and_then(Value::as_str) {
        Some(t) => out.push(format!("The service waits {} ({t}) for feedback before giving up.", humanize(t))),
        None => out.push(format!("Feedback timeout: {default_timeout}.")),
    }
    out
}

/// `PT1H30M` as `1 h 30 min`.
pub fn humanize(iso: &str) -> String {
    let Ok(d) = parse_duration(iso) else { return iso.to_owned() };
    let s = d.as_secs();
    let parts = [(s / 86_400, "d"), (s / 3600 % 24, "h"), (s / 60 % 60, "min"), (s % 60, "s")];
    let words: Vec<String> = parts.iter().filter(|(n, _)| *n > 0).map(|(n, u)| format!("{n} {u}")).collect();
    if words.is_empty() {
        "0 s".into()
    } else {
        words.join(" ")
    }
}

/// A device id in a sentence: a URN without its optional trailing `:` (section 1), so
/// "to device urn:dev:imei:…:." does not end in a stray colon.
pub fn spoken_id(id: &str) -> &str {
    let t = id.trim();
    if t.len() > 8 && t[..8].eq_ignore_ascii_case("urn:dev:") {
        t.strip_suffix(':').unwrap_or(t)
    } else {
        t
    }
}
