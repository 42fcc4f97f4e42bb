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
    #[error("an empty field name is not allowed (write fields separated by commas, e.g. `createdAt,-name`)")]
    EmptyField,
    #[error("unknown field `{field}`; allowed: {allowed}")]
    UnknownField { field: String, allowed: String },
    #[error("field `{0}` is given more than once")]
    Repeated(String),
}

impl SortSpec {
    /// Parses `createdAt,-name` and checks every field against `allowed`.
    pub fn parse(expr: &str, allowed: &[&str]) -> Result<SortSpec, SortError> {
        let mut fields: Vec<SortField> = Vec::new();
        for raw in expr.split(',') {
            let raw = raw.trim();
            let (name, descending) = match raw.strip_prefix('-') {
                Some(rest) => (rest, true),
                None => (raw, false),
            };
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
}
