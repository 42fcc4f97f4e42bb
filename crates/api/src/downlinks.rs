//! Downlinks (reference sections 2.6, 2.7, 3, 4.2, 4.3): actuator-style on `/downlinks` and
//! connection-specific on `/{http,lora,mqtt,sms,digitalmatter}/downlinks`.
//!
//! Bodies the reference does not show (the four `method` variants, the payloads) follow the
//! simulator's assumptions A-23 and A-24; every answer keeps its raw JSON ([`Raw`]). The answer
//! types ([`ActuatorDownlink`], [`ConnectionDownlink`]) are the model's, re-exported here.

use futures::Stream;
use serde_json::{json, Map, Value};
use url::Url;

use crate::calls::{self, Raw, TimeFilter};
use crate::error::{Error, FieldError, Result};
use crate::model::downlinks::ConnectionDownlinkStatus;
use crate::model::Page;
use crate::paging;
use crate::Client;

/// The answer types live in the model, shared with the simulator.
pub use crate::model::downlinks::{ActuatorDownlink, ConnectionDownlink};

/// Fields `GET /downlinks` sorts by in the simulator (A-36): suggestions, not checked.
pub const ACTUATOR_SORT_FIELDS: &[&str] = &["createdAt", "modifiedAt", "status", "externalReference", "networkId"];
/// Fields the connection-specific lists sort by in the simulator (A-36): suggestions, not checked.
pub const CONNECTION_SORT_FIELDS: &[&str] = &["createdAt", "modifiedAt", "status", "deviceId"];

// ---------------------------------------------------------------------------------------------
// Actuator-style requests

/// The `method` of an actuator downlink: one of the four variants, or raw JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum DownlinkMethod {
    SetProperty {
        device_id: String,
        property: String,
        value: Value,
    },
    InvokeCommand {
        device_id: String,
        command: String,
        parameters: Option<Map<String, Value>>,
    },
    Senml {
        device_id: String,
        records: Vec<Value>,
    },
    PayloadHex {
        device_id: String,
        payload_hex: String,
        port: Option<u8>,
    },
    /// Sent as given (only checked to be an object).
    Raw(Value),
}

impl DownlinkMethod {
    /// Sets a property; `value` must be a number, a boolean or a string.
    pub fn set_property(device_id: &str, property: &str, value: impl Into<Value>) -> Self {
        DownlinkMethod::SetProperty {
            device_id: device_id.to_owned(),
            property: property.to_owned(),
            value: value.into(),
        }
    }

    pub fn invoke_command(device_id: &str, command: &str, parameters: Option<Map<String, Value>>) -> Self {
        DownlinkMethod::InvokeCommand { device_id: device_id.to_owned(), command: command.to_owned(), parameters }
    }

    /// SenML records, each with `n`.
    pub fn senml(device_id: &str, records: Vec<Value>) -> Self {
        DownlinkMethod::Senml { device_id: device_id.to_owned(), records }
    }

    /// A hex payload, with an optional LoRa port (1-223).
    pub fn payload_hex(device_id: &str, payload_hex: &str, port: Option<u8>) -> Self {
        DownlinkMethod::PayloadHex { device_id: device_id.to_owned(), payload_hex: payload_hex.to_owned(), port }
    }

    /// Every rule the method breaks, each field on its own, in body order (empty when it is
    /// sendable): what a composer shows next to its fields.
    pub fn check(&self) -> Vec<FieldError> {
        let mut broken = Broken::default();
        match self {
            DownlinkMethod::SetProperty { device_id, property, value } => {
                broken.note(calls::device_id("method.deviceId", device_id));
                broken.note(non_empty("method.property", property));
                if !matches!(value, Value::Number(_) | Value::Bool(_) | Value::String(_)) {
                    broken.rule("method.value", "must be a number, a boolean or a string");
                }
            }
            DownlinkMethod::InvokeCommand { device_id, command, .. } => {
                broken.note(calls::device_id("method.deviceId", device_id));
                broken.note(non_empty("method.command", command));
            }
            DownlinkMethod::Senml { device_id, records } => {
                broken.note(calls::device_id("method.deviceId", device_id));
                broken.note(check_records("method.records", records));
            }
            DownlinkMethod::PayloadHex { device_id, payload_hex, port } => {
                broken.note(calls::device_id("method.deviceId", device_id));
                broken.note(hex_payload("method.payloadHex", payload_hex));
                if port.is_some_and(|p| !(1..=223).contains(&p)) {
                    broken.rule("method.port", "must be 1 to 223");
                }
            }
            DownlinkMethod::Raw(v) => {
                if !v.is_object() {
                    broken.rule("method", "must be a JSON object");
                }
            }
        }
        broken.0
    }

    /// Checks the variant (the first rule it breaks) and gives its JSON.
    pub fn to_json(&self) -> Result<Value> {
        first(self.check())?;
        Ok(match self {
            DownlinkMethod::SetProperty { device_id, property, value } => {
                json!({"type": "setProperty", "deviceId": device_id.trim(), "property": property, "value": value})
            }
            DownlinkMethod::InvokeCommand { device_id, command, parameters } => {
                let mut v = json!({"type": "invokeCommand", "deviceId": device_id.trim(), "command": command});
                if let Some(p) = parameters {
                    v["parameters"] = Value::Object(p.clone());
                }
                v
            }
            DownlinkMethod::Senml { device_id, records } => {
                json!({"type": "senml", "deviceId": device_id.trim(), "records": records})
            }
            DownlinkMethod::PayloadHex { device_id, payload_hex, port } => {
                let mut v = json!({"type": "payloadHex", "deviceId": device_id.trim(), "payloadHex": payload_hex});
                if let Some(p) = port {
                    v["port"] = json!(p);
                }
                v
            }
            DownlinkMethod::Raw(v) => v.clone(),
        })
    }
}

/// The body of `POST /downlinks`, built step by step and checked when sent.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDownlink {
    pub method: DownlinkMethod,
    pub retry_limit: Option<u32>,
    pub feedback_timeout: Option<String>,
    pub external_reference: Option<String>,
    pub dry_run: Option<bool>,
}

impl NewDownlink {
    pub fn new(method: DownlinkMethod) -> Self {
        NewDownlink { method, retry_limit: None, feedback_timeout: None, external_reference: None, dry_run: None }
    }
    pub fn retry_limit(mut self, n: u32) -> Self {
        self.retry_limit = Some(n);
        self
    }
    /// An ISO 8601 duration of at least 10 minutes, e.g. `PT1H`.
    pub fn feedback_timeout(mut self, d: &str) -> Self {
        self.feedback_timeout = Some(d.to_owned());
        self
    }
    pub fn external_reference(mut self, r: &str) -> Self {
        self.external_reference = Some(r.to_owned());
        self
    }
    pub fn dry_run(mut self, on: bool) -> Self {
        self.dry_run = Some(on);
        self
    }

    /// Every rule the body breaks, each field on its own, in body order (empty when it is
    /// sendable). The reference limits neither `retryLimit` (an integer, default 0) nor the
    /// length of `externalReference` (a string, unique per client): the service judges them.
    pub fn check(&self) -> Vec<FieldError> {
        let mut broken = Broken(self.method.check());
        if let Some(ft) = &self.feedback_timeout {
            broken.note(calls::feedback_timeout(ft));
        }
        broken.0
    }

    /// Checks every field (the first rule broken) and gives the JSON body.
    pub fn to_json(&self) -> Result<Value> {
        first(self.check())?;
        let mut body = json!({"method": self.method.to_json()?});
        if let Some(n) = self.retry_limit {
            body["retryLimit"] = json!(n);
        }
        if let Some(ft) = &self.feedback_timeout {
            body["feedbackTimeout"] = json!(ft);
        }
        // The reference: a string, unique per client. Its length limit is not shown.
        if let Some(r) = &self.external_reference {
            body["externalReference"] = json!(r);
        }
        if let Some(d) = self.dry_run {
            body["dryRun"] = json!(d);
        }
        Ok(body)
    }
}

/// Filters and window of `GET /downlinks`.
#[derive(Debug, Clone, Default)]
pub struct DownlinkFilter {
    /// Free text: `externalReference` exactly, `networkId` and `message` partially.
    pub q: Option<String>,
    pub time: TimeFilter,
    pub sort: Option<String>,
    pub limit: Option<u32>,
}

impl DownlinkFilter {
    fn to_url(&self, client: &Client) -> Result<Url> {
        let mut url = client.url("downlinks")?;
        {
            let mut q = url.query_pairs_mut();
            calls::append_window(&mut q, self.limit, self.sort.as_deref())?;
            if let Some(text) = &self.q {
                non_empty("q", text)?;
                q.append_pair("q", text);
            }
            self.time.append(&mut q)?;
        }
        Ok(calls::tidy(url))
    }
}

// ---------------------------------------------------------------------------------------------
// Connection-specific requests

/// The connection-specific families (section 4.3 and the digital-matter one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConnectionKind {
    Http,
    Lora,
    Mqtt,
    Sms,
    DigitalMatter,
}

impl ConnectionKind {
    pub const ALL: [ConnectionKind; 5] = [
        ConnectionKind::Http,
        ConnectionKind::Lora,
        ConnectionKind::Mqtt,
        ConnectionKind::Sms,
        ConnectionKind::DigitalMatter,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ConnectionKind::Http => "http",
            ConnectionKind::Lora => "lora",
            ConnectionKind::Mqtt => "mqtt",
            ConnectionKind::Sms => "sms",
            ConnectionKind::DigitalMatter => "digitalmatter",
        }
    }

    /// The kind named by its path segment (`lora`, `digitalmatter`, ...).
    pub fn parse(s: &str) -> Option<ConnectionKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl std::fmt::Display for ConnectionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Checks a `deviceId` of `kind` for its bodies and filters and returns it as it will be sent:
/// any of the seven forms, except on SMS a plain string (section 1), only checked to be there
/// and sent exactly as given (the filter matches it exactly).
pub fn connection_device_id(kind: ConnectionKind, s: &str) -> Result<String> {
    if kind == ConnectionKind::Sms {
        if s.trim().is_empty() {
            return Err(Error::invalid("deviceId", "must not be empty"));
        }
        Ok(s.to_owned())
    } else {
        calls::device_id("deviceId", s)
    }
}

/// The body of `POST /K/downlinks`, made by the constructor of its kind and checked when sent.
#[derive(Debug, Clone, PartialEq)]
pub struct NewConnectionDownlink {
    kind: ConnectionKind,
    device_id: String,
    feedback_timeout: String,
    dry_run: Option<bool>,
    retry_limit: Option<u32>,
    fields: Map<String, Value>,
}

impl NewConnectionDownlink {
    fn new(kind: ConnectionKind, device_id: &str, feedback_timeout: &str) -> Self {
        NewConnectionDownlink {
            kind,
            device_id: device_id.to_owned(),
            feedback_timeout: feedback_timeout.to_owned(),
            dry_run: None,
            retry_limit: None,
            fields: Map::new(),
        }
    }

    fn with(mut self, name: &str, value: Value) -> Self {
        self.fields.insert(name.to_owned(), value);
        self
    }

    /// LoRa: a hex payload; `f_port` and `confirmed` may follow. (The payload fields are not
    /// shown by the reference: these are the simulator's, A-24, and their limits its to check.)
    pub fn lora(device_id: &str, feedback_timeout: &str, payload_hex: &str) -> Self {
        Self::new(ConnectionKind::Lora, device_id, feedback_timeout).with("payloadHex", json!(payload_hex))
    }
    /// LoRa FPort, 1-223 (default 1).
    pub fn f_port(self, port: u8) -> Self {
        self.with("fPort", json!(port))
    }
    /// LoRa: whether the device must acknowledge (default true).
    pub fn confirmed(self, on: bool) -> Self {
        self.with("confirmed", json!(on))
    }

    /// MQTT: a topic (no `#`/`+`: MQTT forbids wildcards in a published topic) and a payload;
    /// `qos` may follow.
    pub fn mqtt(device_id: &str, feedback_timeout: &str, topic: &str, payload: &str) -> Self {
        Self::new(ConnectionKind::Mqtt, device_id, feedback_timeout)
            .with("topic", json!(topic))
            .with("payload", json!(payload))
    }
    /// MQTT quality of service, 0-2 (default 1).
    pub fn qos(self, qos: u8) -> Self {
        self.with("qos", json!(qos))
    }

    /// SMS with a text. `device_uuid` is the device id as the SMS family takes it: a plain string.
    pub fn sms_text(device_uuid: &str, feedback_timeout: &str, text: &str) -> Self {
        Self::new(ConnectionKind::Sms, device_uuid, feedback_timeout).with("text", json!(text))
    }
    /// SMS with a binary payload in hex.
    pub fn sms_hex(device_uuid: &str, feedback_timeout: &str, payload_hex: &str) -> Self {
        Self::new(ConnectionKind::Sms, device_uuid, feedback_timeout).with("payloadHex", json!(payload_hex))
    }

    /// HTTP with a SenML message.
    pub fn http_senml(device_id: &str, feedback_timeout: &str, records: Vec<Value>) -> Self {
        Self::new(ConnectionKind::Http, device_id, feedback_timeout).with("message", json!({"senml": records}))
    }
    /// HTTP with a binary payload (sent base64-encoded).
    pub fn http_payload(device_id: &str, feedback_timeout: &str, payload: &[u8]) -> Self {
        Self::new(ConnectionKind::Http, device_id, feedback_timeout)
            .with("message", json!({"payload": base64(payload)}))
    }

    /// Digital Matter: any further fields, sent as given.
    pub fn digitalmatter(device_id: &str, feedback_timeout: &str, fields: Map<String, Value>) -> Self {
        let mut d = Self::new(ConnectionKind::DigitalMatter, device_id, feedback_timeout);
        d.fields = fields;
        d
    }

    /// LoRa and SMS: retries allowed (default 0).
    pub fn retry_limit(mut self, n: u32) -> Self {
        self.retry_limit = Some(n);
        self
    }
    pub fn dry_run(mut self, on: bool) -> Self {
        self.dry_run = Some(on);
        self
    }

    pub fn kind(&self) -> ConnectionKind {
        self.kind
    }

    /// Every rule the body breaks, each field on its own, in body order (empty when it is
    /// sendable): what a composer shows next to its fields.
    pub fn check(&self) -> Vec<FieldError> {
        let kind = self.kind;
        let mut broken = Broken::default();
        broken.note(connection_device_id(kind, &self.device_id));
        broken.note(calls::feedback_timeout(&self.feedback_timeout));
        Self::check_fields(kind, &self.fields, &mut broken);
        if self.retry_limit.is_some()
            && !matches!(kind, ConnectionKind::Lora | ConnectionKind::Sms | ConnectionKind::DigitalMatter)
        {
            broken.rule("retryLimit", format!("is not a field of {kind} downlinks"));
        }
        broken.0
    }

    /// The rules of the kind's own fields (`f`: the body beside `deviceId`, `feedbackTimeout`).
    fn check_fields(kind: ConnectionKind, f: &Map<String, Value>, broken: &mut Broken) {
        match kind {
            ConnectionKind::Lora => {
                broken.note(str_field(f, "payloadHex").and_then(|h| hex_payload("payloadHex", h)));
                if f.get("fPort").and_then(Value::as_u64).is_some_and(|p| !(1..=223).contains(&p)) {
                    broken.rule("fPort", "must be 1 to 223");
                }
            }
            ConnectionKind::Mqtt => {
                if let Some(topic) = broken.note(str_field(f, "topic")) {
                    if topic.is_empty() || topic.contains(['#', '+']) {
                        broken.rule(
                            "topic",
                            "must not be empty nor hold the wildcards # and + (MQTT publishes to one topic)",
                        );
                    }
                }
                if f.get("qos").and_then(Value::as_u64).is_some_and(|q| q > 2) {
                    broken.rule("qos", "must be 0, 1 or 2");
                }
            }
            ConnectionKind::Sms => match (f.get("text"), f.get("payloadHex")) {
                (Some(Value::String(t)), None) => {
                    if t.is_empty() {
                        broken.rule("text", "must not be empty");
                    }
                }
                (None, Some(Value::String(h))) => {
                    broken.note(hex_payload("payloadHex", h));
                }
                _ => broken.rule("text", "give exactly one of text or payloadHex"),
            },
            ConnectionKind::Http => match f.get("message").and_then(Value::as_object) {
                None => broken.rule("message", "is required"),
                Some(m) => {
                    if let Some(Value::Array(records)) = m.get("senml") {
                        broken.note(check_records("message.senml", records));
                    }
                }
            },
            ConnectionKind::DigitalMatter => {
                for reserved in ["deviceId", "feedbackTimeout", "dryRun"] {
                    if f.contains_key(reserved) {
                        broken.rule(reserved, "is set by the builder, not among the extra fields");
                    }
                }
            }
        }
    }

    /// Checks every field (the first rule broken) and gives the JSON body.
    pub fn to_json(&self) -> Result<Value> {
        first(self.check())?;
        let device_id = connection_device_id(self.kind, &self.device_id)?;
        let f = &self.fields;
        let mut body = f.clone();
        body.insert("deviceId".into(), json!(device_id));
        body.insert("feedbackTimeout".into(), json!(self.feedback_timeout));
        if let Some(d) = self.dry_run {
            body.insert("dryRun".into(), json!(d));
        }
        if let Some(n) = self.retry_limit {
            body.insert("retryLimit".into(), json!(n));
        }
        Ok(Value::Object(body))
    }
}

/// Filters and window of `GET /K/downlinks`.
#[derive(Debug, Clone, Default)]
pub struct ConnectionDownlinkFilter {
    /// Any device-id form; on SMS the device's UUID.
    pub device_id: Option<String>,
    pub status: Option<ConnectionDownlinkStatus>,
    pub time: TimeFilter,
    pub sort: Option<String>,
    pub limit: Option<u32>,
}

impl ConnectionDownlinkFilter {
    fn to_url(&self, client: &Client, kind: ConnectionKind) -> Result<Url> {
        let mut url = client.url(&format!("{kind}/downlinks"))?;
        {
            let mut q = url.query_pairs_mut();
            calls::append_window(&mut q, self.limit, self.sort.as_deref())?;
            if let Some(d) = &self.device_id {
                q.append_pair("deviceId", &connection_device_id(kind, d)?);
            }
            // An enumeration on HTTP and LoRa whose values are not shown: any value is sent.
            if let Some(s) = &self.status {
                q.append_pair("status", s.as_str());
            }
            self.time.append(&mut q)?;
        }
        Ok(calls::tidy(url))
    }
}

// ---------------------------------------------------------------------------------------------
// The area

/// The downlink area of the API.
pub struct Downlinks<'a> {
    client: &'a Client,
}

impl Client {
    pub fn downlinks(&self) -> Downlinks<'_> {
        Downlinks { client: self }
    }
}

impl<'a> Downlinks<'a> {
    /// The first page of actuator downlinks, plus the URL of the next page.
    pub async fn page(&self, filter: &DownlinkFilter) -> Result<(Page<Raw<ActuatorDownlink>>, Option<Url>)> {
        paging::fetch_page(self.client, filter.to_url(self.client)?).await
    }

    /// A page from a `next`/`prev` link.
    pub async fn page_at(&self, link: &Url) -> Result<(Page<Raw<ActuatorDownlink>>, Option<Url>)> {
        paging::fetch_page(self.client, link.clone()).await
    }

    /// Every actuator downlink, page after page.
    pub fn list(&self, filter: &DownlinkFilter) -> Result<impl Stream<Item = Result<Raw<ActuatorDownlink>>>> {
        Ok(paging::items(self.client.clone(), filter.to_url(self.client)?))
    }

    /// Every page of actuator downlinks.
    pub fn pages(&self, filter: &DownlinkFilter) -> Result<impl Stream<Item = Result<Page<Raw<ActuatorDownlink>>>>> {
        Ok(paging::pages(self.client.clone(), filter.to_url(self.client)?))
    }

    pub async fn get(&self, id: &str) -> Result<Raw<ActuatorDownlink>> {
        self.client.get_json(self.client.url(&format!("downlinks/{}", path_segment("downlinkId", id)?))?).await
    }

    /// Sends a downlink (once: a POST is never repeated after a failure).
    pub async fn create(&self, new: &NewDownlink) -> Result<Raw<ActuatorDownlink>> {
        let body = new.to_json()?;
        self.client.post_json_as(self.client.url("downlinks")?, &body).await
    }

    /// Asks for a cancellation (202: carried out later). `forced` also stops one executing.
    pub async fn cancel(&self, id: &str, forced: bool) -> Result<()> {
        let mut url = self.client.url(&format!("downlinks/{}", path_segment("downlinkId", id)?))?;
        if forced {
            url.query_pairs_mut().append_pair("forced", "true");
        }
        self.client.delete_call(url).await
    }

    /// The connection-specific downlinks of one kind.
    pub fn connection(&self, kind: ConnectionKind) -> ConnectionDownlinks<'a> {
        ConnectionDownlinks { client: self.client, kind }
    }
}

/// `/K/downlinks` of one kind.
pub struct ConnectionDownlinks<'a> {
    client: &'a Client,
    kind: ConnectionKind,
}

impl ConnectionDownlinks<'_> {
    pub async fn page(
        &self,
        filter: &ConnectionDownlinkFilter,
    ) -> Result<(Page<Raw<ConnectionDownlink>>, Option<Url>)> {
        paging::fetch_page(self.client, filter.to_url(self.client, self.kind)?).await
    }

    pub async fn page_at(&self, link: &Url) -> Result<(Page<Raw<ConnectionDownlink>>, Option<Url>)> {
        paging::fetch_page(self.client, link.clone()).await
    }

    pub fn list(
        &self,
        filter: &ConnectionDownlinkFilter,
    ) -> Result<impl Stream<Item = Result<Raw<ConnectionDownlink>>>> {
        Ok(paging::items(self.client.clone(), filter.to_url(self.client, self.kind)?))
    }

    /// Every page of this kind's downlinks.
    pub fn pages(
        &self,
        filter: &ConnectionDownlinkFilter,
    ) -> Result<impl Stream<Item = Result<Page<Raw<ConnectionDownlink>>>>> {
        Ok(paging::pages(self.client.clone(), filter.to_url(self.client, self.kind)?))
    }

    /// One downlink. `id` is a UUID on the documented kinds; any identifier is sent (the
    /// digital-matter family's are not shown).
    pub async fn get(&self, id: &str) -> Result<Raw<ConnectionDownlink>> {
        let id = path_segment("downlinkId", id)?;
        self.client.get_json(self.client.url(&format!("{}/downlinks/{id}", self.kind))?).await
    }

    pub async fn create(&self, new: &NewConnectionDownlink) -> Result<Raw<ConnectionDownlink>> {
        if new.kind != self.kind {
            return Err(Error::invalid(
                "kind",
                format!("a {} downlink cannot be sent to /{}/downlinks", new.kind, self.kind),
            ));
        }
        let body = new.to_json()?;
        self.client.post_json_as(self.client.url(&format!("{}/downlinks", self.kind))?, &body).await
    }

    pub async fn cancel(&self, id: &str, forced: bool) -> Result<()> {
        let id = path_segment("downlinkId", id)?;
        let mut url = self.client.url(&format!("{}/downlinks/{id}", self.kind))?;
        if forced {
            url.query_pairs_mut().append_pair("forced", "true");
        }
        self.client.delete_call(url).await
    }
}

// ---------------------------------------------------------------------------------------------
// Checks

/// The rules a body breaks, gathered field by field.
#[derive(Default)]
struct Broken(Vec<FieldError>);

impl Broken {
    fn rule(&mut self, field: &str, rule: impl Into<String>) {
        self.0.push(FieldError::new(field, rule));
    }

    /// Keeps the rule a check names (any other error too, under `body`); the value if it passed.
    fn note<T>(&mut self, r: Result<T>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(Error::InvalidInput { field, rule }) => {
                self.rule(&field, rule);
                None
            }
            Err(other) => {
                self.rule("body", other.to_string());
                None
            }
        }
    }
}

/// The first rule broken, as the error a request refused before sending gives.
fn first(broken: Vec<FieldError>) -> Result<()> {
    match broken.into_iter().next() {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

fn non_empty(field: &str, s: &str) -> Result<()> {
    if s.is_empty() {
        Err(Error::invalid(field, "must not be empty"))
    } else {
        Ok(())
    }
}

/// A path segment given by the caller: non-empty, no `/`, `?` or `#`.
fn path_segment<'s>(field: &str, s: &'s str) -> Result<&'s str> {
    if s.is_empty() || s.contains(['/', '?', '#', '%']) {
        return Err(Error::invalid(field, "must be a non-empty identifier without `/`, `?`, `#` or `%`"));
    }
    Ok(s)
}

fn str_field<'m>(f: &'m Map<String, Value>, name: &str) -> Result<&'m str> {
    f.get(name).and_then(Value::as_str).ok_or_else(|| Error::invalid(name, "is required"))
}

fn hex_payload(field: &str, s: &str) -> Result<()> {
    if s.is_empty() || !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::invalid(field, "must be an even number of hex characters"));
    }
    Ok(())
}

fn check_records(field: &str, records: &[Value]) -> Result<()> {
    if records.is_empty() {
        return Err(Error::invalid(field, "must hold at least one SenML record"));
    }
    if records.iter().any(|r| r.get("n").and_then(Value::as_str).is_none()) {
        return Err(Error::invalid(field, "every SenML record needs a name `n`"));
    }
    Ok(())
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    #[test]
    fn base64_pads() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn methods_are_checked_and_shaped() {
        let m = DownlinkMethod::set_property("imei:350000000000001", "led", true).to_json().unwrap();
        assert_eq!(
            m,
            json!({"type": "setProperty", "deviceId": "imei:350000000000001", "property": "led", "value": true})
        );
        assert!(DownlinkMethod::set_property("bogus", "led", 1).to_json().is_err());
        assert!(DownlinkMethod::set_property("imei:350000000000001", "led", json!([1])).to_json().is_err());
        assert!(DownlinkMethod::payload_hex("deveui:70b3d57ed0000001", "abc", None).to_json().is_err());
        assert!(DownlinkMethod::payload_hex("deveui:70b3d57ed0000001", "ab", Some(0)).to_json().is_err());
        assert!(DownlinkMethod::senml("deveui:70b3d57ed0000001", vec![json!({"v": 1})]).to_json().is_err());
        assert!(DownlinkMethod::Raw(json!([])).to_json().is_err());
        let short = NewDownlink::new(DownlinkMethod::Raw(json!({"type": "x"}))).feedback_timeout("PT5M");
        assert_eq!(short.to_json().unwrap_err().to_string().split(':').next(), Some("feedbackTimeout"));
    }

    #[test]
    fn limits_only_the_simulator_sets_are_left_to_the_service() {
        // retryLimit (A-26), externalReference length (A-27): the reference gives no bound.
        let m = || DownlinkMethod::set_property("imei:350000000000001", "led", true);
        let body = NewDownlink::new(m()).retry_limit(11).external_reference(&"r".repeat(101)).to_json().unwrap();
        assert_eq!(
            (body["retryLimit"].as_u64(), body["externalReference"].as_str().map(str::len)),
            (Some(11), Some(101))
        );
        let lora = NewConnectionDownlink::lora("deveui:70b3d57ed0000001", "PT1H", &"0a".repeat(243)).retry_limit(11);
        assert_eq!(lora.to_json().unwrap()["retryLimit"], 11, "nor the payload sizes of A-24");
        let sms = NewConnectionDownlink::sms_text("device-7", "PT1H", &"x".repeat(161)).retry_limit(50);
        assert_eq!(sms.to_json().unwrap()["deviceId"], "device-7", "an SMS deviceId is a plain string");
        assert!(NewConnectionDownlink::sms_hex("d", "PT1H", &"00".repeat(141)).to_json().is_ok());
        assert!(NewConnectionDownlink::mqtt("imei:350000000000001", "PT1H", &"t".repeat(300), "x").to_json().is_ok());
        let f = ConnectionDownlinkFilter {
            status: Some("PAUSED".into()),
            sort: Some("colour,-createdAt".into()),
            ..Default::default()
        };
        let client = crate::Client::new(
            crate::ClientConfig::new("https://h.example", "https://h.example", "k", crate::Secret::new("s")).unwrap(),
        )
        .unwrap();
        let url = f.to_url(&client, ConnectionKind::Lora).unwrap();
        assert_eq!(url.query(), Some("sort=colour%2C-createdAt&status=PAUSED"));
    }

    #[test]
    fn kinds_parse_and_device_ids_are_checked_per_kind() {
        for k in ConnectionKind::ALL {
            assert_eq!(ConnectionKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(ConnectionKind::parse("actuator"), None);
        assert_eq!(
            connection_device_id(ConnectionKind::Lora, " deveui:70B3D57ED0000001 ").unwrap(),
            "deveui:70B3D57ED0000001"
        );
        assert_eq!(connection_device_id(ConnectionKind::Sms, "imei:350000000000001").unwrap(), "imei:350000000000001");
        assert!(connection_device_id(ConnectionKind::Sms, &Uuid::nil().to_string()).is_ok());
        assert_eq!(
            connection_device_id(ConnectionKind::Sms, " ").unwrap_err().to_string(),
            "deviceId: must not be empty"
        );
        assert!(connection_device_id(ConnectionKind::Lora, "imei:12").is_err(), "the seven forms stay checked");
    }

    #[test]
    fn connection_bodies_are_checked() {
        let ok = NewConnectionDownlink::lora("deveui:70b3d57ed0000001", "PT1H", "0a0b").f_port(2).retry_limit(1);
        assert_eq!(ok.to_json().unwrap()["fPort"], 2);
        assert!(NewConnectionDownlink::lora("deveui:70b3d57ed0000001", "PT1H", "0a0b").f_port(0).to_json().is_err());
        assert!(NewConnectionDownlink::mqtt("imei:350000000000001", "PT1H", "a/#", "x").to_json().is_err());
        assert!(NewConnectionDownlink::mqtt("imei:350000000000001", "PT1H", "a/b", "x").qos(3).to_json().is_err());
        assert!(NewConnectionDownlink::mqtt("imei:350000000000001", "PT1H", "a/b", "x")
            .retry_limit(1)
            .to_json()
            .is_err());
        assert!(NewConnectionDownlink::sms_text("", "PT1H", "hi").to_json().is_err(), "SMS wants a deviceId");
        assert!(NewConnectionDownlink::sms_text(&Uuid::nil().to_string(), "PT1H", "").to_json().is_err());
        assert!(NewConnectionDownlink::http_payload("imei:350000000000001", "PT9M", b"x").to_json().is_err());
    }
}
