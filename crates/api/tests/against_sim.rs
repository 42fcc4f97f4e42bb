//! The client against the simulator over real HTTP on a loopback port.

use dcs_api::firmware::ModuleFilter;
use dcs_api::{Client, ClientConfig, ErrorCode, Secret};
use dcs_sim::store::ModuleQuery;
use dcs_sim::{RunningSim, SimOptions, Simulator};
use futures::TryStreamExt;

mod common;

use common::client;

async fn start() -> (Simulator, RunningSim) {
    common::start(SimOptions::default()).await
}

fn held_modules(sim: &Simulator, owner: uuid::Uuid) -> Vec<dcs_api::model::FirmwareModule> {
    let held = sim.store().list_modules(&ModuleQuery { owner, limit: 10_000, ..Default::default() }).unwrap();
    held.into_iter().map(|m| common::as_answered(sim, m)).collect()
}

#[tokio::test]
async fn streams_every_module_across_pages_exactly_as_the_simulator_holds_them() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    let c = client(&running, &key.key_id, &key.secret);
    let filter = ModuleFilter { limit: Some(2), ..Default::default() };
    let streamed: Vec<_> = c.firmware().modules(&filter).unwrap().try_collect().await.unwrap();
    let held = held_modules(&sim, key.client_id);
    assert!(held.len() > 2, "more than one page");
    assert_eq!(streamed, held);

    // A single module by id.
    let one = c.firmware().module(held[0].id).await.unwrap();
    assert_eq!(one, held[0]);
    let missing = c.firmware().module(uuid::Uuid::new_v4()).await.unwrap_err();
    assert_eq!(missing.code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn a_base_url_with_a_trailing_slash_works_the_same() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    let base = format!("{}/", running.base_url());
    let c =
        Client::new(ClientConfig::new(&base, &base, &key.key_id, Secret::new(key.secret.clone())).unwrap()).unwrap();
    let (page, _) = c.firmware().modules_page(&ModuleFilter::default()).await.unwrap();
    assert!(!page.items.is_empty());
}

#[tokio::test]
async fn the_identity_platforms_messages_become_errors_that_say_what_to_fix() {
    let (sim, running) = start().await;
    let key = sim.demo_key();

    let wrong = client(&running, &key.key_id, "not-the-secret").check_auth().await.unwrap_err();
    assert_eq!(wrong.code(), ErrorCode::WrongCredentials);
    assert!(wrong.to_string().contains("id or secret is incorrect"));

    let no_service =
        client(&running, "sim-no-service", &format!("{}-no-service", key.secret)).check_auth().await.unwrap_err();
    assert_eq!(no_service.code(), ErrorCode::ServiceNotGranted);

    let no_firmware = client(&running, "sim-no-firmware", &format!("{}-no-firmware", key.secret));
    no_firmware.check_auth().await.unwrap();
    let err = no_firmware.firmware().modules_page(&ModuleFilter::default()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Forbidden);
    assert_eq!(err.problem().unwrap().status, Some(403));
}

#[tokio::test]
async fn bad_input_is_refused_before_any_request() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    // A wrong secret would fail if a request were sent; a sort breaking the reference's syntax
    // is refused first.
    let c = client(&running, &key.key_id, "never-used");
    let err =
        c.firmware().modules(&ModuleFilter { sort: Some("name,,-id".into()), ..Default::default() }).err().unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(err.to_string().starts_with("sort: "), "{err}");
    let err = c.firmware().modules(&ModuleFilter { limit: Some(0), ..Default::default() }).err().unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    // Which fields sort is the service's to say: an unknown one is sent, and the simulator
    // refuses it by name.
    let good = client(&running, &key.key_id, &key.secret);
    let err = good
        .firmware()
        .modules_page(&ModuleFilter { sort: Some("colour".into()), ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadRequest, "{err}");
    assert!(err.problem().unwrap().invalid_params.iter().any(|p| p.name == "sort"), "{err}");
}

#[tokio::test]
async fn acting_for_a_customer_lists_that_customers_modules_only() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    let customer = sim.store().clients().unwrap().into_iter().find(|c| c.reseller_id == Some(key.client_id)).unwrap();
    let base = running.base_url();
    let mut config = ClientConfig::new(&base, &base, &key.key_id, Secret::new(key.secret.clone())).unwrap();
    config.customer = Some(customer.id);
    let c = Client::new(config).unwrap();
    let listed: Vec<_> = c.firmware().modules(&ModuleFilter::default()).unwrap().try_collect().await.unwrap();
    assert_eq!(listed, held_modules(&sim, customer.id));

    let mut config = ClientConfig::new(&base, &base, &key.key_id, Secret::new(key.secret.clone())).unwrap();
    config.customer = Some(uuid::Uuid::new_v4());
    let err = Client::new(config).unwrap().firmware().modules_page(&ModuleFilter::default()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Forbidden);
}

#[tokio::test]
async fn page_links_to_another_host_are_refused_so_the_token_stays_home() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    let c = client(&running, &key.key_id, &key.secret);
    let evil = url::Url::parse("http://127.0.0.2:9/firmware/modules?cursor=x").unwrap();
    let err = c.firmware().modules_page_at(&evil).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Protocol);
}

#[tokio::test]
async fn concurrent_first_requests_share_one_token_and_later_ones_reuse_it() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    let c = client(&running, &key.key_id, &key.secret);
    let before = sim.tokens_issued();
    let calls = (0..20).map(|_| {
        let c = c.clone();
        async move { c.firmware().modules_page(&ModuleFilter::default()).await.map(|_| ()) }
    });
    for r in futures::future::join_all(calls).await {
        r.unwrap();
    }
    assert_eq!(sim.tokens_issued() - before, 1, "one token fetch for twenty concurrent first requests");
    c.firmware().modules_page(&ModuleFilter::default()).await.unwrap();
    assert_eq!(sim.tokens_issued() - before, 1, "the cached token is reused");
}

#[tokio::test]
async fn a_base_url_with_a_path_prefix_keeps_it_for_every_call_and_link() {
    // The simulator mounted under /gateway/dcs, as behind an API gateway.
    let sim = common::simulator(SimOptions { devices_per_client: 20, ..Default::default() });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().nest("/gateway/dcs", sim.router());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let base = format!("http://{addr}/gateway/dcs");
    let key = sim.demo_key();
    let c =
        Client::new(ClientConfig::new(&base, &base, &key.key_id, Secret::new(key.secret.clone())).unwrap()).unwrap();
    let streamed: Vec<_> = c
        .firmware()
        .modules(&ModuleFilter { limit: Some(2), ..Default::default() })
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(streamed, held_modules(&sim, key.client_id), "every page reached through the prefixed links");
}

/// An address the service refuses for its length is the service's refusal (a 414 read as such,
/// sent once), never "could not reach"; one longer than any service is sure to take is refused
/// by the client before it is sent, naming the rule.
#[tokio::test]
async fn a_too_long_address_is_a_refusal_not_an_unreachable_service() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    let c = client(&running, &key.key_id, &key.secret);
    let query = |n: usize| dcs_api::beta::BetaDeviceQuery { search: Some("a".repeat(n)), ..Default::default() };

    // Over the simulator's 8 KiB: its 414 problem document.
    let started = std::time::Instant::now();
    let e = c.beta().devices(&query(10_000)).await.unwrap_err();
    assert!(matches!(e, dcs_api::Error::Api { status: 414, .. }), "{:?}", e.code());
    assert_ne!(e.code(), ErrorCode::Network);
    assert!(e.to_string().contains("8192"), "{}", &e.to_string()[..200.min(e.to_string().len())]);
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "not retried: {:?}", started.elapsed());

    // Far over anything a server takes (hyper closes at 64 KiB): refused before sending.
    let e = c.beta().devices(&query(100_000)).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidInput);
    let text = e.to_string();
    assert!(text.contains("32768") && text.len() < 400, "{}", &text[..400.min(text.len())]);
}
