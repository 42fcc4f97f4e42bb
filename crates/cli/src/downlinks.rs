//! `dcs downlinks ...`: actuator-style downlinks, and `dcs downlinks <kind> ...` for the
//! connection-specific ones (sections 4.2, 4.3).

use clap::{Args, Subcommand, ValueEnum};
use dcs_api::downlinks::{
    ActuatorDownlink, ConnectionDownlink, ConnectionDownlinkFilter, ConnectionKind, DownlinkFilter, DownlinkMethod,
    NewConnectionDownlink, NewDownlink,
};
use dcs_api::model::downlinks::ConnectionDownlinkStatus;
use dcs_api::model::DeviceId;
use dcs_api::Raw;
use dcs_console::downlinks::{self, DownlinkKind, DownlinkPageRequest};
use serde_json::Value;
use std::path::PathBuf;

use crate::output::{self, opt, ts};
use crate::{invalid, json_arg, Ctx, TimeArgs};

#[derive(Subcommand)]
pub enum DownlinksCommand {
    /// List actuator downlinks: every page, or one with --limit / --cursor.
    #[command(
        after_help = "Examples:\n  dcs downlinks list --q my-ref-42 --sort -createdAt --created-since 2024-05-01T00:00:00Z\n  dcs downlinks list --created-since 2024-05-01T00:00:00Z --csv downlinks.csv"
    )]
    List {
        /// Free text: externalReference exactly, networkId and message partially.
        #[arg(long)]
        q: Option<String>,
        #[command(flatten)]
        time: TimeArgs,
        /// Sort fields, `-` for descending, e.g. `-createdAt`.
        #[arg(long, allow_hyphen_values = true)]
        sort: Option<String>,
        #[command(flatten)]
        page: output::PageArgs,
        /// Write every downlink the filters give (every page) to this CSV file, each device
        /// named where the device list knows it.
        #[arg(long, value_name = "FILE", conflicts_with = "cursor")]
        csv: Option<PathBuf>,
    },
    /// One actuator downlink.
    #[command(after_help = "Example:\n  dcs downlinks get 5d1c0b6e-...")]
    Get {
        /// The downlink's id.
        id: String,
    },
    /// Send an actuator downlink.
    #[command(after_help = "Examples:\n  \
        dcs downlinks create --method-type setProperty --device-id imei:350000000000001 --property interval --value 60\n  \
        dcs downlinks create --method-type payloadHex --device-id deveui:70b3d57ed0000001 --payload-hex 0a0b --port 5 --feedback-timeout PT1H\n  \
        dcs downlinks create --method-json '{\"type\":\"invokeCommand\",\"deviceId\":\"imei:350000000000001\",\"command\":\"reboot\"}' --dry-run")]
    Create(ActuatorCreateArgs),
    /// Ask to cancel an actuator downlink (--forced also stops one executing; asks first).
    #[command(
        after_help = "Example:\n  dcs downlinks cancel 5d1c0b6e-... \n  dcs downlinks cancel 5d1c0b6e-... --forced --yes"
    )]
    Cancel {
        /// The downlink's id.
        id: String,
        /// Also stop a downlink being executed.
        #[arg(long)]
        forced: bool,
    },
    /// HTTP connection downlinks.
    Http {
        #[command(subcommand)]
        command: ConnectionCommand<HttpCreateArgs>,
    },
    /// LoRa connection downlinks.
    Lora {
        #[command(subcommand)]
        command: ConnectionCommand<LoraCreateArgs>,
    },
    /// MQTT connection downlinks.
    Mqtt {
        #[command(subcommand)]
        command: ConnectionCommand<MqttCreateArgs>,
    },
    /// SMS connection downlinks.
    Sms {
        #[command(subcommand)]
        command: ConnectionCommand<SmsCreateArgs>,
    },
    /// Digital Matter connection downlinks.
    Digitalmatter {
        #[command(subcommand)]
        command: ConnectionCommand<DigitalMatterCreateArgs>,
    },
    /// The deprecated beta actuator downlink (`POST /api/actuator/downlinks`, reference 4.5).
    Beta {
        #[command(subcommand)]
        command: BetaDownlinksCommand,
    },
}

#[derive(Subcommand)]
pub enum BetaDownlinksCommand {
    /// Send hex payloads to LoRa devices (by DevEUI) on one FPort with the deprecated beta API.
    /// Each payload becomes one SenML record; the answer's shape is not shown and is printed
    /// as it came (JSON).
    #[command(after_help = "Examples:\n  \
        dcs downlinks beta send --device deveui:70b3d57ed0000001 --port 5 --hex 0a0b\n  \
        dcs downlinks beta send --device deveui:70b3d57ed0000001 --device deveui:70b3d57ed0000002 --port 5 --hex 01 --hex 02 \\\n      \
        --external-reference batch-7\n\n\
        One --device for every --hex, or the same device for all of them.")]
    Send(BetaSendArgs),
}

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
    external_reference: Option<String>,
}

impl BetaSendArgs {
    /// The (device, payload) pairs, checked by the reference's rules (DevEUI URN, hex).
    fn pairs(&self) -> anyhow::Result<Vec<(DeviceId, String)>> {
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

    fn port(&self) -> anyhow::Result<u8> {
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
    fn method(&self) -> anyhow::Result<DownlinkMethod> {
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

    fn to_new(&self) -> anyhow::Result<NewDownlink> {
        let mut new = NewDownlink::new(self.method()?);
        new.retry_limit = self.retry_limit;
        new.feedback_timeout = self.feedback_timeout.clone();
        new.external_reference = self.external_reference.clone();
        new.dry_run = self.dry_run.then_some(true);
        new.to_json()?; // every field checked before anything is sent
        Ok(new)
    }
}

/// The four operations of one connection kind; `C` is the kind's create arguments.
#[derive(Subcommand)]
pub enum ConnectionCommand<C: Args> {
    /// List this kind's downlinks: every page, or one with --limit / --cursor.
    #[command(
        after_help = "Example:\n  dcs downlinks lora list --device-id deveui:70b3d57ed0000001 --status PENDING --sort -createdAt"
    )]
    List(ConnectionListArgs),
    /// One downlink of this kind.
    #[command(after_help = "Example:\n  dcs downlinks mqtt get 5d1c0b6e-7f3a-4c1e-9b2d-0a1b2c3d4e5f")]
    Get {
        /// The downlink's id.
        id: String,
    },
    /// Send a downlink of this kind (see the kind's fields below).
    Create(C),
    /// Ask to cancel a downlink (--forced also stops one executing; asks first).
    #[command(after_help = "Example:\n  dcs downlinks sms cancel 5d1c0b6e-7f3a-4c1e-9b2d-0a1b2c3d4e5f --forced --yes")]
    Cancel {
        /// The downlink's id.
        id: String,
        /// Also stop a downlink being executed.
        #[arg(long)]
        forced: bool,
    },
}

#[derive(Args)]
pub struct ConnectionListArgs {
    /// Only this device (any id form; on SMS the device's UUID).
    #[arg(long)]
    device_id: Option<String>,
    /// PENDING, EXECUTING or DONE (SMS and MQTT may know more).
    #[arg(long)]
    status: Option<String>,
    #[command(flatten)]
    time: TimeArgs,
    /// Sort fields, `-` for descending, e.g. `-createdAt`.
    #[arg(long, allow_hyphen_values = true)]
    sort: Option<String>,
    #[command(flatten)]
    page: output::PageArgs,
    /// Write every downlink the filters give (every page) to this CSV file, each device named
    /// where the device list knows it.
    #[arg(long, value_name = "FILE", conflicts_with = "cursor")]
    csv: Option<PathBuf>,
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

pub async fn run(ctx: &Ctx, command: DownlinksCommand) -> anyhow::Result<()> {
    let dl = ctx.client.downlinks();
    match command {
        DownlinksCommand::List { q, time, sort, page, csv } => {
            if let Some(path) = csv {
                let req =
                    DownlinkPageRequest { q, sort, limit: page.limit, ..page_request(DownlinkKind::Actuator, &time) };
                let n = downlinks::export_csv(&ctx.client, &req, &*device_names(ctx).await, &path).await?;
                return wrote(ctx, n, &path);
            }
            let filter = DownlinkFilter { q, time: time.filter(), sort, limit: page.limit };
            let listing = output::fetch_list(&ctx.client, &page, "downlinks", dl.page(&filter)).await?;
            output::print_listing(&listing, ctx.json, actuator_table)
        }
        DownlinksCommand::Get { id } => actuator_one(&dl.get(&id).await?, ctx.json),
        DownlinksCommand::Create(args) => {
            let new = args.to_new()?;
            actuator_one(&dl.create(&new).await?, ctx.json)
        }
        DownlinksCommand::Cancel { id, forced } => {
            if forced {
                ctx.confirm(&format!("Force the cancellation of downlink {id}, even while it executes"))?;
            }
            dl.cancel(&id, forced).await?;
            cancelled(ctx, &id, forced)
        }
        DownlinksCommand::Http { command } => connection(ctx, command).await,
        DownlinksCommand::Lora { command } => connection(ctx, command).await,
        DownlinksCommand::Mqtt { command } => connection(ctx, command).await,
        DownlinksCommand::Sms { command } => connection(ctx, command).await,
        DownlinksCommand::Digitalmatter { command } => connection(ctx, command).await,
        DownlinksCommand::Beta { command: BetaDownlinksCommand::Send(args) } => {
            let pairs = args.pairs()?;
            let port = args.port()?;
            let answer = ctx.client.beta().actuator_downlinks(&pairs, port, args.external_reference.as_deref()).await?;
            if ctx.json {
                output::print_json(&answer)
            } else {
                eprintln!(
                    "dcs: the beta API is deprecated; the shape of its answer is not shown, so here it is as it came:"
                );
                output::print_json(&answer)
            }
        }
    }
}

/// The console's request for a list of `kind` with the time filters of the command line.
fn page_request(kind: DownlinkKind, time: &TimeArgs) -> DownlinkPageRequest {
    let t = time.filter();
    let rfc =
        |v: Option<time::OffsetDateTime>| v.and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok());
    DownlinkPageRequest {
        kind,
        next: None,
        sort: None,
        q: None,
        device_id: None,
        status: None,
        created_before: rfc(t.created_before),
        created_since: rfc(t.created_since),
        modified_before: rfc(t.modified_before),
        modified_since: rfc(t.modified_since),
        limit: None,
    }
}

fn downlink_kind(c: ConnectionKind) -> DownlinkKind {
    match c {
        ConnectionKind::Http => DownlinkKind::Http,
        ConnectionKind::Lora => DownlinkKind::Lora,
        ConnectionKind::Mqtt => DownlinkKind::Mqtt,
        ConnectionKind::Sms => DownlinkKind::Sms,
        ConnectionKind::DigitalMatter => DownlinkKind::Digitalmatter,
    }
}

/// The device list, for naming devices in a CSV; without it (a key that may not read it, a
/// service without the beta listing) devices are written by id only, and stderr says so.
pub async fn device_names(ctx: &Ctx) -> std::sync::Arc<dcs_console::devices::Directory> {
    match dcs_console::devices::load(&ctx.client).await {
        Ok(d) => std::sync::Arc::new(d),
        Err(e) => {
            eprintln!("dcs: the device list could not be read ({e}); the CSV names devices by id only");
            Default::default()
        }
    }
}

/// Says where a CSV went and how many rows it has.
pub fn wrote(ctx: &Ctx, rows: u32, path: &std::path::Path) -> anyhow::Result<()> {
    if ctx.json {
        return output::print_json(&serde_json::json!({ "rows": rows, "path": path }));
    }
    println!("wrote {rows} rows to {}", path.display());
    Ok(())
}

fn cancelled(ctx: &Ctx, id: &str, forced: bool) -> anyhow::Result<()> {
    if ctx.json {
        output::print_json(&serde_json::json!({ "cancelRequested": id, "forced": forced }))
    } else {
        println!("cancellation of {id} requested{}; it is carried out shortly", if forced { " (forced)" } else { "" });
        Ok(())
    }
}

async fn connection<C: CreateArgs>(ctx: &Ctx, command: ConnectionCommand<C>) -> anyhow::Result<()> {
    let kind = C::KIND;
    let dl = ctx.client.downlinks();
    let api = dl.connection(kind);
    match command {
        ConnectionCommand::List(a) => {
            if let Some(path) = &a.csv {
                let req = DownlinkPageRequest {
                    device_id: a.device_id.clone(),
                    status: a.status.clone(),
                    sort: a.sort.clone(),
                    limit: a.page.limit,
                    ..page_request(downlink_kind(kind), &a.time)
                };
                let n = downlinks::export_csv(&ctx.client, &req, &*device_names(ctx).await, path).await?;
                return wrote(ctx, n, path);
            }
            let filter = ConnectionDownlinkFilter {
                device_id: a.device_id,
                status: a.status.as_deref().map(ConnectionDownlinkStatus::from),
                time: a.time.filter(),
                sort: a.sort,
                limit: a.page.limit,
            };
            let listing =
                output::fetch_list(&ctx.client, &a.page, &format!("{kind}/downlinks"), api.page(&filter)).await?;
            output::print_listing(&listing, ctx.json, connection_table)
        }
        ConnectionCommand::Get { id } => connection_one(&api.get(&id).await?, ctx.json),
        ConnectionCommand::Create(args) => {
            let _ = args.common();
            let new = args.build()?;
            new.to_json()?; // every field checked before anything is sent
            connection_one(&api.create(&new).await?, ctx.json)
        }
        ConnectionCommand::Cancel { id, forced } => {
            if forced {
                ctx.confirm(&format!("Force the cancellation of {kind} downlink {id}, even while it executes"))?;
            }
            api.cancel(&id, forced).await?;
            cancelled(ctx, &id, forced)
        }
    }
}

fn actuator_table(all: &[Raw<ActuatorDownlink>]) {
    output::table(
        &["ID", "STATUS", "NETWORK ID", "METHOD", "EXTERNAL REFERENCE", "CREATED"],
        all.iter()
            .map(|d| {
                vec![
                    opt(&d.id),
                    d.status.to_string(),
                    d.network_id.clone(),
                    d.raw["method"]["type"].as_str().unwrap_or("-").to_owned(),
                    opt(&d.external_reference),
                    ts(&d.created_at),
                ]
            })
            .collect(),
    );
}

fn actuator_one(d: &Raw<ActuatorDownlink>, json: bool) -> anyhow::Result<()> {
    if json {
        return output::print_json(d);
    }
    output::fields(&[
        ("id", opt(&d.id)),
        ("status", d.status.to_string()),
        ("network id", d.network_id.clone()),
        ("external reference", opt(&d.external_reference)),
        ("method", d.method.as_ref().map(|m| m.to_string()).unwrap_or_else(|| "-".into())),
        ("message", d.message_text().unwrap_or_else(|| "-".into())),
        ("retries", format!("{} of {}", opt(&d.retry_count), opt(&d.retry_limit))),
        ("feedback timeout", opt(&d.feedback_timeout)),
        ("dry run", opt(&d.dry_run)),
        ("last failure", d.raw.get("lastFailureReason").map(|v| v.to_string()).unwrap_or_else(|| "-".into())),
        ("created", ts(&d.created_at)),
        ("modified", ts(&d.modified_at)),
    ]);
    Ok(())
}

fn connection_table(all: &[Raw<ConnectionDownlink>]) {
    output::table(
        &["ID", "STATUS", "DEVICE", "FEEDBACK TIMEOUT", "CREATED"],
        all.iter()
            .map(|d| vec![opt(&d.id), opt(&d.status), d.device_id.clone(), opt(&d.feedback_timeout), ts(&d.created_at)])
            .collect(),
    );
}

fn connection_one(d: &Raw<ConnectionDownlink>, json: bool) -> anyhow::Result<()> {
    if json {
        return output::print_json(d);
    }
    let mut pairs = vec![
        ("id", opt(&d.id)),
        ("status", opt(&d.status)),
        ("device", d.device_id.clone()),
        ("feedback timeout", opt(&d.feedback_timeout)),
        ("dry run", opt(&d.dry_run)),
        ("retries", format!("{} of {}", opt(&d.retry_count), opt(&d.retry_limit))),
        ("created", ts(&d.created_at)),
        ("modified", ts(&d.modified_at)),
    ];
    let known = [
        "id",
        "status",
        "deviceId",
        "feedbackTimeout",
        "dryRun",
        "retryCount",
        "retryLimit",
        "createdAt",
        "modifiedAt",
    ];
    let extra: Vec<(String, String)> = d
        .raw
        .as_object()
        .map(|o| {
            o.iter().filter(|(k, _)| !known.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.to_string())).collect()
        })
        .unwrap_or_default();
    for (k, v) in &extra {
        pairs.push((k.as_str(), v.clone()));
    }
    output::fields(&pairs);
    Ok(())
}
