//! `dcs downlinks ...`: actuator-style downlinks, and `dcs downlinks <kind> ...` for the
//! connection-specific ones (sections 4.2, 4.3).

mod create;
mod print;

use clap::{Args, Subcommand};
use dcs_api::downlinks::{ConnectionDownlinkFilter, ConnectionKind, DownlinkFilter};
use dcs_api::model::downlinks::ConnectionDownlinkStatus;
use dcs_console::downlinks::{self, DownlinkKind, DownlinkPageRequest};
use std::path::PathBuf;

use crate::output;
use crate::{Ctx, TimeArgs};

use create::{
    ActuatorCreateArgs, BetaSendArgs, CreateArgs, DigitalMatterCreateArgs, HttpCreateArgs, LoraCreateArgs,
    MqttCreateArgs, SmsCreateArgs,
};
use print::{actuator_one, actuator_table, connection_one, connection_table};

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
        created_before: rfc(t.created_before),
        created_since: rfc(t.created_since),
        modified_before: rfc(t.modified_before),
        modified_since: rfc(t.modified_since),
        limit: None,
        ..DownlinkPageRequest::first(kind, 0)
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
