//! Plain data types of the Device Connectivity Service API.
//!
//! This crate is shared by the typed client (`dcs-api`) and the simulator (`dcs-sim`) so the
//! two cannot drift apart on field names or shapes. It holds no I/O: only serde types and the
//! small parsers both sides need (sort expressions, problem documents).

#[macro_use]
pub mod known;
#[macro_use]
mod redact;
pub mod beta;
pub mod bindings;
pub mod downlinks;
pub mod duration;
pub mod firmware;
pub mod ids;
pub mod page;
pub mod problem;
pub mod secrets;
pub mod sort;
pub mod timestamp;
pub mod token;
pub mod validate;

pub use beta::{BetaDevice, BetaDevicePage, BetaSort, BetaSortOrder, ContextSwitch};
pub use bindings::{
    BindingKind, HttpBinding, HttpBindingRequest, HttpBindingType, LoraBinding, LoraBindingRequest, LoraBindingStatus,
    MqttBinding, MqttBindingRequest,
};
pub use downlinks::{ActuatorDownlink, ConnectionDownlink, ConnectionDownlinkStatus, DownlinkStatus, FailureReason};
pub use firmware::{
    FileAttributes, FirmwareDeviceSpecification, FirmwareModule, FirmwarePackage, FirmwareState, PackageEmbedded,
    UpdateStatus,
};
pub use ids::{DeviceId, DeviceIdError};
pub use page::Page;
pub use problem::{InvalidParam, Problem};
pub use sort::{SortError, SortField, SortSpec};
pub use token::{TokenRequest, TokenResponse, SERVICE_AUDIENCE};

/// RFC 3339 timestamps on the wire, `time::OffsetDateTime` in Rust.
pub type Timestamp = time::OffsetDateTime;
