//! What the console reads from the service once per scope (profile, service and customer) and
//! keeps for a few minutes: the device listing ([`crate::devices::Directories`]), the firmware
//! catalogue the palette searches ([`crate::palette::Catalogues`]). One read at a time per
//! scope; a failed read keeps nothing, so the next ask reads again.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Mutex;

/// Values of type `T` per scope, each kept for `fresh_for` after it was read.
pub struct Kept<T> {
    slots: Mutex<HashMap<String, Slot<T>>>,
    fresh_for: Duration,
}

/// One scope's value and when it was read, behind its own lock (one read at a time).
type Slot<T> = Arc<Mutex<Option<(Instant, Arc<T>)>>>;

impl<T> Kept<T> {
    pub fn new(fresh_for: Duration) -> Kept<T> {
        Kept { slots: Mutex::default(), fresh_for }
    }

    /// The value of `scope`, read by `load` when there is none or it is stale.
    pub async fn get<E, F: Future<Output = Result<T, E>>>(
        &self,
        scope: &str,
        load: impl FnOnce() -> F,
    ) -> Result<Arc<T>, E> {
        let slot = self.slots.lock().await.entry(scope.to_owned()).or_default().clone();
        let mut held = slot.lock().await;
        if let Some((at, value)) = held.as_ref() {
            if at.elapsed() < self.fresh_for {
                return Ok(value.clone());
            }
        }
        let value = Arc::new(load().await?);
        *held = Some((Instant::now(), value.clone()));
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn a_value_is_read_once_per_scope_while_fresh_and_a_failure_keeps_nothing() {
        let kept: Kept<u32> = Kept::new(Duration::from_millis(200));
        let reads = AtomicU32::new(0);
        let read = || async { Ok::<u32, ()>(reads.fetch_add(1, Ordering::SeqCst)) };
        assert_eq!(*kept.get("a", read).await.unwrap(), 0);
        assert_eq!(*kept.get("a", read).await.unwrap(), 0, "kept");
        assert_eq!(*kept.get("b", read).await.unwrap(), 1, "another scope reads its own");
        assert!(kept.get("c", || async { Err::<u32, ()>(()) }).await.is_err());
        assert_eq!(*kept.get("c", read).await.unwrap(), 2, "a failure kept nothing");
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert_eq!(*kept.get("a", read).await.unwrap(), 3, "stale: read again");
    }
}
