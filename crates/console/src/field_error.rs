//! The one shape of "this field breaks this rule": the client's [`dcs_api::FieldError`], which
//! the console's drafts, the fleet's checks and the service's refusals all use.

pub use dcs_api::FieldError;
