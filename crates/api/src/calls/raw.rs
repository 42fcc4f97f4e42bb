//! [`Raw`]: a typed answer that keeps the JSON it was read from.

use std::ops::Deref;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use crate::error::Result;

/// A typed answer together with the JSON it was read from, so fields this version does not know
/// (payloads, new members) stay available.
#[derive(Debug, Clone, PartialEq)]
pub struct Raw<T> {
    pub value: T,
    pub raw: serde_json::Value,
}

impl<T> Deref for Raw<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Raw<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = serde_json::Value::deserialize(d)?;
        let value = T::deserialize(&raw).map_err(serde::de::Error::custom)?;
        Ok(Raw { value, raw })
    }
}

/// Serialises as the JSON the service sent (nothing lost, unknown members included).
impl<T> Serialize for Raw<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(s)
    }
}
