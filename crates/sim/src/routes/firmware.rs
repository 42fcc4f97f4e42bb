//! Firmware operations (reference section 4.1).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::Json;
use dcs_model::{FirmwareModule, Page};
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::paging::PageRequest;
use crate::routes::ListRequest;
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

fn order_by(pr: &PageRequest, columns: &[(&'static str, &'static str)]) -> Vec<(&'static str, bool)> {
    pr.sort
        .0
        .iter()
        .filter_map(|f| columns.iter().find(|(name, _)| *name == f.name).map(|(_, col)| (*col, f.descending)))
        .collect()
}

pub(crate) async fn list_modules(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    req: ListRequest,
) -> Result<Json<Page<FirmwareModule>>, ApiError> {
    caller.require_firmware("specification.read")?;
    let sortable: Vec<&str> = MODULE_SORT.iter().map(|(n, _)| *n).collect();
    let pr = PageRequest::from_params(&req.query, &["deviceSpecificationId", "clientId"], &sortable)?;
    let query = ModuleQuery {
        owner: caller.client,
        id: None,
        device_specification_id: pr.uuid_filter("deviceSpecificationId")?,
        client_id: pr.uuid_filter("clientId")?,
        order_by: order_by(&pr, MODULE_SORT),
        offset: pr.cursor.offset,
        limit: pr.cursor.limit + 1,
    };
    let mut items = state.store.list_modules(&query)?;
    let has_more = items.len() as u64 > pr.cursor.limit;
    items.truncate(pr.cursor.limit as usize);
    let (next, prev) = pr.links(&req.base, "/firmware/modules", has_more);
    Ok(Json(Page { items, next, prev }))
}

pub(crate) async fn get_module(
    State(state): State<Arc<SimState>>,
    caller: Caller,
    Path(module_id): Path<String>,
) -> Result<Json<FirmwareModule>, ApiError> {
    caller.require_firmware("specification.read")?;
    let id = Uuid::parse_str(&module_id).map_err(|_| ApiError::invalid("moduleId", "must be a UUID"))?;
    state
        .store
        .module(caller.client, id)?
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("no firmware module {id}")))
}
