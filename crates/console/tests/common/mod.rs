//! The scaffolding the console's integration tests share: a simulator serving on a free loopback
//! port (with a client of it, by its demo key), the fleet database of its scope, every state it
//! lists, and a first page request of downlinks. Each test file that needs them has
//! `mod common;`; what a test asserts stays in its own file.
#![allow(dead_code)]

use std::net::{Ipv4Addr, SocketAddr};

use dcs_api::firmware::StateFilter;
use dcs_api::model::FirmwareState;
use dcs_api::{Client, ClientConfig, Secret};
use dcs_console::downlinks::{self, DownlinkKind, DownlinkPageRequest};
use dcs_console::fleet::{FleetDb, Scope, ScopeKey};
use dcs_sim::{RunningSim, SimOptions, Simulator};
use futures::TryStreamExt;

/// A simulator with `opts` serving on a free loopback port.
pub async fn spawn(opts: SimOptions) -> (Simulator, RunningSim) {
    let sim = Simulator::new(opts).unwrap();
    let running = sim.spawn(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await.unwrap();
    (sim, running)
}

/// A client of a running simulator with its demo key.
pub fn demo_client(sim: &Simulator, running: &RunningSim) -> Client {
    let key = sim.demo_key();
    let base = running.base_url();
    Client::new(ClientConfig::new(&base, &base, &key.key_id, Secret::new(key.secret)).unwrap()).unwrap()
}

/// A simulator with `opts` serving on a free loopback port, and a client of it with its demo key.
pub async fn start(opts: SimOptions) -> (Simulator, RunningSim, Client) {
    let (sim, running) = spawn(opts).await;
    let client = demo_client(&sim, &running);
    (sim, running, client)
}

/// A fleet database in memory and the scope of `profile` at `base_url` (no customer).
pub fn fleet_db(profile: &str, base_url: String) -> (FleetDb, Scope) {
    let db = FleetDb::in_memory().unwrap();
    let scope = db.scope(&ScopeKey { profile: profile.into(), base_url, customer: None }).unwrap();
    (db, scope)
}

/// Every firmware state the service lists.
pub async fn all_states(client: &Client) -> Vec<FirmwareState> {
    client
        .firmware()
        .states(&StateFilter { limit: Some(1000), ..Default::default() })
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// The first page of downlinks of `kind`, newest first, `limit` a page, unfiltered.
pub fn downlink_page(kind: DownlinkKind, limit: u32) -> DownlinkPageRequest {
    DownlinkPageRequest { sort: Some("-createdAt".into()), ..DownlinkPageRequest::first(kind, limit) }
}

/// Every downlink of `kind` the service lists, newest first, read `page` at a time.
pub async fn all_downlinks(client: &Client, kind: DownlinkKind, page: u32) -> Vec<downlinks::DownlinkView> {
    let mut req = downlink_page(kind, page);
    let mut out = Vec::new();
    loop {
        let page = downlinks::list(client, &req).await.unwrap();
        out.extend(page.items);
        match page.next {
            Some(n) => req.next = Some(n),
            None => return out,
        }
    }
}

/// The module with the most devices, and the packaged version the fewest of them run: what the
/// rollout tests roll out.
pub fn pick(db: &FleetDb, scope: Scope) -> (String, String) {
    use dcs_console::fleet::query;
    let module = query::modules(db, scope).unwrap().into_iter().max_by_key(|m| m.devices).unwrap();
    let overview = query::overview(db, scope, &module.module_id, &Default::default()).unwrap();
    let running: std::collections::BTreeMap<String, u32> =
        overview.by_version.iter().map(|c| (c.key.clone(), c.count)).collect();
    let version =
        overview.packages.iter().min_by_key(|p| running.get(&p.version).copied().unwrap_or(0)).unwrap().version.clone();
    (module.module_id, version)
}

/// A plan of every device of `module` to `version` in `waves`, with these thresholds and nothing
/// else (no schedule, approval, retries or late devices).
pub fn plan(
    module: &str,
    version: &str,
    waves: &[f64],
    success: f64,
    error: f64,
) -> dcs_console::fleet::rollout::RolloutPlan {
    dcs_console::fleet::rollout::RolloutPlan {
        module_id: module.into(),
        version: version.into(),
        devices: dcs_console::fleet::rollout::DeviceChoice::All,
        waves: waves.to_vec(),
        success_threshold: success,
        error_threshold: error,
        schedule: None,
        approval: false,
        hang_minutes: None,
        retry: None,
        late: Default::default(),
    }
}
