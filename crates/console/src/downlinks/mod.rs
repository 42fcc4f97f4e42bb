//! Downlinks as the console shows and composes them, for the app and anything else above the
//! client:
//!
//! - one row shape ([`DownlinkView`]) for every kind, actuator or connection-specific, with the
//!   words that explain its status, failure reason and what a cancellation would do, and its
//!   feedback deadline (`createdAt + feedbackTimeout`);
//! - the statuses the console has seen a downlink in ([`Watch`]): the service only gives the
//!   current status, so the timeline is what this process observed, kept in memory per
//!   profile and customer, bounded, and gone when the app closes;
//! - drafts of a form, as typed ([`ActuatorDraft`], [`ConnectionDraft`]), turned into the
//!   client's builders. Like every draft of the console, `check()` names every broken field at
//!   once (each text that does not read, then the client's rules, `NewDownlink::check` /
//!   `NewConnectionDownlink::check`, for the rest); a preview shows them, or the body exactly
//!   as `NewDownlink::to_json` / `NewConnectionDownlink::to_json` make it;
//! - listing, reading, sending and cancelling through the client.
//!
//! One file per concern: `kind` (the kinds), `view` (rows), `watch` (statuses seen, the
//! service's clock), `draft` (the forms' shapes, the preview), `typed` (reading typed text),
//! `actuator` and `connection` (the two composers), `words` (sentences), `device_id`,
//! `listing` (the calls) and `csv`.

mod actuator;
mod connection;
mod csv;
mod device_id;
mod draft;
mod kind;
mod listing;
mod typed;
mod view;
mod watch;
mod words;

pub use csv::{csv_row, export_csv, CSV_HEADER, MAX_EXPORT_ROWS};
pub use device_id::{check_device_id, describe_device_id, DeviceIdCheck};
pub use draft::{ActuatorDraft, ConnectionDraft, DownlinkPreview, MethodDraft, MethodVariant, PayloadMode, ValueType};
pub use kind::{kinds, DownlinkKind, KindInfo};
pub use listing::{
    cancel, cancel_many, get, list, send_actuator, send_connection, CancelItem, DownlinkPage, DownlinkPageRequest,
};
pub use view::{CancelAdvice, CancelState, DownlinkView, Outcome};
pub use watch::{DownlinkDetail, Observation, ServiceClock, Watch};
pub use words::{humanize, spoken_id};
