//! Devices by name. Lists name a device by whatever id the service put there (a UUID, an IMEI or
//! DevEUI URN); the operator knows it by name. The [`Directory`] is the service's device listing
//! (the beta `GET /api/devices`, section 4.5) read once per profile and customer and kept for a
//! few minutes ([`Directories`]): it answers a label for any id form ([`Directory::label`]) and a
//! case-insensitive search for pickers ([`Directory::search`]), which the service's own search
//! (case-sensitive) does not offer.
//!
//! The reference lists no member for a device's IMEI or DevEUI. They are read where a service
//! may put them (simulator assumption A-51): a member `imei` / `devEui` (any case, `_` or `-`
//! ignored) on the device or in its metadata, or a device URN (`urn:dev:imei:...`,
//! `urn:dev:deveui:...`, or the `imei:` / `deveui:` forms) as any string member of either.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use dcs_api::beta::BetaDeviceQuery;
use dcs_api::model::{BetaDevice, DeviceId};
use dcs_api::{Client, Error};
use serde::Serialize;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::kept::Kept;
use crate::FieldError;

/// Most ids one label request may name.
pub const MAX_IDS: usize = 500;
/// Longest id a label request may name (the longest id form is 52 characters).
pub const MAX_ID_LEN: usize = 200;
/// Most devices read into a directory; past it the directory says it is incomplete.
pub const MAX_DEVICES: usize = 50_000;
/// Devices per page of the listing (a service refusing it is asked again with [`SMALL_PAGE`]).
const PAGE: u32 = 500;
const SMALL_PAGE: u32 = 100;
/// How long a directory is used before it is read again (new devices appear after that).
pub const FRESH_FOR: Duration = Duration::from_secs(300);

/// A device of the listing, as pickers and labels show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DeviceEntry {
    pub uuid: Uuid,
    pub name: String,
    pub description: Option<String>,
    pub barcode: Option<String>,
    pub device_specification_id: Uuid,
    /// Its IMEI (digits), where the listing shows one.
    pub imei: Option<String>,
    /// Its LoRaWAN DevEUI (16 hex, lower case), where the listing shows one.
    pub dev_eui: Option<String>,
}

/// What is known of one device id, for a label: the name and network id of the device the
/// listing holds for it (`known`), or only what the id itself says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DeviceLabel {
    /// The id as asked for.
    pub id: String,
    /// The service's device listing holds this device.
    pub known: bool,
    pub uuid: Option<Uuid>,
    pub name: Option<String>,
    pub description: Option<String>,
    pub imei: Option<String>,
    pub dev_eui: Option<String>,
}

/// The devices of one profile and customer, indexed by every id form.
#[derive(Debug, Clone, Default)]
pub struct Directory {
    devices: Vec<DeviceEntry>,
    by_uuid: HashMap<Uuid, usize>,
    by_imei: HashMap<String, usize>,
    by_eui: HashMap<String, usize>,
    /// Every device of the listing was read (not cut at [`MAX_DEVICES`]).
    pub complete: bool,
}

fn squash(key: &str) -> String {
    key.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

/// The IMEI and DevEUI of a listed device, wherever it shows them (see the module's notes).
pub fn network_ids(d: &BetaDevice) -> (Option<String>, Option<String>) {
    let mut imei = None;
    let mut eui = None;
    let mut look = |m: &Map<String, Value>| {
        for (k, v) in m {
            let Some(s) = v.as_str().map(str::trim) else { continue };
            let parsed = match squash(k).as_str() {
                "imei" => DeviceId::parse(&format!("imei:{s}")).ok(),
                "deveui" => DeviceId::parse(&format!("deveui:{s}")).ok(),
                _ if s.contains(':') => DeviceId::parse(s).ok(),
                _ => None,
            };
            match parsed {
                Some(DeviceId::Imei { digits, .. }) => {
                    imei.get_or_insert(digits);
                }
                Some(DeviceId::DevEui { hex, .. }) => {
                    eui.get_or_insert(hex.to_ascii_lowercase());
                }
                _ => {}
            }
        }
    };
    look(&d.extra);
    if let Value::Object(meta) = &d.metadata {
        look(meta);
    }
    (imei, eui)
}

impl From<BetaDevice> for DeviceEntry {
    /// A device of the service's listing with its IMEI and DevEUI found (`network_ids`).
    fn from(d: BetaDevice) -> DeviceEntry {
        let (imei, dev_eui) = network_ids(&d);
        DeviceEntry {
            uuid: d.uuid,
            name: d.name,
            description: d.description,
            barcode: d.barcode,
            device_specification_id: d.device_specification_uuid,
            imei,
            dev_eui,
        }
    }
}

impl Directory {
    pub fn from_devices(devices: Vec<BetaDevice>, complete: bool) -> Directory {
        let mut dir = Directory { complete, ..Default::default() };
        for d in devices {
            if dir.by_uuid.contains_key(&d.uuid) {
                continue;
            }
            let entry = DeviceEntry::from(d);
            let i = dir.devices.len();
            dir.by_uuid.insert(entry.uuid, i);
            if let Some(x) = &entry.imei {
                dir.by_imei.entry(x.clone()).or_insert(i);
            }
            if let Some(x) = &entry.dev_eui {
                dir.by_eui.entry(x.clone()).or_insert(i);
            }
            dir.devices.push(entry);
        }
        dir
    }

    pub fn len(&self) -> usize {
        self.devices.len()
    }

    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// The device an id names, in any of its forms.
    /// Every device read, by name.
    pub fn entries(&self) -> &[DeviceEntry] {
        &self.devices
    }

    pub fn find(&self, id: &str) -> Option<&DeviceEntry> {
        let i = match DeviceId::parse(id.trim()).ok()? {
            DeviceId::Uuid(u) | DeviceId::DvnUuid { uuid: u, .. } => self.by_uuid.get(&u),
            DeviceId::Imei { digits, .. } => self.by_imei.get(&digits),
            DeviceId::DevEui { hex, .. } => self.by_eui.get(&hex.to_ascii_lowercase()),
        }?;
        self.devices.get(*i)
    }

    /// What is known of `id`: the listed device, or what the id itself says.
    pub fn label(&self, id: &str) -> DeviceLabel {
        if let Some(d) = self.find(id) {
            return DeviceLabel {
                id: id.to_owned(),
                known: true,
                uuid: Some(d.uuid),
                name: Some(d.name.clone()),
                description: d.description.clone(),
                imei: d.imei.clone(),
                dev_eui: d.dev_eui.clone(),
            };
        }
        let mut out = DeviceLabel {
            id: id.to_owned(),
            known: false,
            uuid: None,
            name: None,
            description: None,
            imei: None,
            dev_eui: None,
        };
        match DeviceId::parse(id.trim()) {
            Ok(DeviceId::Uuid(u) | DeviceId::DvnUuid { uuid: u, .. }) => out.uuid = Some(u),
            Ok(DeviceId::Imei { digits, .. }) => out.imei = Some(digits),
            Ok(DeviceId::DevEui { hex, .. }) => out.dev_eui = Some(hex.to_ascii_lowercase()),
            Err(_) => {}
        }
        out
    }

    /// The devices whose name, description, barcode, UUID, IMEI or DevEUI contains `text`
    /// (ignoring case), by name; page `page` (from 0) of `size`, and how many match in all.
    pub fn search(&self, text: &str, page: u32, size: u32) -> (Vec<DeviceEntry>, u32) {
        let needle = text.trim().to_lowercase();
        let hit = |d: &&DeviceEntry| {
            needle.is_empty()
                || [Some(&d.name), d.description.as_ref(), d.barcode.as_ref(), d.imei.as_ref(), d.dev_eui.as_ref()]
                    .into_iter()
                    .flatten()
                    .any(|f| f.to_lowercase().contains(&needle))
                || d.uuid.to_string().contains(&needle)
        };
        let mut found: Vec<&DeviceEntry> = self.devices.iter().filter(hit).collect();
        found.sort_by(|a, b| a.name.to_lowercase().cmp(&b.name.to_lowercase()).then(a.uuid.cmp(&b.uuid)));
        let total = u32::try_from(found.len()).unwrap_or(u32::MAX);
        let size = size.clamp(1, 200) as usize;
        let start = (page as usize).saturating_mul(size);
        (found.into_iter().skip(start).take(size).cloned().collect(), total)
    }
}

/// Checks the ids of a label request: at most [`MAX_IDS`], none empty or longer than
/// [`MAX_ID_LEN`], no control characters. (An id in no known form is answered as unknown.)
pub fn check_ids(ids: &[String]) -> Result<(), FieldError> {
    if ids.len() > MAX_IDS {
        return Err(FieldError {
            field: "ids".into(),
            rule: format!("at most {MAX_IDS} ids at a time ({} given)", ids.len()),
        });
    }
    for (i, id) in ids.iter().enumerate() {
        if id.trim().is_empty() || id.len() > MAX_ID_LEN || id.chars().any(char::is_control) {
            return Err(FieldError {
                field: format!("ids[{i}]"),
                rule: format!("must be a device id of 1 to {MAX_ID_LEN} characters without control characters"),
            });
        }
    }
    Ok(())
}

/// Reads the listing, page after page, up to [`MAX_DEVICES`].
pub async fn load(client: &Client) -> Result<Directory, Error> {
    let mut size = PAGE;
    let mut page_no = 0u32;
    let mut all: Vec<BetaDevice> = Vec::new();
    loop {
        let query = BetaDeviceQuery {
            current_page: Some(page_no),
            page_size: Some(size),
            search: None,
            sort_by: Some("name".into()),
            descending: None,
        };
        let page = match client.beta().devices(&query).await {
            Ok(p) => p,
            // A service with a smaller largest page: start again with a smaller page.
            Err(Error::Api { status: 400, .. }) if size == PAGE && page_no == 0 => {
                size = SMALL_PAGE;
                continue;
            }
            Err(e) => return Err(e),
        };
        let last = page.is_last() || page.content.is_empty();
        all.extend(page.content);
        if all.len() >= MAX_DEVICES {
            all.truncate(MAX_DEVICES);
            return Ok(Directory::from_devices(all, last));
        }
        if last {
            return Ok(Directory::from_devices(all, true));
        }
        page_no += 1;
    }
}

/// The directories of the scopes (profile, service and customer) the app acted in, each read
/// once and kept for [`FRESH_FOR`]; one read at a time per scope.
pub struct Directories(Kept<Directory>);

impl Default for Directories {
    fn default() -> Directories {
        Directories(Kept::new(FRESH_FOR))
    }
}

impl Directories {
    /// The directory of `scope`, read with `client` when there is none or it is stale.
    pub async fn get(&self, scope: &str, client: &Client) -> Result<Arc<Directory>, Error> {
        self.0.get(scope, || load(client)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn device(n: u128, name: &str, extra: Value, metadata: Value) -> BetaDevice {
        let mut v = json!({
            "uuid": Uuid::from_u128(n), "name": name, "description": format!("{name} description"),
            "metadata": metadata, "deviceSpecificationUUID": Uuid::from_u128(99), "barcode": format!("BC{n}"),
        });
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        serde_json::from_value(v).unwrap()
    }

    fn dir() -> Directory {
        Directory::from_devices(
            vec![
                device(1, "T1-00001", json!({"imei": "354000000000001"}), json!({})),
                device(2, "WM-00002", json!({"devEui": "70B3D57ED0000002"}), json!({"site": "x"})),
                device(3, "gw-00003", json!({}), json!({"networkId": "urn:dev:imei:354000000000003:"})),
                device(4, "Bare", json!({}), json!({"batch": 3})),
            ],
            true,
        )
    }

    #[test]
    fn the_network_id_is_read_as_a_member_or_a_urn_in_the_metadata() {
        let d = dir();
        assert_eq!(d.find("urn:dev:imei:354000000000001:").map(|e| e.name.as_str()), Some("T1-00001"));
        assert_eq!(d.find("IMEI:354000000000001").map(|e| e.name.as_str()), Some("T1-00001"));
        assert_eq!(d.find("urn:dev:deveui:70b3d57ed0000002:").map(|e| e.name.as_str()), Some("WM-00002"));
        assert_eq!(d.find("deveui:70B3D57ED0000002").map(|e| e.name.as_str()), Some("WM-00002"));
        assert_eq!(d.find("urn:dev:imei:354000000000003").map(|e| e.name.as_str()), Some("gw-00003"));
        assert_eq!(d.find(&Uuid::from_u128(4).to_string()).map(|e| e.name.as_str()), Some("Bare"));
        assert_eq!(d.find(&format!("urn:dev:dvnuuid:{}:", Uuid::from_u128(4))).map(|e| e.name.as_str()), Some("Bare"));
        let bare = d.find(&Uuid::from_u128(4).to_string()).unwrap();
        assert_eq!((bare.imei.as_deref(), bare.dev_eui.as_deref()), (None, None));
    }

    #[test]
    fn a_label_names_a_known_device_and_keeps_an_unknown_id_as_it_came() {
        let d = dir();
        let known = d.label("urn:dev:deveui:70b3d57ed0000002:");
        assert!(known.known);
        assert_eq!(known.name.as_deref(), Some("WM-00002"));
        assert_eq!(known.dev_eui.as_deref(), Some("70b3d57ed0000002"));
        assert_eq!(known.uuid, Some(Uuid::from_u128(2)));
        assert_eq!(known.id, "urn:dev:deveui:70b3d57ed0000002:");

        let unknown = d.label("urn:dev:imei:999999999999999:");
        assert!(!unknown.known);
        assert_eq!((unknown.name, unknown.imei.as_deref()), (None, Some("999999999999999")));
        let junk = d.label("not an id");
        assert!(!junk.known && junk.uuid.is_none() && junk.imei.is_none());
    }

    #[test]
    fn search_ignores_case_matches_every_id_and_pages() {
        let d = dir();
        let names = |text: &str| d.search(text, 0, 10).0.into_iter().map(|e| e.name).collect::<Vec<_>>();
        assert_eq!(names("t1-0"), vec!["T1-00001"]);
        assert_eq!(names("GW"), vec!["gw-00003"]);
        assert_eq!(names("70b3d57ed0000002"), vec!["WM-00002"]);
        assert_eq!(names("354000000000003"), vec!["gw-00003"]);
        assert_eq!(names("bc4"), vec!["Bare"]);
        // By name ignoring case, then paged.
        assert_eq!(names(""), vec!["Bare", "gw-00003", "T1-00001", "WM-00002"]);
        let (second, total) = d.search("", 1, 3);
        assert_eq!((second.len(), total), (1, 4));
        assert_eq!(second[0].name, "WM-00002");
    }

    #[test]
    fn a_label_request_is_bounded_and_checked() {
        assert!(check_ids(&["imei:354000000000001".into()]).is_ok());
        let many = vec!["x".to_owned(); MAX_IDS + 1];
        assert_eq!(check_ids(&many).unwrap_err().field, "ids");
        assert_eq!(check_ids(&["ok".into(), "".into()]).unwrap_err().field, "ids[1]");
        assert_eq!(check_ids(&["a\nb".into()]).unwrap_err().field, "ids[0]");
        assert_eq!(check_ids(&["a".repeat(MAX_ID_LEN + 1)]).unwrap_err().field, "ids[0]");
    }
}
