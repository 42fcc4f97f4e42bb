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

    /// Rows after (or, for a `prev` page, before) a keyset position in the order `terms`
    /// (column, descending), which ends in a unique key. SQLite orders NULL first ascending and
    /// last descending, and so does this; `not_null` names the columns that hold no NULL, whose
    /// descending bound can then seek an index. The leading term's bound is repeated on its
    /// own, so an index on it starts the read at the position instead of scanning up to it.
    pub fn keyset(mut self, terms: &[(&str, bool)], not_null: &[&str], k: &Keyset) -> Select {
        let mut chain: Option<(String, Vec<Value>)> = None;
        for ((col, desc), v) in terms.iter().zip(&k.values).rev() {
            let desc = *desc != k.before;
            let after = match (desc, v) {
                (false, Value::Null) => (format!("{col} IS NOT NULL"), vec![]),
                (false, v) => (format!("{col} > ?"), vec![v.clone()]),
                (true, Value::Null) => ("0".to_owned(), vec![]),
                (true, v) if not_null.contains(col) => (format!("{col} < ?"), vec![v.clone()]),
                (true, v) => (format!("({col} < ? OR {col} IS NULL)"), vec![v.clone()]),
            };
            chain = Some(match chain {
                None => after,
                Some((rest, rest_args)) => {
                    let (eq, eq_args) = match v {
                        Value::Null => (format!("{col} IS NULL"), vec![]),
                        v => (format!("{col} = ?"), vec![v.clone()]),
                    };
                    (format!("({} OR ({eq} AND {rest}))", after.0), [after.1, eq_args, rest_args].concat())
                }
            });
        }
        if let (Some((col, desc)), Some(v)) = (terms.first(), k.values.first()) {
            match (*desc != k.before, v) {
                (false, Value::Null) => {}
                (false, v) => self = self.cond(&format!("{col} >= ?"), vec![v.clone()]),
                (true, Value::Null) => self = self.cond(&format!("{col} IS NULL"), vec![]),
                (true, v) if not_null.contains(col) => self = self.cond(&format!("{col} <= ?"), vec![v.clone()]),
                (true, _) => {}
            }
        }
        match chain {
            Some((sql, args)) => self.cond(&sql, args),
            None => self,
        }
    }

    /// The statement of a keyset window: `columns` (the row's) then the key's, ordered by
    /// `terms` (reversed for a page before its position), `limit` rows from `offset`.
    pub fn keyed_sql(&self, terms: &[(&str, bool)], before: bool, limit: u64, offset: u64) -> String {
        let keys: Vec<&str> = terms.iter().map(|(c, _)| *c).collect();
        let from = self.base.rfind("FROM ").expect("a base statement has FROM");
        let mut sql = format!("{}, {} {}", self.base[..from].trim_end(), keys.join(", "), &self.base[from..]);
        if !self.wheres.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&self.wheres.join(" AND "));
        }
        let order: Vec<String> =
            terms.iter().map(|(c, d)| format!("{c} {}", if *d != before { "DESC" } else { "ASC" })).collect();
        sql.push_str(&format!(" ORDER BY {} LIMIT {limit} OFFSET {offset}", order.join(", ")));
        sql
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

/// A window of a list: ORDER BY terms (allow-listed columns), offset and limit, or with a
/// keyset position, the rows after (before) it.
#[derive(Debug, Clone, Default)]
pub struct Window {
    pub order_by: Vec<(&'static str, bool)>,
    pub offset: u64,
    pub limit: u64,
    pub keyset: Option<Keyset>,
}

/// A position in a list: the values of its order's terms (the unique key last) of the row a
/// page starts after, or for a `prev` page (`before`), ends before.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyset {
    pub values: Vec<Value>,
    pub before: bool,
}
