//! Anything the service answers, decoded into the model: pages of each kind, problem documents,
//! tokens, file attributes. Never a panic; whatever decodes, encodes and decodes again equal.
//! - A refusal (any status, any body) becomes the client's error: the problem document when the
//!   body is one, else the start of the body (at most 500 characters) under the status's reason.
//! - An actuator downlink's SenML message shows as one line of JSON when it is JSON.
#![no_main]

use dcs_model::*;
use libfuzzer_sys::fuzz_target;
use serde::{de::DeserializeOwned, Serialize};

fn round_trip<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(data: &[u8]) {
    if let Ok(v) = serde_json::from_slice::<T>(data) {
        let again = serde_json::to_vec(&v).expect("what decoded encodes");
        let back: T = serde_json::from_slice(&again).expect("what encoded decodes");
        assert_eq!(v, back);
    }
}

fn decodes<T: DeserializeOwned>(data: &[u8]) {
    let _ = serde_json::from_slice::<T>(data);
}

fn refusal(data: &[u8]) {
    let status = data.first().map_or(400, |b| 400 + u16::from(*b));
    let err = dcs_api::Error::from_answer(status, data);
    let problem = err.problem().expect("a refusal carries a problem document");
    match serde_json::from_slice::<Problem>(data) {
        Ok(sent) => assert_eq!(problem, &sent),
        Err(_) => assert!(problem.detail.as_ref().is_some_and(|d| d.chars().count() <= 500)),
    }
    let _ = err.to_string();
}

fn senml_messages(data: &[u8]) {
    let Ok(page) = serde_json::from_slice::<Page<ActuatorDownlink>>(data) else { return };
    for d in &page.items {
        let (Some(message), Some(text)) = (&d.message, d.message_text()) else { continue };
        let json = match message {
            serde_json::Value::String(s) => serde_json::from_str::<serde_json::Value>(s).ok(),
            other => Some(other.clone()),
        };
        if let Some(json) = json {
            assert!(!text.contains('\n'), "{text:?}");
            assert_eq!(serde_json::from_str::<serde_json::Value>(&text).ok(), Some(json));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    refusal(data);
    senml_messages(data);
    round_trip::<Page<FirmwareModule>>(data);
    round_trip::<Page<FirmwarePackage>>(data);
    round_trip::<Page<FirmwareState>>(data);
    round_trip::<Page<LoraBinding>>(data);
    round_trip::<Page<HttpBinding>>(data);
    round_trip::<Page<MqttBinding>>(data);
    round_trip::<Page<ActuatorDownlink>>(data);
    round_trip::<Page<ConnectionDownlink>>(data);
    round_trip::<Problem>(data);
    round_trip::<FileAttributes>(data);
    decodes::<TokenResponse>(data);
    decodes::<BetaDevicePage>(data);
});
