//! `dcs bindings <lora|http|mqtt> ...`: connector bindings (section 4.4).

use clap::{Args, Subcommand};
use dcs_api::bindings::{BindingFilter, BindingSpec, KindBindings};
use dcs_api::model::{
    BindingKind, HttpBinding, HttpBindingRequest, HttpBindingType, LoraBinding, LoraBindingRequest, MqttBinding,
    MqttBindingRequest,
};
use dcs_console::bindings::{self, BindingDraft, EditorKind};
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
#[allow(clippy::large_enum_variant, reason = "parsed once from the command line")]
pub enum BindingCommand<C: Args> {
    /// List this kind's bindings: every page, or one with --limit / --cursor.
    #[command(
        after_help = "Examples:\n  dcs bindings mqtt list --device-id imei:350000000000001 --sort -createdAt\n  dcs bindings lora list --csv lora-bindings.csv"
    )]
    List(ListArgs),
    /// One binding.
    #[command(after_help = "Example:\n  dcs bindings lora get 7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d --sync")]
    Get {
        /// The binding's UUID.
        id: Uuid,
        /// LoRa only: fetch the latest state from the network server first.
        #[arg(long)]
        sync: bool,
    },
    /// Create a binding (see the kind's fields below).
    Create(C),
    /// Replace a binding (every field).
    Update {
        /// The binding's UUID.
        id: Uuid,
        #[command(flatten)]
        fields: C,
    },
    /// Delete a binding (asks first; --yes to skip).
    #[command(after_help = "Example:\n  dcs bindings http delete 7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d --yes")]
    Delete {
        /// The binding's UUID.
        id: Uuid,
    },
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
    /// Sort fields, `-` for descending, e.g. `-createdAt`.
    #[arg(long, allow_hyphen_values = true)]
    sort: Option<String>,
    #[command(flatten)]
    page: output::PageArgs,
    /// With --json: print the secrets the service sent (app keys, passwords, shared secrets);
    /// without it they are printed as "***" (a listing ends up in logs and pipelines).
    #[arg(long)]
    reveal_secrets: bool,
    /// Write every binding the filters give (every page) to this CSV file, each device named
    /// where the device list knows it. Never with secrets (only whether one is stored).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["cursor", "reveal_secrets"])]
    csv: Option<std::path::PathBuf>,
}

#[derive(Args)]
#[command(
    after_help = "Secrets are never taken from the command line (shell history, `ps`): the app key comes from one \
line of standard input with --app-key-stdin, else from DCS_APP_KEY, else it is asked without echo on a terminal. \
On update, giving none keeps the stored key; a service that does not send it back leaves none to keep, and the update is refused.\n\nExample:\n  pass lora/meter-15 | dcs bindings lora create --device-id deveui:70b3d57ed0000001 \\\n      --application-server-id 0011223344556677 --app-key-stdin"
)]
pub struct LoraArgs {
    /// The device (any id form).
    #[arg(long)]
    device_id: String,
    /// 16 hex characters.
    #[arg(long)]
    application_server_id: String,
    /// Read the app key (32 hex characters) from one line of standard input.
    #[arg(long)]
    app_key_stdin: bool,
}

#[derive(Args)]
#[command(after_help = "The shared secret comes from one line of standard input with --shared-secret-stdin, else \
DCS_SHARED_SECRET, else it is asked without echo on a terminal; --generate-secret makes one and prints it once. On \
update, giving none keeps the stored secret; a service that does not send it back leaves none to keep, and the update is refused.\n\nExample:\n  dcs bindings http create --device-id imei:350000000000001 --type http-senml --generate-secret")]
pub struct HttpArgs {
    /// The device (any id form).
    #[arg(long)]
    device_id: String,
    /// http-streamline or http-senml.
    #[arg(long = "type")]
    binding_type: String,
    /// Read the shared secret from one line of standard input.
    #[arg(long, conflicts_with = "generate_secret")]
    shared_secret_stdin: bool,
    /// Make a shared secret that meets the rule, send it, and print it once.
    #[arg(long)]
    generate_secret: bool,
}

#[derive(Args)]
#[command(after_help = "The password comes from one line of standard input with --password-stdin, else \
DCS_MQTT_PASSWORD, else it is asked without echo on a terminal; --generate-password makes one that meets the rule and \
prints it once. On update, giving none keeps the stored password; a service that does not send it back leaves none to keep, and the update is refused.\n\nExample:\n  dcs bindings mqtt create --device-id imei:350000000000001 --generate-password")]
pub struct MqttArgs {
    /// The device (any id form).
    #[arg(long)]
    device_id: String,
    /// Read the password from one line of standard input.
    #[arg(long, conflicts_with = "generate_password")]
    password_stdin: bool,
    /// Make a password that meets the rule (24+ characters, all four classes), send it, and print it once.
    #[arg(long)]
    generate_password: bool,
}

/// Where a kind's secret comes from, in this order: standard input (when asked), a generated
/// one (when asked), the environment variable, a prompt without echo on a terminal. On an
/// update none of them keeps the stored secret.
pub struct SecretSource {
    /// As the service names the field, for errors.
    field: &'static str,
    /// For people, e.g. "app key".
    label: &'static str,
    env: &'static str,
    stdin_flag: &'static str,
    stdin: bool,
    /// The flag that makes one here, for kinds whose rule is known.
    generate_flag: Option<&'static str>,
    generate: bool,
}

/// What to send: a secret, or none to keep the stored one; and whether it was generated here.
pub struct SecretChoice {
    secret: Option<String>,
    generated: bool,
}

impl SecretSource {
    fn resolve(&self, kind: BindingKind, updating: bool) -> anyhow::Result<SecretChoice> {
        use std::io::{BufRead, IsTerminal};
        let typed = |s: String| SecretChoice { secret: Some(s), generated: false };
        if self.stdin {
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line)?;
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                return Err(invalid(
                    self.field,
                    format!("--{} read an empty line from standard input", self.stdin_flag),
                ));
            }
            return Ok(typed(line.to_owned()));
        }
        if self.generate {
            let made = bindings::generate_secret(kind).map_err(|e| invalid(&e.field, e.rule))?;
            return Ok(SecretChoice { secret: Some(made), generated: true });
        }
        if let Some(v) = std::env::var(self.env).ok().filter(|v| !v.is_empty()) {
            return Ok(typed(v));
        }
        if std::io::stdin().is_terminal() {
            let keep = if updating { " (empty keeps the stored one)" } else { "" };
            let v = rpassword::prompt_password(format!("The binding's {}{keep}: ", self.label))?;
            if !v.is_empty() {
                return Ok(typed(v));
            }
        }
        if updating {
            return Ok(SecretChoice { secret: None, generated: false });
        }
        Err(invalid(self.field, format!("is required: {}", self.where_from())))
    }

    /// Where a secret may come from, for a refusal that asks for one.
    fn where_from(&self) -> String {
        let generate = self.generate_flag.map(|f| format!(", or make one with --{f}")).unwrap_or_default();
        format!("pipe it with --{}, or set {}{generate} (never on the command line)", self.stdin_flag, self.env)
    }
}

/// How a kind's arguments become a request, and how its bindings print.
pub trait KindArgs: Args {
    type Spec: EditorKind<Request = Self::Req>;
    type Req;
    fn source(&self) -> SecretSource;
    /// The writable fields as the console's editors hold them (`secret` is filled in later).
    fn draft(&self) -> BindingDraft;
    fn headers() -> &'static [&'static str];
    fn row(b: &<Self::Spec as BindingSpec>::Binding) -> Vec<String>;
    fn api<'a>(ctx: &'a Ctx) -> KindBindings<'a, Self::Spec>;
}

impl KindArgs for LoraArgs {
    type Spec = dcs_api::bindings::Lora;
    type Req = LoraBindingRequest;
    fn source(&self) -> SecretSource {
        SecretSource {
            field: "appKey",
            label: "app key",
            env: "DCS_APP_KEY",
            stdin_flag: "app-key-stdin",
            stdin: self.app_key_stdin,
            generate_flag: None,
            generate: false,
        }
    }
    fn draft(&self) -> BindingDraft {
        BindingDraft {
            kind: BindingKind::Lora,
            device_id: self.device_id.clone(),
            application_server_id: Some(self.application_server_id.clone()),
            binding_type: None,
            secret: None,
        }
    }
    fn headers() -> &'static [&'static str] {
        &["ID", "DEVICE", "APPLICATION SERVER", "STATUS", "CREATED"]
    }
    fn row(b: &LoraBinding) -> Vec<String> {
        let status = b.status.as_ref().map(ToString::to_string);
        vec![
            b.id.to_string(),
            b.device_id.clone(),
            output::opt(&b.application_server_id),
            output::opt(&status),
            ts(&b.created_at),
        ]
    }
    fn api<'a>(ctx: &'a Ctx) -> KindBindings<'a, Self::Spec> {
        ctx.client.bindings().lora()
    }
}

impl KindArgs for HttpArgs {
    type Spec = dcs_api::bindings::Http;
    type Req = HttpBindingRequest;
    fn source(&self) -> SecretSource {
        SecretSource {
            field: "sharedSecret",
            label: "shared secret",
            env: "DCS_SHARED_SECRET",
            stdin_flag: "shared-secret-stdin",
            stdin: self.shared_secret_stdin,
            generate_flag: Some("generate-secret"),
            generate: self.generate_secret,
        }
    }
    fn draft(&self) -> BindingDraft {
        BindingDraft {
            kind: BindingKind::Http,
            device_id: self.device_id.clone(),
            application_server_id: None,
            binding_type: Some(self.binding_type.clone()),
            secret: None,
        }
    }
    fn headers() -> &'static [&'static str] {
        &["ID", "DEVICE", "TYPE", "CREATED"]
    }
    fn row(b: &HttpBinding) -> Vec<String> {
        let binding_type = b.binding_type.as_ref().map(ToString::to_string);
        vec![b.id.to_string(), b.device_id.clone(), output::opt(&binding_type), ts(&b.created_at)]
    }
    fn api<'a>(ctx: &'a Ctx) -> KindBindings<'a, Self::Spec> {
        ctx.client.bindings().http()
    }
}

impl KindArgs for MqttArgs {
    type Spec = dcs_api::bindings::Mqtt;
    type Req = MqttBindingRequest;
    fn source(&self) -> SecretSource {
        SecretSource {
            field: "password",
            label: "password",
            env: "DCS_MQTT_PASSWORD",
            stdin_flag: "password-stdin",
            stdin: self.password_stdin,
            generate_flag: Some("generate-password"),
            generate: self.generate_password,
        }
    }
    fn draft(&self) -> BindingDraft {
        BindingDraft {
            kind: BindingKind::Mqtt,
            device_id: self.device_id.clone(),
            application_server_id: None,
            binding_type: None,
            secret: None,
        }
    }
    fn headers() -> &'static [&'static str] {
        &["ID", "DEVICE", "USERNAME", "CREATED"]
    }
    fn row(b: &MqttBinding) -> Vec<String> {
        vec![b.id.to_string(), b.device_id.clone(), output::opt(&b.username), ts(&b.created_at)]
    }
    fn api<'a>(ctx: &'a Ctx) -> KindBindings<'a, Self::Spec> {
        ctx.client.bindings().mqtt()
    }
}

/// A binding as JSON with the secrets it carries (`appKey`, `password`, `sharedSecret`) as `***`.
fn masked_secrets<B: Serialize>(b: &B) -> serde_json::Value {
    let mut v = serde_json::to_value(b).unwrap_or(serde_json::Value::Null);
    if let Some(obj) = v.as_object_mut() {
        for field in ["appKey", "password", "sharedSecret"] {
            if let Some(secret) = obj.get_mut(field).filter(|s| !s.is_null()) {
                *secret = serde_json::Value::String("***".into());
            }
        }
    }
    v
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
            if let Some(path) = &a.csv {
                let t = a.time.filter();
                let rfc = |v: Option<time::OffsetDateTime>| {
                    v.and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
                };
                let req = bindings::BindingPageRequest {
                    next: None,
                    sort: a.sort.clone(),
                    client_id: a.client_id_filter.map(|c| c.to_string()),
                    device_id: a.device_id.clone(),
                    created_before: rfc(t.created_before),
                    created_since: rfc(t.created_since),
                    modified_before: rfc(t.modified_before),
                    modified_since: rfc(t.modified_since),
                    binding_type: a.binding_type.clone(),
                    username: a.username.clone(),
                    limit: a.page.limit,
                };
                let names = crate::downlinks::device_names(ctx).await;
                let n = bindings::export_csv(&ctx.client, C::Spec::KIND, &req, &names, path).await?;
                return crate::downlinks::wrote(ctx, n, path);
            }
            let filter = BindingFilter {
                client_id: a.client_id_filter,
                device_id: a.device_id,
                time: a.time.filter(),
                binding_type: a.binding_type.as_deref().map(HttpBindingType::from),
                username: a.username,
                sort: a.sort,
                limit: a.page.limit,
            };
            let listing = output::fetch_list(&ctx.client, &a.page, C::Spec::KIND.path(), api.page(&filter)).await?;
            if ctx.json && !a.reveal_secrets {
                let masked = listing.map_items(|items| items.iter().map(masked_secrets).collect());
                return output::print_listing(&masked, true, |_| {});
            }
            output::print_listing(&listing, ctx.json, |items| {
                output::table(C::headers(), items.iter().map(C::row).collect())
            })
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
        BindingCommand::Create(args) => {
            let source = args.source();
            let choice = source.resolve(C::Spec::KIND, false)?;
            let secret = choice.secret.clone().unwrap_or_default();
            let made = api.create(&C::Spec::request(&args.draft(), secret)).await?;
            print_saved(ctx, &made, &source, &choice, C::headers(), C::row)
        }
        BindingCommand::Update { id, fields } => {
            let source = fields.source();
            let choice = source.resolve(C::Spec::KIND, true)?;
            let draft = fields.draft();
            // A full PUT starts from the binding as read: the stored secret when none is given,
            // and the members this version does not know, sent back unchanged.
            let current = api.get(id).await?;
            let secret = match &choice.secret {
                Some(s) => s.clone(),
                // A service that does not send secrets back leaves nothing to keep: the refusal
                // says how to give one (and nothing was sent).
                None => {
                    let kept = bindings::merge_secret(None, C::Spec::secret(&current), source.field).map_err(|e| {
                        invalid(
                            &e.field,
                            format!(
                                "the service did not send the stored {} back, so it cannot be kept: {}",
                                source.label,
                                source.where_from()
                            ),
                        )
                    })?;
                    eprintln!("dcs: kept the stored {}", source.label);
                    kept
                }
            };
            let mut req = C::Spec::request(&draft, secret);
            C::Spec::carry_unknown_members(&current, &mut req);
            let updated = api.update(id, &req).await?;
            print_saved(ctx, &updated, &source, &choice, C::headers(), C::row)
        }
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

/// Prints a created or replaced binding; a secret generated here is printed once as well (in
/// `--json`, as the binding's secret field when the service did not send it back).
fn print_saved<B: Serialize>(
    ctx: &Ctx,
    b: &B,
    source: &SecretSource,
    choice: &SecretChoice,
    headers: &[&str],
    row: fn(&B) -> Vec<String>,
) -> anyhow::Result<()> {
    let generated = choice.secret.as_deref().filter(|_| choice.generated);
    if ctx.json {
        let mut v = serde_json::to_value(b)?;
        if let (Some(g), Some(obj)) = (generated, v.as_object_mut()) {
            obj.entry(source.field).or_insert_with(|| serde_json::Value::String(g.to_owned()));
        }
        return output::print_json(&v);
    }
    output::table(headers, vec![row(b)]);
    if let Some(g) = generated {
        println!("generated {} (shown once; configure the device with it): {g}", source.label);
    }
    Ok(())
}

fn lora_synced(b: &LoraBinding) -> anyhow::Result<()> {
    output::table(LoraArgs::headers(), vec![LoraArgs::row(b)]);
    Ok(())
}
