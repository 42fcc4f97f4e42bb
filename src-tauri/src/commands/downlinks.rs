//! Downlink commands: lists per kind, one downlink with what the console saw of it, previews of
//! the exact request body, sending and cancelling. The work is in `dcs_console::downlinks`; the
//! statuses seen are kept in Rust memory (`AppState::downlinks`), per profile and customer.

use dcs_console::bulk::ItemOutcome;
use dcs_console::downlinks::{
    self, ActuatorDraft, CancelItem, ConnectionDraft, DownlinkDetail, DownlinkKind, DownlinkPage, DownlinkPageRequest,
    DownlinkPreview, DownlinkView, KindInfo,
};
use serde::Deserialize;
use tauri::State;
use uuid::Uuid;

use crate::error::CommandError;
use crate::state::{Answer as _, AppState};

/// The downlink kinds with their sort fields, statuses and filters.
#[tauri::command]
#[specta::specta]
pub fn downlink_kinds() -> Vec<KindInfo> {
    downlinks::kinds()
}

/// Every rule the actuator draft breaks, or the exact body `send_downlink` will send.
#[tauri::command]
#[specta::specta]
pub fn preview_downlink(draft: ActuatorDraft) -> DownlinkPreview {
    draft.preview()
}

/// Every rule the connection-specific draft breaks, or the exact body it will send.
#[tauri::command]
#[specta::specta]
pub fn preview_connection_downlink(draft: ConnectionDraft) -> DownlinkPreview {
    draft.preview()
}

/// One page of a kind's downlinks; every downlink shown is recorded as seen.
#[tauri::command]
#[specta::specta]
pub async fn list_downlinks(
    state: State<'_, AppState>,
    request: DownlinkPageRequest,
) -> Result<DownlinkPage, CommandError> {
    let session = state.session().await?;
    session
        .run(async {
            let page = downlinks::list(&session.client, &request).await?;
            let scope = session.scope();
            let now = time_now();
            for d in &page.items {
                state.downlinks.observe(&scope, d, now);
            }
            Ok(page)
        })
        .await
}

/// One downlink as the service holds it now, the statuses the console saw it in, and the
/// service's clock for counting down to its feedback deadline.
#[tauri::command]
#[specta::specta]
pub async fn get_downlink(
    state: State<'_, AppState>,
    kind: DownlinkKind,
    id: String,
) -> Result<DownlinkDetail, CommandError> {
    let session = state.session().await?;
    session
        .run(async {
            let downlink = downlinks::get(&session.client, kind, &id).await?;
            let observed = state.downlinks.observe(&session.scope(), &downlink, time_now());
            let clock = state.service_clock(&session).await;
            Ok(DownlinkDetail { downlink, observed, clock })
        })
        .await
}

/// An actuator downlink to send, and the customer the user confirmed it for.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SendDownlink {
    pub draft: ActuatorDraft,
    pub acting_for: Option<Uuid>,
}

#[tauri::command]
#[specta::specta]
pub async fn send_downlink(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    request: SendDownlink,
) -> Result<DownlinkView, CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    session
        .run(async {
            let sent = downlinks::send_actuator(&session.client, &request.draft).await?;
            state.downlinks.observe(&session.scope(), &sent, time_now());
            if !sent.is_final {
                crate::notify::watch_sent(&app, session.clone(), sent.kind, sent.id.clone());
            }
            tracing::info!(downlink = %sent.id, dry_run = request.draft.dry_run, acting = %session.acting.describe(), "actuator downlink sent");
            Ok(sent)
        })
        .await
}

/// A connection-specific downlink to send, and the customer the user confirmed it for.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SendConnectionDownlink {
    pub draft: ConnectionDraft,
    pub acting_for: Option<Uuid>,
}

#[tauri::command]
#[specta::specta]
pub async fn send_connection_downlink(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    request: SendConnectionDownlink,
) -> Result<DownlinkView, CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    session
        .run(async {
            let sent = downlinks::send_connection(&session.client, &request.draft).await?;
            state.downlinks.observe(&session.scope(), &sent, time_now());
            if !sent.is_final {
                crate::notify::watch_sent(&app, session.clone(), sent.kind, sent.id.clone());
            }
            tracing::info!(
                downlink = %sent.id, kind = ?request.draft.kind, dry_run = request.draft.dry_run,
                acting = %session.acting.describe(), "connection downlink sent"
            );
            Ok(sent)
        })
        .await
}

/// A cancellation to ask for; `forced` also stops a downlink already being sent.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CancelDownlink {
    pub kind: DownlinkKind,
    pub id: String,
    pub forced: bool,
    pub acting_for: Option<Uuid>,
}

/// Asks the service to cancel (202: it is carried out later; a refusal comes back as the
/// service's problem, e.g. 409 for a final downlink).
#[tauri::command]
#[specta::specta]
pub async fn cancel_downlink(state: State<'_, AppState>, request: CancelDownlink) -> Result<(), CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    session
        .run(async {
            downlinks::cancel(&session.client, request.kind, &request.id, request.forced).await?;
            tracing::info!(downlink = %request.id, kind = ?request.kind, forced = request.forced, acting = %session.acting.describe(), "cancellation asked");
            Ok(())
        })
        .await
}

/// Downlinks to cancel behind one confirmation, and the customer the user confirmed it for.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CancelDownlinks {
    pub items: Vec<CancelItem>,
    pub acting_for: Option<Uuid>,
}

/// Asks the service to cancel each downlink (1 to 200), one after the other; answers each one's
/// outcome (a refusal does not stop the others).
#[tauri::command]
#[specta::specta]
pub async fn cancel_downlinks(
    state: State<'_, AppState>,
    request: CancelDownlinks,
) -> Result<Vec<ItemOutcome>, CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    let outcomes = downlinks::cancel_many(&session.client, &request.items).await?;
    let done = outcomes.iter().filter(|o| o.done).count();
    tracing::info!(asked = outcomes.len(), done, acting = %session.acting.describe(), "bulk cancellation asked");
    Ok(outcomes)
}

/// Writes every downlink the filters and sort give (every page) as CSV to `path`, a file the
/// user chose in the save dialog; answers the number of rows.
#[tauri::command]
#[specta::specta]
pub async fn export_downlinks_csv(
    state: State<'_, AppState>,
    picked: State<'_, crate::picked::Picked>,
    request: DownlinkPageRequest,
    path: String,
) -> Result<u32, CommandError> {
    let path = picked.check(crate::picked::Use::Write, "path", &path)?;
    let session = state.session().await?;
    session
        .run(async {
            let names = state.devices.get(&session.scope(), &session.client).await.unwrap_or_default();
            let n = downlinks::export_csv(&session.client, &request, &names, &path).await?;
            tracing::info!(rows = n, kind = ?request.kind, acting = %session.acting.describe(), "downlinks exported as CSV");
            Ok(n)
        })
        .await
}

fn time_now() -> dcs_api::model::Timestamp {
    dcs_api::model::Timestamp::now_utc()
}

/// A deprecated beta actuator downlink (`POST /api/actuator/downlinks`, reference 4.5): hex
/// payloads for one LoRa device on one FPort, as typed.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct BetaDownlinkDraft {
    /// A DevEUI: `deveui:<16 hex>` or `urn:dev:deveui:<16 hex>`.
    pub device: String,
    /// The LoRa FPort, as typed.
    pub port: String,
    /// One hex payload per entry; empty entries are left out.
    pub payloads: Vec<String>,
    pub external_reference: Option<String>,
}

/// The checked draft: what the reference states (a DevEUI device, hex payloads, an integer
/// port), each broken rule named by its form field.
/// The (device, payload) pairs and the port of a checked beta draft.
type BetaRequest = (Vec<(dcs_api::model::DeviceId, String)>, u8);

fn check_beta(draft: &BetaDownlinkDraft) -> Result<BetaRequest, Vec<dcs_console::FieldError>> {
    use dcs_api::model::DeviceId;
    use dcs_console::FieldError;
    let mut errors = Vec::new();
    let device = match DeviceId::parse(draft.device.trim()) {
        Ok(id @ DeviceId::DevEui { .. }) => Some(id),
        Ok(_) => {
            errors.push(FieldError {
                field: "device".into(),
                rule: "must be a LoRa device given by its DevEUI (deveui:<16 hex>)".into(),
            });
            None
        }
        Err(e) => {
            errors.push(FieldError { field: "device".into(), rule: e.to_string() });
            None
        }
    };
    let port = match draft.port.trim().parse::<i64>() {
        Ok(p) => match u8::try_from(p) {
            Ok(p) if p >= 1 => Some(p),
            _ => {
                errors.push(FieldError { field: "port".into(), rule: format!("{p} is not a LoRa FPort (1-223)") });
                None
            }
        },
        Err(_) => {
            errors.push(FieldError { field: "port".into(), rule: "must be an integer (the LoRa FPort)".into() });
            None
        }
    };
    let payloads: Vec<&str> = draft.payloads.iter().map(|p| p.trim()).filter(|p| !p.is_empty()).collect();
    if payloads.is_empty() {
        errors.push(FieldError { field: "payloads".into(), rule: "give at least one hex payload".into() });
    }
    for (i, p) in payloads.iter().enumerate() {
        if !p.len().is_multiple_of(2) || !p.bytes().all(|b| b.is_ascii_hexdigit()) {
            errors.push(FieldError {
                field: "payloads".into(),
                rule: format!("payload {} must be an even number of hex characters", i + 1),
            });
            break;
        }
    }
    match (device, port) {
        (Some(d), Some(p)) if errors.is_empty() => {
            Ok((payloads.iter().map(|h| (d.clone(), (*h).to_owned())).collect(), p))
        }
        _ => Err(errors),
    }
}

/// Every rule the beta draft breaks, for the form as the user types.
#[tauri::command]
#[specta::specta]
pub fn check_beta_downlink(draft: BetaDownlinkDraft) -> Vec<dcs_console::FieldError> {
    check_beta(&draft).err().unwrap_or_default()
}

/// What the beta API answered: its shape is not shown, so the JSON as it came.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct BetaDownlinkAnswer {
    pub answer: String,
}

#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SendBetaDownlink {
    pub draft: BetaDownlinkDraft,
    pub acting_for: Option<Uuid>,
}

#[tauri::command]
#[specta::specta]
pub async fn send_beta_downlink(
    state: State<'_, AppState>,
    request: SendBetaDownlink,
) -> Result<BetaDownlinkAnswer, CommandError> {
    let session = state.session().await?;
    session.check_acting_for(request.acting_for)?;
    let (payloads, port) = check_beta(&request.draft)?;
    let reference = request.draft.external_reference.as_deref().filter(|r| !r.is_empty());
    let answer = session
        .run(async { Ok(session.client.beta().actuator_downlinks(&payloads, port, reference).await?) })
        .await
        .map_err(beta_fields)?;
    tracing::info!(payloads = payloads.len(), port, acting = %session.acting.describe(), "beta actuator downlink sent");
    Ok(BetaDownlinkAnswer { answer: serde_json::to_string_pretty(&answer).unwrap_or_else(|_| answer.to_string()) })
}

/// The form fields a refusal of the beta body names: a record's `bn` is the device and its
/// `vs` a payload (`[0].bn`, `records[1].vs`, ...); `port` and `externalReference` are the form's
/// own names already.
fn beta_fields(mut e: CommandError) -> CommandError {
    for f in &mut e.fields {
        let last = f.field.rsplit(['.', ']']).next().unwrap_or("");
        match last {
            "bn" => f.field = "device".into(),
            "vs" | "n" => f.field = "payloads".into(),
            _ => {}
        }
    }
    e.field = e.fields.first().map(|f| f.field.clone()).or(e.field);
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_naming_a_records_members_lands_on_the_forms_fields() {
        let problem: dcs_api::model::Problem = serde_json::from_value(serde_json::json!({
            "status": 400, "invalidParams": [{"name": "[0].bn", "reason": "no such device"}, {"name": "[1].vs", "reason": "odd"}, {"name": "port", "reason": "bad"}]
        }))
        .unwrap();
        let e = beta_fields(CommandError::from(dcs_api::Error::Api { status: 400, problem: Box::new(problem) }));
        let named: Vec<&str> = e.fields.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(named, vec!["device", "payloads", "port"]);
        assert_eq!(e.field.as_deref(), Some("device"));
    }

    fn draft(device: &str, port: &str, payloads: &[&str]) -> BetaDownlinkDraft {
        BetaDownlinkDraft {
            device: device.into(),
            port: port.into(),
            payloads: payloads.iter().map(|p| (*p).to_owned()).collect(),
            external_reference: None,
        }
    }

    #[test]
    fn a_beta_draft_is_checked_by_the_references_rules_naming_each_field() {
        let (pairs, port) = check_beta(&draft("deveui:70b3d57ed0000001", "5", &["0a0b", " ", "ff"])).unwrap();
        assert_eq!((pairs.len(), port), (2, 5));
        let fields =
            |d: BetaDownlinkDraft| check_beta(&d).unwrap_err().into_iter().map(|e| e.field).collect::<Vec<_>>();
        assert_eq!(fields(draft("imei:350000000000001", "x", &["0g"])), vec!["device", "port", "payloads"]);
        assert_eq!(fields(draft("deveui:70b3d57ed0000001", "-1", &[])), vec!["port", "payloads"]);
    }
}
