//! The deterministic demo data set: the same seed always yields the same clients, keys,
//! specifications and modules (ids included), so tests and screenshots are reproducible.

use dcs_model::FirmwareModule;
use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::auth::DemoKey;
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

/// Device specifications per client kind, each with the modules it carries.
const SPECS: &[(&str, &[(&str, &str)])] = &[
    ("Asset Tracker T1", &[("Main MCU", "mcu_fw"), ("Cellular Modem", "modem_fw"), ("GNSS Receiver", "gnss_fw")]),
    ("LoRa Water Meter WM-3", &[("Main MCU", "mcu_fw"), ("LoRa Radio", "lora_radio_fw"), ("Bootloader", "boot_version")]),
    ("Smart Gateway G2", &[("Application Processor", "ap-firmware"), ("Sensor Hub", "sensor_hub_fw")]),
    ("Cold-Chain Logger C5", &[("Main MCU", "mcu_fw"), ("BLE Beacon", "ble_fw"), ("Temperature Probe", "probe_fw")]),
];

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

/// The key tokens are signed with; derived from the seed so it is stable across restarts.
pub fn signing_key(seed: u64) -> Vec<u8> {
    let mut key = vec![0u8; 32];
    rng_for(seed, 99).fill_bytes(&mut key);
    key
}

/// Client id of the demo reseller for `seed`.
pub fn reseller_id(seed: u64) -> Uuid {
    uuid_from(&mut rng_for(seed, 1))
}

/// The demo reseller's API key: every scope, the service and the firmware authorization.
pub fn demo_reseller_key(seed: u64) -> DemoKey {
    let mut rng = rng_for(seed, 2);
    let secret: String = (0..32).map(|_| char::from(b"abcdefghjkmnpqrstuvwxyz23456789"[rng.gen_range(0..31)])).collect();
    DemoKey { key_id: "sim-reseller".to_owned(), secret, client_id: reseller_id(seed) }
}

/// Writes the demo data set into an empty store.
pub fn seed(store: &Store, seed: u64) -> Result<(), StoreError> {
    let mut rng = rng_for(seed, 3);
    let reseller = ClientRow { id: reseller_id(seed), name: RESELLER.to_owned(), reseller_id: None };
    let mut clients = vec![reseller.clone()];
    for name in CUSTOMERS {
        clients.push(ClientRow { id: uuid_from(&mut rng), name: (*name).to_owned(), reseller_id: Some(reseller.id) });
    }

    store.with_tx(|tx| {
        for c in &clients {
            insert::client(tx, c)?;
        }
        let demo = demo_reseller_key(seed);
        insert::api_key(
            tx,
            &ApiKeyRow {
                key_id: demo.key_id.clone(),
                secret: demo.secret.clone(),
                client_id: reseller.id,
                scopes: ALL_SCOPES.iter().map(|s| (*s).to_owned()).collect(),
                service_granted: true,
                firmware_authorized: true,
            },
        )?;
        // Keys that show the identity platform's and the service's refusals (sections 5.2, 5.3).
        insert::api_key(
            tx,
            &ApiKeyRow {
                key_id: "sim-no-service".to_owned(),
                secret: format!("{}-no-service", demo.secret),
                client_id: reseller.id,
                scopes: ALL_SCOPES.iter().map(|s| (*s).to_owned()).collect(),
                service_granted: false,
                firmware_authorized: true,
            },
        )?;
        insert::api_key(
            tx,
            &ApiKeyRow {
                key_id: "sim-no-firmware".to_owned(),
                secret: format!("{}-no-firmware", demo.secret),
                client_id: reseller.id,
                scopes: ALL_SCOPES.iter().map(|s| (*s).to_owned()).collect(),
                service_granted: true,
                firmware_authorized: false,
            },
        )?;

        let mut when = EPOCH;
        for client in &clients {
            // Each client gets a seeded subset of the specifications, at least two.
            let mut specs: Vec<&(&str, &[(&str, &str)])> = SPECS.iter().collect();
            specs.shuffle(&mut rng);
            let count = rng.gen_range(2..=SPECS.len());
            let mut chosen = specs[..count].to_vec();
            chosen.sort_by_key(|(name, _)| *name);
            for (spec_name, modules) in chosen {
                let spec_id = uuid_from(&mut rng);
                when += Duration::minutes(rng.gen_range(30..600));
                insert::device_specification(tx, spec_id, client.id, spec_name, when)?;
                for (module_name, attr) in modules.iter() {
                    when += Duration::minutes(rng.gen_range(5..240));
                    let author = format!("principal/{}", uuid_from(&mut rng));
                    let modified = when + Duration::days(rng.gen_range(0..40));
                    insert::module(
                        tx,
                        &FirmwareModule {
                            id: uuid_from(&mut rng),
                            name: format!("{module_name} ({spec_name})"),
                            firmware_version_attribute_name: (*attr).to_owned(),
                            device_specification_id: spec_id,
                            client_id: Some(client.id),
                            created_at: Some(when),
                            created_by: Some(author.clone()),
                            modified_at: Some(modified),
                            modified_by: Some(author),
                        },
                    )?;
                }
            }
        }
        Ok(())
    })
}
