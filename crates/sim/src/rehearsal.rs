//! What a rehearsal of a rollout needs of the simulator: a data set copied from a fleet (the
//! same devices, module and versions, in the states the console last saw) instead of the demo
//! one, and update models that say how long each device's update takes and how often it fails,
//! instead of the demo's fixed draw. The clock of such a simulator is moved on by the caller
//! ([`crate::Simulator::advance_clock`]), a jump at a time, rather than by the wall clock.

use std::collections::HashMap;

use dcs_model::FirmwareModule;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::store::devices::DeviceRow;
use crate::store::insert::{self, SeedState};
use crate::store::{ClientRow, Store, StoreError};

/// How one device's update goes: the share that fails and the ranges its two steps take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UpdateModel {
    /// Percent of updates that fail (half while downloading, half while installing).
    pub fail_percent: f64,
    /// Seconds from the target to the end of the download, drawn evenly from the range.
    pub download_secs: (u32, u32),
    /// Seconds the install takes, drawn evenly from the range.
    pub install_secs: (u32, u32),
}

/// The update model of each copied device (by device id); a device without one moves as the
/// demo's devices do.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateModels {
    pub by_device: HashMap<Uuid, UpdateModel>,
}

/// One device of the copy, with its state of the copied module.
#[derive(Debug, Clone, PartialEq)]
pub struct CopiedDevice {
    pub id: Uuid,
    /// `lora`, `http`, `mqtt` or `sms` (anything else is written as `http`: only downlinks read it).
    pub connection: String,
    pub current: Option<String>,
    pub target: Option<String>,
    pub status: Option<String>,
    pub details: Option<String>,
}

/// A fleet's module and devices, as the console knows them.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetCopy {
    pub module_id: Uuid,
    pub module_name: String,
    pub spec_id: Uuid,
    /// The module's package versions (the rollout's target among them).
    pub versions: Vec<String>,
    pub devices: Vec<CopiedDevice>,
}

/// Statuses of an update under way: the copy moves them on from its start.
const UNDER_WAY: &[&str] = &["PENDING", "DOWNLOADING", "INSTALLING"];

/// Writes `copy` as the whole state, owned by the demo reseller of `seed` (whose key the
/// caller uses), in one transaction. An update under way in the copy takes its next step in
/// the first minute after `now`.
pub fn seed_copy(store: &Store, seed: u64, copy: &FleetCopy, now: OffsetDateTime) -> Result<(), StoreError> {
    let key = crate::seed::demo_reseller_key(seed);
    let client = ClientRow { id: key.client_id, name: "Rehearsal".to_owned(), reseller_id: None };
    let author = "principal/rehearsal".to_owned();
    let project = Uuid::nil();
    store.replace_all(|tx| {
        insert::client(tx, &client)?;
        for row in crate::seed::key_rows(seed).into_iter().take(1) {
            insert::api_key(tx, &row)?;
        }
        insert::device_specification(tx, copy.spec_id, client.id, "Rehearsal", now)?;
        insert::module(
            tx,
            &FirmwareModule {
                id: copy.module_id,
                name: copy.module_name.clone(),
                firmware_version_attribute_name: "firmware".to_owned(),
                device_specification_id: copy.spec_id,
                client_id: Some(client.id),
                created_at: Some(now),
                created_by: Some(author.clone()),
                modified_at: Some(now),
                modified_by: Some(author.clone()),
                extra: Default::default(),
            },
        )?;
        for version in &copy.versions {
            let pkg = Uuid::new_v4();
            insert::package(tx, pkg, client.id, copy.spec_id, copy.module_id, version, None, now, &author)?;
            insert::inline_file(
                tx,
                pkg,
                "firmware",
                "image.bin",
                "application/octet-stream",
                b"rehearsal",
                now,
                &author,
            )?;
        }
        for (n, d) in copy.devices.iter().enumerate() {
            let connection = match d.connection.as_str() {
                c @ ("lora" | "http" | "mqtt" | "sms") => c,
                _ => "http",
            };
            let device = DeviceRow {
                id: d.id,
                client_id: client.id,
                device_specification_id: copy.spec_id,
                project_id: project,
                name: format!("R-{:07}", n + 1),
                description: String::new(),
                barcode: format!("R{:012}", n + 1),
                connection: connection.to_owned(),
                imei: (connection != "lora").then(|| format!("99{:013}", n + 1)),
                deveui: (connection == "lora").then(|| format!("ff{:014x}", n + 1)),
                metadata: serde_json::json!({}),
            };
            insert::device(tx, &device, now)?;
            let under_way = d.status.as_deref().is_some_and(|s| UNDER_WAY.contains(&s));
            insert::state(
                tx,
                &SeedState {
                    device: (&device).into(),
                    module: copy.module_id,
                    current: d.current.as_deref(),
                    target: d.target.as_deref(),
                    status: d.status.as_deref(),
                    details: d.details.as_deref(),
                    created: now,
                    modified: now,
                    next_step_at: under_way.then(|| now + Duration::seconds(1 + (n % 60) as i64)),
                },
            )?;
        }
        insert::meta(tx, "seed", &seed.to_string())
    })
}
