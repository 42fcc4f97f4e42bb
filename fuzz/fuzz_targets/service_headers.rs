//! What the client reads from the service besides JSON bodies: `Retry-After`, the file name of
//! `Content-Disposition`, and the claims of an access token (read for display, not verified)
//! with how long the token is kept.
//! - A `Retry-After` reads only as digits (RFC 9110 `delay-seconds`), and as exactly their value;
//!   the policy's `max_retry_after` then bounds the wait.
//! - A file name is one path component: no `/` or `\`, no control character, not only dots and
//!   spaces (`..`, `. .`), never empty.
//! - A token's check never panics; its scopes are non-empty words; `expires_in` is capped, and a
//!   token is renewed before it expires and within a day, whatever `expires_in` says.
#![no_main]

use std::time::Duration;

use base64::Engine;
use dcs_api::auth::{renew_after, TokenCheck};
use dcs_api::files::disposition_file_name;
use dcs_api::retry::parse_retry_after_at;
use dcs_model::TokenResponse;
use libfuzzer_sys::fuzz_target;

fn retry_after(s: &str) {
    // As at a fixed moment, so that a date's wait is the same at every run.
    let now = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
    if let Some(d) = parse_retry_after_at(s, now) {
        assert_eq!(d.subsec_nanos(), 0);
        let v = s.trim();
        if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
            assert_eq!(v.parse::<u64>().ok(), Some(d.as_secs()), "{s:?}");
        } else {
            // Otherwise only an HTTP date, waited for until it comes.
            let at =
                httpdate::parse_http_date(v).unwrap_or_else(|_| panic!("{s:?} read as a wait but is no HTTP date"));
            assert_eq!(d, at.duration_since(now).unwrap_or_default(), "{s:?}");
        }
    }
}

fn file_name(s: &str) {
    if let Some(name) = disposition_file_name(s) {
        assert!(!name.contains(['/', '\\']), "{s:?} gave {name:?}");
        assert!(!name.chars().any(char::is_control), "{s:?} gave {name:?}");
        assert!(!name.trim_matches(|c: char| c == '.' || c.is_whitespace()).is_empty(), "{s:?} gave {name:?}");
    }
}

fn token(access_token: String, expires_in: u64) {
    let answer = TokenResponse { access_token, token_type: "Bearer".into(), expires_in };
    let check = TokenCheck::of(&answer);
    assert_eq!(u64::from(check.expires_in), expires_in.min(u64::from(u32::MAX)));
    for scope in check.scopes.iter().flatten() {
        assert!(!scope.is_empty() && !scope.contains(char::is_whitespace), "{scope:?}");
    }
    let lifetime = Duration::from_secs(expires_in).min(Duration::from_secs(24 * 3600));
    let renew = renew_after(expires_in);
    assert!(renew <= lifetime && renew >= lifetime / 2, "{expires_in}: {renew:?}");
}

fuzz_target!(|data: &[u8]| {
    // The first 8 bytes are the token's `expires_in`; all the bytes are also the claims of a JWT.
    let expires_in = data.get(..8).map_or(3600, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(data);
    token(format!("eyJhbGciOiJIUzI1NiJ9.{claims}.c2ln"), expires_in);
    let Ok(s) = std::str::from_utf8(data) else { return };
    retry_after(s);
    file_name(s);
    token(s.to_owned(), expires_in);
});
