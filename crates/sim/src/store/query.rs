//! A small builder for the list queries: filters, order, window. Column names only ever come
//! from the handlers' allow-lists, never from the request.

use rusqlite::types::Value;

#[derive(Debug, Clone, Default)]
pub struct Select {
    base: String,
    wheres: Vec<String>,
    pub(crate) args: Vec<Value>,
}

impl Select {
    /// `base` is `SELECT ... FROM ...` without a WHERE clause.
    pub fn new(base: &str) -> Select {
        Select { base: base.to_owned(), ..Default::default() }
    }

    /// `column = value`.
    pub fn eq(mut self, column: &str, value: impl Into<Value>) -> Select {
        self.wheres.push(format!("{column} = ?"));
        self.args.push(value.into());
        self
    }

    /// `column = value` when there is a value.
    pub fn eq_opt<V: Into<Value>>(self, column: &str, value: Option<V>) -> Select {
        match value {
            Some(v) => self.eq(column, v),
            None => self,
        }
    }

    /// Any condition with `?` placeholders, in order.
    pub fn cond(mut self, sql: &str, args: Vec<Value>) -> Select {
        self.wheres.push(sql.to_owned());
        self.args.extend(args);
        self
    }

    /// The time-window filters of section 1 on `created_at` / `modified_at` columns.
    pub fn time_window(mut self, w: &TimeWindow) -> Select {
        for (col, op, v) in [
            ("created_at", "<", &w.created_before),
            ("created_at", ">=", &w.created_since),
            ("modified_at", "<", &w.modified_before),
            ("modified_at", ">=", &w.modified_since),
        ] {
            if let Some(v) = v {
                self.wheres.push(format!("{col} {op} ?"));
                self.args.push(Value::Text(v.clone()));
            }
        }
        self
    }

    /// The full statement. `order` empty means `default_order`; `tiebreak` always ends it.
    pub fn sql(&self, order: &[(&str, bool)], default_order: &str, tiebreak: &str, limit: u64, offset: u64) -> String {
        let mut sql = self.base.clone();
        if !self.wheres.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&self.wheres.join(" AND "));
        }
        sql.push_str(" ORDER BY ");
        if order.is_empty() {
            sql.push_str(default_order);
            sql.push_str(", ");
        }
        for (col, desc) in order {
            sql.push_str(col);
            sql.push_str(if *desc { " DESC, " } else { " ASC, " });
        }
        sql.push_str(tiebreak);
        sql.push_str(&format!(" LIMIT {limit} OFFSET {offset}"));
        sql
    }
}

/// `createdBefore`, `createdSince`, `modifiedBefore`, `modifiedSince`, as stored timestamps.
#[derive(Debug, Clone, Default)]
pub struct TimeWindow {
    pub created_before: Option<String>,
    pub created_since: Option<String>,
    pub modified_before: Option<String>,
    pub modified_since: Option<String>,
}

/// A window of a list: ORDER BY terms (allow-listed columns), offset and limit.
#[derive(Debug, Clone, Default)]
pub struct Window {
    pub order_by: Vec<(&'static str, bool)>,
    pub offset: u64,
    pub limit: u64,
}
