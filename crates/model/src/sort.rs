//! Sort expressions of list operations: comma-separated field names, a leading `-` for
//! descending (section 1). Parsed once here and used by both the client and the simulator.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortField {
    pub name: String,
    pub descending: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SortSpec(pub Vec<SortField>);

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SortError {
    #[error("write field names separated by commas, each with an optional leading `-` for descending, e.g. `createdAt,-name`")]
    EmptyField,
    #[error("unknown field `{field}`; allowed: {allowed}")]
    UnknownField { field: String, allowed: String },
    #[error("field `{0}` is given more than once")]
    Repeated(String),
}

impl SortSpec {
    /// Parses `createdAt,-name` by the reference's syntax only (section 1: comma-separated
    /// field names, each with an optional leading `-`): what the client checks. Which fields a
    /// list sorts by is the service's to say (the simulator's lists are,
    /// A-67); the client sends any name and lets the service answer.
    pub fn parse_syntax(expr: &str) -> Result<SortSpec, SortError> {
        let mut fields: Vec<SortField> = Vec::new();
        for (name, descending) in split(expr) {
            if name.is_empty() || name.starts_with('-') || name.contains(char::is_whitespace) {
                return Err(SortError::EmptyField);
            }
            fields.push(SortField { name: name.to_owned(), descending });
        }
        Ok(SortSpec(fields))
    }

    /// Parses `createdAt,-name` and checks every field against `allowed`, each at most once
    /// (the simulator's rules).
    pub fn parse(expr: &str, allowed: &[&str]) -> Result<SortSpec, SortError> {
        let mut fields: Vec<SortField> = Vec::new();
        for (name, descending) in split(expr) {
            if name.is_empty() {
                return Err(SortError::EmptyField);
            }
            if !allowed.contains(&name) {
                return Err(SortError::UnknownField { field: name.to_owned(), allowed: allowed.join(", ") });
            }
            if fields.iter().any(|f| f.name == name) {
                return Err(SortError::Repeated(name.to_owned()));
            }
            fields.push(SortField { name: name.to_owned(), descending });
        }
        Ok(SortSpec(fields))
    }
}

/// The parts of `createdAt,-name`: each field name, trimmed, and whether a leading `-` asks for
/// descending order. What a name may be is each parser's to check.
fn split(expr: &str) -> impl Iterator<Item = (&str, bool)> {
    expr.split(',').map(|raw| {
        let raw = raw.trim();
        match raw.strip_prefix('-') {
            Some(rest) => (rest, true),
            None => (raw, false),
        }
    })
}

impl std::fmt::Display for SortSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> =
            self.0.iter().map(|s| format!("{}{}", if s.descending { "-" } else { "" }, s.name)).collect();
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALLOWED: &[&str] = &["createdAt", "name"];

    #[test]
    fn parses_ascending_and_descending_and_round_trips() {
        let s = SortSpec::parse("createdAt,-name", ALLOWED).unwrap();
        assert_eq!(s.0[0], SortField { name: "createdAt".into(), descending: false });
        assert_eq!(s.0[1], SortField { name: "name".into(), descending: true });
        assert_eq!(s.to_string(), "createdAt,-name");
    }

    #[test]
    fn rejects_unknown_empty_and_repeated_fields() {
        assert!(matches!(SortSpec::parse("colour", ALLOWED), Err(SortError::UnknownField { .. })));
        assert_eq!(SortSpec::parse("name,", ALLOWED), Err(SortError::EmptyField));
        assert_eq!(SortSpec::parse("-", ALLOWED), Err(SortError::EmptyField));
        assert_eq!(SortSpec::parse("name,-name", ALLOWED), Err(SortError::Repeated("name".into())));
    }

    #[test]
    fn the_reference_syntax_alone_takes_any_field_name() {
        let s = SortSpec::parse_syntax("colour, -createdAt").unwrap();
        assert_eq!(s.to_string(), "colour,-createdAt");
        assert_eq!(SortSpec::parse_syntax("name,name").unwrap().0.len(), 2, "repeats are the service's to judge");
        for bad in ["", "name,", "-", "--name", "a b", ","] {
            assert_eq!(SortSpec::parse_syntax(bad), Err(SortError::EmptyField), "{bad:?}");
        }
    }
}
