//! SQL of the firmware area: modules, packages, their files, and per-device firmware states.

use std::collections::BTreeMap;

use dcs_model::{
    FileAttributes, FirmwareDeviceSpecification, FirmwareModule, FirmwarePackage, FirmwareState, UpdateStatus,
};
use rusqlite::types::Value;
use rusqlite::{params, OptionalExtension, Row};
use time::OffsetDateTime;
use uuid::Uuid;

use super::query::{Select, TimeWindow, Window};
use super::{parse_ts, parse_uuid, ts, Store, StoreError};

/// The filters and window of a module listing.
#[derive(Debug, Clone, Default)]
pub struct ModuleQuery {
    pub owner: Uuid,
    pub id: Option<Uuid>,
    pub device_specification_id: Option<Uuid>,
    pub client_id: Option<Uuid>,
    /// `ORDER BY` terms, already checked against the allowed columns; empty means the
    /// default order, `createdAt` ascending. `id` always breaks ties.
    pub order_by: Vec<(&'static str, bool)>,
    pub offset: u64,
    pub limit: u64,
}

fn opt_ts(column: &'static str, v: Option<String>) -> Result<Option<OffsetDateTime>, StoreError> {
    v.map(|s| parse_ts(column, s)).transpose()
}

const MODULE_COLUMNS: &str = "SELECT id, client_id, device_specification_id, name, firmware_version_attribute_name,
        created_at, created_by, modified_at, modified_by FROM firmware_modules";

fn module_row(r: &Row<'_>) -> rusqlite::Result<[Option<String>; 9]> {
    Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?])
}

fn module_from(c: [Option<String>; 9]) -> Result<FirmwareModule, StoreError> {
    let [id, client, spec, name, attr, created_at, created_by, modified_at, modified_by] = c;
    Ok(FirmwareModule {
        id: parse_uuid("firmware_modules.id", id.unwrap_or_default())?,
        name: name.unwrap_or_default(),
        firmware_version_attribute_name: attr.unwrap_or_default(),
        device_specification_id: parse_uuid("firmware_modules.device_specification_id", spec.unwrap_or_default())?,
        client_id: client.map(|c| parse_uuid("firmware_modules.client_id", c)).transpose()?,
        created_at: opt_ts("firmware_modules.created_at", created_at)?,
        created_by,
        modified_at: opt_ts("firmware_modules.modified_at", modified_at)?,
        modified_by,
        extra: Default::default(),
    })
}

/// Filters of a package listing (section 4.1).
#[derive(Debug, Clone, Default)]
pub struct PackageQuery {
    pub owner: Uuid,
    pub device_specification_id: Option<Uuid>,
    pub module_id: Option<Uuid>,
    pub client_id: Option<Uuid>,
    pub window: Window,
}

const PACKAGE_COLUMNS: &str = "SELECT p.id, p.client_id, p.device_specification_id, p.module_id, p.firmware_version,
        p.description, p.created_at, p.created_by, p.modified_at, p.modified_by,
        (SELECT name FROM firmware_files f WHERE f.package_id = p.id AND f.kind = 'firmware'),
        (SELECT name FROM firmware_files f WHERE f.package_id = p.id AND f.kind = 'release-notes')
     FROM firmware_packages p";

fn package_from(r: &Row<'_>) -> rusqlite::Result<Result<FirmwarePackage, StoreError>> {
    let cols: [Option<String>; 12] = [
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
        r.get(9)?,
        r.get(10)?,
        r.get(11)?,
    ];
    Ok((|| {
        let [id, client, spec, module, version, description, created_at, created_by, modified_at, modified_by, fw, rn] =
            cols;
        Ok(FirmwarePackage {
            id: parse_uuid("firmware_packages.id", id.unwrap_or_default())?,
            firmware_version: version.unwrap_or_default(),
            client_id: client.map(|c| parse_uuid("firmware_packages.client_id", c)).transpose()?,
            device_specification_id: parse_uuid("firmware_packages.device_specification_id", spec.unwrap_or_default())?,
            module_id: parse_uuid("firmware_packages.module_id", module.unwrap_or_default())?,
            description,
            firmware_file_name: fw,
            release_notes_file_name: rn,
            created_at: opt_ts("firmware_packages.created_at", created_at)?,
            created_by,
            modified_at: opt_ts("firmware_packages.modified_at", modified_at)?,
            modified_by,
            embedded: None,
            extra: Default::default(),
        })
    })())
}

/// Which file of a package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Firmware,
    ReleaseNotes,
}

impl FileKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FileKind::Firmware => "firmware",
            FileKind::ReleaseNotes => "release-notes",
        }
    }

    /// `fileType` shown in the file attributes.
    pub fn file_type(self) -> &'static str {
        match self {
            FileKind::Firmware => "FIRMWARE",
            FileKind::ReleaseNotes => "RELEASE_NOTES",
        }
    }
}

/// A stored file: attributes plus where its bytes are.
#[derive(Debug, Clone)]
pub struct StoredFile {
    pub attributes: FileAttributes,
    pub sha256: String,
    pub size: u64,
    pub content: FileContent,
}

#[derive(Debug, Clone)]
pub enum FileContent {
    /// A file on disk, relative to the store's files folder.
    Path(String),
    Inline(Vec<u8>),
}

/// A new file to record (its bytes are already on disk or given inline).
pub struct NewFile<'a> {
    pub package_id: Uuid,
    pub kind: FileKind,
    pub name: &'a str,
    pub content_type: &'a str,
    pub sha256: &'a str,
    pub size: u64,
    pub content: FileContent,
    pub by: &'a str,
    pub at: OffsetDateTime,
}

/// Filters of a firmware-state listing.
#[derive(Debug, Clone, Default)]
pub struct StateQuery {
    pub owner: Uuid,
    pub client_id: Option<Uuid>,
    pub module_id: Option<Uuid>,
    pub device_id: Option<Uuid>,
    pub device_specification_id: Option<Uuid>,
    pub status: Option<String>,
    pub current_version: Option<String>,
    pub target_version: Option<String>,
    pub time: TimeWindow,
    pub window: Window,
}

/// Columns of a state the row holds ([`state_from`]); its key's values follow them.
const STATE_FIELDS: usize = 11;
/// The rows of a states listing as JSON ([`Store::list_state_json`]): each row's text, one after
/// another in `text`, by its range there, with its keyset position where a page may start or
/// end at it.
#[derive(Debug, Default)]
pub struct StatesJson {
    pub text: Vec<u8>,
    pub rows: Vec<(std::ops::Range<usize>, Vec<Value>)>,
}
/// State columns that are never NULL: a descending keyset bound on one seeks an index.
const STATE_NOT_NULL: &[&str] = &["device_id", "module_id", "client_id", "created_at", "modified_at"];

const STATE_COLUMNS: &str = "SELECT device_id, module_id, device_specification_id, client_id, project_id,
        current_version, target_version, target_modified_at, status, status_details, status_modified_at
     FROM firmware_states";

fn state_from(r: &Row<'_>) -> rusqlite::Result<Result<FirmwareState, StoreError>> {
    let c: [Option<String>; 11] = [
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
        r.get(9)?,
        r.get(10)?,
    ];
    Ok((|| {
        let [device, module, spec, client, project, current, target, target_at, status, details, status_at] = c;
        Ok(FirmwareState {
            device_id: parse_uuid("firmware_states.device_id", device.unwrap_or_default())?,
            module_id: parse_uuid("firmware_states.module_id", module.unwrap_or_default())?,
            device_specification_id: spec
                .map(|s| parse_uuid("firmware_states.device_specification_id", s))
                .transpose()?,
            client_id: client.map(|s| parse_uuid("firmware_states.client_id", s)).transpose()?,
            project_id: project.map(|s| parse_uuid("firmware_states.project_id", s)).transpose()?,
            current_firmware_version: current,
            target_firmware_version: target,
            target_firmware_version_modified_at: opt_ts("firmware_states.target_modified_at", target_at)?,
            firmware_update_status: status.as_deref().map(UpdateStatus::from),
            firmware_update_status_details: details,
            firmware_update_status_modified_at: opt_ts("firmware_states.status_modified_at", status_at)?,
            extra: Default::default(),
        })
    })())
}

/// One row of [`STATE_COLUMNS`] as the JSON of its [`FirmwareState`], written at the end of
/// `out`: members in the struct's order, absent ones left out, times as RFC 3339 writes them
/// (store text of another form is parsed and formatted as [`state_from`] would).
fn write_state_json(r: &Row<'_>, out: &mut Vec<u8>) -> Result<(), StoreError> {
    const NAMES: [&str; STATE_FIELDS] = [
        "deviceId",
        "moduleId",
        "deviceSpecificationId",
        "clientId",
        "projectId",
        "currentFirmwareVersion",
        "targetFirmwareVersion",
        "targetFirmwareVersionModifiedAt",
        "firmwareUpdateStatus",
        "firmwareUpdateStatusDetails",
        "firmwareUpdateStatusModifiedAt",
    ];
    // FirmwareState's member order: moduleId before deviceId, then the columns' own order.
    const ORDER: [usize; STATE_FIELDS] = [1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    const TIMES: [usize; 2] = [7, 10];
    let malformed = |value: String| StoreError::Malformed { column: "firmware_states", value };
    out.push(b'{');
    let mut first = true;
    for i in ORDER {
        let text = match r.get_ref(i)? {
            rusqlite::types::ValueRef::Null => continue,
            rusqlite::types::ValueRef::Text(t) => t,
            other => return Err(malformed(format!("{other:?}"))),
        };
        if !first {
            out.push(b',');
        }
        first = false;
        out.push(b'"');
        out.extend_from_slice(NAMES[i].as_bytes());
        out.extend_from_slice(b"\":");
        // Ids, versions, statuses and stored times are plain ASCII: copied as they are. Any
        // other text is checked and escaped as serde_json writes a string.
        if TIMES.contains(&i) {
            let text = std::str::from_utf8(text).map_err(|_| malformed(String::from_utf8_lossy(text).into_owned()))?;
            out.push(b'"');
            write_rfc3339_of_stored(text, out)?;
            out.push(b'"');
        } else if is_plain_json_text(text) {
            out.push(b'"');
            out.extend_from_slice(text);
            out.push(b'"');
        } else {
            let text = std::str::from_utf8(text).map_err(|_| malformed(String::from_utf8_lossy(text).into_owned()))?;
            serde_json::to_writer(&mut *out, text).map_err(|e| malformed(e.to_string()))?;
        }
    }
    out.push(b'}');
    Ok(())
}

/// Whether `text` is printable ASCII without a quote or a backslash: a JSON string holds it as it
/// is. Every byte is looked at, none stops the loop, so the compiler checks many at a time (the
/// check stopping at the first other byte went a byte at a time: 7 % of a states page's time).
fn is_plain_json_text(text: &[u8]) -> bool {
    text.iter().fold(0u8, |other, &b| other | u8::from(!(0x20..0x7f).contains(&b) | (b == b'"') | (b == b'\\'))) == 0
}

/// A stored time (`ts`: `YYYY-MM-DDTHH:MM:SS.mmmZ`) as RFC 3339 writes it, at the end of `out`:
/// the fraction without its trailing zeros, none when it is zero. Any other stored form is
/// parsed and formatted.
fn write_rfc3339_of_stored(text: &str, out: &mut Vec<u8>) -> Result<(), StoreError> {
    let b = text.as_bytes();
    if b.len() == 24 && b[19] == b'.' && b[23] == b'Z' && b[20..23].iter().all(u8::is_ascii_digit) {
        let fraction = text[20..23].trim_end_matches('0');
        out.extend_from_slice(&b[..19]);
        if !fraction.is_empty() {
            out.push(b'.');
            out.extend_from_slice(fraction.as_bytes());
        }
        out.push(b'Z');
        return Ok(());
    }
    let t = parse_ts("firmware_states", text.to_owned())?;
    let formatted = t
        .format(&time::format_description::well_known::Rfc3339)
        .map_err(|e| StoreError::Malformed { column: "firmware_states", value: e.to_string() })?;
    out.extend_from_slice(formatted.as_bytes());
    Ok(())
}

/// The statement of a states listing, its arguments, and how many key values end each row.
/// The window's terms end in the unique key, device then module (without terms, those two).
fn state_select(q: &StateQuery) -> (String, Vec<Value>, usize) {
    let select = Select::new(STATE_COLUMNS)
        .eq("client_id", q.owner.to_string())
        .eq_opt("client_id", q.client_id.map(|v| v.to_string()))
        .eq_opt("module_id", q.module_id.map(|v| v.to_string()))
        .eq_opt("device_id", q.device_id.map(|v| v.to_string()))
        .eq_opt("device_specification_id", q.device_specification_id.map(|v| v.to_string()))
        .eq_opt("status", q.status.clone())
        .eq_opt("current_version", q.current_version.clone())
        .eq_opt("target_version", q.target_version.clone())
        .time_window(&q.time);
    let w = &q.window;
    let terms: Vec<(&str, bool)> =
        if w.order_by.is_empty() { vec![("device_id", false), ("module_id", false)] } else { w.order_by.clone() };
    let select = match &w.keyset {
        Some(k) => select.keyset(&terms, STATE_NOT_NULL, k),
        None => select,
    };
    let before = w.keyset.as_ref().is_some_and(|k| k.before);
    (select.keyed_sql(&terms, before, w.limit, w.offset), select.args, terms.len())
}

/// A state the device simulation must move on.
#[derive(Debug, Clone)]
pub struct DueStep {
    pub device_id: Uuid,
    pub module_id: Uuid,
    pub client_id: Uuid,
    pub status: String,
    pub target: Option<String>,
    pub attempts: i64,
    /// When the step is due (simulated time).
    pub due: OffsetDateTime,
}

impl Store {
    /// Modules owned by `q.owner`, filtered, ordered and windowed. Returns up to `q.limit` rows.
    pub fn list_modules(&self, q: &ModuleQuery) -> Result<Vec<FirmwareModule>, StoreError> {
        let select = Select::new(MODULE_COLUMNS)
            .eq("client_id", q.owner.to_string())
            .eq_opt("id", q.id.map(|v| v.to_string()))
            .eq_opt("device_specification_id", q.device_specification_id.map(|v| v.to_string()))
            .eq_opt("client_id", q.client_id.map(|v| v.to_string()));
        let sql = select.sql(&q.order_by, "created_at ASC", "id ASC", q.limit, q.offset);
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(select.args.iter()), module_row)?;
        rows.map(|r| module_from(r?)).collect()
    }

    /// One module, if it exists and belongs to `owner`.
    pub fn module(&self, owner: Uuid, id: Uuid) -> Result<Option<FirmwareModule>, StoreError> {
        let found = self.list_modules(&ModuleQuery { owner, id: Some(id), limit: 1, ..Default::default() })?;
        Ok(found.into_iter().next())
    }

    pub fn device_specification(
        &self,
        owner: Uuid,
        id: Uuid,
    ) -> Result<Option<FirmwareDeviceSpecification>, StoreError> {
        let row = self
            .conn()
            .query_row(
                "SELECT name FROM device_specifications WHERE id = ?1 AND client_id = ?2",
                [id.to_string(), owner.to_string()],
                |r| r.get::<_, String>(0),
            )
            .optional()?;
        Ok(row.map(|name| FirmwareDeviceSpecification { id, name, client_id: owner }))
    }

    pub fn list_packages(&self, q: &PackageQuery) -> Result<Vec<FirmwarePackage>, StoreError> {
        let select = Select::new(PACKAGE_COLUMNS)
            .eq("p.client_id", q.owner.to_string())
            .eq_opt("p.device_specification_id", q.device_specification_id.map(|v| v.to_string()))
            .eq_opt("p.module_id", q.module_id.map(|v| v.to_string()))
            .eq_opt("p.client_id", q.client_id.map(|v| v.to_string()));
        let w = &q.window;
        let sql = select.sql(&w.order_by, "p.created_at ASC", "p.id ASC", w.limit, w.offset);
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(select.args.iter()), package_from)?;
        rows.map(|r| r?).collect()
    }

    pub fn package(&self, owner: Uuid, id: Uuid) -> Result<Option<FirmwarePackage>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("{PACKAGE_COLUMNS} WHERE p.id = ?1 AND p.client_id = ?2"))?;
        let row = stmt.query_row([id.to_string(), owner.to_string()], package_from).optional()?;
        row.transpose()
    }

    /// The package of `module_id` with `version`, if any.
    pub fn package_by_version(
        &self,
        owner: Uuid,
        module_id: Uuid,
        version: &str,
    ) -> Result<Option<FirmwarePackage>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "{PACKAGE_COLUMNS} WHERE p.module_id = ?1 AND p.firmware_version = ?2 AND p.client_id = ?3"
        ))?;
        let row =
            stmt.query_row([module_id.to_string(), version.to_owned(), owner.to_string()], package_from).optional()?;
        row.transpose()
    }

    /// Inserts a package; `false` when the module already has that version.
    pub fn insert_package(&self, p: &FirmwarePackage) -> Result<bool, StoreError> {
        let created = p.created_at.expect("new packages carry createdAt");
        let res = self.conn().execute(
            "INSERT INTO firmware_packages (id, client_id, device_specification_id, module_id, firmware_version,
                 description, created_at, created_by, modified_at, modified_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?7, ?8)",
            params![
                p.id.to_string(),
                p.client_id.expect("new packages carry clientId").to_string(),
                p.device_specification_id.to_string(),
                p.module_id.to_string(),
                p.firmware_version,
                p.description,
                ts(created),
                p.created_by.clone().unwrap_or_default(),
            ],
        );
        match res {
            Ok(_) => Ok(true),
            Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::ConstraintViolation => {
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    pub fn update_package_description(
        &self,
        owner: Uuid,
        id: Uuid,
        description: Option<&str>,
        by: &str,
        at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let n = self.conn().execute(
            "UPDATE firmware_packages SET description = ?1, modified_at = ?2, modified_by = ?3
             WHERE id = ?4 AND client_id = ?5",
            params![description, ts(at), by, id.to_string(), owner.to_string()],
        )?;
        Ok(n == 1)
    }

    /// Devices whose target is this package's version: a package in use is not deleted.
    pub fn package_in_use(&self, p: &FirmwarePackage) -> Result<u64, StoreError> {
        Ok(self.conn().query_row(
            "SELECT COUNT(*) FROM firmware_states WHERE module_id = ?1 AND target_version = ?2
               AND status IN ('PENDING', 'DOWNLOADING', 'INSTALLING')",
            [p.module_id.to_string(), p.firmware_version.clone()],
            |r| r.get(0),
        )?)
    }

    /// Deletes a package and its files; returns the on-disk files to remove.
    pub fn delete_package(&self, owner: Uuid, id: Uuid) -> Result<Option<Vec<String>>, StoreError> {
        self.with_tx(|tx| {
            let paths: Vec<String> = {
                let mut stmt =
                    tx.prepare("SELECT path FROM firmware_files WHERE package_id = ?1 AND path IS NOT NULL")?;
                let rows = stmt.query_map([id.to_string()], |r| r.get(0))?;
                rows.collect::<Result<_, _>>()?
            };
            tx.execute("DELETE FROM firmware_files WHERE package_id = ?1", [id.to_string()])?;
            let n = tx.execute(
                "DELETE FROM firmware_packages WHERE id = ?1 AND client_id = ?2",
                [id.to_string(), owner.to_string()],
            )?;
            Ok((n == 1).then_some(paths))
        })
    }

    pub fn file(&self, package_id: Uuid, kind: FileKind) -> Result<Option<StoredFile>, StoreError> {
        let row = self
            .conn()
            .query_row(
                "SELECT f.name, f.content_type, f.sha256, f.size, f.path, f.content, f.created_at, f.created_by,
                        f.modified_at, f.modified_by, p.device_specification_id
                 FROM firmware_files f JOIN firmware_packages p ON p.id = f.package_id
                 WHERE f.package_id = ?1 AND f.kind = ?2",
                [package_id.to_string(), kind.as_str().to_owned()],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)?,
                        r.get::<_, Option<String>>(4)?,
                        r.get::<_, Option<Vec<u8>>>(5)?,
                        [
                            r.get::<_, String>(6)?,
                            r.get::<_, String>(7)?,
                            r.get::<_, String>(8)?,
                            r.get::<_, String>(9)?,
                        ],
                        r.get::<_, String>(10)?,
                    ))
                },
            )
            .optional()?;
        row.map(|(name, content_type, sha256, size, path, content, [ca, cb, ma, mb], spec)| {
            Ok(StoredFile {
                attributes: FileAttributes {
                    firmware_package_id: Some(package_id),
                    name,
                    content_type,
                    file_type: Some(kind.file_type().to_owned()),
                    device_specification_id: Some(parse_uuid("firmware_packages.device_specification_id", spec)?),
                    created_at: Some(parse_ts("firmware_files.created_at", ca)?),
                    created_by: Some(cb),
                    modified_at: Some(parse_ts("firmware_files.modified_at", ma)?),
                    modified_by: Some(mb),
                },
                sha256,
                size: size as u64,
                content: match path {
                    Some(p) => FileContent::Path(p),
                    None => FileContent::Inline(content.unwrap_or_default()),
                },
            })
        })
        .transpose()
    }

    /// Records a file. A firmware file is written once (returns `false` if one exists); release
    /// notes replace the previous ones, whose on-disk path is returned for removal.
    pub fn put_file(&self, f: &NewFile<'_>) -> Result<Result<Option<String>, ()>, StoreError> {
        let (path, blob) = match &f.content {
            FileContent::Path(p) => (Some(p.clone()), None),
            FileContent::Inline(b) => (None, Some(b.clone())),
        };
        self.with_tx(|tx| {
            let old: Option<Option<String>> = tx
                .query_row(
                    "SELECT path FROM firmware_files WHERE package_id = ?1 AND kind = ?2",
                    [f.package_id.to_string(), f.kind.as_str().to_owned()],
                    |r| r.get(0),
                )
                .optional()?;
            if old.is_some() && f.kind == FileKind::Firmware {
                return Ok(Err(()));
            }
            let created = tx
                .query_row(
                    "SELECT created_at, created_by FROM firmware_files WHERE package_id = ?1 AND kind = ?2",
                    [f.package_id.to_string(), f.kind.as_str().to_owned()],
                    |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
                )
                .optional()?
                .unwrap_or_else(|| (ts(f.at), f.by.to_owned()));
            tx.execute(
                "INSERT OR REPLACE INTO firmware_files (package_id, kind, name, content_type, sha256, size, path, content,
                     created_at, created_by, modified_at, modified_by)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    f.package_id.to_string(),
                    f.kind.as_str(),
                    f.name,
                    f.content_type,
                    f.sha256,
                    f.size as i64,
                    path,
                    blob,
                    created.0,
                    created.1,
                    ts(f.at),
                    f.by
                ],
            )?;
            tx.execute(
                "UPDATE firmware_packages SET modified_at = ?1, modified_by = ?2 WHERE id = ?3",
                params![ts(f.at), f.by, f.package_id.to_string()],
            )?;
            Ok(Ok(old.flatten()))
        })
    }

    /// Deletes the release notes; returns whether there were any, and their on-disk path.
    pub fn delete_release_notes(&self, package_id: Uuid) -> Result<Option<Option<String>>, StoreError> {
        self.with_tx(|tx| {
            let old: Option<Option<String>> = tx
                .query_row(
                    "SELECT path FROM firmware_files WHERE package_id = ?1 AND kind = 'release-notes'",
                    [package_id.to_string()],
                    |r| r.get(0),
                )
                .optional()?;
            tx.execute(
                "DELETE FROM firmware_files WHERE package_id = ?1 AND kind = 'release-notes'",
                [package_id.to_string()],
            )?;
            Ok(old)
        })
    }

    /// States in the window's order (its terms end in the unique key, device then module),
    /// each with the values of those terms: its keyset position.
    pub fn list_state_rows(&self, q: &StateQuery) -> Result<Vec<(FirmwareState, Vec<Value>)>, StoreError> {
        let (sql, args, keys) = state_select(q);
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| {
            let key: rusqlite::Result<Vec<Value>> = (STATE_FIELDS..STATE_FIELDS + keys).map(|i| r.get(i)).collect();
            Ok((state_from(r)?, key?))
        })?;
        rows.map(|r| {
            let (state, key) = r?;
            Ok((state?, key))
        })
        .collect()
    }

    /// The rows of [`Store::list_state_rows`] as each state's JSON, written straight from the
    /// columns (the same bytes as serializing the [`FirmwareState`] read from them, without
    /// parsing and formatting every id and time: most of a states page's cost).
    pub fn list_state_json(&self, q: &StateQuery) -> Result<StatesJson, StoreError> {
        let (sql, args, keys) = state_select(q);
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(args.iter()))?;
        // A state with all its members is about 480 bytes: room for a window of them at once
        // (450 a state had every page grow, and copy, its text once).
        let mut out =
            StatesJson { text: Vec::with_capacity(q.window.limit.min(1000) as usize * 512), rows: Vec::new() };
        // A page's links start from its first row and from its last when more follow: the row
        // before a window's extra one (`limit - 2`, `paging::PageRequest::keyed_window`). Only the
        // first and the last two a window can hold carry their key; the others' is empty
        // (a tenth of a listing's time went to keys no link used).
        let keyed = |n: u64| n == 0 || n + 2 >= q.window.limit;
        let mut n = 0u64;
        while let Some(r) = rows.next()? {
            let key: Vec<Value> = if keyed(n) {
                (STATE_FIELDS..STATE_FIELDS + keys).map(|i| r.get(i)).collect::<rusqlite::Result<_>>()?
            } else {
                Vec::new()
            };
            let start = out.text.len();
            write_state_json(r, &mut out.text)?;
            out.rows.push((start..out.text.len(), key));
            n += 1;
        }
        Ok(out)
    }

    /// The states of [`Store::list_state_rows`], without their keys.
    pub fn list_states(&self, q: &StateQuery) -> Result<Vec<FirmwareState>, StoreError> {
        Ok(self.list_state_rows(q)?.into_iter().map(|(state, _)| state).collect())
    }

    /// The plan SQLite chooses for [`Store::list_state_rows`] (`EXPLAIN QUERY PLAN`, its detail
    /// lines): tests check that a window is read through an index.
    pub fn explain_states(&self, q: &StateQuery) -> Result<Vec<String>, StoreError> {
        let (sql, args, _) = state_select(q);
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| r.get::<_, String>(3))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn state(&self, owner: Uuid, device_id: Uuid, module_id: Uuid) -> Result<Option<FirmwareState>, StoreError> {
        let q = StateQuery {
            owner,
            device_id: Some(device_id),
            module_id: Some(module_id),
            window: Window { limit: 1, ..Default::default() },
            ..Default::default()
        };
        Ok(self.list_states(&q)?.into_iter().next())
    }

    /// Sets (or with `None` resets) a target version. A new target starts an update at once
    /// (`PENDING`, first step at `first_step`), the same target again starts it over; a
    /// reset cancels one in progress. Each call that reaches a state adds one to its
    /// `target_sets` ([`Store::target_sets`]).
    pub fn set_target(
        &self,
        owner: Uuid,
        device_id: Uuid,
        module_id: Uuid,
        target: Option<&str>,
        now: OffsetDateTime,
        first_step: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let now_s = ts(now);
        let n = match target {
            Some(version) => self.conn().execute(
                "UPDATE firmware_states SET target_version = ?1, target_modified_at = ?2, modified_at = ?2,
                     target_sets = target_sets + 1,
                     status = CASE WHEN current_version IS ?1 THEN 'SUCCEEDED' ELSE 'PENDING' END,
                     status_details = CASE WHEN current_version IS ?1 THEN 'already on the target version' ELSE NULL END,
                     status_modified_at = ?2,
                     next_step_at = CASE WHEN current_version IS ?1 THEN NULL ELSE ?3 END
                 WHERE device_id = ?4 AND module_id = ?5 AND client_id = ?6",
                params![version, now_s, ts(first_step), device_id.to_string(), module_id.to_string(), owner.to_string()],
            )?,
            None => self.conn().execute(
                "UPDATE firmware_states SET target_version = NULL, target_modified_at = ?1, modified_at = ?1,
                     target_sets = target_sets + 1,
                     status = CASE WHEN status IN ('PENDING', 'DOWNLOADING', 'INSTALLING') THEN 'CANCELLED' ELSE status END,
                     status_details = CASE WHEN status IN ('PENDING', 'DOWNLOADING', 'INSTALLING')
                                           THEN 'target reset before the update finished' ELSE status_details END,
                     status_modified_at = CASE WHEN status IN ('PENDING', 'DOWNLOADING', 'INSTALLING') THEN ?1
                                               ELSE status_modified_at END,
                     next_step_at = NULL
                 WHERE device_id = ?2 AND module_id = ?3 AND client_id = ?4",
                params![now_s, device_id.to_string(), module_id.to_string(), owner.to_string()],
            )?,
        };
        Ok(n == 1)
    }

    /// How many set-target calls reached each state of `module_id` (any client), by device: a
    /// test aid (`GET /_sim/target-sets`), never part of the API's answers.
    pub fn target_sets(&self, module_id: Uuid) -> Result<BTreeMap<Uuid, u64>, StoreError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT device_id, target_sets FROM firmware_states WHERE module_id = ?1")?;
        let rows = stmt.query_map([module_id.to_string()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, u64>(1)?)))?;
        rows.map(|row| {
            let (device, count) = row?;
            Ok((parse_uuid("firmware_states.device_id", device)?, count))
        })
        .collect()
    }

    /// How many updates have a step due at `now` (simulated time): 0 once the engine caught up.
    pub fn due_count(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        Ok(self.conn().query_row(
            "SELECT count(*) FROM firmware_states WHERE next_step_at IS NOT NULL AND next_step_at <= ?1",
            [ts(now)],
            |r| r.get(0),
        )?)
    }

    /// When the earliest next step of an update is due (simulated time), if any update moves.
    pub fn next_step_due(&self) -> Result<Option<OffsetDateTime>, StoreError> {
        let due: Option<String> =
            self.conn().query_row("SELECT min(next_step_at) FROM firmware_states", [], |r| r.get(0))?;
        due.map(|d| parse_ts("firmware_states.next_step_at", d)).transpose()
    }

    /// Moves on the updates whose next step is due at `now` (simulated time), up to `limit`,
    /// oldest first, in one transaction; returns how many. `outcome` turns a due step and the
    /// instant its change is stamped at into what happens. The stamp is the step's own due time
    /// not the time the engine got round to it, so a batch is not one instant, except:
    /// - never after `now` (the simulated clock);
    /// - never before `floor` (when the simulator started: a step due before it ran, as in a data
    ///   file reopened after its updates fell due, happens when it first runs);
    /// - never before the latest change of the client's states committed so far (its own
    ///   included): every change is stamped at or after every stamp a listing could have shown
    ///   before it was committed, so a client's `modifiedSince` watermark never skips one.
    pub fn settle_due(
        &self,
        now: OffsetDateTime,
        floor: OffsetDateTime,
        limit: u64,
        mut outcome: impl FnMut(&DueStep, OffsetDateTime) -> AppliedStep,
    ) -> Result<usize, StoreError> {
        self.with_tx(|tx| {
            let due = {
                let mut stmt = tx.prepare_cached(
                    "SELECT rowid, device_id, module_id, client_id, status, target_version, attempts, next_step_at
                     FROM firmware_states
                     WHERE next_step_at IS NOT NULL AND next_step_at <= ?1 ORDER BY next_step_at LIMIT ?2",
                )?;
                let rows = stmt.query_map(params![ts(now), limit as i64], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        [r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?],
                        r.get::<_, String>(4)?,
                        r.get::<_, Option<String>>(5)?,
                        r.get(6)?,
                        r.get::<_, String>(7)?,
                    ))
                })?;
                let mut out = Vec::new();
                for row in rows {
                    let (rowid, [device, module, client], status, target, attempts, due) = row?;
                    out.push((
                        rowid,
                        DueStep {
                            device_id: parse_uuid("firmware_states.device_id", device)?,
                            module_id: parse_uuid("firmware_states.module_id", module)?,
                            client_id: parse_uuid("firmware_states.client_id", client)?,
                            status,
                            target,
                            attempts,
                            due: parse_ts("firmware_states.next_step_at", due)?,
                        },
                    ));
                }
                out
            };
            // The latest change of each client's states (an index seek each).
            let mut latest: BTreeMap<Uuid, OffsetDateTime> = BTreeMap::new();
            {
                let mut stmt =
                    tx.prepare_cached("SELECT max(modified_at) FROM firmware_states WHERE client_id = ?1")?;
                for (_, d) in &due {
                    if let std::collections::btree_map::Entry::Vacant(e) = latest.entry(d.client_id) {
                        let t: Option<String> = stmt.query_row([d.client_id.to_string()], |r| r.get(0))?;
                        e.insert(opt_ts("firmware_states.modified_at", t)?.unwrap_or(floor));
                    }
                }
            }
            let mut update = tx.prepare_cached(
                "UPDATE firmware_states SET status = ?1, status_details = ?2, status_modified_at = ?3, modified_at = ?3,
                     next_step_at = ?4, current_version = COALESCE(?5, current_version), attempts = attempts + ?6
                 WHERE rowid = ?7",
            )?;
            for (rowid, d) in &due {
                let at = d.due.min(now).max(floor).max(latest[&d.client_id]);
                let s = outcome(d, at);
                update.execute(params![
                    s.status,
                    s.details,
                    ts(s.at),
                    s.next_step_at.map(ts),
                    s.new_current,
                    s.attempt as i64,
                    rowid
                ])?;
            }
            Ok(due.len())
        })
    }
}

/// The outcome of one simulated update step.
#[derive(Debug, Clone)]
pub struct AppliedStep {
    pub status: &'static str,
    pub details: Option<String>,
    /// When the change happened: its stamp (`modified_at`, `status_modified_at`).
    pub at: OffsetDateTime,
    pub next_step_at: Option<OffsetDateTime>,
    /// Set when the device now runs a new version.
    pub new_current: Option<String>,
    /// 1 when this step ends an attempt.
    pub attempt: u8,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_printable_ascii_without_quotes_or_backslashes_wherever_the_other_byte_is() {
        for len in [0usize, 1, 15, 16, 17, 31, 32, 33, 64, 100] {
            let plain = vec![b'a'; len];
            assert!(is_plain_json_text(&plain));
            for at in 0..len {
                for other in [0x00, 0x1f, 0x7f, 0x80, 0xc3, 0xff, b'"', b'\\'] {
                    let mut text = plain.clone();
                    text[at] = other;
                    assert!(!is_plain_json_text(&text), "{other:#x} at {at} of {len}");
                }
                for fine in [0x20, 0x7e, b'-', b':', b'Z'] {
                    let mut text = plain.clone();
                    text[at] = fine;
                    assert!(is_plain_json_text(&text), "{fine:#x} at {at} of {len}");
                }
            }
        }
    }

    /// The states listing written straight from the rows is, byte for byte, the serialization of
    /// the states read from them: times with and without milliseconds (and in another stored
    /// form), absent values, texts needing escapes, a status the model does not know.
    #[test]
    fn states_written_from_their_rows_are_the_serialized_states() {
        let store = Store::open_temporary().unwrap();
        crate::seed::seed(&store, 5, 30, OffsetDateTime::now_utc()).unwrap();
        {
            let conn = store.conn();
            conn.execute_batch(
                "UPDATE firmware_states SET status_details = 'a \"quoted\" \\ tab\t, new\nline, é ✓ \u{1}'
                     WHERE rowid % 7 = 0;
                 UPDATE firmware_states SET status_modified_at = '2026-11-27T01:02:03.000Z' WHERE rowid % 5 = 0;
                 UPDATE firmware_states SET target_modified_at = '2026-11-27T01:02:03.100Z' WHERE rowid % 5 = 1;
                 UPDATE firmware_states SET target_modified_at = '2026-11-27T01:02:03.120Z' WHERE rowid % 5 = 2;
                 UPDATE firmware_states SET status_modified_at = '2026-11-27T02:02:03+01:00' WHERE rowid % 11 = 3;
                 UPDATE firmware_states SET status = 'PAUSED_BY_OPERATOR' WHERE rowid % 9 = 4;
                 UPDATE firmware_states SET current_version = NULL, target_version = NULL
                     WHERE rowid % 4 = 3;",
            )
            .unwrap();
        }
        let owners: Vec<String> = store
            .conn()
            .prepare("SELECT DISTINCT client_id FROM firmware_states")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(owners.len() > 1);
        let mut compared = 0;
        for owner in owners {
            let q = StateQuery {
                owner: owner.parse().unwrap(),
                window: Window { limit: 10_000, ..Default::default() },
                ..Default::default()
            };
            let typed = store.list_state_rows(&q).unwrap();
            let raw = store.list_state_json(&q).unwrap();
            assert_eq!(typed.len(), raw.rows.len());
            for (n, ((state, key), (range, raw_key))) in typed.iter().zip(&raw.rows).enumerate() {
                assert_eq!(
                    std::str::from_utf8(&raw.text[range.clone()]).unwrap(),
                    serde_json::to_string(state).unwrap(),
                    "the state of {}",
                    state.device_id
                );
                // The key of each row a page's links can start from: the first and the last two
                // of the window; no other.
                if n == 0 || n + 2 >= 10_000 {
                    assert_eq!(key, raw_key);
                } else {
                    assert!(raw_key.is_empty(), "row {n}'s key: {raw_key:?}");
                }
                compared += 1;
            }
        }
        assert!(compared > 100, "{compared}");
    }

    /// Once reads are shared, a listing is answered while a write transaction is open (the
    /// devices' engine applying a batch, a reset seeding), from what was committed before it;
    /// it waited for the write before.
    #[test]
    fn listings_are_read_while_a_write_is_under_way() {
        use std::sync::mpsc;
        let store = Store::open_temporary().unwrap();
        crate::seed::seed(&store, 5, 30, OffsetDateTime::now_utc()).unwrap();
        store.share_reads().unwrap();
        let owner: String =
            store.conn().query_row("SELECT client_id FROM firmware_states LIMIT 1", [], |r| r.get(0)).unwrap();
        let q = StateQuery {
            owner: owner.parse().unwrap(),
            window: Window { limit: 10_000, ..Default::default() },
            ..Default::default()
        };
        let before = store.list_state_json(&q).unwrap().rows.len();
        assert!(before > 10);
        let (started, writing) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let (store, owner, q) = (&store, &owner, &q);
        std::thread::scope(|s| {
            s.spawn(move || {
                store
                    .with_tx(|tx| {
                        tx.execute("DELETE FROM firmware_states WHERE client_id = ?1", [owner])?;
                        started.send(()).unwrap();
                        released.recv().unwrap();
                        Ok(())
                    })
                    .unwrap()
            });
            writing.recv().unwrap();
            let (done, read) = mpsc::channel();
            s.spawn(move || done.send(store.list_state_json(q).unwrap().rows.len()).unwrap());
            let answer = read.recv_timeout(std::time::Duration::from_secs(5));
            release.send(()).unwrap();
            assert_eq!(answer, Ok(before), "the listing during the write");
        });
        assert_eq!(store.list_state_json(q).unwrap().rows.len(), 0, "after it");
    }
}
