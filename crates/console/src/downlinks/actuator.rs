//! The actuator composer: a draft turned into the client's builder, checked and described.

use dcs_api::downlinks::{DownlinkMethod, NewDownlink};
use serde_json::{Map, Value};

use super::device_id::check_device_id;
use super::draft::{finish, ActuatorDraft, DownlinkPreview, MethodDraft, MethodVariant, ValueType};
use super::typed::{field, field_of, json_array, json_object, merge, optional, whole, Typed};
use super::words::{common_effect, plural, spoken_id};
use crate::FieldError;

impl MethodDraft {
    /// The client's method for this draft, each field read from its text. A field whose text
    /// does not read is left empty (its rule kept in `typed`, the client's rule on it dropped).
    fn read(&self, typed: &mut Typed) -> DownlinkMethod {
        let device = self.device_id.trim();
        match self.variant {
            MethodVariant::SetProperty => {
                let value = typed.read(self.value()).unwrap_or(Value::Null);
                DownlinkMethod::set_property(device, self.property.trim(), value)
            }
            MethodVariant::InvokeCommand => {
                let params = optional(&self.parameters).and_then(|p| typed.read(json_object("method.parameters", p)));
                DownlinkMethod::invoke_command(device, self.command.trim(), params)
            }
            MethodVariant::Senml => DownlinkMethod::senml(
                device,
                typed.read(json_array("method.records", &self.records)).unwrap_or_default(),
            ),
            MethodVariant::PayloadHex => {
                let port = typed.read(whole::<u8>("method.port", &self.port)).flatten();
                DownlinkMethod::payload_hex(device, self.payload_hex.trim(), port)
            }
            MethodVariant::Raw => {
                DownlinkMethod::Raw(typed.read(json_object("method", &self.raw)).map_or(Value::Null, Value::Object))
            }
        }
    }

    /// The `setProperty` value, read as its type says.
    fn value(&self) -> Result<Value, FieldError> {
        match self.value_type {
            ValueType::Number => {
                let n: serde_json::Number =
                    self.value.trim().parse().map_err(|_| field("method.value", "must be a number, e.g. 60 or 2.5"))?;
                Ok(Value::Number(n))
            }
            ValueType::Boolean => match self.value.trim() {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err(field("method.value", "must be true or false")),
            },
            ValueType::String => Ok(Value::String(self.value.clone())),
        }
    }
}

/// The actuator composer's fields in its order, for naming broken ones so.
const ORDER: [&str; 11] = [
    "method.deviceId",
    "method",
    "method.property",
    "method.command",
    "method.records",
    "method.payloadHex",
    "method.value",
    "method.parameters",
    "method.port",
    "retryLimit",
    "feedbackTimeout",
];

impl ActuatorDraft {
    /// The client's builder for this draft, and the rules its text breaks.
    fn read(&self) -> (NewDownlink, Typed) {
        let mut typed = Typed::default();
        let mut d = NewDownlink::new(self.method.read(&mut typed));
        if let Some(n) = typed.read(whole::<u32>("retryLimit", &self.retry_limit)).flatten() {
            d = d.retry_limit(n);
        }
        if let Some(t) = optional(&self.feedback_timeout) {
            d = d.feedback_timeout(t);
        }
        if !self.external_reference.is_empty() {
            d = d.external_reference(&self.external_reference);
        }
        (d.dry_run(self.dry_run), typed)
    }

    /// The client's builder for this draft (refused with the first text that does not read;
    /// the client checks the rest when it sends).
    pub fn new_downlink(&self) -> Result<NewDownlink, FieldError> {
        let (d, typed) = self.read();
        typed.first().map(|()| d)
    }

    /// Every rule the draft breaks, each field named once and all at once, in the form's order:
    /// the device id as the device picker checks it, each text that does not read, and the
    /// client's rules ([`NewDownlink::check`]) for the rest. Empty when it can be sent.
    pub fn check(&self) -> Vec<FieldError> {
        let (d, typed) = self.read();
        let mut own = Vec::new();
        if self.method.variant != MethodVariant::Raw {
            if let Err(e) = check_device_id(&self.method.device_id, None).into_result() {
                own.push(field("method.deviceId", e.rule));
            }
        }
        own.extend(typed.0);
        merge(own, d.check(), &ORDER)
    }

    /// Every rule the draft breaks ([`Self::check`]); else the body and what sending it does.
    pub fn preview(&self) -> DownlinkPreview {
        finish(self.check(), || self.new_downlink().and_then(|d| d.to_json().map_err(field_of)), |b| self.effect(b))
    }

    fn effect(&self, body: &Value) -> Vec<String> {
        let m = &body["method"];
        let device = spoken_id(m["deviceId"].as_str().unwrap_or("the device named in the method"));
        let mut out = vec![match self.method.variant {
            MethodVariant::SetProperty => {
                format!("Sets property {} to {} on device {device}.", m["property"], m["value"])
            }
            MethodVariant::InvokeCommand => {
                let n = m["parameters"].as_object().map_or(0, Map::len);
                format!("Invokes command {} with {n} parameter{} on device {device}.", m["command"], plural(n))
            }
            MethodVariant::Senml => {
                let n = m["records"].as_array().map_or(0, Vec::len);
                format!("Sends {n} SenML record{} to device {device}.", plural(n))
            }
            MethodVariant::PayloadHex => {
                let bytes = m["payloadHex"].as_str().map_or(0, |h| h.len() / 2);
                let port = m.get("port").map(|p| format!(" on LoRa port {p}")).unwrap_or_default();
                format!("Sends a payload of {bytes} byte{}{port} to device {device}.", plural(bytes))
            }
            MethodVariant::Raw => {
                format!("Sends the method as written (type {}).", m.get("type").unwrap_or(&Value::Null))
            }
        }];
        out.push("The encoder configured for the device translates it into the device's own format.".into());
        out.extend(common_effect(body, "the service's default (1 hour in the simulator)"));
        out.push(if self.dry_run {
            "Dry run: the service checks and stores it, and it never reaches the device.".into()
        } else {
            "It is queued for the device.".into()
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::downlinks::draft::fields;
    use serde_json::json;

    fn set_property(device: &str) -> ActuatorDraft {
        ActuatorDraft {
            method: MethodDraft {
                variant: MethodVariant::SetProperty,
                device_id: device.into(),
                property: "reportingInterval".into(),
                value: "60".into(),
                ..Default::default()
            },
            retry_limit: "2".into(),
            feedback_timeout: "PT15M".into(),
            external_reference: "ref-1".into(),
            dry_run: false,
        }
    }

    #[test]
    fn the_preview_is_the_clients_body() {
        let draft = set_property("IMEI:350000000000001");
        let p = draft.preview();
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        let body: Value = serde_json::from_str(p.body.as_deref().unwrap()).unwrap();
        assert_eq!(body, draft.new_downlink().unwrap().to_json().unwrap());
        assert_eq!(
            body,
            json!({"method": {"type": "setProperty", "deviceId": "IMEI:350000000000001", "property": "reportingInterval", "value": 60},
                   "retryLimit": 2, "feedbackTimeout": "PT15M", "externalReference": "ref-1", "dryRun": false})
        );
        assert!(
            p.effect[0].contains("reportingInterval") && p.effect.iter().any(|s| s.contains("15 min")),
            "{:?}",
            p.effect
        );
    }

    #[test]
    fn every_broken_field_is_named_on_its_own() {
        let mut d = set_property("");
        d.feedback_timeout = "PT5M".into();
        d.retry_limit = "-1".into();
        d.method.value = "sixty".into();
        // The length of externalReference is not shown (A-27 is the simulator's): not refused.
        d.external_reference = "x".repeat(101);
        let p = d.preview();
        assert_eq!(fields(&p), ["method.deviceId", "method.value", "retryLimit", "feedbackTimeout"]);
        assert!(p.body.is_none());
        let ft = &p.errors[3].rule;
        assert!(ft.contains("at least 10 minutes"), "{ft}");

        // A bad feedback timeout alone: only it is named.
        let mut d = set_property("deveui:70b3d57ed0000001");
        d.feedback_timeout = "5 minutes".into();
        assert_eq!(fields(&d.preview()), ["feedbackTimeout"]);
    }

    #[test]
    fn method_variants_are_read_from_text() {
        let mut d = set_property("imei:350000000000001");
        d.method.value_type = ValueType::Boolean;
        d.method.value = "true".into();
        assert_eq!(d.new_downlink().unwrap().to_json().unwrap()["method"]["value"], json!(true));
        d.method.value_type = ValueType::String;
        d.method.value = "on".into();
        assert_eq!(d.new_downlink().unwrap().to_json().unwrap()["method"]["value"], json!("on"));

        d.method.variant = MethodVariant::InvokeCommand;
        d.method.command = "reboot".into();
        d.method.parameters = "[1]".into();
        assert_eq!(fields(&d.preview()), ["method.parameters"]);
        d.method.parameters = r#"{"delay": 5}"#.into();
        assert_eq!(d.new_downlink().unwrap().to_json().unwrap()["method"]["parameters"], json!({"delay": 5}));

        d.method.variant = MethodVariant::Senml;
        d.method.records = r#"[{"v": 1}]"#.into();
        assert_eq!(fields(&d.preview()), ["method.records"]);

        d.method.variant = MethodVariant::PayloadHex;
        d.method.payload_hex = "0a0b".into();
        d.method.port = "0".into();
        assert_eq!(fields(&d.preview()), ["method.port"]);
        d.method.port = "5".into();
        assert!(d.preview().effect[0].contains("2 bytes on LoRa port 5"));

        d.method.variant = MethodVariant::Raw;
        d.method.raw = "not json".into();
        assert_eq!(fields(&d.preview()), ["method"]);
        d.method.raw = r#"{"type": "custom", "deviceId": "whatever"}"#.into();
        assert!(d.preview().errors.is_empty(), "raw JSON is sent as given");
    }

    /// Each variant names every broken field of its method at once, not only the first the
    /// client's builder stops at.
    #[test]
    fn two_broken_method_fields_are_named_together() {
        let mut d = set_property("imei:350000000000001");
        d.method.property = String::new();
        d.method.value = "sixty".into();
        assert_eq!(d.check(), d.preview().errors);
        assert_eq!(fields(&d.preview()), ["method.property", "method.value"]);

        d.method.variant = MethodVariant::InvokeCommand;
        d.method.command = String::new();
        d.method.parameters = "[1]".into();
        assert_eq!(fields(&d.preview()), ["method.command", "method.parameters"]);

        d.method.variant = MethodVariant::PayloadHex;
        d.method.payload_hex = "0g".into();
        d.method.port = "0".into();
        assert_eq!(fields(&d.preview()), ["method.payloadHex", "method.port"]);

        d.method.variant = MethodVariant::Senml;
        d.method.records = "[]".into();
        d.retry_limit = "many".into();
        assert_eq!(fields(&d.preview()), ["method.records", "retryLimit"]);
        assert_eq!(d.new_downlink().unwrap_err().field, "retryLimit", "a send refuses what does not read");
    }
}
