//! The deterministic demo data set: the same seed always yields the same clients, keys,
//! specifications and modules (ids included), so tests and screenshots are reproducible.

use dcs_model::FirmwareModule;
use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::auth::DemoKey;
use crate::store::bindings::{self, BindingRow};
use crate::store::devices::DeviceRow;
use crate::store::insert::SeedState;
use crate::store::{insert, ApiKeyRow, ClientRow, Store, StoreError};

/// Every scope the reference lists (section 5.5).
pub const ALL_SCOPES: &[&str] = &[
    "specification.read",
    "firmware.read",
    "firmware.create",
    "firmware.update",
    "firmware.write",
    "firmware.delete",
    "device.read",
];

/// Start of the demo timeline: every seeded timestamp lies after it.
const EPOCH: OffsetDateTime = time::macros::datetime!(2026-01-05 08:00:00 UTC);

const RESELLER: &str = "Acme IoT Reseller";
const CUSTOMERS: &[&str] = &["Northwind Utilities", "Contoso Logistics", "Fabrikam Farms"];
/// A customer of no reseller: its own data, its own key, out of the demo reseller's reach.
const UNRELATED: &str = "Tailspin Toys";
/// The key-id suffix of each customer's own key (`sim-<suffix>`), in the order of `CUSTOMERS`.
const CUSTOMER_KEYS: &[&str] = &["northwind", "contoso", "fabrikam"];
const UNRELATED_KEY: &str = "tailspin";

/// Firmware versions a module may have packages for, oldest first.
const VERSIONS: &[&str] = &["1.0.0", "1.1.0", "1.2.0", "1.2.1", "2.0.0", "2.1.0"];

/// What a failed update reports in `firmwareUpdateStatusDetails`.
pub const FAILURES: &[&str] = &[
    "download interrupted: connection lost",
    "image rejected: signature verification failed",
    "battery too low to install the update",
    "rolled back after the new image failed to boot",
    "not enough free flash for the image",
];

/// Connection kinds each specification's devices use.
fn connections(spec: &str) -> &'static [&'static str] {
    match spec {
        "Asset Tracker T1" => &["mqtt", "http", "sms"],
        "LoRa Water Meter WM-3" => &["lora"],
        "Smart Gateway G2" => &["http", "mqtt"],
        _ => &["lora", "mqtt"],
    }
}

/// Device specifications per client kind, each with the modules it carries.
const SPECS: &[(&str, &[(&str, &str)])] = &[
    ("Asset Tracker T1", &[("Main MCU", "mcu_fw"), ("Cellular Modem", "modem_fw"), ("GNSS Receiver", "gnss_fw")]),
    (
        "LoRa Water Meter WM-3",
        &[("Main MCU", "mcu_fw"), ("LoRa Radio", "lora_radio_fw"), ("Bootloader", "boot_version")],
    ),
    ("Smart Gateway G2", &[("Application Processor", "ap-firmware"), ("Sensor Hub", "sensor_hub_fw")]),
    ("Cold-Chain Logger C5", &[("Main MCU", "mcu_fw"), ("BLE Beacon", "ble_fw"), ("Temperature Probe", "probe_fw")]),
];

/// One specification of a client's catalogue: its id, its name and its modules, each with its
/// id and package versions.
type CatalogueSpec<'a> = (Uuid, &'a str, Vec<(Uuid, Vec<&'a str>)>);

fn rng_for(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

fn uuid_from(rng: &mut ChaCha8Rng) -> Uuid {
    let mut bytes = [0u8; 16];
    rng.fill_bytes(&mut bytes);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// A key to sign tokens with: 32 bytes from the OS, new for each simulator.
pub fn signing_key() -> Vec<u8> {
    let mut key = vec![0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut key);
    key
}

/// Client id of the demo reseller for `seed`.
pub fn reseller_id(seed: u64) -> Uuid {
    uuid_from(&mut rng_for(seed, 1))
}

/// The demo reseller's API key: every scope, the service and the firmware authorization.
pub fn demo_reseller_key(seed: u64) -> DemoKey {
    let mut rng = rng_for(seed, 2);
    let secret: String =
        (0..32).map(|_| char::from(b"abcdefghjkmnpqrstuvwxyz23456789"[rng.gen_range(0..31)])).collect();
    DemoKey { key_id: "sim-reseller".to_owned(), secret, client_id: reseller_id(seed) }
}

/// The customer of no reseller for `seed`: its id (a stream of its own, so no other id moves)
/// and name.
pub fn unrelated_customer(seed: u64) -> (Uuid, &'static str) {
    (uuid_from(&mut rng_for(seed, 5)), UNRELATED)
}

/// One API key of the demo data set, with the client it belongs to and what it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoKeyInfo {
    pub key: DemoKey,
    /// The name of the key's client.
    pub client_name: &'static str,
    /// What the key is for, in a few words.
    pub purpose: &'static str,
}

/// Every API key of the demo data set for `seed`: the reseller's (first), each customer's own,
/// the unrelated customer's, and the reseller's keys that show a refusal (sections 5.2 to 5.4).
pub fn demo_keys(seed: u64) -> Vec<DemoKeyInfo> {
    key_rows(seed)
        .into_iter()
        .zip(key_purposes(seed))
        .map(|(row, (client_name, purpose))| DemoKeyInfo {
            key: DemoKey { key_id: row.key_id, secret: row.secret, client_id: row.client_id },
            client_name,
            purpose,
        })
        .collect()
}

/// The client name and purpose of each of [`key_rows`], in the same order.
fn key_purposes(seed: u64) -> Vec<(&'static str, &'static str)> {
    let mut out = vec![(RESELLER, "the reseller: every scope, firmware, customer management")];
    for name in CUSTOMERS {
        out.push((*name, "the customer's own key: only its own data"));
    }
    out.push((unrelated_customer(seed).1, "a customer of no reseller: only its own data"));
    out.push((RESELLER, "refused: the service is not added to the key"));
    out.push((RESELLER, "read-only scopes"));
    out.push((RESELLER, "no firmware authorization"));
    out.push((RESELLER, "no customer-management add-on: no customer access"));
    out
}

/// The API keys the seed writes. Secrets derive from the reseller key's secret.
pub(crate) fn key_rows(seed: u64) -> Vec<ApiKeyRow> {
    let demo = demo_reseller_key(seed);
    let all = || ALL_SCOPES.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let row = |key_id: String, secret: String, client_id: Uuid| ApiKeyRow {
        key_id,
        secret,
        client_id,
        scopes: all(),
        service_granted: true,
        firmware_authorized: true,
        customer_management: false,
    };
    let mut out =
        vec![ApiKeyRow { customer_management: true, ..row(demo.key_id.clone(), demo.secret.clone(), demo.client_id) }];
    for ((id, _), suffix) in demo_customers(seed).into_iter().zip(CUSTOMER_KEYS) {
        out.push(row(format!("sim-{suffix}"), format!("{}-{suffix}", demo.secret), id));
    }
    // With the add-on, yet the customer of nobody: acting for anyone is refused as not its
    // customer, the reseller check rather than the add-on's.
    let unrelated = ApiKeyRow {
        customer_management: true,
        ..row(format!("sim-{UNRELATED_KEY}"), format!("{}-{UNRELATED_KEY}", demo.secret), unrelated_customer(seed).0)
    };
    out.push(unrelated);
    // Keys that show the identity platform's and the service's refusals (sections 5.2 to 5.4).
    let reseller = |suffix: &str| row(format!("sim-{suffix}"), format!("{}-{suffix}", demo.secret), demo.client_id);
    out.push(ApiKeyRow { service_granted: false, customer_management: true, ..reseller("no-service") });
    out.push(ApiKeyRow {
        scopes: ["specification.read", "firmware.read", "device.read"].iter().map(|s| (*s).to_owned()).collect(),
        customer_management: true,
        ..reseller("read-only")
    });
    out.push(ApiKeyRow { firmware_authorized: false, customer_management: true, ..reseller("no-firmware") });
    out.push(reseller("no-customer-management"));
    out
}

/// The demo reseller's customers, ids and names, drawn first from the data set's stream.
fn draw_customers(rng: &mut ChaCha8Rng) -> Vec<(Uuid, &'static str)> {
    CUSTOMERS.iter().map(|name| (uuid_from(rng), *name)).collect()
}

/// The demo reseller's customers for `seed`, as [`seed`] writes them, without building a store.
pub fn demo_customers(seed: u64) -> Vec<(Uuid, &'static str)> {
    draw_customers(&mut rng_for(seed, 3))
}

/// Replaces the whole state with the demo data set: `devices_per_client` devices for the
/// reseller and for each customer, each with a firmware state per module of its specification,
/// and the `seed` meta that marks the store as seeded. One transaction
/// ([`Store::replace_all`]): a crash or an error at any moment leaves the old state or the new
/// one, so neither a reset nor the first seeding of a data file can leave a half-written state.
/// `now` is the simulated time it is seeded at: the updates it seeds in progress take their next
/// step within the [`SEEDED_STEPS_WITHIN`] after it; nothing else depends on it.
pub fn seed(store: &Store, seed: u64, devices_per_client: u32, now: OffsetDateTime) -> Result<(), StoreError> {
    let mut rng = rng_for(seed, 3);
    let reseller = ClientRow { id: reseller_id(seed), name: RESELLER.to_owned(), reseller_id: None };
    let mut clients = vec![reseller.clone()];
    for (id, name) in draw_customers(&mut rng) {
        clients.push(ClientRow { id, name: name.to_owned(), reseller_id: Some(reseller.id) });
    }

    store.replace_all(|tx| {
        for c in &clients {
            insert::client(tx, c)?;
        }
        let (id, name) = unrelated_customer(seed);
        let unrelated = ClientRow { id, name: name.to_owned(), reseller_id: None };
        insert::client(tx, &unrelated)?;
        for row in key_rows(seed) {
            insert::api_key(tx, &row)?;
        }

        let mut run = Run { when: EPOCH, serial: 0, bindable: Vec::new(), now };
        // Devices a connector binding may be seeded for, with their creation time: one
        // client's at a time (their bindings are drawn from a stream of their own, so writing
        // them client by client draws what writing them all at the end did).
        let mut binding_rng = rng_for(seed, 4);
        let authors = binding_authors(&mut binding_rng, &clients);
        for client in &clients {
            seed_client(tx, &mut rng, client, devices_per_client, &mut run)?;
            seed_bindings(tx, &mut binding_rng, &authors, &run.bindable)?;
            run.bindable.clear();
        }
        // The unrelated customer last, from streams of its own: every other id, serial and
        // binding stays as it was before it existed.
        let mut own = rng_for(seed, 6);
        seed_client(tx, &mut own, &unrelated, devices_per_client, &mut run)?;
        let mut binding_rng = rng_for(seed, 7);
        let authors = binding_authors(&mut binding_rng, &[unrelated]);
        seed_bindings(tx, &mut binding_rng, &authors, &run.bindable)?;
        insert::meta(tx, "seed", &seed.to_string())
    })
}

/// How far ahead of the seeding's time the next steps of the updates it seeds in progress are
/// spread.
pub const SEEDED_STEPS_WITHIN: Duration = Duration::minutes(10);

/// What one client's seeding hands on to the next: `when` (the time things were last created)
/// and `serial` go on from client to client (serials make IMEIs, DevEUIs and barcodes unique);
/// the devices a binding may be seeded for go to `bindable`; `now` is the seeding's time.
struct Run {
    when: OffsetDateTime,
    serial: u64,
    bindable: Vec<(DeviceRow, OffsetDateTime)>,
    now: OffsetDateTime,
}

/// One client's specifications, modules, packages, devices, firmware states and downlinks,
/// drawn from `rng`, going on with `run` from the client before.
fn seed_client(
    tx: &rusqlite::Transaction<'_>,
    rng: &mut ChaCha8Rng,
    client: &ClientRow,
    devices_per_client: u32,
    run: &mut Run,
) -> Result<(), StoreError> {
    // Each client gets a seeded subset of the specifications, at least two.
    let mut specs: Vec<&(&str, &[(&str, &str)])> = SPECS.iter().collect();
    specs.shuffle(rng);
    let count = rng.gen_range(2..=SPECS.len());
    let mut chosen = specs[..count].to_vec();
    chosen.sort_by_key(|(name, _)| *name);
    let mut catalogue: Vec<CatalogueSpec> = Vec::new();
    for (spec_name, modules) in chosen {
        let spec_id = uuid_from(rng);
        run.when += Duration::minutes(rng.gen_range(30..600));
        insert::device_specification(tx, spec_id, client.id, spec_name, run.when)?;
        let mut mods = Vec::new();
        for (module_name, attr) in modules.iter() {
            run.when += Duration::minutes(rng.gen_range(5..240));
            let author = format!("principal/{}", uuid_from(rng));
            let modified = run.when + Duration::days(rng.gen_range(0..40));
            let module_id = uuid_from(rng);
            insert::module(
                tx,
                &FirmwareModule {
                    id: module_id,
                    name: format!("{module_name} ({spec_name})"),
                    firmware_version_attribute_name: (*attr).to_owned(),
                    device_specification_id: spec_id,
                    client_id: Some(client.id),
                    created_at: Some(run.when),
                    created_by: Some(author.clone()),
                    modified_at: Some(modified),
                    modified_by: Some(author.clone()),
                    extra: Default::default(),
                },
            )?;
            let n = rng.gen_range(3..=VERSIONS.len());
            let versions: Vec<&str> = VERSIONS[..n].to_vec();
            for (i, version) in versions.iter().enumerate() {
                let pkg = uuid_from(rng);
                let at = run.when + Duration::days(3 + 9 * i as i64) + Duration::minutes(rng.gen_range(0..600));
                let description = format!("{module_name} firmware {version}");
                insert::package(tx, pkg, client.id, spec_id, module_id, version, Some(&description), at, &author)?;
                let slug = attr.replace('_', "-");
                let mut image = vec![0u8; rng.gen_range(2048..8192)];
                rng.fill_bytes(&mut image);
                insert::inline_file(
                    tx,
                    pkg,
                    "firmware",
                    &format!("{slug}-{version}.bin"),
                    "application/octet-stream",
                    &image,
                    at,
                    &author,
                )?;
                if i % 2 == 0 || i + 1 == versions.len() {
                    let notes = release_notes(module_name, spec_name, version, i);
                    insert::inline_file(
                        tx,
                        pkg,
                        "release-notes",
                        &format!("{slug}-{version}-notes.md"),
                        "text/markdown",
                        notes.as_bytes(),
                        at,
                        &author,
                    )?;
                }
            }
            mods.push((module_id, versions));
        }
        catalogue.push((spec_id, spec_name, mods));
    }

    let projects = [uuid_from(rng), uuid_from(rng)];
    let mut samples: Vec<DeviceRow> = Vec::new();
    // The client's states, written once all are drawn, in the order its listing pages them
    // (device, then module): their rows then lie one after another in the table in that order,
    // and a page read through the listing's index finds each row next to the one before (SQLite
    // steps to the next row instead of searching the table for it: the lookup was an eighth of
    // a states page's CPU). The draws are made as before: the data set does not change.
    let mut states: Vec<SeedState> = Vec::with_capacity(devices_per_client as usize * 3);
    for n in 0..devices_per_client {
        run.serial += 1;
        let (spec_id, spec_name, mods) = &catalogue[rng.gen_range(0..catalogue.len())];
        let kinds = connections(spec_name);
        let connection = kinds[rng.gen_range(0..kinds.len())];
        let short = spec_name.rsplit(' ').next().unwrap_or("DEV");
        let device = DeviceRow {
            id: uuid_from(rng),
            client_id: client.id,
            device_specification_id: *spec_id,
            project_id: projects[(n % 2) as usize],
            name: format!("{short}-{:05}", n + 1),
            description: format!("{spec_name} #{}", n + 1),
            barcode: format!("BC{:010}", 1_000_000 + run.serial * 7919 % 9_000_000),
            connection: connection.to_owned(),
            imei: (connection != "lora").then(|| format!("35{:013}", 4_000_000_000 + run.serial)),
            deveui: (connection == "lora").then(|| format!("70b3d57ed0{:06x}", run.serial)),
            metadata: serde_json::json!({ "site": format!("site-{}", rng.gen_range(1..=40)), "batch": rng.gen_range(1..=12) }),
        };
        let created = EPOCH + Duration::minutes(rng.gen_range(0..60 * 24 * 30));
        insert::device(tx, &device, created)?;
        if samples.iter().filter(|d| d.connection == device.connection).count() < 8 {
            samples.push(device.clone());
        }
        if device.connection != "sms" {
            run.bindable.push((device.clone(), created));
        }
        for (module_id, versions) in mods {
            let latest = versions[versions.len() - 1];
            let previous = versions[versions.len() - 2];
            let modified = created + Duration::minutes(rng.gen_range(60..60 * 24 * 60));
            let r: f64 = rng.gen();
            let (current, target, status, details, next) = if r < 0.15 {
                (Some(versions[rng.gen_range(0..versions.len())]), None, None, None, None)
            } else if r < 0.70 {
                (Some(latest), Some(latest), Some("SUCCEEDED"), None, None)
            } else if r < 0.80 {
                (Some(previous), Some(latest), Some("FAILED"), Some(FAILURES[rng.gen_range(0..FAILURES.len())]), None)
            } else if r < 0.90 {
                let status = ["PENDING", "DOWNLOADING", "INSTALLING"][rng.gen_range(0..3)];
                // The next step within the minutes after the seeding, spread out: not
                // already due, which would make them all happen at the one instant the
                // simulator first ran. The spread comes from the drawn time (no draw more: the
                // rest of the data set stays as it was).
                let ahead = (modified - EPOCH).whole_minutes().rem_euclid(SEEDED_STEPS_WITHIN.whole_seconds());
                (Some(previous), Some(latest), Some(status), None, Some(run.now + Duration::seconds(1 + ahead)))
            } else {
                (Some(previous), Some(previous), Some("SUCCEEDED"), None, None)
            };
            states.push(SeedState {
                device: (&device).into(),
                module: *module_id,
                current,
                target,
                status,
                details,
                created,
                modified,
                next_step_at: next,
            });
        }
    }
    states.sort_unstable_by_key(|s| (s.device.id, s.module));
    for state in &states {
        insert::state(tx, state)?;
    }
    seed_downlinks(tx, rng, client.id, &samples)
}

/// The principal each client's seeded bindings are written by, drawn first from the bindings'
/// stream.
fn binding_authors(rng: &mut ChaCha8Rng, clients: &[ClientRow]) -> Vec<(Uuid, String)> {
    clients.iter().map(|c| (c.id, format!("principal/{}", uuid_from(rng)))).collect()
}

/// Connector bindings for about 60% of the lora, http and mqtt devices, each of its device's
/// kind. Drawn from their own random stream, so the rest of the data set does not change.
fn seed_bindings(
    tx: &rusqlite::Transaction<'_>,
    rng: &mut ChaCha8Rng,
    authors: &[(Uuid, String)],
    devices: &[(DeviceRow, OffsetDateTime)],
) -> Result<(), StoreError> {
    for (device, device_created) in devices {
        if !rng.gen_bool(0.6) {
            continue;
        }
        let Some(kind) = dcs_model::BindingKind::ALL.into_iter().find(|k| k.as_str() == device.connection) else {
            continue;
        };
        let author = authors
            .iter()
            .find(|(c, _)| *c == device.client_id)
            .map(|(_, a)| a.as_str())
            .unwrap_or("principal/unknown");
        let created = *device_created + Duration::minutes(rng.gen_range(10..60 * 24 * 20));
        let mut b = BindingRow::new(kind, device.client_id, device.id, created, author);
        b.id = uuid_from(rng);
        if rng.gen_bool(0.3) {
            b.modified_at = created + Duration::minutes(rng.gen_range(1..60 * 24 * 30));
        }
        match kind {
            dcs_model::BindingKind::Lora => {
                b.application_server_id = Some(format!("{:016x}", rng.gen::<u64>()));
                b.app_key = Some(format!("{:032x}", rng.gen::<u128>()));
                b.join_from = Some(created);
                let joins = device.deveui.as_deref().and_then(bindings::join_delay).is_some();
                let active = joins && rng.gen_bool(0.75);
                b.status = Some(if active { "ACTIVE" } else { "INVENTORY" }.to_owned());
            }
            dcs_model::BindingKind::Mqtt => {
                b.username = Some(device.network_id());
                b.password = Some(dcs_model::secrets::mqtt_password(rng));
            }
            dcs_model::BindingKind::Http => {
                b.http_type = Some(if rng.gen_bool(0.5) { "http-streamline" } else { "http-senml" }.to_owned());
                b.shared_secret = Some(dcs_model::secrets::shared_secret(rng));
            }
        }
        bindings::insert(tx, &b)?;
    }
    Ok(())
}

fn release_notes(module: &str, spec: &str, version: &str, i: usize) -> String {
    let mut notes = format!("# {module} {version}\n\nFor devices of the *{spec}* specification.\n\n## Changes\n\n");
    let items = [
        "Lower power draw while idle",
        "Faster reconnection after a network outage",
        "Fixes a rare watchdog reset during flash writes",
        "Reports signal quality with every uplink",
        "Security: updated TLS root certificates",
    ];
    for item in items.iter().skip(i % 3).take(3) {
        notes.push_str(&format!("- {item}\n"));
    }
    notes.push_str("\n## Upgrade notes\n\nInstall over the air; the device restarts once.\n");
    notes
}

/// Downlinks in every status for a client's sample devices. Seeded downlinks that are not final
/// wait (no next step) until cancelled: their device has not woken up.
fn seed_downlinks(
    tx: &rusqlite::Transaction<'_>,
    rng: &mut ChaCha8Rng,
    client: Uuid,
    devices: &[DeviceRow],
) -> Result<(), StoreError> {
    use crate::store::downlinks::DownlinkRow;
    use serde_json::json;
    const ACTUATOR: &[(&str, Option<&str>)] = &[
        ("DELIVERED", None),
        ("DELIVERED", None),
        ("DELIVERED", None),
        ("FAILED", Some("NOT_ACKNOWLEDGED_BY_DEVICE")),
        ("FAILED", Some("FEEDBACK_TIMEOUT")),
        ("CANCELLED", Some("CANCELLED")),
        ("PENDING", None),
        ("EXECUTING", None),
        ("SENT_TO_CARRIER", None),
        ("RETRY", None),
    ];
    let connection_outcomes = |kind: &str| -> Vec<(&'static str, Option<&'static str>)> {
        let reasons: &[&'static str] = match kind {
            "http" => &["CANCELLED", "TIMEOUT", "EVICTED"],
            "lora" => &[
                "CANCELLED",
                "FEEDBACK_TIMEOUT",
                "NOT_ACKNOWLEDGED_BY_DEVICE",
                "FAILED_TO_TRANSMIT_TO_DEVICE",
                "FAILED_TO_ENQUEUE_FOR_TRANSMISSION",
                "EVICTED",
            ],
            "sms" => &[
                "CANCELLED",
                "FAILURE_TO_TRANSMIT_TO_DEVICE",
                "FAILURE_TO_ENQUEUE_FOR_TRANSMISSION",
                "FEEDBACK_TIMEOUT",
                "EVICTED",
            ],
            _ => &["CANCELLED", "FEEDBACK_TIMEOUT", "FAILED_TO_TRANSMIT_TO_DEVICE"],
        };
        let mut v = vec![("DONE", None), ("DONE", None), ("PENDING", None), ("EXECUTING", None)];
        v.extend(reasons.iter().map(|r| ("DONE", Some(*r))));
        v
    };
    let mut when = EPOCH + Duration::days(20);
    let mut push = |tx: &rusqlite::Transaction<'_>,
                    rng: &mut ChaCha8Rng,
                    kind: &str,
                    device: &DeviceRow,
                    status: &str,
                    reason: Option<&str>,
                    body: serde_json::Value,
                    reference: Option<String>,
                    message: Option<serde_json::Value>|
     -> Result<(), StoreError> {
        when += Duration::minutes(rng.gen_range(5..300));
        let retry_limit = if matches!(kind, "actuator" | "lora" | "sms") { rng.gen_range(0..=3) } else { 0 };
        let retry_limit = if status == "RETRY" { retry_limit.max(1) } else { retry_limit };
        let retry_count = if status == "RETRY" {
            1
        } else if reason == Some("NOT_ACKNOWLEDGED_BY_DEVICE") {
            retry_limit
        } else {
            0
        };
        let row = DownlinkRow {
            id: uuid_from(rng),
            kind: kind.to_owned(),
            client_id: client,
            device_id: device.id,
            device_ref: if kind == "sms" { device.id.to_string() } else { device.network_id() },
            network_id: device.network_id(),
            external_reference: reference,
            status: status.to_owned(),
            body,
            message,
            retry_limit,
            retry_count,
            feedback_timeout: "PT1H".to_owned(),
            dry_run: rng.gen_bool(0.1),
            last_failure_reason: reason.map(str::to_owned),
            cancel: 0,
            next_step_at: None,
            deadline_at: when + Duration::HOUR,
            created_at: when,
            modified_at: when + Duration::minutes(rng.gen_range(1..50)),
        };
        crate::store::downlinks::insert_in(tx, &row)
    };
    for (i, (status, reason)) in ACTUATOR.iter().cycle().take(30).enumerate() {
        let device = &devices[i % devices.len()];
        let interval = [300, 600, 900, 3600][i % 4];
        let method = json!({"type": "setProperty", "deviceId": device.network_id(), "property": "reportingInterval", "value": interval});
        let message = json!([{"bn": device.network_id(), "n": "reportingInterval", "v": interval}]);
        push(
            tx,
            rng,
            "actuator",
            device,
            status,
            *reason,
            json!({"method": method}),
            Some(format!("job-{:04}", i + 1)),
            Some(message),
        )?;
    }
    for kind in ["http", "lora", "mqtt", "sms"] {
        let candidates: Vec<&DeviceRow> = devices.iter().filter(|d| d.connection == kind).collect();
        if candidates.is_empty() {
            continue;
        }
        for (i, (status, reason)) in connection_outcomes(kind).into_iter().enumerate() {
            let device = candidates[i % candidates.len()];
            let body = match kind {
                "http" => json!({"message": {"senml": [{"n": "led", "vb": true}]}}),
                "lora" => json!({"payloadHex": format!("01{:02x}", i), "fPort": 10, "confirmed": true}),
                "mqtt" => {
                    json!({"topic": format!("devices/{}/commands", device.name), "payload": "{\"reboot\":true}", "qos": 1})
                }
                _ => json!({"text": format!("CFG INTERVAL {}", 60 * (i + 1))}),
            };
            push(tx, rng, kind, device, status, reason, body, None, None)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded client's states lie in the table in the order its listing pages them (device,
    /// then module), each row right after the one before: a page read through the listing's index
    /// steps from row to row instead of searching the table for each.
    #[test]
    fn a_clients_seeded_states_lie_in_the_table_in_its_listings_order() {
        let store = Store::open_temporary().unwrap();
        seed(&store, 7, 200, OffsetDateTime::now_utc()).unwrap();
        let conn = store.conn();
        let clients: Vec<String> = conn
            .prepare("SELECT DISTINCT client_id FROM firmware_states")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(clients.len() >= 2, "{clients:?}");
        for client in clients {
            let rowids: Vec<i64> = conn
                .prepare("SELECT rowid FROM firmware_states WHERE client_id = ?1 ORDER BY device_id, module_id")
                .unwrap()
                .query_map([&client], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert!(rowids.len() >= 200, "client {client}: {} states", rowids.len());
            let apart = rowids.windows(2).filter(|w| w[1] != w[0] + 1).count();
            assert_eq!(apart, 0, "client {client}: {apart} of {} rows not right after the one before", rowids.len());
        }
    }
}
