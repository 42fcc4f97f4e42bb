//! Setting and resetting targets with the profile's set-target operation, several at a time:
//! what starting a wave and aborting share.

use dcs_api::model::{DeviceId, FirmwareState};
use dcs_api::Client;
use futures::{stream, StreamExt};
use uuid::Uuid;

use super::lease::Lease;
use super::PARALLEL_SETS;
use crate::set_target::{self, SetTarget};

/// What setting one device's target answered: the state it reads as, if any, or the refusal.
pub(crate) type SetResult = (Uuid, std::result::Result<Option<FirmwareState>, dcs_api::Error>);

/// Why a rollout cannot set targets: the profile has no set-target operation.
pub const NO_OPERATION: &str = "the profile has no set-target operation, so targets cannot be set or reset; \
     the service's API documentation does not describe one. Add the operation your service documents to the profile \
     (in the app: Settings > the profile > \"Set-target operation\"; in dcs: `dcs profile edit NAME \
     --set-target-method ... --set-target-path ... --set-target-body ...`)";

/// Sets (or resets, `version` `None`) the target of each device with the profile's operation.
/// An answer that reads as the device's new state is kept (`Some`); another service may answer
/// something else, or nothing, and the next refresh reads the state.
///
/// Under a rollout's `lease` (a driver's step), each request is sent only while the lease is
/// [valid](Lease::valid), checked right before it goes: a device skipped so is left out of the
/// answer (never sent, so neither set nor refused) and counted in the second value.
pub(crate) async fn set_targets(
    client: &Client,
    op: &SetTarget,
    devices: &[Uuid],
    module: Uuid,
    version: Option<&str>,
    package: Option<Uuid>,
    lease: Option<&Lease>,
) -> (Vec<SetResult>, usize) {
    let version = version.map(str::to_owned);
    // Under a lease, each request is asked its gate right before it goes (the client's Gate).
    let client = match lease {
        Some(l) => client.gated(l.gate()),
        None => client.clone(),
    };
    let jobs: Vec<_> = devices
        .iter()
        .map(|&d| {
            let (client, version, op) = (client.clone(), version.clone(), op.clone());
            async move {
                if lease.is_some_and(|l| !l.valid()) {
                    return None;
                }
                let result = set_target::send(&client, &op, &DeviceId::Uuid(d), module, version.as_deref(), package)
                    .await
                    .map(|answer| answer.state().filter(|s| s.device_id == d && s.module_id == module));
                match result {
                    // Stopped by the gate, unsent (or a retry of it unsent): in doubt as a request
                    // under way at a crash, for the next driver to look at.
                    Err(e) if lease.is_some() && e.code() == dcs_api::ErrorCode::Cancelled => None,
                    result => Some((d, result)),
                }
            }
        })
        .collect();
    let all: Vec<Option<SetResult>> = stream::iter(jobs).buffer_unordered(PARALLEL_SETS).collect().await;
    let skipped = all.iter().filter(|r| r.is_none()).count();
    (all.into_iter().flatten().collect(), skipped)
}

/// What a batch of set-target calls did: the states the service answered are written back,
/// the calls that went through counted, and the refusals given as `<device>: <why>`.
pub(crate) fn apply_sets(
    db: &crate::fleet::FleetDb,
    scope: crate::fleet::Scope,
    results: Vec<SetResult>,
) -> crate::fleet::Result<(u32, Vec<String>)> {
    let mut done = 0u32;
    let mut failures = Vec::new();
    for (device, result) in results {
        match result {
            Ok(state) => {
                if let Some(state) = state {
                    crate::fleet::scan::write_page(db, scope, std::slice::from_ref(&state))?;
                }
                done += 1;
            }
            Err(e) => failures.push(format!("{device}: {e}")),
        }
    }
    Ok((done, failures))
}
