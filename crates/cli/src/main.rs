//! `dcs`: the command-line client of the Device Connectivity Service, on the same core as the
//! desktop app. With no service configured it talks to an in-process simulator.

mod output;

use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use dcs_api::firmware::ModuleFilter;
use dcs_api::{Client, ClientConfig, Secret};
use futures::TryStreamExt;
use uuid::Uuid;

#[derive(Parser)]
#[command(name = "dcs", version, about = "Command-line client of the Device Connectivity Service")]
#[command(after_help = "Examples:\n  \
    dcs firmware modules list                     # against an in-process simulator\n  \
    dcs sim --port 8080 --seed 7                  # run the simulator for other tools\n  \
    DCS_CLIENT_SECRET=... dcs --base-url http://127.0.0.1:8080 --client-id sim-reseller firmware modules list --json")]
struct Cli {
    #[command(flatten)]
    service: ServiceArgs,
    /// Print machine-readable JSON on stdout (errors go to stderr as JSON too).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

/// Which service to talk to. With no --base-url, an in-process simulator is started.
#[derive(Args)]
struct ServiceArgs {
    /// Base address of the service ({base_url}).
    #[arg(long, env = "DCS_BASE_URL", global = true)]
    base_url: Option<String>,
    /// Address of the identity platform ({auth_url}); defaults to the base address.
    #[arg(long, env = "DCS_AUTH_URL", global = true)]
    auth_url: Option<String>,
    /// API key id.
    #[arg(long, env = "DCS_CLIENT_ID", global = true)]
    client_id: Option<String>,
    /// Act for this customer (reseller security context), by UUID.
    #[arg(long, global = true)]
    customer: Option<Uuid>,
}

#[derive(Subcommand)]
enum Command {
    /// Firmware modules, packages, files and states.
    Firmware {
        #[command(subcommand)]
        command: FirmwareCommand,
    },
    /// Run the simulator of the service until interrupted.
    Sim(SimArgs),
}

#[derive(Subcommand)]
enum FirmwareCommand {
    /// Firmware modules.
    Modules {
        #[command(subcommand)]
        command: ModulesCommand,
    },
}

#[derive(Subcommand)]
enum ModulesCommand {
    /// List every module, following pages.
    List {
        /// Only modules of this device specification.
        #[arg(long)]
        device_specification_id: Option<Uuid>,
        /// Only modules whose device specification this client owns.
        #[arg(long)]
        client_id_filter: Option<Uuid>,
        /// Sort fields, `-` for descending, e.g. `-createdAt,name`.
        #[arg(long)]
        sort: Option<String>,
        /// Page size used while fetching.
        #[arg(long)]
        limit: Option<u32>,
    },
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
    /// the same file loses nothing. Without it the state lives in memory.
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
}

#[derive(Subcommand)]
enum SimCommand {
    /// Print the demo reseller's API key (id and secret) of the simulator with this seed.
    DemoKey {
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("DCS_LOG").unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let json = cli.json;
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => output::report_error(&e, json),
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Sim(args) => run_sim(args, cli.json).await,
        Command::Firmware { command: FirmwareCommand::Modules { command } } => {
            let (client, _sim) = connect(&cli.service).await?;
            match command {
                ModulesCommand::List { device_specification_id, client_id_filter, sort, limit } => {
                    let filter =
                        ModuleFilter { device_specification_id, client_id: client_id_filter, sort, limit };
                    let modules: Vec<_> = client.firmware().modules(&filter)?.try_collect().await?;
                    output::modules(&modules, cli.json)
                }
            }
        }
    }
}

/// A client for the configured service, or for a fresh in-process simulator when none is.
async fn connect(args: &ServiceArgs) -> anyhow::Result<(Client, Option<dcs_console::simulator::Embedded>)> {
    let Some(base) = &args.base_url else {
        let mut embedded = dcs_console::simulator::start(dcs_sim::SimOptions::default()).await?;
        if let Some(customer) = args.customer {
            let mut config = embedded.client.config().clone();
            config.customer = Some(customer);
            embedded.client = Client::new(config)?;
        }
        return Ok((embedded.client.clone(), Some(embedded)));
    };
    let client_id = args.client_id.as_deref().context("--client-id (or DCS_CLIENT_ID) is required with --base-url")?;
    let secret = std::env::var("DCS_CLIENT_SECRET")
        .context("DCS_CLIENT_SECRET must hold the API key's secret when --base-url is given")?;
    let mut config = ClientConfig::new(base, args.auth_url.as_deref().unwrap_or(base), client_id, Secret::new(secret))?;
    config.customer = args.customer;
    Ok((Client::new(config)?, None))
}

async fn run_sim(args: SimArgs, json: bool) -> anyhow::Result<()> {
    if let Some(SimCommand::DemoKey { seed }) = args.command {
        let key = dcs_sim::seed::demo_reseller_key(seed);
        if json {
            println!("{}", serde_json::json!({ "clientId": key.key_id, "clientSecret": key.secret, "tenant": key.client_id }));
        } else {
            println!("client id: {}\nsecret:    {}\ntenant:    {}", key.key_id, key.secret, key.client_id);
        }
        return Ok(());
    }
    if !(args.speed > 0.0 && args.speed.is_finite()) {
        anyhow::bail!("--speed: must be a positive number (got {})", args.speed);
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
    };
    opts.faults.check().map_err(|e| anyhow::anyhow!("--{}", e.replace("Rate", "-rate").replace("rateLimit", "rate-limit")))?;
    let sim = dcs_sim::Simulator::new(opts)?;
    let running = sim.spawn(SocketAddr::new(args.host, args.port)).await?;
    let key = sim.demo_key();
    println!("Simulator of the Device Connectivity Service listening on {}", running.base_url());
    println!("  base URL and auth URL: {}", running.base_url());
    println!("  demo reseller API key: client id `{}`", key.key_id);
    println!("  its secret:            {}", key.secret);
    println!("  control endpoints:     {0}/_sim/info, /_sim/reset, /_sim/clock, /_sim/faults", running.base_url());
    println!("  per-request faults:    header X-Sim-Fault: latency=<ms>, status=<code>, drop, token-lifetime=<s>");
    println!("  (a simulator credential for local use only; press Ctrl-C to stop)");
    tokio::signal::ctrl_c().await?;
    running.shutdown().await;
    Ok(())
}
