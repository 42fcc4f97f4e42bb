//! The arguments that create or send downlinks, and the request bodies they become.

use clap::{Args, ValueEnum};
use dcs_api::downlinks::{ConnectionKind, DownlinkMethod, NewConnectionDownlink, NewDownlink};
use dcs_api::model::DeviceId;
use serde_json::Value;

use crate::{invalid, json_arg};

#[derive(Args)]
pub struct BetaSendArgs {
    /// A LoRa device by its DevEUI: deveui:<16 hex> or urn:dev:deveui:<16 hex>.
    #[arg(long = "device", required = true)]
    devices: Vec<String>,
    /// The LoRa FPort.
    #[arg(long, allow_negative_numbers = true)]
    port: i64,
    /// A payload in hex (even number of hex characters); repeat for several.
    #[arg(long = "hex", required = true)]
    payloads: Vec<String>,
    /// Your reference for the downlinks.
    #[arg(long)]
    pub(super) external_reference: Option<String>,
}

impl BetaSendArgs {
    /// The (device, payload) pairs, checked by the reference's rules (DevEUI URN, hex).
    pub(super) fn pairs(&self) -> anyhow::Result<Vec<(DeviceId, String)>> {
        let devices: Vec<DeviceId> = self
            .devices
            .iter()
            .map(|d| match DeviceId::parse(d) {
                Ok(id @ DeviceId::DevEui { .. }) => Ok(id),
                Ok(_) => {
                    Err(invalid("device", format!("`{d}` must be a LoRa device given by its DevEUI (deveui:<16 hex>)")))
                }
                Err(e) => Err(invalid("device", format!("`{d}`: {e}"))),
            })
            .collect::<anyhow::Result<_>>()?;
        if devices.len() != 1 && devices.len() != self.payloads.len() {
            return Err(invalid(
                "device",
                format!(
                    "give one --device for every --hex, or one for all ({} devices, {} payloads)",
                    devices.len(),
                    self.payloads.len()
                ),
            ));
        }
        self.payloads
            .iter()
            .enumerate()
            .map(|(i, h)| {
                if h.is_empty() || !h.len().is_multiple_of(2) || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(invalid("hex", format!("`{h}` must be an even number of hex characters")));
                }
                Ok((devices[if devices.len() == 1 { 0 } else { i }].clone(), h.clone()))
            })
            .collect()
    }

    pub(super) fn port(&self) -> anyhow::Result<u8> {
        u8::try_from(self.port).map_err(|_| invalid("port", format!("{} is not a LoRa FPort (1-223)", self.port)))
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum MethodType {
    #[value(name = "setProperty")]
    SetProperty,
    #[value(name = "invokeCommand")]
    InvokeCommand,
    #[value(name = "senml")]
    Senml,
    #[value(name = "payloadHex")]
    PayloadHex,
}

#[derive(Args)]
pub struct ActuatorCreateArgs {
    /// The method variant; its fields follow.
    #[arg(long, required_unless_present = "method_json", conflicts_with = "method_json")]
    method_type: Option<MethodType>,
    /// The whole `method` object as JSON, sent as given.
    #[arg(long)]
    method_json: Option<String>,
    /// The device, in any id form (all variants).
    #[arg(long)]
    device_id: Option<String>,
    /// setProperty: the property.
    #[arg(long)]
    property: Option<String>,
    /// setProperty: the value (a JSON number or boolean, else taken as a string).
    #[arg(long)]
    value: Option<String>,
    /// invokeCommand: the command.
    #[arg(long)]
    command: Option<String>,
    /// invokeCommand: parameters as a JSON object.
    #[arg(long)]
    parameters: Option<String>,
    /// senml: the records as a JSON array, each with `n`.
    #[arg(long)]
    records: Option<String>,
    /// payloadHex: the payload in hex.
    #[arg(long)]
    payload_hex: Option<String>,
    /// payloadHex: LoRa port 1-223.
    #[arg(long)]
    port: Option<u8>,
    /// Retries allowed (default 0).
    #[arg(long)]
    retry_limit: Option<u32>,
    /// ISO 8601 duration of at least 10 minutes, e.g. PT1H.
    #[arg(long)]
    feedback_timeout: Option<String>,
    /// Your reference, searchable with `list --q`.
    #[arg(long)]
    external_reference: Option<String>,
    /// Only check and encode; nothing is sent to the device.
    #[arg(long)]
    dry_run: bool,
}

fn need<T>(v: Option<T>, field: &str, variant: &str) -> anyhow::Result<T> {
    v.ok_or_else(|| invalid(field, format!("is required for --method-type {variant} (--{})", flag(field))))
}

/// `method.payloadHex` -> `payload-hex`.
fn flag(field: &str) -> String {
    let name = field.rsplit('.').next().unwrap_or(field);
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('-');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

impl ActuatorCreateArgs {
    pub(super) fn method(&self) -> anyhow::Result<DownlinkMethod> {
        if let Some(raw) = &self.method_json {
            return Ok(DownlinkMethod::Raw(json_arg("method", raw)?));
        }
        let t = self.method_type.expect("clap requires --method-type without --method-json");
        Ok(match t {
            MethodType::SetProperty => {
                let d = need(self.device_id.as_deref(), "method.deviceId", "setProperty")?;
                let p = need(self.property.as_deref(), "method.property", "setProperty")?;
                let raw = need(self.value.as_deref(), "method.value", "setProperty")?;
                let value = match serde_json::from_str::<Value>(raw) {
                    Ok(v @ (Value::Number(_) | Value::Bool(_))) => v,
                    _ => Value::String(raw.to_owned()),
                };
                DownlinkMethod::set_property(d, p, value)
            }
            MethodType::InvokeCommand => {
                let d = need(self.device_id.as_deref(), "method.deviceId", "invokeCommand")?;
                let c = need(self.command.as_deref(), "method.command", "invokeCommand")?;
                let parameters = match &self.parameters {
                    Some(p) => match json_arg("method.parameters", p)? {
                        Value::Object(m) => Some(m),
                        _ => return Err(invalid("method.parameters", "must be a JSON object")),
                    },
                    None => None,
                };
                DownlinkMethod::invoke_command(d, c, parameters)
            }
            MethodType::Senml => {
                let d = need(self.device_id.as_deref(), "method.deviceId", "senml")?;
                let r = need(self.records.as_deref(), "method.records", "senml")?;
                match json_arg("method.records", r)? {
                    Value::Array(records) => DownlinkMethod::senml(d, records),
                    _ => return Err(invalid("method.records", "must be a JSON array of SenML records")),
                }
            }
            MethodType::PayloadHex => {
                let d = need(self.device_id.as_deref(), "method.deviceId", "payloadHex")?;
                let h = need(self.payload_hex.as_deref(), "method.payloadHex", "payloadHex")?;
                DownlinkMethod::payload_hex(d, h, self.port)
            }
        })
    }

    pub(super) fn to_new(&self) -> anyhow::Result<NewDownlink> {
        let mut new = NewDownlink::new(self.method()?);
        new.retry_limit = self.retry_limit;
        new.feedback_timeout = self.feedback_timeout.clone();
        new.external_reference = self.external_reference.clone();
        new.dry_run = self.dry_run.then_some(true);
        new.to_json()?; // every field checked before anything is sent
        Ok(new)
    }
}

/// Fields every connection downlink has.
#[derive(Args)]
pub struct CommonCreate {
    /// The device (any id form; on SMS the device's UUID).
    #[arg(long)]
    device_id: String,
    /// ISO 8601 duration of at least 10 minutes, e.g. PT1H.
    #[arg(long)]
    feedback_timeout: String,
    /// Only check; nothing is sent to the device.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Args)]
#[command(
    after_help = "Example:\n  dcs downlinks http create --device-id imei:350000000000001 --feedback-timeout PT1H --senml '[{\"n\":\"led\",\"vb\":true}]'"
)]
pub struct HttpCreateArgs {
    #[command(flatten)]
    common: CommonCreate,
    /// A SenML message: a JSON array of records.
    #[arg(long, required_unless_present = "payload_hex", conflicts_with = "payload_hex")]
    senml: Option<String>,
    /// A binary payload in hex (sent base64-encoded).
    #[arg(long)]
    payload_hex: Option<String>,
}

#[derive(Args)]
#[command(
    after_help = "Example:\n  dcs downlinks lora create --device-id deveui:70b3d57ed0000001 --feedback-timeout PT1H --payload-hex 0a0b --f-port 2 --retry-limit 1"
)]
pub struct LoraCreateArgs {
    #[command(flatten)]
    common: CommonCreate,
    /// The payload in hex (at most 242 bytes).
    #[arg(long)]
    payload_hex: String,
    /// FPort 1-223 (default 1).
    #[arg(long)]
    f_port: Option<u8>,
    /// Whether the device must acknowledge (default true).
    #[arg(long)]
    confirmed: Option<bool>,
    /// Retries allowed (default 0).
    #[arg(long)]
    retry_limit: Option<u32>,
}

#[derive(Args)]
#[command(
    after_help = "Example:\n  dcs downlinks mqtt create --device-id imei:350000000000001 --feedback-timeout PT1H --topic cmd/led --payload on --qos 1"
)]
pub struct MqttCreateArgs {
    #[command(flatten)]
    common: CommonCreate,
    /// Topic without # or +, at most 256 characters.
    #[arg(long)]
    topic: String,
    /// The message published on the topic, as text.
    #[arg(long)]
    payload: String,
    /// Quality of service 0-2 (default 1).
    #[arg(long)]
    qos: Option<u8>,
}

#[derive(Args)]
#[command(
    after_help = "Example:\n  dcs downlinks sms create --device-id 0f4c2a1e-7d0b-4c55-9a8e-3b1d2c4e5f60 --feedback-timeout PT1H --text 'wake up'"
)]
pub struct SmsCreateArgs {
    #[command(flatten)]
    common: CommonCreate,
    /// A text of 1-160 characters.
    #[arg(long, required_unless_present = "payload_hex", conflicts_with = "payload_hex")]
    text: Option<String>,
    /// A binary payload in hex (at most 140 bytes).
    #[arg(long)]
    payload_hex: Option<String>,
    /// Retries allowed (default 0).
    #[arg(long)]
    retry_limit: Option<u32>,
}

#[derive(Args)]
#[command(
    after_help = "Example:\n  dcs downlinks digitalmatter create --device-id imei:350000000000001 --feedback-timeout PT1H --fields '{\"command\":\"recover\"}'"
)]
pub struct DigitalMatterCreateArgs {
    #[command(flatten)]
    common: CommonCreate,
    /// Further fields as a JSON object, sent as given.
    #[arg(long, default_value = "{}")]
    fields: String,
    /// Retries allowed.
    #[arg(long)]
    retry_limit: Option<u32>,
}

/// How a kind's create arguments become a request body.
pub trait CreateArgs: Args {
    const KIND: ConnectionKind;
    fn build(&self) -> anyhow::Result<NewConnectionDownlink>;
    fn common(&self) -> &CommonCreate;
}

fn hex_bytes(field: &str, s: &str) -> anyhow::Result<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid(field, "must be an even number of hex characters"));
    }
    Ok((0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("checked hex")).collect())
}

impl CreateArgs for HttpCreateArgs {
    const KIND: ConnectionKind = ConnectionKind::Http;
    fn common(&self) -> &CommonCreate {
        &self.common
    }
    fn build(&self) -> anyhow::Result<NewConnectionDownlink> {
        let c = &self.common;
        Ok(match (&self.senml, &self.payload_hex) {
            (Some(s), _) => match json_arg("message.senml", s)? {
                Value::Array(records) => NewConnectionDownlink::http_senml(&c.device_id, &c.feedback_timeout, records),
                _ => return Err(invalid("message.senml", "must be a JSON array of SenML records")),
            },
            (None, Some(h)) => NewConnectionDownlink::http_payload(
                &c.device_id,
                &c.feedback_timeout,
                &hex_bytes("message.payload", h)?,
            ),
            (None, None) => return Err(invalid("message", "give --senml or --payload-hex")),
        })
    }
}

impl CreateArgs for LoraCreateArgs {
    const KIND: ConnectionKind = ConnectionKind::Lora;
    fn common(&self) -> &CommonCreate {
        &self.common
    }
    fn build(&self) -> anyhow::Result<NewConnectionDownlink> {
        let c = &self.common;
        let mut d = NewConnectionDownlink::lora(&c.device_id, &c.feedback_timeout, &self.payload_hex);
        if let Some(p) = self.f_port {
            d = d.f_port(p);
        }
        if let Some(on) = self.confirmed {
            d = d.confirmed(on);
        }
        if let Some(n) = self.retry_limit {
            d = d.retry_limit(n);
        }
        Ok(d)
    }
}

impl CreateArgs for MqttCreateArgs {
    const KIND: ConnectionKind = ConnectionKind::Mqtt;
    fn common(&self) -> &CommonCreate {
        &self.common
    }
    fn build(&self) -> anyhow::Result<NewConnectionDownlink> {
        let c = &self.common;
        let mut d = NewConnectionDownlink::mqtt(&c.device_id, &c.feedback_timeout, &self.topic, &self.payload);
        if let Some(q) = self.qos {
            d = d.qos(q);
        }
        Ok(d)
    }
}

impl CreateArgs for SmsCreateArgs {
    const KIND: ConnectionKind = ConnectionKind::Sms;
    fn common(&self) -> &CommonCreate {
        &self.common
    }
    fn build(&self) -> anyhow::Result<NewConnectionDownlink> {
        let c = &self.common;
        let mut d = match (&self.text, &self.payload_hex) {
            (Some(t), _) => NewConnectionDownlink::sms_text(&c.device_id, &c.feedback_timeout, t),
            (None, Some(h)) => NewConnectionDownlink::sms_hex(&c.device_id, &c.feedback_timeout, h),
            (None, None) => return Err(invalid("text", "give --text or --payload-hex")),
        };
        if let Some(n) = self.retry_limit {
            d = d.retry_limit(n);
        }
        Ok(d)
    }
}

impl CreateArgs for DigitalMatterCreateArgs {
    const KIND: ConnectionKind = ConnectionKind::DigitalMatter;
    fn common(&self) -> &CommonCreate {
        &self.common
    }
    fn build(&self) -> anyhow::Result<NewConnectionDownlink> {
        let c = &self.common;
        let fields = match json_arg("fields", &self.fields)? {
            Value::Object(m) => m,
            _ => return Err(invalid("fields", "must be a JSON object")),
        };
        let mut d = NewConnectionDownlink::digitalmatter(&c.device_id, &c.feedback_timeout, fields);
        if let Some(n) = self.retry_limit {
            d = d.retry_limit(n);
        }
        Ok(d)
    }
}
