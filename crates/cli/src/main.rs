//! `dcs`: the command-line client of the Device Connectivity Service, on the same core as the
//! desktop app. With no service configured it talks to an in-process simulator.

mod audit;
mod bindings;
mod downlinks;
mod firmware;
mod fleet;
mod output;
mod profiles;
mod prompt;
mod serve;

use std::io::IsTerminal;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use dcs_api::beta::BetaDeviceQuery;
use dcs_api::{Client, Secret, TimeFilter};
use dcs_console::fleet::{EmbeddedBy, ScopeKey};
use dcs_console::session::{self, Acting, Session};
use dcs_console::{Config, ConfigStore, Profile, SIMULATOR_PROFILE};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use uuid::Uuid;

#[derive(Parser)]
#[command(name = "dcs", version, about = "Command-line client of the Device Connectivity Service")]
#[command(after_help = "Examples:\n  \
    dcs firmware modules list                     # the default profile, else an in-process simulator\n  \
    dcs profile add prod --base-url https://dcs.example --client-id my-key --customer 'Northwind=<uuid>'\n  \
    dcs --profile prod --customer Northwind firmware packages list\n  \
    dcs sim --port 8080 --seed 7                  # run the simulator for other tools\n  \
    DCS_CLIENT_SECRET=... dcs --base-url http://127.0.0.1:8080 --client-id sim-reseller firmware modules list --json\n  \
    dcs completions bash > ~/.local/share/bash-completion/completions/dcs")]
struct Cli {
    #[command(flatten)]
    service: ServiceArgs,
    /// Print machine-readable JSON on stdout (errors go to stderr as JSON too).
    #[arg(long, global = true, help_heading = GLOBAL)]
    json: bool,
    /// Answer yes to confirmations (needed for destructive commands when stdin is not a terminal).
    #[arg(long, short = 'y', global = true, help_heading = GLOBAL)]
    yes: bool,
    #[command(subcommand)]
    command: Command,
}

/// The heading of the options every command takes, below each command's own.
const GLOBAL: &str = "Global options";

/// The ids of the options that choose the service and who to act for ([`ServiceArgs`]).
const SERVICE_OPTIONS: [&str; 6] = ["base_url", "auth_url", "client_id", "profile", "customer", "x_client_id"];

/// Global options that mean nothing for a command (its path of subcommand names): hidden from
/// its help and refused on its command line. `dcs sim` talks to no service and confirms
/// nothing (its --json still shapes `demo-key` and errors); `dcs completions` only prints a script.
fn not_applying(path: &[&str]) -> &'static [&'static str] {
    match path {
        ["sim", ..] | ["open"] | ["diagnostics"] => {
            &["base_url", "auth_url", "client_id", "profile", "customer", "x_client_id", "yes"]
        }
        // Its own --customer filters the records.
        ["audit", ..] => &["base_url", "auth_url", "client_id", "profile", "x_client_id", "yes"],
        ["completions"] => &["base_url", "auth_url", "client_id", "profile", "customer", "x_client_id", "yes", "json"],
        _ => &[],
    }
}

/// The command line of `dcs`: the derived one, with the global options a command does not use
/// hidden from its help. clap hands a global option down to a subcommand only when it has no
/// option of that id, so such a command gets a hidden copy of its own (still global, so its
/// subcommands get it too) that keeps accepting it, for [`refuse_not_applying`] to name.
fn cli_command() -> clap::Command {
    let cmd = Cli::command();
    let globals: Vec<clap::Arg> = cmd.get_arguments().filter(|a| a.is_global_set()).cloned().collect();
    let names: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_owned()).collect();
    names.into_iter().fold(cmd, |cmd, name| {
        let ids = not_applying(&[name.as_str()]);
        if ids.is_empty() {
            return cmd;
        }
        cmd.mut_subcommand(name, |sub| {
            let hidden = globals.iter().filter(|a| ids.contains(&a.get_id().as_str())).map(|a| a.clone().hide(true));
            sub.args(hidden)
        })
    })
}

/// Refuses a global option given on the command line (not from the environment, which stays
/// harmless) to a command it means nothing for.
fn refuse_not_applying(matches: &clap::ArgMatches) -> anyhow::Result<()> {
    let mut path = Vec::new();
    let mut m = matches;
    while let Some((name, sub)) = m.subcommand() {
        path.push(name);
        m = sub;
        let ids = not_applying(&path);
        for id in ids {
            if m.value_source(id) == Some(clap::parser::ValueSource::CommandLine) {
                let flag = format!("--{}", id.replace('_', "-"));
                let what = if SERVICE_OPTIONS.contains(id) { "it talks to no service" } else { "it has no use for it" };
                return Err(invalid(&flag, format!("does not apply to `dcs {}`: {what}", path.join(" "))));
            }
        }
    }
    Ok(())
}

/// Which service to talk to: a stored profile (`dcs profile`), or one given here ad hoc. With
/// neither, the default profile, else an in-process simulator.
#[derive(Args, Clone)]
pub struct ServiceArgs {
    /// Base address of the service ({base_url}); overrides the profile's.
    #[arg(long, env = "DCS_BASE_URL", global = true, help_heading = GLOBAL)]
    pub base_url: Option<String>,
    /// Address of the identity platform ({auth_url}); defaults to the base address. Overrides the profile's.
    #[arg(long, env = "DCS_AUTH_URL", global = true, help_heading = GLOBAL)]
    pub auth_url: Option<String>,
    /// API key id; overrides the profile's. Its secret comes from DCS_CLIENT_SECRET, else the keychain.
    #[arg(long, env = "DCS_CLIENT_ID", global = true, help_heading = GLOBAL)]
    pub client_id: Option<String>,
    /// Stored profile to use (`dcs profile list`; `simulator` is the built-in one): its service, API
    /// key, customers and mode, with the secret from the OS keychain unless DCS_CLIENT_SECRET is set.
    #[arg(long, env = "DCS_PROFILE", global = true, help_heading = GLOBAL)]
    pub profile: Option<String>,
    /// Act for this customer (reseller security context): its UUID, or its label in the profile.
    #[arg(long, global = true, value_name = "LABEL|UUID", help_heading = GLOBAL)]
    pub customer: Option<String>,
    /// Deprecated sub-customer mode: send `x-client-id: <customer>` (after `dcs beta context-switch`).
    #[arg(long, global = true, conflicts_with = "customer", help_heading = GLOBAL)]
    pub x_client_id: Option<Uuid>,
}

#[derive(Subcommand)]
enum Command {
    /// Firmware modules, packages, files and states.
    Firmware {
        #[command(subcommand)]
        command: firmware::FirmwareCommand,
    },
    /// Downlinks: actuator-style, and per connection kind (http, lora, mqtt, sms, digitalmatter).
    Downlinks {
        #[command(subcommand)]
        command: downlinks::DownlinksCommand,
    },
    /// Connector bindings of devices (lora, http, mqtt).
    Bindings {
        #[command(subcommand)]
        command: bindings::BindingsCommand,
    },
    /// The fleet's firmware states in the local fleet database (shared with the app): scan,
    /// modules, overviews, the device table, history.
    Fleet {
        #[command(flatten)]
        db: fleet::DbArg,
        #[command(subcommand)]
        command: fleet::FleetCommand,
    },
    /// Firmware rollouts in waves with success and error thresholds, run from the fleet database.
    Rollout {
        #[command(flatten)]
        db: fleet::DbArg,
        #[command(subcommand)]
        command: fleet::RolloutCommand,
    },
    /// The deprecated beta API: device listing and the sub-customer context switch.
    Beta {
        #[command(subcommand)]
        command: BetaCommand,
    },
    /// Profiles: service, API key (secret in the OS keychain), customers; shared with the app.
    Profile {
        #[command(subcommand)]
        command: profiles::ProfileCommand,
    },
    /// Credentials.
    Auth {
        #[command(subcommand)]
        command: AuthCommand,
    },
    /// Print a shell completion script on stdout.
    #[command(after_help = "Example:\n  dcs completions zsh > ~/.zfunc/_dcs")]
    Completions {
        /// The shell: bash, elvish, fish, powershell or zsh.
        shell: clap_complete::Shell,
    },
    /// Open an item in the desktop app by its `dcs-console://<kind>/<id>` link (printed too);
    /// with --print, only print the link.
    #[command(
        after_help = "Kinds: device (any id form), rollout, module, package, downlink, binding.\n\nExamples:\n  \
        dcs open device imei:490154203237518\n  dcs open rollout 9d5f8a4e-6a3b-4f6c-8d7e-2b1a0c9f8e7d --print"
    )]
    Open {
        /// What the id names: device, rollout, module, package, downlink or binding.
        kind: String,
        /// The item's id (a device's in any of its forms).
        id: String,
        /// Only print the link; do not hand it to the desktop.
        #[arg(long)]
        print: bool,
    },
    /// Write a diagnostics bundle (a zip): the app's logs, versions, the profiles without any
    /// secret, the fleet database's figures. Attach it to a support request.
    #[command(after_help = "Example:\n  dcs diagnostics ~/dcs-diagnostics.zip")]
    Diagnostics {
        /// Where to write the bundle (replaced if it exists).
        file: std::path::PathBuf,
    },
    /// The audit log of this computer (shared with the app): every write made through `dcs` or
    /// the app with its outcome, hash-chained.
    Audit {
        #[command(subcommand)]
        command: audit::AuditCommand,
    },
    /// Run headless as a runner: refresh the fleet of the chosen profile (and customers) and
    /// move their rollouts on as the app does, with no window and no terminal; /healthz and
    /// /metrics (Prometheus) on a loopback address. One driver per rollout: with the app or other
    /// runners on the same fleet database, each rollout is moved on by one of them at a time.
    Serve(serve::ServeArgs),
    /// Run the simulator of the service until interrupted.
    #[command(after_help = "Example:\n  dcs sim --port 8080 --seed 7 --speed 60")]
    Sim(SimArgs),
}

#[derive(Subcommand)]
enum BetaCommand {
    /// Beta devices.
    Devices {
        #[command(subcommand)]
        command: BetaDevicesCommand,
    },
    /// Let this API key act for a customer in the deprecated `x-client-id` mode.
    #[command(after_help = "Example:\n  dcs beta context-switch 0f4c2a1e-7d0b-4c55-9a8e-3b1d2c4e5f60\n  \
        dcs --x-client-id 0f4c2a1e-7d0b-4c55-9a8e-3b1d2c4e5f60 beta devices list")]
    ContextSwitch {
        /// The customer's UUID.
        customer: Uuid,
    },
}

#[derive(Subcommand)]
enum BetaDevicesCommand {
    /// One page of devices (zero-based), or every page with --all.
    #[command(
        after_help = "Example:\n  dcs beta devices list --page-size 50 --search sensor --sort-by name --descending"
    )]
    List {
        /// Zero-based page number.
        #[arg(long)]
        page: Option<u32>,
        /// Devices per page (default 20).
        #[arg(long)]
        page_size: Option<u32>,
        /// Case-sensitive partial match.
        #[arg(long)]
        search: Option<String>,
        /// Sort field, e.g. `name`.
        #[arg(long)]
        sort_by: Option<String>,
        /// Sort in descending order.
        #[arg(long)]
        descending: bool,
        /// Fetch every page.
        #[arg(long, conflicts_with = "page")]
        all: bool,
    },
}

#[derive(Subcommand)]
enum AuthCommand {
    /// Fetch a token with the configured key; prints OK or the identity platform's refusal.
    #[command(
        after_help = "Example:\n  DCS_CLIENT_SECRET=... dcs --base-url https://dcs.example --client-id my-key auth check"
    )]
    Check,
    /// Store a profile's API key secret in the OS keychain, read from standard input (never
    /// from the command line, never written to a file).
    #[command(
        after_help = "Example:\n  dcs auth set-secret --profile prod        # then type or paste the secret\n  \
        dcs --profile prod --base-url https://dcs.example --client-id my-key auth check"
    )]
    SetSecret,
    /// Remove a profile's secret from the OS keychain.
    #[command(after_help = "Example:\n  dcs auth forget --profile prod")]
    Forget,
}

/// The four time filters of list operations, as RFC 3339 timestamps.
#[derive(Args, Clone, Default)]
pub struct TimeArgs {
    /// Only items created strictly before, e.g. 2024-05-01T00:00:00Z.
    #[arg(long, value_parser = parse_time)]
    created_before: Option<OffsetDateTime>,
    /// Only items created at or after.
    #[arg(long, value_parser = parse_time)]
    created_since: Option<OffsetDateTime>,
    /// Only items modified strictly before.
    #[arg(long, value_parser = parse_time)]
    modified_before: Option<OffsetDateTime>,
    /// Only items modified at or after.
    #[arg(long, value_parser = parse_time)]
    modified_since: Option<OffsetDateTime>,
}

impl TimeArgs {
    pub fn filter(&self) -> TimeFilter {
        TimeFilter {
            created_before: self.created_before,
            created_since: self.created_since,
            modified_before: self.modified_before,
            modified_since: self.modified_since,
        }
    }
}

pub fn parse_time(s: &str) -> Result<OffsetDateTime, String> {
    OffsetDateTime::parse(s, &Rfc3339)
        .map_err(|e| format!("must be an RFC 3339 timestamp such as 2024-05-01T00:00:00Z ({e})"))
}

/// An input error of the client's kind (exit code 2), raised by the CLI before any request.
pub fn invalid(field: &str, rule: impl Into<String>) -> anyhow::Error {
    dcs_api::Error::InvalidInput { field: field.to_owned(), rule: rule.into() }.into()
}

/// Parses a JSON argument, naming the field on failure.
pub fn json_arg(field: &str, s: &str) -> anyhow::Result<serde_json::Value> {
    serde_json::from_str(s).map_err(|e| invalid(field, format!("must be valid JSON ({e})")))
}

/// What one command runs with: the client, output mode, and who it acts for.
pub struct Ctx {
    pub client: Client,
    pub json: bool,
    pub yes: bool,
    /// "customer <label> (<uuid>)", "sub-customer <uuid> (x-client-id)" or "your own environment".
    pub scope: String,
    /// Where the fleet database files what this command sees: profile, service, customer.
    pub fleet_key: dcs_console::fleet::ScopeKey,
    /// The profile's customers by id, to name owners.
    pub customer_names: std::collections::BTreeMap<Uuid, String>,
    /// The profile's name and its set-target operation (none unless the profile has one).
    pub profile_name: String,
    pub set_target: Option<dcs_console::set_target::SetTarget>,
    _sim: Option<dcs_console::simulator::Embedded>,
}

impl Ctx {
    /// Asks before a destructive command (see [`prompt::confirm`]).
    pub fn confirm(&self, action: &str) -> anyhow::Result<()> {
        prompt::confirm(&format!("{action} in {}", self.scope), self.yes)
    }

    /// Whether progress bars and spinners may be drawn.
    pub fn interactive(&self) -> bool {
        !self.json && std::io::stdout().is_terminal() && std::io::stderr().is_terminal()
    }
}

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
struct SimArgs {
    #[command(subcommand)]
    command: Option<SimCommand>,
    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Address to bind; loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Seed of the demo data set.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Lifetime of issued tokens, in seconds.
    #[arg(long, default_value_t = 3600)]
    token_lifetime: u64,
    /// How much faster than real time simulated devices and downlinks move (60: a ten-minute
    /// update takes ten seconds).
    #[arg(long, default_value_t = dcs_sim::DEMO_SPEED)]
    speed: f64,
    /// Keep the state in this SQLite file (uploads beside it in FILE.files/); restarting with
    /// the same file loses nothing. Without it the state lives in a temporary file, removed on exit.
    #[arg(long, value_name = "FILE")]
    data: Option<std::path::PathBuf>,
    /// Devices of the reseller and of each customer in a new data set.
    #[arg(long, default_value_t = 1375)]
    devices_per_client: u32,
    /// Fault injection: milliseconds added to every answer.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Fault injection: share of requests (0 to 1) answered 500/502/503/504.
    #[arg(long, default_value_t = 0.0)]
    error_rate: f64,
    /// Fault injection: share of requests (0 to 1) whose connection is dropped.
    #[arg(long, default_value_t = 0.0)]
    drop_rate: f64,
    /// Fault injection: requests per second accepted; bursts above get 429 with Retry-After.
    #[arg(long)]
    rate_limit: Option<u32>,
    /// Which plausible service to play: `reference` (the A-n choices of
    /// docs/simulator-assumptions.md) or `alt` (their "A-n (alt)" flips).
    #[arg(long, default_value = "reference", value_parser = |s: &str| s.parse::<dcs_sim::Variant>())]
    variant: dcs_sim::Variant,
}

#[derive(Subcommand)]
enum SimCommand {
    /// Print the demo reseller's API key (id and secret) of the simulator with this seed, then
    /// every demo API key (the customers' own, the refusal keys) with its client.
    DemoKey {
        /// Seed of the simulator whose keys to print (as `dcs sim --seed`).
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    let matches = cli_command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    init_logging(&cli.command);
    let json = cli.json;
    if let Err(e) = refuse_not_applying(&matches) {
        return output::report_error(&e, json);
    }
    match run(cli, &matches).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => output::report_error(&e, json),
    }
}

/// Log lines on standard error, filtered by DCS_LOG: warnings only, but for the runner, whose
/// lines are its record (info, as JSON with `--log-format json`).
fn init_logging(command: &Command) {
    let (default, json) = match command {
        Command::Serve(a) => ("info", a.log_format == serve::LogFormat::Json),
        _ => ("warn", false),
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("DCS_LOG").unwrap_or_else(|_| default.into());
    let fmt = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json {
        fmt.json().flatten_event(true).with_current_span(false).init();
    } else {
        fmt.init();
    }
}

async fn run(cli: Cli, matches: &clap::ArgMatches) -> anyhow::Result<()> {
    let Cli { service, json, yes, command } = cli;
    match command {
        // The simulator keeps running when whoever read its banner goes away.
        Command::Sim(args) => return run_sim(args, json).await,
        Command::Serve(args) => return serve::run(args, &service).await,
        Command::Profile { command } => {
            quiet_on_closed_pipe();
            let leaf = matches.subcommand_matches("profile").and_then(|m| m.subcommand()).map(|(_, m)| m);
            return profiles::run(command, leaf, &service, json, yes).await;
        }
        Command::Auth { command: AuthCommand::SetSecret } => return set_secret(&service),
        Command::Auth { command: AuthCommand::Forget } => {
            let profile =
                service.profile.as_deref().context("--profile (or DCS_PROFILE) names the profile to forget")?;
            dcs_console::Keychain.delete_secret(profile)?;
            dcs_console::audit::note_secret(profile, "removed");
            eprintln!("dcs: the secret of profile `{profile}` is no longer in the keychain");
            return Ok(());
        }
        Command::Open { kind, id, print } => return open_link(&kind, &id, print, json),
        Command::Diagnostics { file } => return save_diagnostics(&file, json),
        Command::Audit { command } => {
            quiet_on_closed_pipe();
            return audit::run(command, json);
        }
        Command::Completions { shell } => {
            quiet_on_closed_pipe();
            clap_complete::generate(shell, &mut cli_command(), "dcs", &mut std::io::stdout());
            return Ok(());
        }
        _ => quiet_on_closed_pipe(),
    }
    let ctx = connect(&service, json, yes).await?;
    let acting_for = (ctx.scope != Acting::Yourself.describe()).then(|| ctx.scope.clone());
    let done = match command {
        Command::Firmware { command } => firmware::run(&ctx, command).await,
        Command::Downlinks { command } => downlinks::run(&ctx, command).await,
        Command::Bindings { command } => bindings::run(&ctx, command).await,
        Command::Fleet { db, command } => fleet::run(&ctx, &db, command).await,
        Command::Rollout { db, command } => fleet::run_rollout(&ctx, &db, command).await,
        Command::Beta { command } => run_beta(&ctx, command).await,
        Command::Auth { command: AuthCommand::Check } => {
            ctx.client.check_auth().await?;
            let c = ctx.client.config();
            if json {
                output::print_json(
                    &serde_json::json!({ "ok": true, "clientId": c.client_id, "authUrl": c.auth_url.as_str() }),
                )
            } else {
                println!("OK: API key `{}` got a token from {}", c.client_id, c.auth_url);
                Ok(())
            }
        }
        Command::Sim(_)
        | Command::Serve(_)
        | Command::Open { .. }
        | Command::Diagnostics { .. }
        | Command::Audit { .. }
        | Command::Completions { .. }
        | Command::Profile { .. }
        | Command::Auth { command: AuthCommand::SetSecret | AuthCommand::Forget } => unreachable!("handled above"),
    };
    done.map_err(|e| name_the_customer(e, acting_for.as_deref()))
}

/// `dcs open`: the item's link, checked, printed, and unless `print`, handed to the desktop
/// (which starts the app, or has the running one open it).
fn open_link(kind: &str, id: &str, print: bool, json: bool) -> anyhow::Result<()> {
    use dcs_console::links::{Link, LinkKind};
    let link = Link::new(LinkKind::parse(kind).map_err(dcs_api::Error::from)?, id).map_err(dcs_api::Error::from)?.url();
    if json {
        println!("{}", serde_json::json!({ "link": link, "opened": !print }));
    } else {
        println!("{link}");
    }
    if !print {
        open::that_detached(&link).with_context(|| {
            format!("the desktop could not open {link} (is the app installed, and a desktop session running?)")
        })?;
    }
    Ok(())
}

/// `dcs diagnostics`: the bundle of the console's data folder (the app's logs, the fleet
/// database's figures) and profiles file, as the app's Help > Save diagnostics writes it.
fn save_diagnostics(file: &std::path::Path, json: bool) -> anyhow::Result<()> {
    use dcs_console::diagnostics::{write_bundle, About};
    let config = ConfigStore::locate()?;
    let data = dcs_console::data_dir();
    let fleet = data
        .as_ref()
        .map(|d| d.join("fleet.sqlite"))
        .filter(|p| p.exists())
        .map(|p| dcs_console::fleet::FleetDb::open(&p))
        .transpose()?;
    let about = About {
        program: "dcs".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        profile: config.load().ok().and_then(|c| c.default_profile),
        base_url: None,
        acting_for: None,
    };
    let written = write_bundle(file, &about, &config, fleet.as_ref(), data.as_deref())?;
    if json {
        println!("{}", serde_json::to_string(&written)?);
    } else {
        println!("wrote {} ({} bytes): {}", written.path, written.bytes, written.entries.join(", "));
    }
    Ok(())
}

/// A refusal while acting for a customer says which, by label too (the console's rule): the
/// service's own message may name only the UUID, or nothing.
fn name_the_customer(e: anyhow::Error, acting_for: Option<&str>) -> anyhow::Error {
    match acting_for {
        Some(customer) => output::acting_for(e, customer),
        None => e,
    }
}

/// `dcs ... | head` ends quietly, as command-line tools do, instead of panicking on a closed
/// pipe. Not for `dcs sim`, which keeps running when whoever read its banner goes away.
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: restores the default action of a signal; no handler of ours is replaced.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

async fn run_beta(ctx: &Ctx, command: BetaCommand) -> anyhow::Result<()> {
    match command {
        BetaCommand::Devices {
            command: BetaDevicesCommand::List { page, page_size, search, sort_by, descending, all },
        } => {
            let query = BetaDeviceQuery {
                current_page: page,
                page_size,
                search,
                sort_by,
                descending: descending.then_some(true),
            };
            let (devices, footer) = if all {
                (ctx.client.beta().all_devices(&query).await?, None)
            } else {
                let p = ctx.client.beta().devices(&query).await?;
                let footer = format!(
                    "page {} of {} ({} devices in all){}",
                    p.number,
                    p.total_pages,
                    p.total_elements,
                    if p.last { String::new() } else { format!("; next: --page {}", p.number + 1) }
                );
                if ctx.json {
                    return output::print_json(&p);
                }
                (p.content, Some(footer))
            };
            if ctx.json {
                return output::print_json(&devices);
            }
            output::table(
                &["UUID", "NAME", "DEVICE SPECIFICATION", "BARCODE"],
                devices
                    .iter()
                    .map(|d| {
                        vec![
                            d.uuid.to_string(),
                            d.name.clone(),
                            d.device_specification_uuid.to_string(),
                            output::opt(&d.barcode),
                        ]
                    })
                    .collect(),
            );
            if let Some(f) = footer {
                eprintln!("{f}");
            }
            Ok(())
        }
        BetaCommand::ContextSwitch { customer } => {
            let switched = ctx.client.beta().context_switch(customer).await?;
            if ctx.json {
                return output::print_json(&switched);
            }
            // The answer's shape is not shown: a success grants the switch unless it says otherwise.
            let refused = dcs_api::model::beta::switch_refused(&switched);
            println!(
                "customer {customer}: {}",
                if refused { "not granted" } else { "granted; use --x-client-id with it" }
            );
            Ok(())
        }
    }
}

/// Name of a profile made of command-line options alone (`--base-url` without `--profile`).
const AD_HOC: &str = "(command line)";

/// The shared config file, or an empty one when the system has no config folder.
pub fn load_config() -> anyhow::Result<Config> {
    match ConfigStore::locate() {
        Ok(store) => Ok(store.load()?),
        Err(dcs_console::ConfigError::NoConfigDir) => Ok(Config::default()),
        Err(e) => Err(e.into()),
    }
}

/// The error for a profile name that is not stored: exit code 2, naming the ones that are.
pub fn unknown_profile(field: &str, name: &str, config: &Config) -> anyhow::Error {
    let known: Vec<&str> = config.profiles.iter().map(|p| p.name.as_str()).chain([SIMULATOR_PROFILE]).collect();
    invalid(field, format!("there is no profile `{name}` (profiles: {}; see `dcs profile list`)", known.join(", ")))
}

/// The file `dcs serve --secret-file` names, if given.
static SECRET_FILE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Takes the profile's secret from `file` from now on (`dcs serve --secret-file`).
pub fn set_secret_file(file: std::path::PathBuf) {
    let _ = SECRET_FILE.set(file);
}

/// The secret of a profile: from the file `--secret-file` names, else from systemd's
/// credentials (`$CREDENTIALS_DIRECTORY/dcs-client-secret`), else DCS_CLIENT_SECRET, else the OS
/// keychain. A file must be readable by its owner only.
pub fn secret_of(profile: &str) -> anyhow::Result<Secret> {
    if let Some(file) = SECRET_FILE.get() {
        return Ok(session::secret_from_file(file)?);
    }
    if let Some(dir) = std::env::var_os("CREDENTIALS_DIRECTORY") {
        let file = std::path::Path::new(&dir).join(session::CREDENTIAL_NAME);
        if file.exists() {
            return Ok(session::secret_from_file(&file)?);
        }
    }
    match std::env::var("DCS_CLIENT_SECRET") {
        Ok(s) => Ok(Secret::new(s)),
        Err(_) => Ok(session::stored_secret(profile)?),
    }
}

/// The built-in profile's simulator, in this process; `small` when only its profile is needed.
pub async fn embedded_simulator(small: bool) -> anyhow::Result<dcs_console::simulator::Embedded> {
    let opts = dcs_sim::SimOptions {
        devices_per_client: if small { 1 } else { dcs_sim::SimOptions::default().devices_per_client },
        variant: dcs_console::simulator::variant_from_env()?,
        ..Default::default()
    };
    Ok(dcs_console::simulator::start(opts).await?)
}

/// A client for the chosen profile (`--profile`, else ad hoc options, else the default profile,
/// else a fresh in-process simulator), acting for `--customer` as the profile's mode says.
pub async fn connect(args: &ServiceArgs, json: bool, yes: bool) -> anyhow::Result<Ctx> {
    let needs_config = match args.profile.as_deref() {
        Some(name) => name != SIMULATOR_PROFILE,
        None => args.base_url.is_none(),
    };
    let config = if needs_config { load_config()? } else { Config::default() };
    let name = match &args.profile {
        Some(name) => Some(name.clone()),
        None if args.base_url.is_none() => config.default_profile.clone(),
        None => None,
    };
    let (profile, base, secret, sim) = match name.as_deref() {
        None | Some(SIMULATOR_PROFILE) if args.base_url.is_none() => {
            let embedded = embedded_simulator(false).await?;
            let secret = Secret::new(embedded.sim.demo_key().secret);
            (embedded.profile.clone(), embedded.running.base_url(), secret, Some(embedded))
        }
        Some(SIMULATOR_PROFILE) => {
            return Err(invalid(
                "profile",
                "the built-in `simulator` profile runs in this process and takes no --base-url",
            ))
        }
        _ => {
            let mut profile = match name.as_deref() {
                Some(n) => match config.profile(n) {
                    Some(p) => p.clone(),
                    // Only a keychain secret under this name; the rest comes from the options.
                    None if args.base_url.is_some() => ad_hoc(n),
                    None => return Err(unknown_profile("profile", n, &config)),
                },
                None => ad_hoc(AD_HOC),
            };
            if let Some(url) = &args.base_url {
                profile.base_url = Some(url.clone());
            }
            if let Some(url) = &args.auth_url {
                profile.auth_url = Some(url.clone());
            }
            if let Some(id) = &args.client_id {
                profile.client_id = id.clone();
            }
            if profile.client_id.is_empty() {
                anyhow::bail!("--client-id (or DCS_CLIENT_ID) is required with --base-url");
            }
            let secret = match &name {
                Some(n) => secret_of(n)?,
                None => Secret::new(std::env::var("DCS_CLIENT_SECRET").map_err(|_| {
                    anyhow::anyhow!(
                        "the API key's secret is needed with --base-url: set DCS_CLIENT_SECRET, or use a profile (`dcs profile add`)"
                    )
                })?),
            };
            let base = profile.base_url.clone().context("the profile has no base URL")?;
            (profile, base, secret, None)
        }
    };
    let acting = match &args.customer {
        Some(c) => Acting::Customer(profile.resolve_customer(c).map_err(dcs_api::Error::from)?),
        None => Acting::Yourself,
    };
    let Session { profile, acting, client, base_url: base } = match args.x_client_id {
        // Deprecated and ad hoc, as before profiles: the header alone, no context switch.
        Some(customer) => {
            let mut config = session::client_config(&profile, &base, secret, &Acting::Yourself)?;
            config.x_client_id = Some(customer);
            Session { client: Client::new(config)?, profile, acting, base_url: base }
        }
        // As the app opens a session: the same headers and context switch, the same refusal.
        None => Session::open(profile, base, secret, acting).await?,
    };
    let scope = match args.x_client_id {
        Some(c) => format!("sub-customer {c} (x-client-id)"),
        None => acting.describe(),
    };
    // The in-process simulator listens on a new port every run and lives only as long as this
    // command: its scope is named by its seed, apart from the app's own simulator.
    let customer = args.x_client_id.or(acting.customer_id());
    let fleet_key = match &sim {
        Some(_) => ScopeKey::embedded(&profile.name, EmbeddedBy::Cli, dcs_sim::SimOptions::default().seed, customer),
        None => ScopeKey::new(&profile.name, &base, customer),
    };
    let customer_names = profile.customers.iter().map(|c| (c.id, c.label.clone())).collect();
    let (profile_name, set_target) = (profile.name.clone(), profile.set_target.clone());
    Ok(Ctx { client, json, yes, scope, fleet_key, customer_names, profile_name, set_target, _sim: sim })
}

/// A profile of command-line options alone: no customers, the default audience and mode, and
/// no set-target operation (only a stored profile can say how a service sets targets).
fn ad_hoc(name: &str) -> Profile {
    Profile { name: name.to_owned(), set_target: None, ..Profile::simulator("", Vec::new()) }
}

/// Reads a profile's secret from standard input (without echo on a terminal) into the keychain.
fn set_secret(args: &ServiceArgs) -> anyhow::Result<()> {
    let profile = args.profile.as_deref().context("--profile (or DCS_PROFILE) names the profile the secret is for")?;
    let secret = read_secret(profile)?;
    dcs_console::Keychain.set_secret(profile, &secret)?;
    dcs_console::audit::note_secret(profile, "stored");
    eprintln!("dcs: the secret of profile `{profile}` is in the OS keychain");
    Ok(())
}

/// Reads the API key secret of `profile`: typed without echo on a terminal, else one line of
/// standard input. Never from the command line, so it stays out of shell history and `ps`.
pub fn read_secret(profile: &str) -> anyhow::Result<Secret> {
    use std::io::BufRead;
    let secret = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!("Secret of the API key for profile `{profile}`: "))?
    } else {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        line
    };
    let secret = secret.trim_end_matches(['\r', '\n']);
    if secret.is_empty() {
        return Err(invalid("secret", "is empty; nothing was stored"));
    }
    Ok(Secret::new(secret))
}

async fn run_sim(args: SimArgs, json: bool) -> anyhow::Result<()> {
    if let Some(SimCommand::DemoKey { seed }) = args.command {
        // The reseller's key first and at the top level (scripts read `clientId` and
        // `clientSecret`), then every key of the demo data set with its client.
        let key = dcs_sim::seed::demo_reseller_key(seed);
        let keys = dcs_sim::seed::demo_keys(seed);
        if json {
            let all: Vec<_> = keys
                .iter()
                .map(|k| {
                    serde_json::json!({
                        "clientId": k.key.key_id, "clientSecret": k.key.secret, "tenant": k.key.client_id,
                        "clientName": k.client_name, "purpose": k.purpose,
                    })
                })
                .collect();
            println!(
                "{}",
                serde_json::json!({ "clientId": key.key_id, "clientSecret": key.secret, "tenant": key.client_id, "keys": all })
            );
        } else {
            println!("client id: {}\nsecret:    {}\ntenant:    {}", key.key_id, key.secret, key.client_id);
            println!("\nEvery API key of the simulator with seed {seed}:");
            output::table(
                &["CLIENT ID", "SECRET", "CLIENT", "TENANT", "FOR"],
                keys.iter()
                    .map(|k| {
                        vec![
                            k.key.key_id.clone(),
                            k.key.secret.clone(),
                            k.client_name.to_owned(),
                            k.key.client_id.to_string(),
                            k.purpose.to_owned(),
                        ]
                    })
                    .collect(),
            );
        }
        return Ok(());
    }
    let opts = dcs_sim::SimOptions {
        seed: args.seed,
        token_lifetime: Duration::from_secs(args.token_lifetime),
        speed: args.speed,
        data: args.data,
        devices_per_client: args.devices_per_client,
        faults: dcs_sim::faults::Faults {
            latency_ms: args.latency_ms,
            error_rate: args.error_rate,
            drop_rate: args.drop_rate,
            rate_limit: args.rate_limit,
        },
        variant: args.variant,
        ..Default::default()
    };
    // The simulator names a setting as in /_sim/info (`devicesPerClient`): here, its flag.
    opts.check().map_err(|e| {
        let (name, rule) = e.split_once(": ").unwrap_or(("", &e));
        let flag: String = name
            .chars()
            .flat_map(|c| if c.is_ascii_uppercase() { vec!['-', c.to_ascii_lowercase()] } else { vec![c] })
            .collect();
        dcs_api::Error::InvalidInput { field: format!("--{flag}"), rule: rule.to_owned() }
    })?;
    // Listened for before seeding, which takes a minute at a million states: a simulator
    // stopped by Ctrl-C, `kill` or a closed terminal leaves no temporary store behind.
    let mut stop = Stop::listen()?;
    let seeding = tokio::task::spawn_blocking(move || dcs_sim::Simulator::new(opts));
    let sim = tokio::select! {
        sim = seeding => sim??,
        signal = stop.next() => {
            // The seeding thread cannot be stopped: its files are removed under it, and the
            // process ends with the signal's conventional status.
            dcs_sim::store::remove_this_process_folders();
            eprintln!("dcs sim: stopped while seeding");
            std::process::exit(128 + signal);
        }
    };
    let running = sim.spawn(SocketAddr::new(args.host, args.port)).await?;
    if !args.host.is_loopback() {
        // Everything that guards this simulator is public: its demo keys and secrets follow
        // from the seed, and its control endpoints take no token.
        eprintln!(
            "WARNING: the simulator listens on {} and can be reached from other computers. Its demo API keys \
             and secrets follow from the seed ({}), which anyone can compute, and /_sim/reset, /_sim/clock and \
             /_sim/faults need no token: anyone who reaches this port can act as the demo reseller or wipe \
             the data. Use --host 127.0.0.1 unless this network is yours alone.",
            running.addr(),
            args.seed
        );
    }
    let key = sim.demo_key();
    // Written without panicking on a closed stdout: a parent that read the first line and
    // went away must not end the simulator.
    let banner = [
        format!("Simulator of the Device Connectivity Service listening on {}", running.base_url()),
        format!("  variant:               {} (docs/simulator-assumptions.md)", sim.variant()),
        format!("  base URL and auth URL: {}", running.base_url()),
        format!("  demo reseller API key: client id `{}`", key.key_id),
        format!("  its secret:            {}", key.secret),
        format!("  control endpoints:     {0}/_sim/info, /_sim/reset, /_sim/clock, /_sim/faults", running.base_url()),
        {
            let op = dcs_console::set_target::SetTarget::simulator_for(sim.variant());
            format!(
                "  a profile for it, with the simulator's set-target operation (for rollouts):\n    \
                 dcs profile add sim --base-url {} --client-id {} --set-target-method {} --set-target-path '{}' --set-target-body '{}'",
                running.base_url(),
                key.key_id,
                op.method,
                op.path,
                op.body
            )
        },
        "  per-request faults:    header X-Sim-Fault: latency=<ms>, status=<code>, drop, token-lifetime=<s>".to_owned(),
        "  (a simulator credential for local use only; press Ctrl-C to stop)".to_owned(),
    ];
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for line in banner {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
    }
    stop.next().await;
    running.shutdown().await;
    Ok(())
}

/// The signals that stop `dcs sim`: Ctrl-C, `kill`'s default, and a closed terminal.
struct Stop {
    #[cfg(unix)]
    signals: [tokio::signal::unix::Signal; 3],
}

impl Stop {
    fn listen() -> std::io::Result<Stop> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(Stop {
                signals: [
                    signal(SignalKind::interrupt())?,
                    signal(SignalKind::terminate())?,
                    signal(SignalKind::hangup())?,
                ],
            })
        }
        #[cfg(not(unix))]
        Ok(Stop {})
    }

    /// Waits for the first of them; returns its number.
    async fn next(&mut self) -> i32 {
        #[cfg(unix)]
        {
            let [int, term, hup] = &mut self.signals;
            tokio::select! {
                _ = int.recv() => libc::SIGINT,
                _ = term.recv() => libc::SIGTERM,
                _ = hup.recv() => libc::SIGHUP,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            2
        }
    }
}

#[cfg(test)]
mod help_tests {
    use super::*;

    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                out.push(format!("{path} --{}", arg.get_long().unwrap_or(id)));
            }
        }
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn every_option_of_every_command_is_described() {
        let mut cmd = cli_command();
        cmd.build();
        let mut undescribed = Vec::new();
        walk(&cmd, "dcs", &mut undescribed);
        assert!(undescribed.is_empty(), "options without a description:\n{}", undescribed.join("\n"));
    }

    /// The help `dcs ARGS... --help` prints.
    fn help(args: &[&str]) -> String {
        let e = cli_command()
            .try_get_matches_from(["dcs"].iter().chain(args).chain(&["--help"]))
            .expect_err("--help ends parsing");
        assert_eq!(e.kind(), clap::error::ErrorKind::DisplayHelp);
        e.to_string()
    }

    /// The long options listed in `help`, in order, each with the heading it is under.
    fn options(help: &str) -> Vec<(String, String)> {
        let mut heading = String::new();
        let mut out = Vec::new();
        for line in help.lines() {
            if !line.starts_with(' ') && line.ends_with(':') {
                heading = line.trim_end_matches(':').to_owned();
            } else if let Some(flag) = line.split_whitespace().find(|w| w.starts_with("--")) {
                if line.trim_start().starts_with('-') {
                    out.push((heading.clone(), flag.trim_end_matches(',').to_owned()));
                }
            }
        }
        out
    }

    #[test]
    fn global_options_have_their_own_heading_below_the_commands_own() {
        let listed = options(&help(&["firmware", "packages", "list"]));
        let heading_of = |flag: &str| listed.iter().find(|(_, f)| f == flag).map(|(h, _)| h.as_str());
        for own in ["--module-id", "--device-specification-id", "--sort", "--limit"] {
            assert_eq!(heading_of(own), Some("Options"), "{own} in {listed:?}");
        }
        for global in
            ["--profile", "--customer", "--base-url", "--auth-url", "--client-id", "--x-client-id", "--json", "--yes"]
        {
            assert_eq!(heading_of(global), Some("Global options"), "{global} in {listed:?}");
        }
        let first_global = listed.iter().position(|(h, _)| h == "Global options").unwrap();
        assert!(
            listed[first_global..].iter().all(|(h, _)| h == "Global options"),
            "own options come first: {listed:?}"
        );
        // The same at the top and in the deepest commands.
        for path in [&[][..], &["fleet", "devices"], &["downlinks", "lora", "create"]] {
            let listed = options(&help(path));
            assert!(listed.iter().any(|(h, f)| h == "Global options" && f == "--profile"), "dcs {path:?}: {listed:?}");
        }
    }

    #[test]
    fn sim_and_completions_show_no_service_options() {
        for path in [&["sim"][..], &["sim", "demo-key"], &["completions"]] {
            let listed = options(&help(path));
            for flag in ["--customer", "--client-id", "--base-url", "--auth-url", "--profile", "--x-client-id", "--yes"]
            {
                assert!(!listed.iter().any(|(_, f)| f == flag), "dcs {path:?} lists {flag}: {listed:?}");
            }
        }
        // --json still shapes `dcs sim demo-key` and the errors of `dcs sim`.
        assert!(options(&help(&["sim", "demo-key"])).contains(&("Global options".into(), "--json".into())));
        assert!(options(&help(&["sim"])).iter().any(|(_, f)| f == "--port"));
        // Elsewhere they stay.
        assert!(options(&help(&["profile", "list"])).iter().any(|(_, f)| f == "--profile"));
    }

    fn refusal(args: &[&str]) -> Option<String> {
        let m = cli_command().try_get_matches_from(["dcs"].iter().chain(args)).expect("parses");
        refuse_not_applying(&m).err().map(|e| e.to_string())
    }

    #[test]
    fn a_global_option_given_to_a_command_it_does_not_apply_to_is_refused_by_name() {
        let e = refusal(&["sim", "--customer", "x"]).expect("refused");
        assert!(e.contains("--customer") && e.contains("does not apply to `dcs sim`"), "{e}");
        // Before the command name too, and with its subcommand.
        let e = refusal(&["--profile", "prod", "sim", "demo-key"]).expect("refused");
        assert!(e.contains("--profile") && e.contains("does not apply to `dcs sim`"), "{e}");
        let e =
            refusal(&["sim", "demo-key", "--x-client-id", "0f4c2a1e-7d0b-4c55-9a8e-3b1d2c4e5f60"]).expect("refused");
        assert!(e.contains("--x-client-id"), "{e}");
        let e = refusal(&["sim", "--yes"]).expect("refused");
        assert!(e.contains("--yes"), "{e}");
        let e = refusal(&["completions", "bash", "--base-url", "http://x"]).expect("refused");
        assert!(e.contains("--base-url") && e.contains("`dcs completions`"), "{e}");
        // What applies is taken.
        assert_eq!(refusal(&["sim", "demo-key", "--json"]), None);
        assert_eq!(refusal(&["--customer", "Northwind", "firmware", "modules", "list"]), None);
        assert_eq!(refusal(&["completions", "bash"]), None);
    }
}
