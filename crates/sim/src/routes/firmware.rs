//! Firmware operations (reference section 4.1), and the set-target operation the reference
//! does not show (`PUT /firmware/states/{deviceId}/{moduleId}`, an assumption).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Multipart, Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use dcs_model::{
    validate, DeviceId, FileAttributes, FirmwareModule, FirmwarePackage, FirmwareState, PackageEmbedded, Page,
};
use rand::Rng;
use serde_json::Value;
use sha2::Digest;
use tokio::io::AsyncWriteExt;
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::paging::{PageRequest, QueryParams, TIME_FILTERS};
use crate::routes::{json_body, names, str_field, uuid_path, ListRequest};
use crate::store::firmware::{FileContent, FileKind, NewFile, PackageQuery, StateQuery};
use crate::store::ModuleQuery;
use crate::SimState;

/// Sortable module fields and their columns. Without `sort` the order is `createdAt` then `id`.
const MODULE_SORT: &[(&str, &str)] = &[
    ("createdAt", "created_at"),
    ("modifiedAt", "modified_at"),
    ("name", "name"),
    ("firmwareVersionAttributeName", "firmware_version_attribute_name"),
    ("deviceSpecificationId", "device_specification_id"),
    ("id", "id"),
];

const PACKAGE_SORT: &[(&str, &str)] = &[
    ("createdAt", "p.created_at"),
    ("modifiedAt", "p.modified_at"),
    ("firmwareVersion", "p.firmware_version"),
    ("moduleId", "p.module_id"),
    ("deviceSpecificationId", "p.device_specification_id"),
    ("id", "p.id"),
];

const STATE_SORT: &[(&str, &str)] = &[
    ("deviceId", "device_id"),
    ("moduleId", "module_id"),
    ("modifiedAt", "modified_at"),
    ("createdAt", "created_at"),
    ("currentFirmwareVersion", "current_version"),
    ("targetFirmwareVersion", "target_version"),
    ("firmwareUpdateStatus", "status"),
    ("firmwareUpdateStatusModifiedAt", "status_modified_at"),
    ("targetFirmwareVersionModifiedAt", "target_modified_at"),
];

/// The unique key that ends every order of the states: device, then module.
const STATE_KEY: &[&str] = &["device_id", "module_id"];

/// The order of the states without `sort`: by device and module, or, with
/// `modifiedSince`, by modification time first, so that the states changed since are read
/// through an index in time order rather than found among all and sorted.
fn state_order(modified_since: bool) -> &'static [(&'static str, bool)] {
    if modified_since {
        &[("modified_at", false)]
    } else {
        &[]
    }
}

pub(crate) async fn list_modules(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    req: ListRequest,
) -> Result<Json<Page<FirmwareModule>>, ApiError> {
    caller.require_firmware("specification.read")?;
    let pr = PageRequest::from_params(&req.query, &["deviceSpecificationId", "clientId"], &names(MODULE_SORT))?;
    let w = pr.window(MODULE_SORT);
    let query = ModuleQuery {
        owner: caller.client,
        id: None,
        device_specification_id: pr.uuid_filter("deviceSpecificationId")?,
        client_id: pr.uuid_filter("clientId")?,
        order_by: w.order_by,
        offset: w.offset,
        limit: w.limit,
    };
    let items = state.store.list_modules(&query)?;
    Ok(Json(pr.page(items, &req.base, "/firmware/modules")))
}

pub(crate) async fn get_module(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path(module_id): Path<String>,
) -> Result<Json<FirmwareModule>, ApiError> {
    caller.require_firmware("specification.read")?;
    let id = uuid_path("moduleId", &module_id)?;
    state
        .store
        .module(caller.client, id)?
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("no firmware module {id}")))
}

/// The `embed` values asked for: `module` and/or `deviceSpecification`.
fn parse_embed(values: &[&str]) -> Result<(bool, bool), ApiError> {
    let mut out = (false, false);
    for v in values {
        match *v {
            "module" => out.0 = true,
            "deviceSpecification" => out.1 = true,
            other => {
                return Err(ApiError::invalid(
                    "embed",
                    format!("unknown value `{other}`; allowed: module, deviceSpecification"),
                ))
            }
        }
    }
    Ok(out)
}

fn embed(state: &SimState, owner: Uuid, p: &mut FirmwarePackage, (module, spec): (bool, bool)) -> Result<(), ApiError> {
    if !module && !spec {
        return Ok(());
    }
    let mut e = PackageEmbedded::default();
    if module {
        e.module = state.store.module(owner, p.module_id)?;
    }
    if spec {
        e.device_specification = state.store.device_specification(owner, p.device_specification_id)?;
    }
    p.embedded = Some(e);
    Ok(())
}

pub(crate) async fn list_packages(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    req: ListRequest,
) -> Result<Json<Page<FirmwarePackage>>, ApiError> {
    caller.require_firmware("firmware.read")?;
    let pr = PageRequest::from_params(
        &req.query,
        &["deviceSpecificationId", "moduleId", "clientId", "embed"],
        &names(PACKAGE_SORT),
    )?;
    let embed_values: Vec<&str> = pr.filter("embed").map(|e| e.split(',').collect()).unwrap_or_default();
    let wanted = parse_embed(&embed_values)?;
    let query = PackageQuery {
        owner: caller.client,
        device_specification_id: pr.uuid_filter("deviceSpecificationId")?,
        module_id: pr.uuid_filter("moduleId")?,
        client_id: pr.uuid_filter("clientId")?,
        window: pr.window(PACKAGE_SORT),
    };
    let mut items = state.store.list_packages(&query)?;
    for p in items.iter_mut() {
        embed(&state, caller.client, p, wanted)?;
    }
    Ok(Json(pr.page(items, &req.base, "/firmware/packages")))
}

pub(crate) async fn get_package(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path(package_id): Path<String>,
    req: ListRequest,
) -> Result<Json<FirmwarePackage>, ApiError> {
    caller.require_firmware("firmware.read")?;
    let id = uuid_path("firmwarePackageId", &package_id)?;
    let wanted = parse_embed(&req.query.all("embed"))?;
    let mut p = find_package(&state, &caller, id)?;
    embed(&state, caller.client, &mut p, wanted)?;
    Ok(Json(p))
}

fn find_package(state: &SimState, caller: &Caller, id: Uuid) -> Result<FirmwarePackage, ApiError> {
    state.store.package(caller.client, id)?.ok_or_else(|| ApiError::not_found(format!("no firmware package {id}")))
}

fn required_uuid(body: &serde_json::Map<String, Value>, name: &str) -> Result<Uuid, ApiError> {
    let s = str_field(body, name)?.ok_or_else(|| ApiError::invalid(name, "is required"))?;
    Uuid::parse_str(s).map_err(|_| ApiError::invalid(name, "must be a UUID"))
}

pub(crate) async fn create_package(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<FirmwarePackage>), ApiError> {
    caller.require_firmware("firmware.create")?;
    let body = json_body(&body)?;
    let spec = required_uuid(&body, "deviceSpecificationId")?;
    let module_id = required_uuid(&body, "moduleId")?;
    let version =
        str_field(&body, "firmwareVersion")?.ok_or_else(|| ApiError::invalid("firmwareVersion", "is required"))?;
    validate::firmware_version(version).map_err(|r| ApiError::invalid("firmwareVersion", r))?;
    let description = str_field(&body, "description")?;
    if let Some(d) = description {
        validate::description(d).map_err(|r| ApiError::invalid("description", r))?;
    }
    if state.store.device_specification(caller.client, spec)?.is_none() {
        return Err(ApiError::invalid(
            "deviceSpecificationId",
            format!("no device specification {spec} in this environment"),
        ));
    }
    let module = state
        .store
        .module(caller.client, module_id)?
        .ok_or_else(|| ApiError::invalid("moduleId", format!("no firmware module {module_id} in this environment")))?;
    if module.device_specification_id != spec {
        return Err(ApiError::invalid(
            "moduleId",
            "belongs to another device specification than deviceSpecificationId",
        ));
    }
    let now = state.clock.now();
    let package = FirmwarePackage {
        id: Uuid::new_v4(),
        firmware_version: version.to_owned(),
        client_id: Some(caller.client),
        device_specification_id: spec,
        module_id,
        description: description.map(str::to_owned),
        firmware_file_name: None,
        release_notes_file_name: None,
        created_at: Some(now),
        created_by: Some(caller.principal().to_owned()),
        modified_at: Some(now),
        modified_by: Some(caller.principal().to_owned()),
        embedded: None,
        extra: Default::default(),
    };
    if !state.store.insert_package(&package)? {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("module {module_id} already has a package with firmwareVersion {version}"),
        ));
    }
    let stored = find_package(&state, &caller, package.id)?;
    Ok((StatusCode::CREATED, Json(stored)))
}

pub(crate) async fn update_package(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path(package_id): Path<String>,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<FirmwarePackage>), ApiError> {
    caller.require_firmware("firmware.update")?;
    let id = uuid_path("firmwarePackageId", &package_id)?;
    let body = json_body(&body)?;
    let current = find_package(&state, &caller, id)?;
    // Only the description changes; the fixed fields may be sent, but only unchanged.
    for (name, now) in [
        ("firmwareVersion", current.firmware_version.clone()),
        ("moduleId", current.module_id.to_string()),
        ("deviceSpecificationId", current.device_specification_id.to_string()),
    ] {
        if let Some(v) = str_field(&body, name)? {
            if v != now {
                return Err(ApiError::invalid(
                    name,
                    "cannot be changed after the package is created; only description can",
                ));
            }
        }
    }
    let description = str_field(&body, "description")?;
    if let Some(d) = description {
        validate::description(d).map_err(|r| ApiError::invalid("description", r))?;
    }
    state.store.update_package_description(caller.client, id, description, caller.principal(), state.clock.now())?;
    // The reference documents 201 for this update.
    Ok((StatusCode::CREATED, Json(find_package(&state, &caller, id)?)))
}

pub(crate) async fn delete_package(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path(package_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    caller.require_firmware("firmware.delete")?;
    let id = uuid_path("firmwarePackageId", &package_id)?;
    let package = find_package(&state, &caller, id)?;
    let updating = state.store.package_in_use(&package)?;
    if updating > 0 {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("{updating} devices are updating to this package's version; wait or reset their target first"),
        ));
    }
    if let Some(paths) = state.store.delete_package(caller.client, id)? {
        for p in paths {
            discard_stored(&state, &p).await;
        }
    }
    Ok(StatusCode::NO_CONTENT)
}

fn kind_of(path: &str) -> FileKind {
    if path.ends_with("release-notes-file") {
        FileKind::ReleaseNotes
    } else {
        FileKind::Firmware
    }
}

pub(crate) async fn download_file(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path(package_id): Path<String>,
    uri: axum::http::Uri,
) -> Result<Response, ApiError> {
    caller.require_firmware("firmware.read")?;
    let id = uuid_path("firmwarePackageId", &package_id)?;
    find_package(&state, &caller, id)?;
    let kind = kind_of(uri.path());
    let file = state
        .store
        .file(id, kind)?
        .ok_or_else(|| ApiError::not_found(format!("package {id} has no {} file", kind.as_str())))?;
    let body = match file.content {
        FileContent::Inline(bytes) => Body::from(bytes),
        FileContent::Path(p) => {
            let f = tokio::fs::File::open(state.store.files_dir().join(p)).await.map_err(|e| {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("stored file unreadable: {e}"))
            })?;
            Body::from_stream(tokio_util::io::ReaderStream::new(f))
        }
    };
    let mut res = body.into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(file.size));
    if let Ok(v) = HeaderValue::from_str(&file.attributes.content_type) {
        h.insert(header::CONTENT_TYPE, v);
    }
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{}\"", file.attributes.name)) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(res)
}

/// Removes a stored file that is no longer referenced (deleted package, replaced or deleted
/// release notes). A file already gone is not an error.
async fn discard_stored(state: &SimState, relative: &str) {
    let path = state.store.files_dir().join(relative);
    if let Err(e) = tokio::fs::remove_file(&path).await {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!(path = %path.display(), error = %e, "could not remove a stored file");
        }
    }
}

/// Removes a partly written upload if the request fails or is dropped.
struct TempUpload(Option<std::path::PathBuf>);

impl Drop for TempUpload {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

pub(crate) async fn upload_file(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path(package_id): Path<String>,
    uri: axum::http::Uri,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<Json<FileAttributes>, ApiError> {
    caller.require_firmware("firmware.write")?;
    let id = uuid_path("firmwarePackageId", &package_id)?;
    let package = find_package(&state, &caller, id)?;
    let kind = kind_of(uri.path());
    if kind == FileKind::Firmware && package.firmware_file_name.is_some() {
        return Err(firmware_file_exists(id));
    }
    let mut multipart =
        multipart.map_err(|_| ApiError::invalid("body", "must be multipart/form-data with a `file` part"))?;

    let stored_name = format!("{id}-{}-{}", kind.as_str(), Uuid::new_v4());
    let path = state.store.files_dir().join(&stored_name);
    let mut temp = TempUpload(None);
    let mut checksum: Option<String> = None;
    let mut file: Option<(String, String, String, u64)> = None;
    while let Some(mut field) = multipart
        .next_field()
        .await
        .map_err(|e| ApiError::invalid("body", format!("unreadable multipart body: {e}")))?
    {
        match field.name() {
            Some("checksum") => {
                let text = field.text().await.map_err(|_| ApiError::invalid("checksum", "unreadable"))?;
                let text = text.trim().to_ascii_lowercase();
                validate::sha256_hex(&text).map_err(|r| ApiError::invalid("checksum", r))?;
                checksum = Some(text);
            }
            Some("file") => {
                if file.is_some() {
                    return Err(ApiError::invalid("file", "only one file per request"));
                }
                let name = field.file_name().unwrap_or("").to_owned();
                validate::file_name(&name).map_err(|r| ApiError::invalid("file", format!("file name {r}")))?;
                let content_type = field.content_type().unwrap_or("application/octet-stream").to_owned();
                validate::content_type(&content_type)
                    .map_err(|r| ApiError::invalid("file", format!("content type {r}")))?;
                // Streamed to disk chunk by chunk and hashed on the way: never held whole.
                let mut out = tokio::fs::File::create(&path).await.map_err(|e| {
                    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("cannot store the file: {e}"))
                })?;
                temp.0 = Some(path.clone());
                let mut hasher = sha2::Sha256::new();
                let mut size = 0u64;
                while let Some(chunk) =
                    field.chunk().await.map_err(|e| ApiError::invalid("file", format!("upload interrupted: {e}")))?
                {
                    hasher.update(&chunk);
                    size += chunk.len() as u64;
                    out.write_all(&chunk).await.map_err(|e| {
                        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("cannot store the file: {e}"))
                    })?;
                }
                out.flush().await.map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
                file = Some((name, content_type, hex::encode(hasher.finalize()), size));
            }
            _ => {} // Unknown parts are ignored.
        }
    }
    let (name, content_type, sha256, size) = file.ok_or_else(|| ApiError::invalid("file", "is required"))?;
    if let Some(expected) = &checksum {
        if expected != &sha256 {
            return Err(ApiError::invalid(
                "checksum",
                format!("does not match the uploaded file (its SHA-256 is {sha256}); nothing was stored"),
            ));
        }
    }
    let now = state.clock.now();
    let outcome = state.store.put_file(&NewFile {
        package_id: id,
        kind,
        name: &name,
        content_type: &content_type,
        sha256: &sha256,
        size,
        content: FileContent::Path(stored_name),
        by: caller.principal(),
        at: now,
    })?;
    match outcome {
        Err(()) => Err(firmware_file_exists(id)),
        Ok(replaced) => {
            temp.0 = None; // Kept: it is the stored file now.
            if let Some(old) = replaced {
                discard_stored(&state, &old).await;
            }
            let stored = state.store.file(id, kind)?.ok_or_else(|| ApiError::not_found("file vanished"))?;
            Ok(Json(stored.attributes))
        }
    }
}

fn firmware_file_exists(id: Uuid) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        format!("package {id} already has its firmware file; a firmware file is uploaded once and never replaced"),
    )
}

pub(crate) async fn delete_release_notes(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path(package_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    caller.require_firmware("firmware.delete")?;
    let id = uuid_path("firmwarePackageId", &package_id)?;
    find_package(&state, &caller, id)?;
    match state.store.delete_release_notes(id)? {
        None => Err(ApiError::not_found(format!("package {id} has no release notes"))),
        Some(path) => {
            if let Some(p) = path {
                discard_stored(&state, &p).await;
            }
            Ok(StatusCode::NO_CONTENT)
        }
    }
}

pub(crate) async fn list_states(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    req: ListRequest,
) -> Result<Response, ApiError> {
    caller.require_firmware("device.read")?;
    let (pr, query) = state_query(&state, caller.client, &req.query)?;
    // Each state's JSON straight from its row; the page around them as `Page` serializes.
    let json = state.store.list_state_json(&query)?;
    let page = pr.keyed_page(json.rows, &req.base, "/firmware/states");
    let mut body = Vec::with_capacity(page.items.iter().map(|i| i.len() + 1).sum::<usize>() + 512);
    body.extend_from_slice(b"{\"items\":[");
    for (n, item) in page.items.iter().enumerate() {
        if n > 0 {
            body.push(b',');
        }
        body.extend_from_slice(&json.text[item.clone()]);
    }
    body.push(b']');
    for (name, link) in [("next", &page.next), ("prev", &page.prev)] {
        if let Some(link) = link {
            body.extend_from_slice(format!(",\"{name}\":{}", Value::String(link.clone())).as_bytes());
        }
    }
    body.push(b'}');
    Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response())
}

/// The store query of a states listing by `client` with the request's parameters.
fn state_query(state: &SimState, client: Uuid, params: &QueryParams) -> Result<(PageRequest, StateQuery), ApiError> {
    let mut filters = vec![
        "clientId",
        "moduleId",
        "deviceId",
        "deviceSpecificationId",
        "firmwareUpdateStatus",
        "currentFirmwareVersion",
        "targetFirmwareVersion",
    ];
    filters.extend_from_slice(TIME_FILTERS);
    let mut sortable = names(STATE_SORT);
    if state.opts.variant.is_alt() {
        // A-41 (alt): no `modifiedSince` (an unknown parameter, ignored) and no `modifiedAt` sort.
        filters.retain(|f| *f != "modifiedSince");
        sortable.retain(|f| *f != "modifiedAt");
    }
    let pr = PageRequest::from_params(params, &filters, &sortable)?;
    // A device given in any id form; one that is not in this environment matches nothing.
    let device_id = match pr.filter("deviceId") {
        None => None,
        Some(raw) => {
            let parsed = DeviceId::parse(raw).map_err(|e| ApiError::invalid("deviceId", e.to_string()))?;
            Some(state.store.find_device(client, &parsed)?.map(|d| d.id).unwrap_or_else(Uuid::nil))
        }
    };
    let query = StateQuery {
        owner: client,
        client_id: pr.uuid_filter("clientId")?,
        module_id: pr.uuid_filter("moduleId")?,
        device_id,
        device_specification_id: pr.uuid_filter("deviceSpecificationId")?,
        status: pr.filter("firmwareUpdateStatus").map(str::to_owned),
        current_version: pr.filter("currentFirmwareVersion").map(str::to_owned),
        target_version: pr.filter("targetFirmwareVersion").map(str::to_owned),
        time: pr.time_window()?,
        window: pr.keyed_window(STATE_SORT, state_order(pr.filter("modifiedSince").is_some()), STATE_KEY)?,
    };
    Ok((pr, query))
}

/// `PUT /firmware/states/{deviceId}/{moduleId}` with `{"targetFirmwareVersion": "2.0.0"}`, or
/// `null` / no member to reset the target. Not in the reference: a simulator assumption.
pub(crate) async fn set_target(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path((device, module)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> Result<Json<FirmwareState>, ApiError> {
    caller.require_firmware("firmware.update")?;
    let device_ref = DeviceId::parse(&device).map_err(|e| ApiError::invalid("deviceId", e.to_string()))?;
    let module_id = uuid_path("moduleId", &module)?;
    let body = json_body(&body)?;
    let target = str_field(&body, "targetFirmwareVersion")?;
    let device = state
        .store
        .find_device(caller.client, &device_ref)?
        .ok_or_else(|| ApiError::not_found(format!("no device {device_ref} in this environment")))?;
    if state.store.state(caller.client, device.id, module_id)?.is_none() {
        return Err(ApiError::not_found(format!("device {} has no firmware module {module_id}", device.id)));
    }
    if let Some(version) = target {
        validate::firmware_version(version).map_err(|r| ApiError::invalid("targetFirmwareVersion", r))?;
        let package = state.store.package_by_version(caller.client, module_id, version)?.ok_or_else(|| {
            ApiError::invalid(
                "targetFirmwareVersion",
                format!("module {module_id} has no package with version {version}"),
            )
        })?;
        if package.firmware_file_name.is_none() {
            return Err(ApiError::invalid(
                "targetFirmwareVersion",
                format!("package {} (version {version}) has no firmware file yet; upload it first", package.id),
            ));
        }
    }
    let now = state.clock.now();
    // The device notices its new target within two simulated minutes.
    let first_step = now + time::Duration::seconds(rand::thread_rng().gen_range(10..120));
    state.store.set_target(caller.client, device.id, module_id, target, now, first_step)?;
    Ok(Json(state.store.state(caller.client, device.id, module_id)?.expect("state exists")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SimOptions, Simulator};

    /// The plan SQLite chooses for a states listing of the demo reseller with `params`.
    fn plan(sim: &Simulator, params: &str) -> String {
        let (_, q) = state_query(&sim.state, sim.demo_key().client_id, &QueryParams::from_query(Some(params))).unwrap();
        sim.store().explain_states(&q).unwrap().join("; ")
    }

    /// `modifiedSince` (a refresh's question), the default order and the orders by modification
    /// time or device either way are each read through an index from the position on, on the
    /// first page and on later ones: no sort of the rows
    /// (a temporary B-tree, which at a million states spilled gigabytes to temporary files).
    #[test]
    fn state_windows_are_read_through_an_index_without_a_sort() {
        let sim = Simulator::new(SimOptions { devices_per_client: 20, ..Default::default() }).unwrap();
        let client = sim.demo_key().client_id;
        let (pr, q) = state_query(&sim.state, client, &QueryParams::from_query(Some("limit=3"))).unwrap();
        let rows = sim.store().list_state_rows(&q).unwrap();
        let next = pr.keyed_page(rows, "", "").next.unwrap();
        let (pr, q) = state_query(
            &sim.state,
            client,
            &QueryParams::from_query(Some("limit=3&modifiedSince=2026-01-01T00:00:00Z")),
        )
        .unwrap();
        let rows = sim.store().list_state_rows(&q).unwrap();
        let next_since = pr.keyed_page(rows, "", "").next.unwrap();
        for (params, index) in [
            ("limit=50", "firmware_states_client"),
            (next.trim_start_matches('?'), "firmware_states_client"),
            ("limit=50&modifiedSince=2026-02-01T00:00:00Z", "firmware_states_changed"),
            ("limit=50&sort=-modifiedAt", "firmware_states_changed"),
            ("limit=50&sort=-deviceId", "firmware_states_client"),
            (next_since.trim_start_matches('?'), "firmware_states_changed"),
        ] {
            let plan = plan(&sim, params);
            assert!(plan.contains(&format!("INDEX {index}")), "{params}: {plan}");
            assert!(!plan.contains("TEMP B-TREE"), "{params}: {plan}");
        }
    }
}
