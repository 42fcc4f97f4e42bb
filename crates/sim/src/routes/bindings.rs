//! Connector bindings (reference sections 2.8 and 4.4): `/lora/bindings`, `/http/bindings` and
//! `/mqtt/bindings`, five operations each. One generic handler per operation; a [`Kind`] says
//! what differs between the three (fields, filters, sort columns).
//!
//! The reference shows no scopes for these operations: any valid token is enough (assumption).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use dcs_model::{
    validate, BindingKind, DeviceId, HttpBinding, HttpBindingType, LoraBinding, LoraBindingStatus, MqttBinding, Page,
};
use serde::Serialize;
use serde_json::{Map, Value};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::paging::{PageRequest, TIME_FILTERS};
use crate::routes::{json_body, names, str_field, uuid_path, ListRequest};
use crate::store::bindings::{join_delay, BindingConflict, BindingQuery, BindingRow};
use crate::store::devices::DeviceRow;
use crate::SimState;

/// What differs between the three kinds of binding.
pub(crate) trait Kind: Send + Sync + 'static {
    const KIND: BindingKind;
    /// Sortable fields and their columns. Without `sort` the order is `createdAt` then `id`.
    const SORT: &'static [(&'static str, &'static str)];
    /// List filters besides `clientId`, `deviceId` and the time window.
    const FILTERS: &'static [&'static str] = &[];
    type Out: Serialize + Send;

    fn to_model(row: BindingRow) -> Self::Out;

    /// Sets the kind's fields of `row` from a full `POST` or `PUT` body; `before` is the
    /// binding a `PUT` replaces.
    fn apply(
        body: &Map<String, Value>,
        device: &DeviceRow,
        before: Option<&BindingRow>,
        row: &mut BindingRow,
        now: OffsetDateTime,
    ) -> Result<(), ApiError>;

    /// Reads the kind's own list filters.
    fn filters(_pr: &PageRequest, _q: &mut BindingQuery) -> Result<(), ApiError> {
        Ok(())
    }
}

pub(crate) struct Lora;
pub(crate) struct Http;
pub(crate) struct Mqtt;

fn required<'a>(body: &'a Map<String, Value>, name: &str) -> Result<&'a str, ApiError> {
    str_field(body, name)?.ok_or_else(|| ApiError::invalid(name, "is required"))
}

fn hex_field(body: &Map<String, Value>, name: &str, n: usize) -> Result<String, ApiError> {
    let v = required(body, name)?;
    validate::hex_exact(v, n).map_err(|r| ApiError::invalid(name, r))?;
    Ok(v.to_ascii_lowercase())
}

impl Kind for Lora {
    const KIND: BindingKind = BindingKind::Lora;
    const SORT: &'static [(&'static str, &'static str)] = &[
        ("createdAt", "created_at"),
        ("modifiedAt", "modified_at"),
        ("deviceId", "device_id"),
        ("applicationServerId", "application_server_id"),
        ("status", "status"),
        ("id", "id"),
    ];
    type Out = LoraBinding;

    fn to_model(row: BindingRow) -> LoraBinding {
        LoraBinding {
            id: row.id,
            device_id: row.device_id.to_string(),
            application_server_id: Some(row.application_server_id.unwrap_or_default()),
            app_key: row.app_key,
            status: Some(LoraBindingStatus::from(row.status.as_deref().unwrap_or("INVENTORY"))),
            created_at: Some(row.created_at),
            created_by: Some(row.created_by),
            modified_at: Some(row.modified_at),
            modified_by: Some(row.modified_by),
            extra: Map::new(),
        }
    }

    fn apply(
        body: &Map<String, Value>,
        _device: &DeviceRow,
        before: Option<&BindingRow>,
        row: &mut BindingRow,
        now: OffsetDateTime,
    ) -> Result<(), ApiError> {
        let asid = hex_field(body, "applicationServerId", 16)?;
        let key = hex_field(body, "appKey", 32)?;
        // `status` is the network server's: ignored in bodies. New keys (or another device)
        // mean the device has to join again.
        let unchanged = before.is_some_and(|b| {
            b.device_id == row.device_id
                && b.application_server_id.as_deref() == Some(asid.as_str())
                && b.app_key.as_deref() == Some(key.as_str())
        });
        if !unchanged {
            row.status = Some(LoraBindingStatus::Inventory.as_str().to_owned());
            row.join_from = Some(now);
        }
        row.application_server_id = Some(asid);
        row.app_key = Some(key);
        Ok(())
    }
}

impl Kind for Http {
    const KIND: BindingKind = BindingKind::Http;
    const SORT: &'static [(&'static str, &'static str)] = &[
        ("createdAt", "created_at"),
        ("modifiedAt", "modified_at"),
        ("deviceId", "device_id"),
        ("type", "http_type"),
        ("id", "id"),
    ];
    const FILTERS: &'static [&'static str] = &["type"];
    type Out = HttpBinding;

    fn to_model(row: BindingRow) -> HttpBinding {
        HttpBinding {
            id: row.id,
            device_id: row.device_id.to_string(),
            binding_type: Some(HttpBindingType::from(row.http_type.as_deref().unwrap_or_default())),
            shared_secret: row.shared_secret,
            created_at: Some(row.created_at),
            created_by: Some(row.created_by),
            modified_at: Some(row.modified_at),
            modified_by: Some(row.modified_by),
            extra: Map::new(),
        }
    }

    fn apply(
        body: &Map<String, Value>,
        _device: &DeviceRow,
        _before: Option<&BindingRow>,
        row: &mut BindingRow,
        _now: OffsetDateTime,
    ) -> Result<(), ApiError> {
        let binding_type = http_type(required(body, "type")?)?;
        let secret = required(body, "sharedSecret")?;
        validate::shared_secret(secret).map_err(|r| ApiError::invalid("sharedSecret", r))?;
        row.http_type = Some(binding_type.as_str().to_owned());
        row.shared_secret = Some(secret.to_owned());
        Ok(())
    }

    fn filters(pr: &PageRequest, q: &mut BindingQuery) -> Result<(), ApiError> {
        q.http_type = pr.filter("type").map(|t| http_type(t).map(|t| t.as_str().to_owned())).transpose()?;
        Ok(())
    }
}

/// A known HTTP binding type, or a 400 naming `type`.
fn http_type(v: &str) -> Result<HttpBindingType, ApiError> {
    let t = HttpBindingType::from(v);
    if t.is_known() {
        Ok(t)
    } else {
        Err(ApiError::invalid(
            "type",
            format!("unknown binding type `{v}`; allowed: {}", HttpBindingType::KNOWN.join(", ")),
        ))
    }
}

impl Kind for Mqtt {
    const KIND: BindingKind = BindingKind::Mqtt;
    const SORT: &'static [(&'static str, &'static str)] = &[
        ("createdAt", "created_at"),
        ("modifiedAt", "modified_at"),
        ("deviceId", "device_id"),
        ("username", "username"),
        ("id", "id"),
    ];
    const FILTERS: &'static [&'static str] = &["username"];
    type Out = MqttBinding;

    fn to_model(row: BindingRow) -> MqttBinding {
        MqttBinding {
            id: row.id,
            device_id: row.device_id.to_string(),
            username: Some(row.username.unwrap_or_default()),
            password: row.password,
            created_at: Some(row.created_at),
            created_by: Some(row.created_by),
            modified_at: Some(row.modified_at),
            modified_by: Some(row.modified_by),
            extra: Map::new(),
        }
    }

    fn apply(
        body: &Map<String, Value>,
        device: &DeviceRow,
        _before: Option<&BindingRow>,
        row: &mut BindingRow,
        _now: OffsetDateTime,
    ) -> Result<(), ApiError> {
        let password = required(body, "password")?;
        validate::mqtt_password(password).map_err(|r| ApiError::invalid("password", r))?;
        // The username is the system's: the device URN, whatever the body says.
        row.username = Some(device.network_id());
        row.password = Some(password.to_owned());
        Ok(())
    }

    fn filters(pr: &PageRequest, q: &mut BindingQuery) -> Result<(), ApiError> {
        q.username = pr.filter("username").map(str::to_owned);
        Ok(())
    }
}

/// The body's `deviceId`: required, any id form, a device of the caller's environment whose
/// connection is the binding's kind.
fn body_device(
    state: &SimState,
    caller: &Caller,
    body: &Map<String, Value>,
    kind: BindingKind,
) -> Result<DeviceRow, ApiError> {
    let raw = required(body, "deviceId")?;
    let parsed = DeviceId::parse(raw).map_err(|e| ApiError::invalid("deviceId", e.to_string()))?;
    let device = state
        .store
        .find_device(caller.client, &parsed)?
        .ok_or_else(|| ApiError::invalid("deviceId", format!("no device {parsed} in this environment")))?;
    if device.connection != kind.as_str() {
        return Err(ApiError::invalid(
            "deviceId",
            format!("device {} connects over {}; a {kind} binding needs a {kind} device", device.id, device.connection),
        ));
    }
    Ok(device)
}

fn conflict(kind: BindingKind, c: BindingConflict, row: &BindingRow) -> ApiError {
    let detail = match c {
        BindingConflict::Device => {
            format!("device {} already has a {kind} binding; update or delete that one", row.device_id)
        }
        BindingConflict::ApplicationServerId => format!(
            "applicationServerId {} is already used by another binding; it must be globally unique",
            row.application_server_id.as_deref().unwrap_or_default()
        ),
    };
    ApiError::new(StatusCode::CONFLICT, detail)
}

fn find<K: Kind>(state: &SimState, caller: &Caller, id: Uuid) -> Result<BindingRow, ApiError> {
    state
        .store
        .binding(caller.client, K::KIND, id)?
        .ok_or_else(|| ApiError::not_found(format!("no {} binding {id}", K::KIND)))
}

pub(crate) async fn list<K: Kind>(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    req: ListRequest,
) -> Result<Json<Page<K::Out>>, ApiError> {
    let mut filters = vec!["clientId", "deviceId"];
    filters.extend_from_slice(TIME_FILTERS);
    filters.extend_from_slice(K::FILTERS);
    let pr = PageRequest::from_params(&req.query, &filters, &names(K::SORT))?;
    // A device given in any id form; one that is not in this environment matches nothing.
    let device_id = match pr.filter("deviceId") {
        None => None,
        Some(raw) => {
            let parsed = DeviceId::parse(raw).map_err(|e| ApiError::invalid("deviceId", e.to_string()))?;
            Some(state.store.find_device(caller.client, &parsed)?.map(|d| d.id).unwrap_or_else(Uuid::nil))
        }
    };
    let mut query = BindingQuery {
        client_id: pr.uuid_filter("clientId")?,
        device_id,
        time: pr.time_window()?,
        window: pr.window(K::SORT),
        ..BindingQuery::new(caller.client, K::KIND)
    };
    K::filters(&pr, &mut query)?;
    let items = state.store.list_bindings(&query)?.into_iter().map(K::to_model).collect();
    Ok(Json(pr.page(items, &req.base, K::KIND.path())))
}

/// `sync` on `GET /lora/bindings/{id}`: `true` or `false`.
fn sync_param(req: &ListRequest) -> Result<bool, ApiError> {
    match req.query.one("sync")? {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(other) => Err(ApiError::invalid("sync", format!("must be `true` or `false`, got `{other}`"))),
    }
}

pub(crate) async fn get<K: Kind>(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path(binding_id): Path<String>,
    req: ListRequest,
) -> Result<Json<K::Out>, ApiError> {
    let id = uuid_path("bindingId", &binding_id)?;
    let mut row = find::<K>(&state, &caller, id)?;
    if K::KIND == BindingKind::Lora && sync_param(&req)? {
        row = sync_from_network_server(&state, &caller, row)?;
    }
    Ok(Json(K::to_model(row)))
}

/// What the simulated LoRaWAN network server knows: an `INVENTORY` binding whose device has
/// joined since its keys were set becomes `ACTIVE`.
fn sync_from_network_server(state: &SimState, caller: &Caller, row: BindingRow) -> Result<BindingRow, ApiError> {
    if row.status.as_deref() != Some(LoraBindingStatus::Inventory.as_str()) {
        return Ok(row);
    }
    let Some(device) = state.store.find_device(caller.client, &DeviceId::Uuid(row.device_id))? else {
        return Ok(row);
    };
    let Some(delay) = device.deveui.as_deref().and_then(join_delay) else {
        return Ok(row);
    };
    let now = state.clock.now();
    let joined = row.join_from.is_some_and(|from| from + delay <= now);
    if !joined {
        return Ok(row);
    }
    state.store.set_binding_status(
        caller.client,
        row.id,
        LoraBindingStatus::Active.as_str(),
        caller.principal(),
        now,
    )?;
    find::<Lora>(state, caller, row.id)
}

pub(crate) async fn create<K: Kind>(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<K::Out>), ApiError> {
    let body = json_body(&body)?;
    let device = body_device(&state, &caller, &body, K::KIND)?;
    let now = state.clock.now();
    let mut row = BindingRow::new(K::KIND, caller.client, device.id, now, caller.principal());
    K::apply(&body, &device, None, &mut row, now)?;
    if let Err(c) = state.store.insert_binding(&row)? {
        return Err(conflict(K::KIND, c, &row));
    }
    let stored = find::<K>(&state, &caller, row.id)?;
    Ok((StatusCode::CREATED, Json(K::to_model(stored))))
}

pub(crate) async fn update<K: Kind>(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path(binding_id): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<K::Out>, ApiError> {
    let id = uuid_path("bindingId", &binding_id)?;
    let current = find::<K>(&state, &caller, id)?;
    let mut body = json_body(&body)?;
    if state.opts.variant.is_alt() {
        crate::alt::keep_secrets(&mut body, &current);
    }
    let device = body_device(&state, &caller, &body, K::KIND)?;
    let now = state.clock.now();
    // A full replacement: every writable field comes from the body; id and creation stay.
    let mut row = BindingRow {
        device_id: device.id,
        modified_at: now,
        modified_by: caller.principal().to_owned(),
        ..current.clone()
    };
    K::apply(&body, &device, Some(&current), &mut row, now)?;
    match state.store.replace_binding(&row)? {
        Err(c) => Err(conflict(K::KIND, c, &row)),
        Ok(false) => Err(ApiError::not_found(format!("no {} binding {id}", K::KIND))),
        Ok(true) => Ok(Json(K::to_model(find::<K>(&state, &caller, id)?))),
    }
}

pub(crate) async fn delete<K: Kind>(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path(binding_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id = uuid_path("bindingId", &binding_id)?;
    if state.store.delete_binding(caller.client, K::KIND, id)? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("no {} binding {id}", K::KIND)))
    }
}
