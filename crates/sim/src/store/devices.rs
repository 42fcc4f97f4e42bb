//! SQL of the simulated devices: lookup by any of the seven id forms, and the beta listing.

use dcs_model::DeviceId;
use rusqlite::{params, OptionalExtension, Row};
use uuid::Uuid;

use super::{parse_uuid, Store, StoreError};

/// A simulated device.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceRow {
    pub id: Uuid,
    pub client_id: Uuid,
    pub device_specification_id: Uuid,
    pub project_id: Uuid,
    pub name: String,
    pub description: String,
    pub barcode: String,
    /// `lora`, `http`, `mqtt` or `sms`.
    pub connection: String,
    pub imei: Option<String>,
    pub deveui: Option<String>,
    pub metadata: serde_json::Value,
}

impl DeviceRow {
    /// The URN the service shows as `networkId` (section 2.6).
    pub fn network_id(&self) -> String {
        match (&self.deveui, &self.imei) {
            (Some(eui), _) => format!("urn:dev:deveui:{eui}:"),
            (None, Some(imei)) => format!("urn:dev:imei:{imei}:"),
            (None, None) => format!("urn:dev:dvnuuid:{}:", self.id),
        }
    }
}

const DEVICE_COLUMNS: &str = "SELECT id, client_id, device_specification_id, project_id, name, description, barcode,
        connection, imei, deveui, metadata FROM devices";

fn device_from(r: &Row<'_>) -> rusqlite::Result<Result<DeviceRow, StoreError>> {
    let (id, client, spec, project): (String, String, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
    let (name, description, barcode, connection): (String, String, String, String) =
        (r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?);
    let (imei, deveui, metadata): (Option<String>, Option<String>, String) = (r.get(8)?, r.get(9)?, r.get(10)?);
    Ok((|| {
        Ok(DeviceRow {
            id: parse_uuid("devices.id", id)?,
            client_id: parse_uuid("devices.client_id", client)?,
            device_specification_id: parse_uuid("devices.device_specification_id", spec)?,
            project_id: parse_uuid("devices.project_id", project)?,
            name,
            description,
            barcode,
            connection,
            imei,
            deveui,
            metadata: serde_json::from_str(&metadata).unwrap_or(serde_json::Value::Null),
        })
    })())
}

/// Sort columns of the beta device listing (`sortBy`).
pub const BETA_SORT: &[(&str, &str)] =
    &[("name", "name"), ("uuid", "id"), ("barcode", "barcode"), ("description", "description")];

impl Store {
    /// The device `id` names, if it belongs to `owner`. A DVNUUID is the device's UUID written
    /// in another form (simulator assumption).
    pub fn find_device(&self, owner: Uuid, id: &DeviceId) -> Result<Option<DeviceRow>, StoreError> {
        let (column, value) = match id {
            DeviceId::Uuid(u) | DeviceId::DvnUuid { uuid: u, .. } => ("id", u.to_string()),
            DeviceId::Imei { digits, .. } => ("imei", digits.clone()),
            DeviceId::DevEui { hex, .. } => ("deveui", hex.clone()),
        };
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("{DEVICE_COLUMNS} WHERE {column} = ?1 AND client_id = ?2"))?;
        stmt.query_row(params![value, owner.to_string()], device_from).optional()?.transpose()
    }

    /// A page of the beta device listing and the total count: `search` matches name,
    /// description and barcode partially, case-sensitively.
    pub fn beta_devices(
        &self,
        owner: Uuid,
        search: Option<&str>,
        sort_column: &str,
        ascending: bool,
        page: u64,
        size: u64,
    ) -> Result<(Vec<DeviceRow>, u64), StoreError> {
        let conn = self.conn();
        // instr() is case-sensitive, unlike LIKE.
        let filter = "client_id = ?1 AND (?2 IS NULL OR instr(name, ?2) > 0 OR instr(description, ?2) > 0 OR instr(barcode, ?2) > 0)";
        let total: i64 = conn.query_row(
            &format!("SELECT COUNT(*) FROM devices WHERE {filter}"),
            params![owner.to_string(), search],
            |r| r.get(0),
        )?;
        let dir = if ascending { "ASC" } else { "DESC" };
        let mut stmt = conn.prepare_cached(&format!(
            "{DEVICE_COLUMNS} WHERE {filter} ORDER BY {sort_column} {dir}, id ASC LIMIT ?3 OFFSET ?4"
        ))?;
        let rows =
            stmt.query_map(params![owner.to_string(), search, size as i64, (page * size) as i64], device_from)?;
        let items = rows.map(|r| r?).collect::<Result<Vec<_>, _>>()?;
        Ok((items, total as u64))
    }
}
