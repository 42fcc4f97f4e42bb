//! Anything the service answers, decoded into the model: pages of each kind, problem documents,
//! tokens, file attributes. Never a panic; whatever decodes, encodes and decodes again equal.
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

fuzz_target!(|data: &[u8]| {
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
