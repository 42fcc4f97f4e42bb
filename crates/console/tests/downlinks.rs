//! Downlinks through the console layer against a real simulator over HTTP: a dry run and a
//! LoRa downlink watched until final (the statuses seen recorded once each), the lists and
//! their filters, and cancellation as the simulator applies it: at once while queued,
//! only with `forced` while executing, never once final.

use std::time::{Duration, Instant};

use dcs_api::beta::BetaDeviceQuery;
use dcs_api::{Client, ErrorCode};
use dcs_console::downlinks::{
    self, ActuatorDraft, CancelState, ConnectionDraft, DownlinkKind, DownlinkPageRequest, DownlinkView, MethodDraft,
    MethodVariant, Outcome, Watch,
};
use dcs_sim::{RunningSim, SimOptions, Simulator};

mod common;

struct Env {
    _sim: Simulator,
    _running: RunningSim,
    client: Client,
}

async fn env() -> Env {
    let (sim, running, client) =
        common::start(SimOptions { devices_per_client: 30, speed: 600.0, ..Default::default() }).await;
    Env { _sim: sim, _running: running, client }
}

fn page(kind: DownlinkKind) -> DownlinkPageRequest {
    common::downlink_page(kind, 200)
}

/// Reads the downlink again and again, recording what is seen, until it is final.
async fn watch_until_final(client: &Client, watch: &Watch, first: &DownlinkView) -> DownlinkView {
    let started = Instant::now();
    watch.observe("t", first, time::OffsetDateTime::now_utc());
    loop {
        let now = downlinks::get(client, first.kind, &first.id).await.unwrap();
        watch.observe("t", &now, time::OffsetDateTime::now_utc());
        if now.is_final {
            return now;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "still {} after 30 s", now.status);
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}

async fn device(client: &Client, search: &str) -> String {
    let q = BetaDeviceQuery { search: Some(search.into()), page_size: Some(5), ..Default::default() };
    client.beta().devices(&q).await.unwrap().content[0].uuid.to_string()
}

#[tokio::test]
async fn a_dry_run_is_watched_until_delivered() {
    let env = env().await;
    let dev = device(&env.client, "T1").await;
    let draft = ActuatorDraft {
        method: MethodDraft {
            variant: MethodVariant::SetProperty,
            device_id: dev.clone(),
            property: "reportingInterval".into(),
            value: "60".into(),
            ..Default::default()
        },
        retry_limit: "1".into(),
        feedback_timeout: "PT15M".into(),
        external_reference: "console-test-1".into(),
        dry_run: true,
    };
    assert!(draft.preview().errors.is_empty());
    let sent = downlinks::send_actuator(&env.client, &draft).await.unwrap();
    assert_eq!(sent.status, "PENDING");
    assert_eq!(sent.body["method"]["deviceId"], dev.as_str());
    assert_eq!(
        (sent.retry_limit, sent.feedback_timeout.as_deref(), sent.dry_run),
        (Some(1), Some("PT15M"), Some(true))
    );
    assert!(sent.deadline.is_some());

    let watch = Watch::new();
    let last = watch_until_final(&env.client, &watch, &sent).await;
    assert_eq!((last.status.as_str(), last.outcome), ("DELIVERED", Outcome::Delivered), "a dry run succeeds (A-33)");
    assert_eq!(last.cancel.state, CancelState::Final);
    let seen: Vec<String> =
        watch.observed("t", DownlinkKind::Actuator, &sent.id).into_iter().map(|o| o.status).collect();
    assert_eq!(seen.first().map(String::as_str), Some("PENDING"));
    assert_eq!(seen.last().map(String::as_str), Some("DELIVERED"));
    assert!(seen.windows(2).all(|w| w[0] != w[1]), "each change once: {seen:?}");

    // Found by its reference, and by nothing else.
    let found = downlinks::list(
        &env.client,
        &DownlinkPageRequest { q: Some("console-test-1".into()), ..page(DownlinkKind::Actuator) },
    )
    .await
    .unwrap();
    assert_eq!(found.items.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(), [sent.id.as_str()]);

    // Cancelling a final downlink: the service's 409, in its words.
    let err = downlinks::cancel(&env.client, DownlinkKind::Actuator, &sent.id, true).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict);
    assert!(err.to_string().contains("nothing to cancel"), "{err}");
}

#[tokio::test]
async fn a_lora_dry_run_ends_done_without_a_reason() {
    let env = env().await;
    let dev = device(&env.client, "WM-3").await;
    let draft = ConnectionDraft {
        kind: DownlinkKind::Lora,
        device_id: dev,
        feedback_timeout: "PT30M".into(),
        payload_hex: "0a0b".into(),
        f_port: "2".into(),
        ..Default::default()
    };
    let sent = downlinks::send_connection(&env.client, &draft).await.unwrap();
    assert_eq!((sent.kind, sent.body["fPort"].as_u64(), sent.dry_run), (DownlinkKind::Lora, Some(2), Some(true)));
    let last = watch_until_final(&env.client, &Watch::new(), &sent).await;
    assert_eq!(
        (last.status.as_str(), last.outcome, last.failure_reason.as_deref()),
        ("DONE", Outcome::Delivered, None)
    );

    let done =
        downlinks::list(&env.client, &DownlinkPageRequest { status: Some("DONE".into()), ..page(DownlinkKind::Lora) })
            .await
            .unwrap();
    assert!(done.items.iter().all(|d| d.status == "DONE") && done.items.iter().any(|d| d.id == sent.id));
    let bad = downlinks::list(
        &env.client,
        &DownlinkPageRequest { sort: Some("payloadHex".into()), ..page(DownlinkKind::Lora) },
    )
    .await
    .unwrap_err();
    // The client checks only the sort syntax; the service (the simulator, A-36) refuses the field.
    assert_eq!(bad.code(), ErrorCode::BadRequest, "{bad}");
    assert!(bad.problem().unwrap().invalid_params.iter().any(|p| p.name == "sort"), "{bad}");
}

#[tokio::test]
async fn cancellation_follows_the_status() {
    let env = env().await;
    let all = downlinks::list(&env.client, &page(DownlinkKind::Actuator)).await.unwrap().items;
    let queued = all.iter().find(|d| d.status == "PENDING").expect("a seeded PENDING downlink");
    let executing = all.iter().find(|d| d.status == "EXECUTING").expect("a seeded EXECUTING downlink");
    assert_eq!(queued.cancel.state, CancelState::Queued);
    assert_eq!(executing.cancel.state, CancelState::Executing);

    let refused = downlinks::cancel(&env.client, DownlinkKind::Actuator, &executing.id, false).await.unwrap_err();
    assert_eq!(refused.code(), ErrorCode::Conflict);
    assert!(refused.to_string().contains("forced"), "{refused}");

    let watch = Watch::new();
    downlinks::cancel(&env.client, DownlinkKind::Actuator, &executing.id, true).await.unwrap();
    let forced = watch_until_final(&env.client, &watch, executing).await;
    assert_eq!((forced.status.as_str(), forced.outcome), ("CANCELLED", Outcome::Cancelled));
    downlinks::cancel(&env.client, DownlinkKind::Actuator, &queued.id, false).await.unwrap();
    assert_eq!(watch_until_final(&env.client, &watch, queued).await.status, "CANCELLED");

    // The connection kinds end DONE with the reason CANCELLED.
    let mqtt = downlinks::list(
        &env.client,
        &DownlinkPageRequest { status: Some("PENDING".into()), ..page(DownlinkKind::Mqtt) },
    )
    .await
    .unwrap()
    .items;
    let pending = mqtt.first().expect("a seeded pending MQTT downlink");
    downlinks::cancel(&env.client, DownlinkKind::Mqtt, &pending.id, false).await.unwrap();
    let done = watch_until_final(&env.client, &watch, pending).await;
    assert_eq!((done.outcome, done.failure_reason.as_deref()), (Outcome::Cancelled, Some("CANCELLED")));
    assert!(done.failure_explanation.unwrap().contains("cancelled"));
}
