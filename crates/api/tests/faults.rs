//! The retry layer against the simulator's fault injection: 5xx answers, 429
//! storms with `Retry-After`, dropped connections, and tokens that expire during a scan.

use std::time::{Duration, Instant};

use dcs_api::downlinks::{DownlinkMethod, NewDownlink};
use dcs_api::firmware::{ModuleFilter, StateFilter};
use dcs_api::{Client, ErrorCode, RetryPolicy};
use dcs_sim::faults::Faults;
use dcs_sim::store::downlinks::DownlinkQuery;
use dcs_sim::store::firmware::StateQuery;
use dcs_sim::store::query::Window;
use dcs_sim::store::ModuleQuery;
use dcs_sim::{DemoKey, RunningSim, SimOptions, Simulator};
use futures::TryStreamExt;
use uuid::Uuid;

mod common;

async fn start(opts: SimOptions) -> (Simulator, RunningSim) {
    common::start(SimOptions { devices_per_client: 20, ..opts }).await
}

fn client_with(running: &RunningSim, key: &DemoKey, retry: RetryPolicy) -> Client {
    let mut cfg = common::key_config(running, key);
    cfg.retry = retry;
    Client::new(cfg).unwrap()
}

/// Quick retries, so the tests stay fast.
fn fast() -> RetryPolicy {
    RetryPolicy { base_delay: Duration::from_millis(5), max_delay: Duration::from_millis(50), ..RetryPolicy::default() }
}

fn held_modules(sim: &Simulator, owner: Uuid) -> Vec<dcs_api::model::FirmwareModule> {
    let held = sim.store().list_modules(&ModuleQuery { owner, limit: 10_000, ..Default::default() }).unwrap();
    held.into_iter().map(|m| common::as_answered(sim, m)).collect()
}

fn actuator_count(sim: &Simulator, owner: Uuid) -> usize {
    let q = DownlinkQuery {
        owner,
        kind: "actuator".into(),
        window: Window { limit: 1_000_000, ..Default::default() },
        ..Default::default()
    };
    sim.store().list_downlinks(&q).unwrap().len()
}

/// The (device, module) keys of every firmware state, in the listing's default order. (The
/// simulated devices may move on during a scan, so only the keys are compared.)
fn held_states(sim: &Simulator, owner: Uuid) -> Vec<(Uuid, Uuid)> {
    let q = StateQuery { owner, window: Window { limit: 1_000_000, ..Default::default() }, ..Default::default() };
    sim.store().list_states(&q).unwrap().into_iter().map(|s| (s.device_id, s.module_id)).collect()
}

/// Every firmware state, ten to a page.
async fn scan_states(c: &Client) -> dcs_api::error::Result<Vec<(Uuid, Uuid)>> {
    c.firmware()
        .states(&StateFilter { limit: Some(10), ..Default::default() })?
        .map_ok(|s| (s.device_id, s.module_id))
        .try_collect()
        .await
}

async fn scan(c: &Client) -> dcs_api::error::Result<Vec<dcs_api::model::FirmwareModule>> {
    c.firmware().modules(&ModuleFilter { limit: Some(1), ..Default::default() })?.try_collect().await
}

#[tokio::test]
async fn a_full_scan_completes_despite_server_errors() {
    let (sim, running) = start(SimOptions::default()).await;
    let key = sim.demo_key();
    let held = held_modules(&sim, key.client_id);
    assert!(held.len() >= 4, "several pages: {}", held.len());
    // The simulator's 5xx faults are 500, 502, 503 or 504 at random. 500 is not retried by
    // default, so this policy adds it (the retry path is the same as for 503). With 10 attempts
    // a request failed for good once in 0.4^10 (1e-4) and the scans make hundreds: CI saw it
    // (alt variant, 2026-11-27); with 40, once in 1e16.
    let policy = RetryPolicy { max_attempts: 40, retry_statuses: vec![500, 502, 503, 504], ..fast() };
    let c = client_with(&running, &key, policy);
    sim.set_faults(Faults { error_rate: 0.4, ..Default::default() });
    let scanned = scan(&c).await.unwrap();
    assert_eq!(scanned, held);
    let states = scan_states(&c).await.unwrap();
    assert_eq!(states, held_states(&sim, key.client_id));
}

#[tokio::test]
async fn only_502_503_504_are_retried_by_default_and_retries_are_bounded() {
    let (sim, running) = start(SimOptions::default()).await;
    let key = sim.demo_key();
    let c = client_with(&running, &key, RetryPolicy { max_attempts: 3, ..fast() });
    c.check_auth().await.unwrap();
    sim.set_faults(Faults { error_rate: 1.0, ..Default::default() });
    let started = Instant::now();
    let err = scan(&c).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Server);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_full_scan_completes_through_a_429_storm() {
    let (sim, running) = start(SimOptions::default()).await;
    let key = sim.demo_key();
    let held = held_modules(&sim, key.client_id);
    sim.set_faults(Faults { rate_limit: Some(3), ..Default::default() });
    let a = client_with(&running, &key, RetryPolicy { max_rate_limit_waits: 50, ..fast() });
    let b = client_with(&running, &key, RetryPolicy { max_rate_limit_waits: 50, ..fast() });
    // Two scans at once keep the bucket empty: many 429s, each waited out.
    let (ra, rb) = tokio::join!(scan(&a), scan_states(&b));
    assert_eq!(ra.unwrap(), held);
    assert_eq!(rb.unwrap(), held_states(&sim, key.client_id));

    // Without waits the storm is an error with its own code.
    let none = client_with(&running, &key, RetryPolicy::none());
    let mut saw_429 = false;
    for _ in 0..10 {
        if let Err(e) = scan(&none).await {
            assert_eq!(e.code(), ErrorCode::RateLimited);
            saw_429 = true;
            break;
        }
    }
    assert!(saw_429);
}

fn new_downlink(sim: &Simulator, owner: Uuid) -> NewDownlink {
    let lora = sim
        .store()
        .beta_devices(owner, None, "id", true, 0, 1000)
        .unwrap()
        .0
        .into_iter()
        .find(|d| d.deveui.is_some())
        .unwrap();
    NewDownlink::new(DownlinkMethod::payload_hex(&format!("deveui:{}", lora.deveui.unwrap()), "01", None))
        .external_reference(&format!("fault-{}", Uuid::new_v4()))
}

#[tokio::test]
async fn a_post_is_never_repeated_after_a_dropped_connection_or_a_5xx() {
    let (sim, running) = start(SimOptions::default()).await;
    let key = sim.demo_key();
    // A generous policy: were POSTs retried, these tests would see it.
    let c = client_with(
        &running,
        &key,
        RetryPolicy { max_attempts: 10, retry_statuses: vec![500, 502, 503, 504], ..fast() },
    );
    c.check_auth().await.unwrap();
    let before = actuator_count(&sim, key.client_id);

    sim.set_faults(Faults { drop_rate: 1.0, ..Default::default() });
    let err = c.downlinks().create(&new_downlink(&sim, key.client_id)).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Network);
    sim.set_faults(Faults { error_rate: 1.0, ..Default::default() });
    let err = c.downlinks().create(&new_downlink(&sim, key.client_id)).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Server);
    sim.set_faults(Faults::default());
    assert_eq!(actuator_count(&sim, key.client_id), before, "nothing created");

    // Half of the POSTs meet a fault: each creates zero or one downlink, never two, and the
    // count of created ones is exactly the count of successes.
    sim.set_faults(Faults { error_rate: 0.3, drop_rate: 0.3, ..Default::default() });
    let mut ok = 0;
    for _ in 0..12 {
        let before_one = actuator_count(&sim, key.client_id);
        let res = c.downlinks().create(&new_downlink(&sim, key.client_id)).await;
        let made = actuator_count(&sim, key.client_id) - before_one;
        match res {
            Ok(_) => {
                ok += 1;
                assert_eq!(made, 1);
            }
            Err(e) => {
                assert!(matches!(e.code(), ErrorCode::Network | ErrorCode::Server), "{e}");
                assert!(made <= 1);
            }
        }
    }
    sim.set_faults(Faults::default());
    assert!(actuator_count(&sim, key.client_id) - before >= ok);
    assert!(actuator_count(&sim, key.client_id) - before <= 12);
}

#[tokio::test]
async fn a_get_is_retried_after_a_dropped_connection() {
    let (sim, running) = start(SimOptions::default()).await;
    let key = sim.demo_key();
    let held = held_modules(&sim, key.client_id);
    let c = client_with(&running, &key, RetryPolicy { max_attempts: 10, ..fast() });
    c.check_auth().await.unwrap();
    sim.set_faults(Faults { drop_rate: 0.3, ..Default::default() });
    assert_eq!(scan(&c).await.unwrap(), held);
}

#[tokio::test]
async fn a_token_that_expires_during_a_long_scan_is_renewed() {
    let (sim, running) = start(SimOptions { token_lifetime: Duration::from_secs(1), ..Default::default() }).await;
    let key = sim.demo_key();
    let held = held_modules(&sim, key.client_id);
    let c = client_with(&running, &key, fast());
    c.check_auth().await.unwrap();
    // Each page takes longer than half a token's life: tokens expire in flight and between pages.
    sim.set_faults(Faults { latency_ms: 400, ..Default::default() });
    let started = Instant::now();
    let scanned = scan(&c).await.unwrap();
    assert_eq!(scanned, held);
    assert!(started.elapsed() > Duration::from_secs(2), "the scan outlived several tokens");
}

#[tokio::test]
async fn a_post_waits_out_a_429_and_is_then_sent_once() {
    let (sim, running) = start(SimOptions::default()).await;
    let key = sim.demo_key();
    let c = client_with(&running, &key, RetryPolicy { max_rate_limit_waits: 50, ..fast() });
    c.check_auth().await.unwrap();
    let before = actuator_count(&sim, key.client_id);
    sim.set_faults(Faults { rate_limit: Some(2), ..Default::default() });
    let news: Vec<_> = (0..6).map(|_| new_downlink(&sim, key.client_id)).collect();
    let dl = c.downlinks();
    let results = futures::future::join_all(news.iter().map(|n| dl.create(n))).await;
    sim.set_faults(Faults::default());
    for r in &results {
        assert!(r.is_ok(), "{:?}", r.as_ref().err());
    }
    assert_eq!(actuator_count(&sim, key.client_id) - before, 6, "each POST created exactly one downlink");
}

/// A log sink for one test: what the client's tracing wrote.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn retries_are_logged_with_method_path_attempt_and_reason_but_never_the_token() {
    let captured = Captured::default();
    let sink = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let (sim, running) = start(SimOptions::default()).await;
    let key = sim.demo_key();
    let c = client_with(
        &running,
        &key,
        RetryPolicy { max_attempts: 3, retry_statuses: vec![500, 502, 503, 504], ..fast() },
    );
    c.check_auth().await.unwrap();
    sim.set_faults(Faults { error_rate: 1.0, ..Default::default() });
    assert!(scan(&c).await.is_err());
    sim.set_faults(Faults { drop_rate: 1.0, ..Default::default() });
    assert!(scan(&c).await.is_err());
    sim.set_faults(Faults::default());

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let retry_lines: Vec<_> = logs.lines().filter(|l| l.contains("retrying")).collect();
    assert_eq!(retry_lines.len(), 4, "two retries for each of the two scans: {logs}");
    assert!(retry_lines.iter().any(|l| l.contains("connection error")), "{logs}");
    assert!(retry_lines.iter().any(|l| l.contains("server error")), "{logs}");
    for line in &retry_lines {
        assert!(
            line.contains("method=GET") && line.contains("path=\"/firmware/modules\"") && line.contains("attempt="),
            "{line}"
        );
        assert!(line.contains("reason="), "{line}");
    }
    assert!(!logs.contains("eyJ") && !logs.contains("Bearer"), "no token in the logs");
    assert!(!logs.contains(&key.secret), "no secret in the logs");
}
