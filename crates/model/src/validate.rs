//! The field rules of sections 2 and 8, once, for the client (refuse before sending) and the
//! simulator (answer 400). Each returns the rule broken, to be shown with the field's name.

/// `firmwareVersion`: 1-100 characters from letters, digits, `.`, `_`, `-`.
pub fn firmware_version(s: &str) -> Result<(), String> {
    charset(s, 100, |c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'), "letters, digits, `.`, `_` and `-`")
}

/// Package `description`: 1-300 printable ASCII characters.
pub fn description(s: &str) -> Result<(), String> {
    charset(s, 300, printable, "printable ASCII characters")
}

/// Module `name`: 1-100 printable ASCII characters.
pub fn module_name(s: &str) -> Result<(), String> {
    charset(s, 100, printable, "printable ASCII characters")
}

/// `firmwareVersionAttributeName`: 1-100 characters from letters, digits, `_`, `-`.
pub fn attribute_name(s: &str) -> Result<(), String> {
    charset(s, 100, |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'), "letters, digits, `_` and `-`")
}

/// File `name`: 1-100 characters from letters, digits, `.`, `-`, `_`.
pub fn file_name(s: &str) -> Result<(), String> {
    charset(s, 100, |c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'), "letters, digits, `.`, `-` and `_`")
}

/// File `contentType`: 1-100 printable ASCII characters.
pub fn content_type(s: &str) -> Result<(), String> {
    charset(s, 100, printable, "printable ASCII characters")
}

/// A SHA-256 `checksum`: 64 hex characters.
pub fn sha256_hex(s: &str) -> Result<(), String> {
    if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err("must be the SHA-256 of the file: 64 hex characters".to_owned())
    }
}

/// `n` hex characters exactly (LoRa application server id: 16, key: 32).
pub fn hex_exact(s: &str, n: usize) -> Result<(), String> {
    if s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(format!("must be exactly {n} hex characters ({} bytes)", n / 2))
    }
}

/// MQTT binding `password`: at least 24 characters with a lower-case letter, an upper-case
/// letter, a digit and a special character.
pub fn mqtt_password(s: &str) -> Result<(), String> {
    let mut missing = Vec::new();
    if s.chars().count() < 24 {
        missing.push("at least 24 characters");
    }
    if !s.chars().any(|c| c.is_ascii_lowercase()) {
        missing.push("a lower-case letter");
    }
    if !s.chars().any(|c| c.is_ascii_uppercase()) {
        missing.push("an upper-case letter");
    }
    if !s.chars().any(|c| c.is_ascii_digit()) {
        missing.push("a digit");
    }
    if !s.chars().any(|c| !c.is_ascii_alphanumeric() && !c.is_whitespace()) {
        missing.push("a special character");
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("must have {}", missing.join(", ")))
    }
}

/// HTTP binding `sharedSecret` as the simulator checks it (A-62; the rule is not shown, so the
/// client does not check it): 16 to 64
/// printable ASCII characters, no spaces.
pub fn shared_secret(s: &str) -> Result<(), String> {
    let n = s.chars().count();
    if !(16..=64).contains(&n) {
        return Err(format!("must be 16 to 64 characters (got {n})"));
    }
    match s.chars().find(|c| !printable(*c) || *c == ' ') {
        Some(bad) => Err(format!("may contain only printable ASCII characters other than space (found {bad:?})")),
        None => Ok(()),
    }
}

fn printable(c: char) -> bool {
    (' '..='~').contains(&c)
}

fn charset(s: &str, max: usize, ok: impl Fn(char) -> bool, what: &str) -> Result<(), String> {
    let n = s.chars().count();
    if n == 0 || n > max {
        return Err(format!("must be 1 to {max} characters (got {n})"));
    }
    match s.chars().find(|c| !ok(*c)) {
        Some(bad) => Err(format!("may contain only {what} (found {bad:?})")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charsets_and_lengths() {
        assert!(firmware_version("1.2.3-rc_1").is_ok());
        assert!(firmware_version("").is_err());
        assert!(firmware_version("1.2 beta").unwrap_err().contains("found ' '"));
        assert!(firmware_version(&"1".repeat(101)).unwrap_err().contains("1 to 100"));
        assert!(description(&"d".repeat(300)).is_ok());
        assert!(description("tab\there").is_err());
        assert!(description("naïve").is_err());
        assert!(file_name("fw-1.0.bin").is_ok());
        assert!(file_name("fw 1.0.bin").is_err());
        assert!(attribute_name("mcu_fw-2").is_ok());
        assert!(attribute_name("mcu.fw").is_err());
        assert!(sha256_hex(&"a".repeat(64)).is_ok());
        assert!(sha256_hex(&"g".repeat(64)).is_err());
        assert!(hex_exact("70b3d57ed0001234", 16).is_ok());
        assert!(hex_exact("70b3d57ed000123", 16).is_err());
    }

    #[test]
    fn mqtt_passwords_need_all_four_classes() {
        assert!(mqtt_password("Abcdefghijklmnopqrstuv1!").is_ok());
        let e = mqtt_password("abcdefghijklmnopqrstuvwx").unwrap_err();
        assert!(e.contains("upper-case") && e.contains("digit") && e.contains("special"));
        assert!(mqtt_password("Ab1!").unwrap_err().contains("24"));
    }

    #[test]
    fn shared_secrets_are_16_to_64_printable_characters() {
        assert!(shared_secret("0123456789abcdef").is_ok());
        assert!(shared_secret(&"~".repeat(64)).is_ok());
        assert!(shared_secret("0123456789abcde").unwrap_err().contains("16 to 64"));
        assert!(shared_secret(&"a".repeat(65)).is_err());
        assert!(shared_secret("0123456789 abcdef").unwrap_err().contains("' '"));
        assert!(shared_secret("0123456789abcdéf").is_err());
    }
}
