//! Downlinks, bindings and the beta API against the simulator over real HTTP.

use dcs_api::beta::BetaDeviceQuery;
use dcs_api::bindings::BindingFilter;
use dcs_api::downlinks::{
    ConnectionDownlinkFilter, ConnectionKind, DownlinkFilter, DownlinkMethod, NewConnectionDownlink, NewDownlink,
};
use dcs_api::model::downlinks::{ConnectionDownlinkStatus, DownlinkStatus};
use dcs_api::model::{HttpBindingRequest, HttpBindingType, LoraBindingRequest, LoraBindingStatus, MqttBindingRequest};
use dcs_api::{Client, ClientConfig, ErrorCode, Secret, TimeFilter};
use dcs_sim::store::devices::DeviceRow;
use dcs_sim::{RunningSim, SimOptions, Simulator};
use futures::TryStreamExt;
use serde_json::json;
use uuid::Uuid;

mod common;

use common::{key_client as client, key_config as config};

async fn start() -> (Simulator, RunningSim) {
    common::start(SimOptions { devices_per_client: 40, ..Default::default() }).await
}

fn devices(sim: &Simulator, owner: Uuid) -> Vec<DeviceRow> {
    sim.store().beta_devices(owner, None, "id", true, 0, 10_000).unwrap().0
}

fn device_of(sim: &Simulator, owner: Uuid, connection: &str) -> DeviceRow {
    devices(sim, owner)
        .into_iter()
        .find(|d| d.connection == connection)
        .unwrap_or_else(|| panic!("no {connection} device"))
}

/// The device id in its natural form: `deveui:` for LoRa, `imei:` for the others.
fn natural_id(d: &DeviceRow) -> String {
    match (&d.deveui, &d.imei) {
        (Some(e), _) => format!("deveui:{e}"),
        (None, Some(i)) => format!("imei:{i}"),
        _ => d.id.to_string(),
    }
}

#[tokio::test]
async fn actuator_downlinks_create_get_list_and_cancel() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    let c = client(&running, &key);
    let lora = device_of(&sim, key.client_id, "lora");
    let dl = c.downlinks();

    let reference = format!("test-{}", Uuid::new_v4());
    let new = NewDownlink::new(DownlinkMethod::payload_hex(&natural_id(&lora), "0a0B", Some(5)))
        .retry_limit(2)
        .feedback_timeout("PT1H")
        .external_reference(&reference);
    let created = dl.create(&new).await.unwrap();
    // A-30; A-30 (alt): a new downlink is first ACCEPTED, a status the client does not know.
    let first = if common::alt() { DownlinkStatus::Unknown("ACCEPTED".into()) } else { DownlinkStatus::Pending };
    assert_eq!(created.status, first);
    assert_eq!(created.network_id, lora.network_id());
    assert_eq!(created.external_reference.as_deref(), Some(reference.as_str()));
    assert_eq!(created.retry_limit, Some(2));
    assert_eq!(created.raw["method"]["type"], "payloadHex");
    let id = created.id.clone().unwrap();

    let got = dl.get(&id).await.unwrap();
    assert_eq!(got.network_id, created.network_id);
    assert_eq!(got.raw["externalReference"], json!(reference));

    // `q` matches the external reference exactly.
    let found: Vec<_> = dl
        .list(&DownlinkFilter { q: Some(reference.clone()), ..Default::default() })
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].id.as_deref(), Some(id.as_str()));

    // The other three variants and a raw method.
    let imei_dev = devices(&sim, key.client_id).into_iter().find(|d| d.imei.is_some()).unwrap();
    let d = natural_id(&imei_dev);
    for method in [
        DownlinkMethod::set_property(&d, "interval", 60),
        DownlinkMethod::invoke_command(&d, "reboot", Some(json!({"delay": 5}).as_object().unwrap().clone())),
        DownlinkMethod::senml(&d, vec![json!({"n": "led", "vb": true})]),
        DownlinkMethod::Raw(json!({"type": "setProperty", "deviceId": d, "property": "mode", "value": "eco"})),
    ] {
        let made = dl.create(&NewDownlink::new(method).dry_run(true)).await.unwrap();
        assert_eq!(made.dry_run, Some(true));
        assert!(made.message.is_some(), "the encoder made a SenML message");
    }

    // Sorting, paging and a time filter.
    let since = created.created_at.unwrap();
    let filter = DownlinkFilter {
        sort: Some("-createdAt".into()),
        limit: Some(2),
        time: TimeFilter { created_since: Some(since), ..Default::default() },
        ..Default::default()
    };
    let recent: Vec<_> = dl.list(&filter).unwrap().try_collect().await.unwrap();
    assert_eq!(recent.len(), 5, "the five made in this test");
    assert!(recent.windows(2).all(|w| w[0].created_at >= w[1].created_at));

    // Cancel: accepted now, carried out by the next simulation step.
    dl.cancel(&id, false).await.unwrap();
    sim.step().unwrap();
    let after = dl.get(&id).await.unwrap();
    // A queued downlink is cancelled at once.
    assert_eq!(after.status, DownlinkStatus::Cancelled);
    // A final one cannot be cancelled again: a 409, or accepted to no effect (A-29 (alt)).
    let again = dl.cancel(&id, true).await;
    if common::alt() {
        again.unwrap();
    } else {
        assert_eq!(again.unwrap_err().code(), ErrorCode::Conflict);
    }
    sim.step().unwrap();
    assert_eq!(dl.get(&id).await.unwrap().status, DownlinkStatus::Cancelled);

    let missing = dl.get(&Uuid::new_v4().to_string()).await.unwrap_err();
    assert_eq!(missing.code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn connection_downlinks_of_every_kind() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    let c = client(&running, &key);
    let lora = device_of(&sim, key.client_id, "lora");
    let mqtt = device_of(&sim, key.client_id, "mqtt");
    let http = device_of(&sim, key.client_id, "http");
    let sms = device_of(&sim, key.client_id, "sms");
    let cases = [
        (
            ConnectionKind::Lora,
            lora.id,
            NewConnectionDownlink::lora(&natural_id(&lora), "PT30M", "0a0b0c")
                .f_port(7)
                .confirmed(false)
                .retry_limit(1),
        ),
        (
            ConnectionKind::Mqtt,
            mqtt.id,
            NewConnectionDownlink::mqtt(&natural_id(&mqtt), "PT30M", "devices/cmd", "{\"on\":true}").qos(2),
        ),
        (
            ConnectionKind::Sms,
            sms.id,
            NewConnectionDownlink::sms_text(&sms.id.to_string(), "PT30M", "hello").retry_limit(2),
        ),
        (
            ConnectionKind::Http,
            http.id,
            NewConnectionDownlink::http_senml(&natural_id(&http), "PT30M", vec![json!({"n": "led", "vb": true})]),
        ),
        (
            ConnectionKind::DigitalMatter,
            http.id,
            NewConnectionDownlink::digitalmatter(
                &natural_id(&http),
                "PT1H",
                json!({"command": "wake"}).as_object().unwrap().clone(),
            ),
        ),
    ];
    let mut made_ids = Vec::new();
    for (kind, device_uuid, new) in cases {
        let api = c.downlinks().connection(kind);
        let made = api.create(&new).await.unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(made.status, Some(ConnectionDownlinkStatus::Pending), "{kind}");
        let id = made.id.clone().unwrap();
        let got = api.get(&id).await.unwrap();
        assert_eq!(got.raw, made.raw, "{kind}");

        // List by device (UUID on SMS, any form elsewhere) and status.
        let device_filter = device_uuid.to_string();
        let filter = ConnectionDownlinkFilter {
            device_id: Some(device_filter),
            status: Some(ConnectionDownlinkStatus::Pending),
            limit: Some(3),
            ..Default::default()
        };
        let listed: Vec<_> = api.list(&filter).unwrap().try_collect().await.unwrap();
        assert!(listed.iter().any(|d| d.id.as_ref() == Some(&id)), "{kind}: listed");
        assert!(listed.iter().all(|d| d.status == Some(ConnectionDownlinkStatus::Pending)));

        api.cancel(&id, true).await.unwrap();
        made_ids.push((kind, id));
    }
    sim.step().unwrap();
    for (kind, id) in made_ids {
        let after = c.downlinks().connection(kind).get(&id).await.unwrap();
        assert_eq!(after.status, Some(ConnectionDownlinkStatus::Done), "{kind}");
        assert_eq!(after.last_failure_reason, Some(dcs_api::model::downlinks::FailureReason::Cancelled), "{kind}");
    }
    let (page, _) =
        c.downlinks().connection(ConnectionKind::Mqtt).page(&ConnectionDownlinkFilter::default()).await.unwrap();
    assert!(!page.items.is_empty());
    // Pages of three, and the raw JSON serialises back unchanged.
    let pages: Vec<_> = c
        .downlinks()
        .connection(ConnectionKind::Lora)
        .pages(&ConnectionDownlinkFilter { limit: Some(3), ..Default::default() })
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert!(pages.len() > 1 && pages.iter().all(|p| p.items.len() <= 3));
    let first = &pages[0].items[0];
    assert_eq!(serde_json::to_value(first).unwrap(), first.raw);

    // Kind-specific payload fields stay in the raw JSON.
    let lora_made = c
        .downlinks()
        .connection(ConnectionKind::Lora)
        .create(&NewConnectionDownlink::lora(&natural_id(&lora), "PT30M", "ff").dry_run(true))
        .await
        .unwrap();
    assert_eq!(lora_made.raw["payloadHex"], "ff");
    assert_eq!(lora_made.raw["fPort"], 1);

    // A builder of another kind, and bad fields, are refused before sending.
    let wrong = c
        .downlinks()
        .connection(ConnectionKind::Mqtt)
        .create(&NewConnectionDownlink::lora(&natural_id(&lora), "PT30M", "ff"))
        .await;
    assert_eq!(wrong.unwrap_err().code(), ErrorCode::InvalidInput);
    // On HTTP and LoRa the status filter is an enumeration whose values are not shown: the
    // client sends any value and the service judges it (the simulator refuses it, A-36).
    let bad_filter = ConnectionDownlinkFilter { status: Some("SOMETHING".into()), ..Default::default() };
    let refused = c.downlinks().connection(ConnectionKind::Lora).page(&bad_filter).await.unwrap_err();
    assert_eq!(refused.code(), ErrorCode::BadRequest, "{refused}");
    assert!(refused.problem().unwrap().invalid_params.iter().any(|p| p.name == "status"), "{refused}");
    // On SMS and MQTT the status filter is a free string.
    let page = c.downlinks().connection(ConnectionKind::Sms).page(&bad_filter).await.unwrap().0;
    assert!(page.items.is_empty());
    let bad_dev = ConnectionDownlinkFilter { device_id: Some("imei:12".into()), ..Default::default() };
    assert_eq!(
        c.downlinks().connection(ConnectionKind::Http).list(&bad_dev).err().unwrap().code(),
        ErrorCode::InvalidInput
    );
}

#[tokio::test]
async fn bad_downlinks_are_refused_before_any_request() {
    let (sim, running) = start().await;
    let mut key = sim.demo_key();
    key.secret = "never-used".into();
    let c = client(&running, &key);
    let dev = "deveui:70b3d57ed0000001";
    let err = c
        .downlinks()
        .create(&NewDownlink::new(DownlinkMethod::payload_hex(dev, "0a", None)).feedback_timeout("PT9M59S"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(err.to_string().starts_with("feedbackTimeout:"), "{err}");
    let err = c.downlinks().create(&NewDownlink::new(DownlinkMethod::set_property("nope", "a", 1))).await.unwrap_err();
    assert!(err.to_string().starts_with("method.deviceId:"), "{err}");
    // Only the reference's sort syntax is the client's to check; which fields sort is the service's.
    let err = c.downlinks().list(&DownlinkFilter { sort: Some("colour,".into()), ..Default::default() }).err().unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(c.downlinks().list(&DownlinkFilter { sort: Some("colour".into()), ..Default::default() }).is_ok());
    let err = c.downlinks().list(&DownlinkFilter { q: Some(String::new()), ..Default::default() }).err().unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    let lora = c.bindings().lora();
    let req = LoraBindingRequest {
        device_id: dev.into(),
        application_server_id: "00112233".into(),
        app_key: "00".repeat(16),
        extra: Default::default(),
    };
    assert!(lora.create(&req).await.unwrap_err().to_string().starts_with("applicationServerId:"));
    let req = LoraBindingRequest {
        device_id: dev.into(),
        application_server_id: "0011223344556677".into(),
        app_key: "zz".repeat(16),
        extra: Default::default(),
    };
    assert!(lora.create(&req).await.unwrap_err().to_string().starts_with("appKey:"));
    let req = MqttBindingRequest {
        device_id: "imei:350000000000001".into(),
        password: "short".into(),
        extra: Default::default(),
    };
    assert!(c.bindings().mqtt().create(&req).await.unwrap_err().to_string().starts_with("password:"));
    let req = HttpBindingRequest {
        device_id: "imei:350000000000001".into(),
        binding_type: "http-other".into(),
        shared_secret: "0123456789abcdef".into(),
        extra: Default::default(),
    };
    assert!(c.bindings().http().create(&req).await.unwrap_err().to_string().starts_with("type:"));
    let f = BindingFilter { username: Some("x".into()), ..Default::default() };
    assert_eq!(c.bindings().lora().list(&f).err().unwrap().code(), ErrorCode::InvalidInput);
}

/// A device of `connection` that has no binding of that kind yet.
async fn unbound<S: dcs_api::bindings::BindingSpec>(
    sim: &Simulator,
    owner: Uuid,
    connection: &str,
    api: &dcs_api::bindings::KindBindings<'_, S>,
    device_of: impl Fn(&S::Binding) -> String,
) -> DeviceRow {
    let bound: Vec<String> = api
        .list(&BindingFilter { limit: Some(100), ..Default::default() })
        .unwrap()
        .map_ok(|b| device_of(&b))
        .try_collect()
        .await
        .unwrap();
    devices(sim, owner)
        .into_iter()
        .find(|d| d.connection == connection && !bound.contains(&d.id.to_string()))
        .unwrap_or_else(|| panic!("every {connection} device is bound"))
}

fn hex(n: usize) -> String {
    let mut s = String::new();
    while s.len() < n {
        s.push_str(&Uuid::new_v4().simple().to_string());
    }
    s.truncate(n);
    s
}

#[tokio::test]
async fn lora_binding_lifecycle() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    let c = client(&running, &key);
    let api = c.bindings().lora();
    let dev = unbound(&sim, key.client_id, "lora", &api, |b| b.device_id.clone()).await;
    let req = LoraBindingRequest {
        device_id: natural_id(&dev),
        application_server_id: hex(16).to_uppercase(),
        app_key: hex(32),
        extra: Default::default(),
    };
    let made = api.create(&req).await.unwrap();
    assert_eq!(made.device_id, dev.id.to_string());
    assert_eq!(made.application_server_id, Some(req.application_server_id.to_lowercase()));
    // A-64; A-64 (alt): an INVENTORY binding's status is left out.
    assert_eq!(made.status, if common::alt() { None } else { Some(LoraBindingStatus::Inventory) });
    assert_eq!(api.get(made.id).await.unwrap(), made);
    let synced = api.get_synced(made.id, true).await.unwrap();
    if common::alt() {
        // INVENTORY is left out (A-64 (alt)); anything shown is ACTIVE.
        assert!(synced.status.as_ref().is_none_or(|s| *s == LoraBindingStatus::Active), "{:?}", synced.status);
    } else {
        assert!(synced.status.is_some_and(|s| s.is_known()));
    }

    let listed: Vec<_> = api
        .list(&BindingFilter { device_id: Some(natural_id(&dev)), ..Default::default() })
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);

    let again = api.create(&req).await.unwrap_err();
    assert_eq!(again.code(), ErrorCode::Conflict);

    let changed = LoraBindingRequest { app_key: hex(32), ..req.clone() };
    let updated = api.update(made.id, &changed).await.unwrap();
    assert_eq!(updated.id, made.id);
    let stored =
        sim.store().binding(key.client_id, dcs_api::model::BindingKind::Lora, made.id).unwrap().unwrap().app_key;
    assert_eq!(stored.as_deref(), Some(changed.app_key.as_str()));
    // A-61; A-61 (alt): the key is stored but never returned.
    assert_eq!(updated.app_key.as_deref(), if common::alt() { None } else { Some(changed.app_key.as_str()) });

    api.delete(made.id).await.unwrap();
    assert_eq!(api.get(made.id).await.unwrap_err().code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn http_binding_lifecycle() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    let c = client(&running, &key);
    let api = c.bindings().http();
    let dev = unbound(&sim, key.client_id, "http", &api, |b| b.device_id.clone()).await;
    // The sharedSecret rule is not shown: the client sends a short one and the service (the
    // simulator, A-62) refuses it by name.
    let short = HttpBindingRequest {
        device_id: natural_id(&dev),
        binding_type: HttpBindingType::Senml,
        shared_secret: "short".into(),
        extra: Default::default(),
    };
    let err = api.create(&short).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadRequest, "{err}");
    assert!(err.problem().unwrap().invalid_params.iter().any(|p| p.name == "sharedSecret"), "{err}");
    let req = HttpBindingRequest { shared_secret: "0123456789abcdef!".into(), ..short };
    let made = api.create(&req).await.unwrap();
    assert_eq!(made.binding_type, Some(HttpBindingType::Senml));
    assert_eq!(api.get(made.id).await.unwrap(), made);
    let f = BindingFilter {
        binding_type: Some(HttpBindingType::Senml),
        device_id: Some(dev.id.to_string()),
        ..Default::default()
    };
    let listed: Vec<_> = api.list(&f).unwrap().try_collect().await.unwrap();
    assert_eq!(listed, vec![made.clone()]);

    let changed = HttpBindingRequest { binding_type: HttpBindingType::Streamline, ..req };
    let updated = api.update(made.id, &changed).await.unwrap();
    assert_eq!(updated.binding_type, Some(HttpBindingType::Streamline));
    api.delete(made.id).await.unwrap();
    assert_eq!(api.get(made.id).await.unwrap_err().code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn mqtt_binding_lifecycle() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    let c = client(&running, &key);
    let api = c.bindings().mqtt();
    let dev = unbound(&sim, key.client_id, "mqtt", &api, |b| b.device_id.clone()).await;
    let req = MqttBindingRequest {
        device_id: natural_id(&dev),
        password: "Abcdefghijklmnopqrstuv1!".into(),
        extra: Default::default(),
    };
    let made = api.create(&req).await.unwrap();
    assert_eq!(made.username.as_deref(), Some(dev.network_id().as_str()));
    let f = BindingFilter { username: made.username.clone(), ..Default::default() };
    let listed: Vec<_> = api.list(&f).unwrap().try_collect().await.unwrap();
    assert_eq!(listed, vec![made.clone()]);
    let changed = MqttBindingRequest { password: "Zyxwvutsrqponmlkjihgfe9#".into(), ..req };
    let updated = api.update(made.id, &changed).await.unwrap();
    // A-61; A-61 (alt): the secret is stored but never returned.
    let stored =
        sim.store().binding(key.client_id, dcs_api::model::BindingKind::Mqtt, made.id).unwrap().unwrap().password;
    assert_eq!(stored.as_deref(), Some("Zyxwvutsrqponmlkjihgfe9#"));
    assert_eq!(updated.password.as_deref(), if common::alt() { None } else { Some("Zyxwvutsrqponmlkjihgfe9#") });
    api.delete(made.id).await.unwrap();
    assert_eq!(api.get(made.id).await.unwrap_err().code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn beta_devices_are_listed_page_by_page() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    let c = client(&running, &key);
    let page = c.beta().devices(&BetaDeviceQuery { page_size: Some(7), ..Default::default() }).await.unwrap();
    assert_eq!(page.size, 7);
    assert!(page.first);
    assert_eq!(page.total_elements, 40);
    let all = c.beta().all_devices(&BetaDeviceQuery { page_size: Some(7), ..Default::default() }).await.unwrap();
    assert_eq!(all.len(), 40);
    let names: Vec<_> = all.iter().map(|d| d.name.clone()).collect();
    let sorted = {
        let mut s = names.clone();
        s.sort();
        s
    };
    assert_eq!(names, sorted, "by name, ascending by default");
    let desc = c
        .beta()
        .devices(&BetaDeviceQuery {
            sort_by: Some("uuid".into()),
            descending: Some(true),
            page_size: Some(1000),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(desc.content.windows(2).all(|w| w[0].uuid.to_string() >= w[1].uuid.to_string()));
    let err =
        c.beta().devices(&BetaDeviceQuery { sort_by: Some("colour".into()), ..Default::default() }).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadRequest);
}

#[tokio::test]
async fn the_x_client_id_mode_needs_a_context_switch_and_excludes_the_security_context() {
    let (sim, running) = start().await;
    let key = sim.demo_key();
    let customer = sim.store().clients().unwrap().into_iter().find(|c| c.reseller_id == Some(key.client_id)).unwrap();

    let mut both = config(&running, &key);
    both.customer = Some(customer.id);
    both.x_client_id = Some(customer.id);
    let err = Client::new(both).err().unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(err.to_string().starts_with("x-client-id:"));

    let mut cfg = config(&running, &key);
    cfg.x_client_id = Some(customer.id);
    let sub = Client::new(cfg).unwrap();
    let refused = sub.beta().devices(&BetaDeviceQuery::default()).await.unwrap_err();
    assert_eq!(refused.code(), ErrorCode::Forbidden);

    let own = client(&running, &key);
    let switched = own.beta().context_switch(customer.id).await.unwrap();
    if common::alt() {
        // A-53 (alt): 204 No Content.
        assert!(switched.is_null(), "{switched}");
    } else {
        assert_eq!(switched["clientId"], customer.id.to_string(), "the answer is kept as it came");
    }
    assert!(!dcs_api::model::beta::switch_refused(&switched));

    let all = sub.beta().all_devices(&BetaDeviceQuery { page_size: Some(50), ..Default::default() }).await.unwrap();
    let mut held: Vec<_> = devices(&sim, customer.id).into_iter().map(|d| d.id).collect();
    let mut got: Vec<_> = all.iter().map(|d| d.uuid).collect();
    held.sort();
    got.sort();
    assert_eq!(got, held);
    // The mode works on the new API too.
    let dl = sub.downlinks().page(&DownlinkFilter { limit: Some(5), ..Default::default() }).await.unwrap().0;
    let networks: Vec<_> = devices(&sim, customer.id).iter().map(|d| d.network_id()).collect();
    assert!(dl.items.iter().all(|d| networks.contains(&d.network_id)));

    let stranger = own.beta().context_switch(Uuid::new_v4()).await.unwrap_err();
    assert_eq!(stranger.code(), ErrorCode::Forbidden);
}

#[tokio::test]
async fn a_refused_token_on_the_beta_api_is_a_302_not_followed_and_reported_as_unauthorized() {
    let (sim, running) = start().await;
    // Tokens from a simulator with another seed are foreign to this one.
    let (other, other_running) =
        common::start(SimOptions { seed: 2, devices_per_client: 1, ..Default::default() }).await;
    let other_key = other.demo_key();
    let cfg = ClientConfig::new(
        &running.base_url(),
        &other_running.base_url(),
        &other_key.key_id,
        Secret::new(other_key.secret.clone()),
    )
    .unwrap();
    let c = Client::new(cfg).unwrap();
    let err = c.beta().devices(&BetaDeviceQuery::default()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unauthorized, "{err}");
    assert!(matches!(err, dcs_api::Error::Api { status: 302, .. }), "{err}");
    // The new API answers the same token with a 401.
    let err = c.downlinks().page(&DownlinkFilter::default()).await.unwrap_err();
    assert!(matches!(err, dcs_api::Error::Api { status: 401, .. }), "{err}");
    drop(sim);
}

#[tokio::test]
async fn beta_actuator_downlinks_are_checked_then_created() {
    let (sim, running) = common::start(SimOptions { devices_per_client: 30, ..Default::default() }).await;
    let key = sim.demo_key();
    let base = running.base_url();
    let c = dcs_api::Client::new(
        dcs_api::ClientConfig::new(&base, &base, &key.key_id, dcs_api::Secret::new(key.secret.clone())).unwrap(),
    )
    .unwrap();
    let (devices, _) = sim.store().beta_devices(key.client_id, None, "name", true, 0, 1000).unwrap();
    let lora = devices.iter().find(|d| d.connection == "lora").unwrap();
    let eui = dcs_api::model::DeviceId::parse(&format!("deveui:{}", lora.deveui.clone().unwrap())).unwrap();
    let created =
        c.beta().actuator_downlinks(&[(eui.clone(), "0A0B".into())], 12, Some("beta-client-1")).await.unwrap();
    assert_eq!(created.as_array().map(Vec::len), Some(1), "{created}");
    assert_eq!(created[0]["networkId"], lora.network_id());
    assert_eq!(created[0]["externalReference"], "beta-client-1");
    // Refused before sending (a wrong secret would fail otherwise).
    let wrong = dcs_api::Client::new(
        dcs_api::ClientConfig::new(&base, &base, &key.key_id, dcs_api::Secret::new("nope")).unwrap(),
    )
    .unwrap();
    let imei = dcs_api::model::DeviceId::parse("imei:123456789012345").unwrap();
    for (payloads, port, field) in [
        (vec![(eui.clone(), "0A".to_owned())], 0u8, "port"),
        (vec![(imei, "0A".to_owned())], 5, "payloads[0].device"),
        (vec![(eui.clone(), "ABC".to_owned())], 5, "payloads[0].payloadHex"),
    ] {
        let err = wrong.beta().actuator_downlinks(&payloads, port, None).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidInput);
        assert!(err.to_string().starts_with(field), "{err}");
    }
}
