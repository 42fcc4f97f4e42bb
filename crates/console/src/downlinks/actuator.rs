//! The actuator composer: a draft turned into the client's builder, checked and described.

use dcs_api::downlinks::{DownlinkMethod, NewDownlink};
use serde_json::{Map, Value};

use super::device_id::check_device_id;
use super::draft::{finish, ActuatorDraft, DownlinkPreview, MethodDraft, MethodVariant, ValueType};
use super::typed::{field, field_of, json_array, json_object, optional, whole, STAND_IN_DEVICE};
use super::words::{common_effect, plural, spoken_id};
use crate::FieldError;

impl MethodDraft {
    /// The client's method for this draft, aimed at `device`.
    fn build(&self, device: &str) -> Result<DownlinkMethod, FieldError> {
        Ok(match self.variant {
            MethodVariant::SetProperty => {
                let value = match self.value_type {
                    ValueType::Number => {
                        let n: serde_json::Number = self
                            .value
                            .trim()
                            .parse()
                            .map_err(|_| field("method.value", "must be a number, e.g. 60 or 2.5"))?;
                        Value::Number(n)
                    }
                    ValueType::Boolean => match self.value.trim() {
                        "true" => Value::Bool(true),
                        "false" => Value::Bool(false),
                        _ => return Err(field("method.value", "must be true or false")),
                    },
                    ValueType::String => Value::String(self.value.clone()),
                };
                DownlinkMethod::set_property(device, self.property.trim(), value)
            }
            MethodVariant::InvokeCommand => {
                let params = match optional(&self.parameters) {
                    None => None,
                    Some(p) => Some(json_object("method.parameters", p)?),
                };
                DownlinkMethod::invoke_command(device, self.command.trim(), params)
            }
            MethodVariant::Senml => DownlinkMethod::senml(device, json_array("method.records", &self.records)?),
            MethodVariant::PayloadHex => {
                DownlinkMethod::payload_hex(device, self.payload_hex.trim(), whole::<u8>("method.port", &self.port)?)
            }
            MethodVariant::Raw => DownlinkMethod::Raw(Value::Object(json_object("method", &self.raw)?)),
        })
    }
}

impl ActuatorDraft {
    /// The client's builder for this draft.
    pub fn new_downlink(&self) -> Result<NewDownlink, FieldError> {
        let mut d = NewDownlink::new(self.method.build(self.method.device_id.trim())?);
        if let Some(n) = whole::<u32>("retryLimit", &self.retry_limit)? {
            d = d.retry_limit(n);
        }
        if let Some(t) = optional(&self.feedback_timeout) {
            d = d.feedback_timeout(t);
        }
        if !self.external_reference.is_empty() {
            d = d.external_reference(&self.external_reference);
        }
        Ok(d.dry_run(self.dry_run))
    }

    /// Every rule the draft breaks, each field checked by the client on its own; and the body.
    pub fn preview(&self) -> DownlinkPreview {
        let mut errors = Vec::new();
        let m = &self.method;
        if m.variant != MethodVariant::Raw {
            if let Err(e) = check_device_id(&m.device_id, None).into_result() {
                errors.push(FieldError { field: "method.deviceId".into(), rule: e.rule });
            }
        }
        // The method's own fields, with a device that passes so they are judged on their own.
        if let Err(e) = m.build(STAND_IN_DEVICE).and_then(|method| method.to_json().map_err(field_of)) {
            errors.push(e);
        }
        let probe = || NewDownlink::new(DownlinkMethod::Raw(Value::Object(Map::new())));
        match whole::<u32>("retryLimit", &self.retry_limit) {
            Err(e) => errors.push(e),
            Ok(Some(n)) => errors.extend(probe().retry_limit(n).to_json().err().map(field_of)),
            Ok(None) => {}
        }
        if let Some(t) = optional(&self.feedback_timeout) {
            errors.extend(probe().feedback_timeout(t).to_json().err().map(field_of));
        }
        if !self.external_reference.is_empty() {
            errors.extend(probe().external_reference(&self.external_reference).to_json().err().map(field_of));
        }
        finish(errors, || self.new_downlink().and_then(|d| d.to_json().map_err(field_of)), |b| self.effect(b))
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
}
