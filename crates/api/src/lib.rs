//! Typed async client of the Device Connectivity Service.
//!
//! Layout follows the API's areas: [`firmware`] for section 4.1 (its file transfers in [`files`]), [`downlinks`] for 4.2 and 4.3,
//! [`bindings`] for 4.4 and [`beta`] for the deprecated 4.5 (more areas join as they are built).
//! Authentication ([`auth`]), retries ([`retry`]) and paging ([`paging`]) are layers every call
//! goes through.

pub mod answer;
pub mod audit;
pub mod auth;
pub mod beta;
pub mod bindings;
pub mod calls;
pub mod client;
pub mod downlinks;
pub mod error;
pub mod files;
pub mod firmware;
pub mod page_sizes;
pub mod paging;
pub mod retry;
pub mod secret;

pub use answer::Limits;
pub use calls::{Raw, TimeFilter};
pub use client::{Client, ClientConfig};
pub use dcs_model as model;
pub use error::{Error, ErrorCode, FieldError};
pub use retry::RetryPolicy;
pub use secret::Secret;
