//! Acting on several items behind one confirmation (cancel downlinks, delete bindings): each
//! item is sent on its own, one after the other, and each has its outcome; one that fails does
//! not stop the others, and what was done stays done.

use serde::Serialize;

use crate::FieldError;

/// Most items one bulk action takes.
pub const MAX_ITEMS: usize = 200;

/// What became of one item of a bulk action.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ItemOutcome {
    pub id: String,
    /// The service accepted it.
    pub done: bool,
    /// Why not: the service's words (status, title, detail) or the rule the item broke.
    pub error: Option<String>,
}

impl ItemOutcome {
    pub fn of(id: impl Into<String>, r: Result<(), dcs_api::Error>) -> ItemOutcome {
        match r {
            Ok(()) => ItemOutcome { id: id.into(), done: true, error: None },
            Err(e) => ItemOutcome { id: id.into(), done: false, error: Some(e.to_string()) },
        }
    }
}

/// Checks the number of items of a bulk action: 1 to [`MAX_ITEMS`], none twice.
pub fn check_items<T: PartialEq>(items: &[T]) -> Result<(), FieldError> {
    if items.is_empty() || items.len() > MAX_ITEMS {
        return Err(FieldError {
            field: "items".into(),
            rule: format!("must name 1 to {MAX_ITEMS} items ({} given)", items.len()),
        });
    }
    for (i, item) in items.iter().enumerate() {
        if items[..i].contains(item) {
            return Err(FieldError { field: format!("items[{i}]"), rule: "names an item already named".into() });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bulk_action_takes_one_to_the_most_items_each_once() {
        assert!(check_items(&[1, 2, 3]).is_ok());
        assert_eq!(check_items::<u8>(&[]).unwrap_err().field, "items");
        assert_eq!(
            check_items(&vec![0u32; 0].into_iter().chain(0..=MAX_ITEMS as u32).collect::<Vec<_>>()).unwrap_err().field,
            "items"
        );
        assert_eq!(check_items(&[1, 2, 1]).unwrap_err().field, "items[2]");
    }
}
