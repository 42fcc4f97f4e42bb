//! SQL of the deprecated sub-customer mode (reference section 4.5): which API key made the
//! context-switch call for which customer.

use rusqlite::{params, OptionalExtension};
use uuid::Uuid;

use super::{ts, Store, StoreError};

impl Store {
    /// Records that `key_id` may act for `customer` with `x-client-id`. Idempotent: a second
    /// grant keeps the first one's time. Returns whether the grant is new.
    pub fn grant_context_switch(
        &self,
        key_id: &str,
        customer: Uuid,
        at: time::OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let n = self.conn().execute(
            "INSERT INTO context_switch_grants (key_id, customer_id, granted_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(key_id, customer_id) DO NOTHING",
            params![key_id, customer.to_string(), ts(at)],
        )?;
        Ok(n > 0)
    }

    /// Whether `key_id` holds a context-switch grant for `customer`, and the customer is still
    /// a customer of `reseller` (the key's own client).
    pub fn has_context_switch(&self, key_id: &str, reseller: Uuid, customer: Uuid) -> Result<bool, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT 1 FROM context_switch_grants g JOIN clients c ON c.id = g.customer_id
                 WHERE g.key_id = ?1 AND g.customer_id = ?2 AND c.reseller_id = ?3",
                params![key_id, customer.to_string(), reseller.to_string()],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// Number of context-switch grants held (for tests of `reset`).
    pub fn context_switch_grants(&self) -> Result<u64, StoreError> {
        Ok(self.conn().query_row("SELECT COUNT(*) FROM context_switch_grants", [], |r| r.get::<_, i64>(0))? as u64)
    }
}
