//! The connection-specific composer (LoRa, MQTT, SMS, HTTP, Digital Matter): a draft turned into
//! the client's builder, checked and described.

use dcs_api::downlinks::{ConnectionKind, NewConnectionDownlink};
use dcs_api::model::duration::parse_feedback_timeout;
use serde_json::Value;

use super::device_id::check_device_id;
use super::draft::{finish, ConnectionDraft, DownlinkPreview, PayloadMode};
use super::typed::{field, field_of, hex_bytes, json_array, json_object, merge, optional, whole, Typed};
use super::words::{common_effect, plural, spoken_id};
use super::DownlinkKind;
use crate::FieldError;

/// The connection composer's fields in its order, for naming broken ones so.
const ORDER: [&str; 13] = [
    "deviceId",
    "feedbackTimeout",
    "payloadHex",
    "topic",
    "payload",
    "text",
    "message",
    "message.payload",
    "message.senml",
    "fields",
    "fPort",
    "qos",
    "retryLimit",
];

impl ConnectionDraft {
    fn connection_kind(&self) -> Result<ConnectionKind, FieldError> {
        self.kind.connection().ok_or_else(|| field("kind", "actuator downlinks have their own composer"))
    }

    /// The client's builder of the kind, and the rules its text breaks. A field whose text does
    /// not read is left empty (its rule kept in `typed`, the client's rule on it dropped).
    fn read(&self) -> Result<(NewConnectionDownlink, Typed), FieldError> {
        let (device, timeout) = (self.device_id.trim(), self.feedback_timeout.trim());
        let mut typed = Typed::default();
        let mut d = match self.connection_kind()? {
            ConnectionKind::Lora => {
                let mut d = NewConnectionDownlink::lora(device, timeout, self.payload_hex.trim());
                if let Some(p) = typed.read(whole::<u8>("fPort", &self.f_port)).flatten() {
                    d = d.f_port(p);
                }
                d.confirmed(self.confirmed)
            }
            ConnectionKind::Mqtt => {
                let mut d = NewConnectionDownlink::mqtt(device, timeout, &self.topic, &self.payload);
                if let Some(q) = typed.read(whole::<u8>("qos", &self.qos)).flatten() {
                    d = d.qos(q);
                }
                d
            }
            ConnectionKind::Sms => match self.mode {
                PayloadMode::Hex => NewConnectionDownlink::sms_hex(device, timeout, self.payload_hex.trim()),
                _ => NewConnectionDownlink::sms_text(device, timeout, &self.text),
            },
            ConnectionKind::Http => match self.mode {
                PayloadMode::Hex => {
                    let bytes = typed.read(hex_bytes("message.payload", &self.payload_hex)).unwrap_or_default();
                    NewConnectionDownlink::http_payload(device, timeout, &bytes)
                }
                _ => {
                    let records = typed.read(json_array("message.senml", &self.senml)).unwrap_or_default();
                    NewConnectionDownlink::http_senml(device, timeout, records)
                }
            },
            ConnectionKind::DigitalMatter => {
                let fields = optional(&self.fields).and_then(|f| typed.read(json_object("fields", f)));
                NewConnectionDownlink::digitalmatter(device, timeout, fields.unwrap_or_default())
            }
        };
        if self.kind.has_retries() {
            if let Some(n) = typed.read(whole::<u32>("retryLimit", &self.retry_limit)).flatten() {
                d = d.retry_limit(n);
            }
        }
        Ok((d.dry_run(self.dry_run), typed))
    }

    /// The client's builder for this draft (refused with the first text that does not read;
    /// the client checks the rest when it sends).
    pub fn new_downlink(&self) -> Result<NewConnectionDownlink, FieldError> {
        let (d, typed) = self.read()?;
        typed.first().map(|()| d)
    }

    /// Every rule the draft breaks, each field named once and all at once, in the form's order:
    /// the device id as the device picker checks it for the kind, the feedback timeout, each
    /// text that does not read, and the client's rules ([`NewConnectionDownlink::check`]) for
    /// the rest. Empty when it can be sent.
    pub fn check(&self) -> Vec<FieldError> {
        let (d, typed) = match self.read() {
            Ok(read) => read,
            Err(kind) => return vec![kind],
        };
        let mut own = Vec::new();
        if let Err(e) = check_device_id(&self.device_id, Some(d.kind().as_str())).into_result() {
            own.push(e);
        }
        match optional(&self.feedback_timeout) {
            None => own.push(field(
                "feedbackTimeout",
                "is required on connection-specific downlinks, e.g. PT1H (at least PT10M)",
            )),
            Some(t) => {
                if let Err(e) = parse_feedback_timeout(t) {
                    own.push(field("feedbackTimeout", e.to_string()));
                }
            }
        }
        own.extend(typed.0);
        merge(own, d.check(), &ORDER)
    }

    /// Every rule the draft breaks ([`Self::check`]); else the body and what sending it does.
    pub fn preview(&self) -> DownlinkPreview {
        finish(self.check(), || self.new_downlink().and_then(|d| d.to_json().map_err(field_of)), |b| self.effect(b))
    }

    /// What sending `body` does, in sentences: what goes to the device, then retries, feedback
    /// time and whether it is a dry run.
    fn effect(&self, body: &Value) -> Vec<String> {
        let mut out = vec![self.payload_sentence(body)];
        out.push("It bypasses the encoder: the payload reaches the device exactly as written.".into());
        out.extend(common_effect(body, "required"));
        out.push(if self.dry_run {
            "Dry run: the service checks and stores it and behaves as if it was delivered; nothing reaches the device.".into()
        } else {
            "Not a dry run: the device receives it and acts on it; a wrong payload can disrupt the device, for example by \
             disabling its communication."
                .into()
        });
        out
    }

    /// What the body sends to which device, in the words of its kind.
    fn payload_sentence(&self, body: &Value) -> String {
        let device = spoken_id(body["deviceId"].as_str().unwrap_or_default());
        let s = |k: &str| body.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        match self.kind {
            DownlinkKind::Lora => {
                let bytes = s("payloadHex").len() / 2;
                let port = body.get("fPort").map(|p| p.to_string()).unwrap_or_else(|| "1 (the default)".into());
                let ack = if body["confirmed"] == Value::Bool(false) {
                    "unconfirmed"
                } else {
                    "confirmed (the device must acknowledge it)"
                };
                format!(
                    "Sends the LoRa payload {} ({bytes} byte{}) on FPort {port}, {ack}, to device {device}.",
                    s("payloadHex"),
                    plural(bytes)
                )
            }
            DownlinkKind::Mqtt => {
                let qos = body.get("qos").map(|q| q.to_string()).unwrap_or_else(|| "1 (the default)".into());
                format!(
                    "Publishes {} character{} to topic {} with QoS {qos} for device {device}.",
                    s("payload").chars().count(),
                    plural(s("payload").chars().count()),
                    s("topic")
                )
            }
            DownlinkKind::Sms if body.get("text").is_some() => {
                format!("Sends the text message \"{}\" by SMS to device {device}.", s("text"))
            }
            DownlinkKind::Sms => {
                let bytes = s("payloadHex").len() / 2;
                format!("Sends a binary SMS of {bytes} byte{} to device {device}.", plural(bytes))
            }
            DownlinkKind::Http => match body["message"].get("senml").and_then(Value::as_array) {
                Some(r) => format!("Sends {} SenML record{} over HTTP to device {device}.", r.len(), plural(r.len())),
                None => "Sends a binary payload (base64 in the body) over HTTP to device ".to_owned() + device + ".",
            },
            _ => format!("Sends a Digital Matter downlink with {} to device {device}.", extra_fields(body)),
        }
    }
}

/// The fields a Digital Matter body carries beyond those every downlink has, as a list.
fn extra_fields(body: &Value) -> String {
    let names: Vec<&str> = body
        .as_object()
        .map(|o| {
            o.keys()
                .map(String::as_str)
                .filter(|k| !matches!(*k, "deviceId" | "feedbackTimeout" | "dryRun" | "retryLimit"))
                .collect()
        })
        .unwrap_or_default();
    if names.is_empty() {
        "no further fields".to_owned()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::downlinks::draft::fields;
    use serde_json::json;

    #[test]
    fn a_sentence_names_a_urn_without_its_trailing_colon() {
        assert_eq!(spoken_id("urn:dev:imei:350000000000001:"), "urn:dev:imei:350000000000001");
        assert_eq!(spoken_id("imei:350000000000001"), "imei:350000000000001");
        let d = ConnectionDraft {
            device_id: "urn:dev:deveui:70b3d57ed0000001:".into(),
            payload_hex: "0a".into(),
            feedback_timeout: "PT1H".into(),
            ..Default::default()
        };
        let p = d.preview();
        assert!(p.effect.iter().any(|e| e.ends_with("to device urn:dev:deveui:70b3d57ed0000001.")), "{:?}", p.effect);
    }

    fn lora(device: &str) -> ConnectionDraft {
        ConnectionDraft {
            kind: DownlinkKind::Lora,
            device_id: device.into(),
            feedback_timeout: "PT30M".into(),
            payload_hex: "0a0b".into(),
            f_port: "2".into(),
            retry_limit: "1".into(),
            ..Default::default()
        }
    }

    #[test]
    fn connection_drafts_use_the_builders_and_default_to_dry_run() {
        let d = lora("deveui:70b3d57ed0000001");
        assert!(d.dry_run && d.confirmed, "dry run and confirmed unless unticked");
        let p = d.preview();
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        let body: Value = serde_json::from_str(p.body.as_deref().unwrap()).unwrap();
        assert_eq!(
            body,
            json!({"deviceId": "deveui:70b3d57ed0000001", "feedbackTimeout": "PT30M", "payloadHex": "0a0b", "fPort": 2,
                   "confirmed": true, "retryLimit": 1, "dryRun": true})
        );
        assert!(p.effect.iter().any(|s| s.starts_with("Dry run")), "{:?}", p.effect);
        assert!(p.effect.iter().any(|s| s.contains("bypasses the encoder")));
    }

    #[test]
    fn each_connection_kind_keeps_its_own_rules() {
        let mut bad = lora("imei:1");
        bad.feedback_timeout = String::new();
        bad.f_port = "300".into();
        assert_eq!(fields(&bad.preview()), ["deviceId", "feedbackTimeout", "fPort"]);

        // On SMS the deviceId is a plain string (section 1): the simulator's UUID rule (A-25) is
        // its own to answer.
        let sms = ConnectionDraft {
            kind: DownlinkKind::Sms,
            device_id: "imei:350000000000001".into(),
            text: "hi".into(),
            feedback_timeout: "PT1H".into(),
            ..Default::default()
        };
        assert!(fields(&sms.preview()).is_empty(), "{:?}", sms.preview().errors);
        let sms = ConnectionDraft { device_id: "  ".into(), ..sms };
        assert_eq!(fields(&sms.preview()), ["deviceId"]);

        let http = ConnectionDraft {
            kind: DownlinkKind::Http,
            device_id: "imei:350000000000001".into(),
            feedback_timeout: "PT1H".into(),
            mode: PayloadMode::Hex,
            payload_hex: "666f6f".into(),
            dry_run: false,
            ..Default::default()
        };
        let body: Value = serde_json::from_str(&http.preview().body.unwrap()).unwrap();
        assert_eq!(body["message"], json!({"payload": "Zm9v"}));
        assert!(http.preview().effect.last().unwrap().contains("disrupt"));

        let mqtt = ConnectionDraft {
            kind: DownlinkKind::Mqtt,
            device_id: "imei:350000000000001".into(),
            feedback_timeout: "PT1H".into(),
            topic: "a/#".into(),
            payload: "x".into(),
            retry_limit: "3".into(),
            ..Default::default()
        };
        assert_eq!(fields(&mqtt.preview()), ["topic"], "retryLimit is not offered on MQTT, so not sent");

        let dm = ConnectionDraft {
            kind: DownlinkKind::Digitalmatter,
            device_id: "imei:350000000000001".into(),
            feedback_timeout: "PT1H".into(),
            fields: r#"{"deviceId": "x"}"#.into(),
            ..Default::default()
        };
        assert_eq!(fields(&dm.preview()), ["deviceId"], "the builder's own fields are refused among the extra ones");

        let actuator = ConnectionDraft { kind: DownlinkKind::Actuator, ..Default::default() };
        assert_eq!(fields(&actuator.preview()), ["kind"]);
    }

    /// Every connection kind names each broken field of its payload at once, not only the first
    /// the client's builder stops at.
    #[test]
    fn two_broken_payload_fields_are_named_together() {
        let mut d = lora("deveui:70b3d57ed0000001");
        d.payload_hex = "0g".into();
        d.f_port = "300".into();
        assert_eq!(d.check(), d.preview().errors);
        assert_eq!(fields(&d.preview()), ["payloadHex", "fPort"]);

        let base = ConnectionDraft {
            device_id: "imei:350000000000001".into(),
            feedback_timeout: "PT1H".into(),
            ..Default::default()
        };
        let mqtt = ConnectionDraft {
            kind: DownlinkKind::Mqtt,
            topic: "a/#".into(),
            payload: "x".into(),
            qos: "5".into(),
            ..base.clone()
        };
        assert_eq!(fields(&mqtt.preview()), ["topic", "qos"]);

        let sms = ConnectionDraft { kind: DownlinkKind::Sms, retry_limit: "x".into(), ..base.clone() };
        assert_eq!(fields(&sms.preview()), ["text", "retryLimit"]);

        let http =
            ConnectionDraft { kind: DownlinkKind::Http, senml: "[]".into(), device_id: "".into(), ..base.clone() };
        assert_eq!(fields(&http.preview()), ["deviceId", "message.senml"]);

        let dm = ConnectionDraft {
            kind: DownlinkKind::Digitalmatter,
            fields: r#"{"deviceId": "x", "dryRun": true}"#.into(),
            ..base
        };
        assert_eq!(fields(&dm.preview()), ["deviceId", "dryRun"]);
    }
}
