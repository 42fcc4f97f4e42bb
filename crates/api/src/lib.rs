//! Typed async client of the Device Connectivity Service.
//!
//! Layout follows the API's areas: [`firmware`] for section 4.1 (its file transfers in [`files`]) (more areas join as they are
//! built). Authentication ([`auth`]) and paging ([`paging`]) are layers every call goes through.

pub mod auth;
pub mod client;
pub mod error;
pub mod files;
pub mod firmware;
pub mod paging;
pub mod secret;

pub use client::{Client, ClientConfig};
pub use dcs_model as model;
pub use error::{Error, ErrorCode};
pub use secret::Secret;
