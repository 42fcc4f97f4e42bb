//! The binding editors' calls against a real simulator over HTTP: lists carry no secret, an
//! update without a secret keeps the stored one, a typed one replaces it, reveal answers the
//! service's, a LoRa sync makes a joined device ACTIVE, and delete removes.

use dcs_api::model::BindingKind;
use dcs_api::{ErrorCode, Secret};
use dcs_console::bindings::{self, BindingDraft, BindingPageRequest};
use dcs_console::session::{self, Acting};
use dcs_console::{Customer, Profile};
use dcs_sim::store::devices::DeviceRow;
use dcs_sim::{RunningSim, SimOptions, Simulator};

mod common;

struct Env {
    sim: Simulator,
    running: RunningSim,
    client: dcs_api::Client,
}

async fn env() -> Env {
    let (sim, running) = common::spawn(SimOptions { devices_per_client: 40, ..Default::default() }).await;
    let key = sim.demo_key();
    let profile = Profile {
        name: "local".into(),
        base_url: Some(running.base_url()),
        auth_url: None,
        client_id: key.key_id.clone(),
        audience: dcs_api::model::SERVICE_AUDIENCE.into(),
        customers: Vec::<Customer>::new(),
        deprecated_sub_customer_mode: false,
        set_target: None,
    };
    let client =
        session::connect(&profile, &running.base_url(), Secret::new(key.secret), &Acting::Yourself).await.unwrap();
    Env { sim, running, client }
}

impl Env {
    /// A device of `connection` with no binding of that kind yet.
    async fn unbound(&self, kind: BindingKind) -> DeviceRow {
        let owner = self.sim.demo_key().client_id;
        let devices = self.sim.store().beta_devices(owner, None, "id", true, 0, 10_000).unwrap().0;
        let mut bound = Vec::new();
        let mut req = BindingPageRequest { limit: Some(1000), ..Default::default() };
        loop {
            let page = bindings::page(&self.client, kind, &req).await.unwrap();
            bound.extend(page.items.into_iter().map(|b| b.device_id));
            match page.next {
                Some(n) => req.next = Some(n),
                None => break,
            }
        }
        devices
            .into_iter()
            .find(|d| d.connection == kind.as_str() && !bound.contains(&d.id.to_string()))
            .unwrap_or_else(|| panic!("no unbound {kind} device"))
    }
}

fn natural_id(d: &DeviceRow) -> String {
    match (&d.deveui, &d.imei) {
        (Some(e), _) => format!("deveui:{e}"),
        (None, Some(i)) => format!("imei:{i}"),
        _ => d.id.to_string(),
    }
}

fn draft(kind: BindingKind, device: &str, secret: Option<&str>) -> BindingDraft {
    BindingDraft {
        kind,
        device_id: device.to_owned(),
        application_server_id: Some("00a1b2c3d4e5f607".into()),
        binding_type: Some("http-streamline".into()),
        secret: secret.map(str::to_owned),
    }
}

#[tokio::test]
async fn mqtt_update_keeps_the_stored_password_unless_one_is_typed() {
    let env = env().await;
    let dev = env.unbound(BindingKind::Mqtt).await;
    let first = bindings::generate_secret(BindingKind::Mqtt).unwrap();
    let made = bindings::create(&env.client, &draft(BindingKind::Mqtt, &natural_id(&dev), Some(&first))).await.unwrap();
    assert!(made.has_secret);
    assert_eq!(made.device_id, dev.id.to_string());
    assert_eq!(made.username.as_deref(), Some(dev.network_id().as_str()), "username is the service's (A-63)");

    // The list shows the binding without its password.
    let req = BindingPageRequest { username: made.username.clone(), ..Default::default() };
    let page = bindings::page(&env.client, BindingKind::Mqtt, &req).await.unwrap();
    assert_eq!(page.items, vec![made.clone()]);
    assert!(!serde_json::to_string(&page).unwrap().contains(&first));

    // Edit without a password: the stored one stays.
    let kept =
        bindings::update(&env.client, made.id, &draft(BindingKind::Mqtt, &dev.id.to_string(), None)).await.unwrap();
    assert_eq!(kept.id, made.id);
    assert_eq!(bindings::reveal(&env.client, BindingKind::Mqtt, made.id).await.unwrap(), first);

    // A typed one replaces it.
    let second = bindings::generate_secret(BindingKind::Mqtt).unwrap();
    bindings::update(&env.client, made.id, &draft(BindingKind::Mqtt, &dev.id.to_string(), Some(&second)))
        .await
        .unwrap();
    assert_eq!(bindings::reveal(&env.client, BindingKind::Mqtt, made.id).await.unwrap(), second);

    // A weak one is refused before any request, naming the field.
    let weak =
        bindings::update(&env.client, made.id, &draft(BindingKind::Mqtt, &dev.id.to_string(), Some("weak"))).await;
    match weak {
        Err(dcs_api::Error::InvalidInput { field, .. }) => assert_eq!(field, "password"),
        other => panic!("{other:?}"),
    }

    bindings::delete(&env.client, BindingKind::Mqtt, made.id).await.unwrap();
    let gone = bindings::get(&env.client, BindingKind::Mqtt, made.id).await.unwrap_err();
    assert_eq!(gone.code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn lora_keys_are_kept_through_an_edit_and_a_joined_device_becomes_active_on_sync() {
    let env = env().await;
    let dev = env.unbound(BindingKind::Lora).await;
    let key = "00112233445566778899AABBCCDDEEFF";
    let made = bindings::create(&env.client, &draft(BindingKind::Lora, &natural_id(&dev), Some(key))).await.unwrap();
    assert_eq!(made.status.as_deref(), Some("INVENTORY"));

    // Changing only the application server keeps the key (sent back as stored, lower case, A-60).
    let mut d = draft(BindingKind::Lora, &made.device_id, None);
    d.application_server_id = Some("00a1b2c3d4e5f608".into());
    let edited = bindings::update(&env.client, made.id, &d).await.unwrap();
    assert_eq!(edited.application_server_id.as_deref(), Some("00a1b2c3d4e5f608"));
    assert_eq!(bindings::reveal(&env.client, BindingKind::Lora, made.id).await.unwrap(), key.to_ascii_lowercase());

    // Simulated time runs fast enough for a joining device to join (1 to 5 minutes, A-65).
    env.sim.set_speed(3600.0).unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let synced = bindings::sync_lora(&env.client, made.id).await.unwrap();
    let joins = dcs_sim::store::bindings::join_delay(dev.deveui.as_deref().unwrap()).is_some();
    assert_eq!(synced.status.as_deref(), Some(if joins { "ACTIVE" } else { "INVENTORY" }));
    assert_eq!(bindings::get(&env.client, BindingKind::Lora, made.id).await.unwrap().status, synced.status);
    drop(env.running);
}

#[tokio::test]
async fn http_bindings_keep_their_secret_and_the_service_names_a_device_of_another_kind() {
    let env = env().await;
    let dev = env.unbound(BindingKind::Http).await;
    let lora = env.unbound(BindingKind::Lora).await;
    let secret = bindings::generate_secret(BindingKind::Http).unwrap();
    let wrong =
        bindings::create(&env.client, &draft(BindingKind::Http, &natural_id(&lora), Some(&secret))).await.unwrap_err();
    assert_eq!(wrong.problem().and_then(|p| p.invalid_params.first()).map(|p| p.name.as_str()), Some("deviceId"));

    let made =
        bindings::create(&env.client, &draft(BindingKind::Http, &natural_id(&dev), Some(&secret))).await.unwrap();
    assert_eq!(made.binding_type.as_deref(), Some("http-streamline"));
    let mut d = draft(BindingKind::Http, &made.device_id, None);
    d.binding_type = Some("http-senml".into());
    let edited = bindings::update(&env.client, made.id, &d).await.unwrap();
    assert_eq!(edited.binding_type.as_deref(), Some("http-senml"));
    assert_eq!(bindings::reveal(&env.client, BindingKind::Http, made.id).await.unwrap(), secret);

    let req = BindingPageRequest {
        binding_type: Some("http-senml".into()),
        sort: Some("-modifiedAt".into()),
        ..Default::default()
    };
    let page = bindings::page(&env.client, BindingKind::Http, &req).await.unwrap();
    assert_eq!(page.items.first().map(|b| b.id), Some(made.id), "newest change first");
    assert!(page.items.iter().all(|b| b.binding_type.as_deref() == Some("http-senml")));
}
