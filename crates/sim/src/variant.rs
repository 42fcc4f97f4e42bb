//! Which plausible service the simulator plays.
//!
//! The reference leaves many things "not shown"; the simulator's usual answers to them are the
//! A-n entries of `docs/simulator-assumptions.md` ([`Variant::Reference`]). [`Variant::Alt`]
//! answers every such choice a client could depend on in another plausible way (the section
//! "The alt variant" of that page), so that clients can be tested against two services and
//! shown not to rely on either one's choices.

use std::fmt;
use std::str::FromStr;

/// Environment variable naming the variant for the simulators that tests and the app start.
pub const VARIANT_ENV: &str = "DCS_SIM_VARIANT";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Variant {
    /// The choices listed as A-n in `docs/simulator-assumptions.md`.
    #[default]
    Reference,
    /// Another plausible service: every "A-n (alt)" entry.
    Alt,
}

impl Variant {
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Reference => "reference",
            Variant::Alt => "alt",
        }
    }

    pub fn is_alt(self) -> bool {
        self == Variant::Alt
    }

    /// The variant named by `DCS_SIM_VARIANT`; `reference` when unset or empty. Any other
    /// value is an error naming the variable, so a typo never silently tests the reference.
    pub fn from_env() -> Result<Variant, String> {
        match std::env::var(VARIANT_ENV) {
            Ok(v) if !v.trim().is_empty() => v.parse().map_err(|e| format!("{VARIANT_ENV}: {e}")),
            _ => Ok(Variant::Reference),
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Variant {
    type Err = String;

    fn from_str(s: &str) -> Result<Variant, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "reference" => Ok(Variant::Reference),
            "alt" => Ok(Variant::Alt),
            other => Err(format!("`{other}` is not a simulator variant; use `reference` or `alt`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_names_and_refuses_others() {
        assert_eq!("alt".parse::<Variant>().unwrap(), Variant::Alt);
        assert_eq!(" Reference ".parse::<Variant>().unwrap(), Variant::Reference);
        let e = "alternative".parse::<Variant>().unwrap_err();
        assert!(e.contains("`alternative`") && e.contains("reference"), "{e}");
    }
}
