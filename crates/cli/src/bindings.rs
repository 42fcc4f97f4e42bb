//! `dcs bindings <lora|http|mqtt> ...`: connector bindings (section 4.4).

use clap::{Args, Subcommand};
use dcs_api::bindings::{BindingFilter, BindingSpec, KindBindings};
use dcs_api::model::{
    HttpBinding, HttpBindingRequest, HttpBindingType, LoraBinding, LoraBindingRequest, MqttBinding, MqttBindingRequest,
};
use futures::TryStreamExt;
use serde::Serialize;
use uuid::Uuid;

use crate::output::{self, ts};
use crate::{invalid, Ctx, TimeArgs};

#[derive(Subcommand)]
pub enum BindingsCommand {
    /// LoRa bindings (device to application server).
    Lora {
        #[command(subcommand)]
        command: BindingCommand<LoraArgs>,
    },
    /// HTTP bindings (device posts with a shared secret).
    Http {
        #[command(subcommand)]
        command: BindingCommand<HttpArgs>,
    },
    /// MQTT bindings (device logs in to the MQTT connector).
    Mqtt {
        #[command(subcommand)]
        command: BindingCommand<MqttArgs>,
    },
}

#[derive(Subcommand)]
pub enum BindingCommand<C: Args> {
    /// List this kind's bindings, following pages.
    #[command(after_help = "Example:\n  dcs bindings mqtt list --device-id imei:350000000000001 --sort -createdAt")]
    List(ListArgs),
    /// One binding.
    #[command(after_help = "Example:\n  dcs bindings lora get 7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d --sync")]
    Get {
        id: Uuid,
        /// LoRa only: fetch the latest state from the network server first.
        #[arg(long)]
        sync: bool,
    },
    /// Create a binding (see the kind's fields below).
    Create(C),
    /// Replace a binding (every field).
    Update {
        id: Uuid,
        #[command(flatten)]
        fields: C,
    },
    /// Delete a binding (asks first; --yes to skip).
    #[command(after_help = "Example:\n  dcs bindings http delete 7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d --yes")]
    Delete { id: Uuid },
}

#[derive(Args)]
pub struct ListArgs {
    /// Only bindings of devices owned by this client.
    #[arg(long)]
    client_id_filter: Option<Uuid>,
    /// Only this device (any id form).
    #[arg(long)]
    device_id: Option<String>,
    /// HTTP only: http-streamline or http-senml.
    #[arg(long = "type")]
    binding_type: Option<String>,
    /// MQTT only: this username exactly.
    #[arg(long)]
    username: Option<String>,
    #[command(flatten)]
    time: TimeArgs,
    #[arg(long)]
    sort: Option<String>,
    /// Page size used while fetching.
    #[arg(long)]
    limit: Option<u32>,
}

#[derive(Args)]
#[command(after_help = "Example:\n  dcs bindings lora create --device-id deveui:70b3d57ed0000001 --application-server-id 0011223344556677 \\\n      --app-key 00112233445566778899aabbccddeeff")]
pub struct LoraArgs {
    /// The device (any id form).
    #[arg(long)]
    device_id: String,
    /// 16 hex characters.
    #[arg(long)]
    application_server_id: String,
    /// 32 hex characters.
    #[arg(long)]
    app_key: String,
}

#[derive(Args)]
#[command(after_help = "Example:\n  dcs bindings http create --device-id imei:350000000000001 --type http-senml --shared-secret 's3cret-0123456789'")]
pub struct HttpArgs {
    #[arg(long)]
    device_id: String,
    /// http-streamline or http-senml.
    #[arg(long = "type")]
    binding_type: String,
    #[arg(long)]
    shared_secret: String,
}

#[derive(Args)]
#[command(after_help = "Example:\n  dcs bindings mqtt create --device-id imei:350000000000001 --password 'Str0ng-passw0rd!'")]
pub struct MqttArgs {
    #[arg(long)]
    device_id: String,
    #[arg(long)]
    password: String,
}

/// How a kind's arguments become a request, and how its bindings print.
pub trait KindArgs: Args {
    type Spec: BindingSpec<Request = Self::Req>;
    type Req;
    fn request(&self) -> Self::Req;
    fn headers() -> &'static [&'static str];
    fn row(b: &<Self::Spec as BindingSpec>::Binding) -> Vec<String>;
    fn api<'a>(ctx: &'a Ctx) -> KindBindings<'a, Self::Spec>;
}

impl KindArgs for LoraArgs {
    type Spec = dcs_api::bindings::Lora;
    type Req = LoraBindingRequest;
    fn request(&self) -> LoraBindingRequest {
        LoraBindingRequest {
            device_id: self.device_id.clone(),
            application_server_id: self.application_server_id.clone(),
            app_key: self.app_key.clone(),
        }
    }
    fn headers() -> &'static [&'static str] {
        &["ID", "DEVICE", "APPLICATION SERVER", "STATUS", "CREATED"]
    }
    fn row(b: &LoraBinding) -> Vec<String> {
        vec![b.id.to_string(), b.device_id.clone(), b.application_server_id.clone(), b.status.to_string(), ts(&b.created_at)]
    }
    fn api<'a>(ctx: &'a Ctx) -> KindBindings<'a, Self::Spec> {
        ctx.client.bindings().lora()
    }
}

impl KindArgs for HttpArgs {
    type Spec = dcs_api::bindings::Http;
    type Req = HttpBindingRequest;
    fn request(&self) -> HttpBindingRequest {
        HttpBindingRequest {
            device_id: self.device_id.clone(),
            binding_type: HttpBindingType::from(self.binding_type.as_str()),
            shared_secret: self.shared_secret.clone(),
        }
    }
    fn headers() -> &'static [&'static str] {
        &["ID", "DEVICE", "TYPE", "CREATED"]
    }
    fn row(b: &HttpBinding) -> Vec<String> {
        vec![b.id.to_string(), b.device_id.clone(), b.binding_type.to_string(), ts(&b.created_at)]
    }
    fn api<'a>(ctx: &'a Ctx) -> KindBindings<'a, Self::Spec> {
        ctx.client.bindings().http()
    }
}

impl KindArgs for MqttArgs {
    type Spec = dcs_api::bindings::Mqtt;
    type Req = MqttBindingRequest;
    fn request(&self) -> MqttBindingRequest {
        MqttBindingRequest { device_id: self.device_id.clone(), password: self.password.clone() }
    }
    fn headers() -> &'static [&'static str] {
        &["ID", "DEVICE", "USERNAME", "CREATED"]
    }
    fn row(b: &MqttBinding) -> Vec<String> {
        vec![b.id.to_string(), b.device_id.clone(), b.username.clone(), ts(&b.created_at)]
    }
    fn api<'a>(ctx: &'a Ctx) -> KindBindings<'a, Self::Spec> {
        ctx.client.bindings().mqtt()
    }
}

pub async fn run(ctx: &Ctx, command: BindingsCommand) -> anyhow::Result<()> {
    match command {
        BindingsCommand::Lora { command } => kind(ctx, command, "LoRa").await,
        BindingsCommand::Http { command } => kind(ctx, command, "HTTP").await,
        BindingsCommand::Mqtt { command } => kind(ctx, command, "MQTT").await,
    }
}

async fn kind<C: KindArgs>(ctx: &Ctx, command: BindingCommand<C>, name: &str) -> anyhow::Result<()>
where
    <C::Spec as BindingSpec>::Binding: Serialize,
{
    let api = C::api(ctx);
    let print = |items: &[<C::Spec as BindingSpec>::Binding]| -> anyhow::Result<()> {
        if ctx.json {
            output::print_json(items)
        } else {
            output::table(C::headers(), items.iter().map(C::row).collect());
            Ok(())
        }
    };
    let print_one = |b: <C::Spec as BindingSpec>::Binding| -> anyhow::Result<()> {
        if ctx.json {
            output::print_json(&b)
        } else {
            print(std::slice::from_ref(&b))
        }
    };
    match command {
        BindingCommand::List(a) => {
            let filter = BindingFilter {
                client_id: a.client_id_filter,
                device_id: a.device_id,
                time: a.time.filter(),
                binding_type: a.binding_type.as_deref().map(HttpBindingType::from),
                username: a.username,
                sort: a.sort,
                limit: a.limit,
            };
            let all: Vec<_> = api.list(&filter)?.try_collect().await?;
            print(&all)
        }
        BindingCommand::Get { id, sync } => {
            if sync {
                if name != "LoRa" {
                    return Err(invalid("sync", "is only for LoRa bindings"));
                }
                let b = ctx.client.bindings().lora().get_synced(id, true).await?;
                return if ctx.json { output::print_json(&b) } else { lora_synced(&b) };
            }
            print_one(api.get(id).await?)
        }
        BindingCommand::Create(args) => print_one(api.create(&args.request()).await?),
        BindingCommand::Update { id, fields } => print_one(api.update(id, &fields.request()).await?),
        BindingCommand::Delete { id } => {
            ctx.confirm(&format!("Delete {name} binding {id}"))?;
            api.delete(id).await?;
            if ctx.json {
                output::print_json(&serde_json::json!({ "deleted": id }))
            } else {
                println!("deleted {name} binding {id}");
                Ok(())
            }
        }
    }
}

fn lora_synced(b: &LoraBinding) -> anyhow::Result<()> {
    output::table(LoraArgs::headers(), vec![LoraArgs::row(b)]);
    Ok(())
}
