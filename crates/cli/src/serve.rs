//! `dcs serve`: the runner, a front end over `dcs_console::runner` (which steps rollouts through
//! the same use cases as the app and `dcs rollout watch`). This file only turns flags into its
//! options, connects the scopes and turns SIGTERM and Ctrl-C into a stop between two steps.

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, ValueEnum};
use dcs_console::fleet::rollout::{Driver, DriverKind};
use dcs_console::fleet::service::FleetService;
use dcs_console::fleet::EmbeddedBy;
use dcs_console::runner::{self, Target};
use tokio_util::sync::CancellationToken;

use crate::fleet::DbArg;
use crate::{invalid, ServiceArgs};

#[derive(Args)]
#[command(after_help = "Examples:
  dcs serve --profile prod
  dcs serve --profile reseller --customer Acme --also-customer Globex --listen 127.0.0.1:9464
  dcs serve --profile prod --secret-file /etc/dcs-runner/prod.secret --log-format json

The API key's secret comes from --secret-file (a file only its owner may read), else
$CREDENTIALS_DIRECTORY/dcs-client-secret (systemd's LoadCredential=), else DCS_CLIENT_SECRET,
else the OS keychain; never from the command line. See docs/runner.md for the systemd unit
and the container.")]
pub struct ServeArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Serve this customer's scope too (repeat for more; --customer names the first).
    #[arg(long, value_name = "LABEL|UUID")]
    pub also_customer: Vec<String>,
    /// Where /healthz and /metrics answer: ADDRESS:PORT, or `off`.
    #[arg(long, default_value = "127.0.0.1:9464", value_name = "ADDRESS:PORT|off")]
    pub listen: String,
    /// Seconds between two rounds of refreshes and steps.
    #[arg(long, default_value_t = 5.0)]
    pub interval: f64,
    /// Seconds a lease on a rollout lasts unless renewed: how long another driver waits to take
    /// over a rollout after this runner dies (default 60; DCS_LEASE_SECONDS too).
    #[arg(long, value_name = "SECONDS")]
    pub lease_seconds: Option<f64>,
    /// How log lines are written on standard error.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// A file holding the API key's secret (one line; readable by its owner only).
    #[arg(long, value_name = "FILE")]
    pub secret_file: Option<std::path::PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

pub async fn run(args: ServeArgs, service: &ServiceArgs) -> anyhow::Result<()> {
    if !(args.interval.is_finite() && (0.2..=3600.0).contains(&args.interval)) {
        return Err(invalid("interval", format!("must be from 0.2 to 3600 seconds, got {}", args.interval)));
    }
    let listen: Option<SocketAddr> = match args.listen.trim() {
        "off" => None,
        a => Some(a.parse().map_err(|_| {
            invalid("listen", format!("`{a}` is not ADDRESS:PORT (for example 127.0.0.1:9464) or `off`"))
        })?),
    };
    let mut driver = Driver::new(DriverKind::Runner);
    if let Some(s) = args.lease_seconds {
        if !(s.is_finite() && (1.0..=3600.0).contains(&s)) {
            return Err(invalid("lease-seconds", format!("must be from 1 to 3600 seconds, got {s}")));
        }
        driver = driver.with_lease(Duration::from_secs_f64(s));
    }
    if let Some(file) = &args.secret_file {
        crate::set_secret_file(file.clone());
    }
    // The scopes: the profile as --customer says, then each --also-customer.
    let mut all = vec![service.customer.clone()];
    all.extend(args.also_customer.iter().cloned().map(Some));
    let mut targets = Vec::new();
    for customer in all {
        let args = ServiceArgs { customer, ..service.clone() };
        let ctx = crate::connect(&args, false, true).await?;
        if ctx.fleet_key.is_embedded(EmbeddedBy::Cli) {
            return Err(invalid(
                "profile",
                "the runner needs a service that outlives it: give --profile (a stored profile), not the built-in in-process simulator",
            ));
        }
        let label = match ctx.fleet_key.customer {
            Some(c) => {
                format!("{}/{}", ctx.profile_name, ctx.customer_names.get(&c).cloned().unwrap_or_else(|| c.to_string()))
            }
            None => ctx.profile_name.clone(),
        };
        targets.push(Target {
            label,
            client: ctx.client.clone(),
            profile: ctx.profile_name.clone(),
            set_target: ctx.set_target.clone(),
            acting: ctx.fleet_key.customer,
            key: ctx.fleet_key.clone(),
        });
    }
    let db = std::sync::Arc::new(crate::fleet::open_db(&args.db)?);
    let fleet = std::sync::Arc::new(FleetService::with_driver(db, driver));
    let stop = CancellationToken::new();
    spawn_stop_on_signals(stop.clone());
    let options = runner::Options { interval: Duration::from_secs_f64(args.interval), listen };
    Ok(runner::serve(fleet, targets, options, stop).await?)
}

/// SIGTERM (systemd, a container's stop) and Ctrl-C end the runner between two steps.
fn spawn_stop_on_signals(stop: CancellationToken) {
    tokio::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let mut term = match signal(SignalKind::terminate()) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "SIGTERM cannot be caught; Ctrl-C still stops the runner");
                    let _ = tokio::signal::ctrl_c().await;
                    stop.cancel();
                    return;
                }
            };
            tokio::select! {
                _ = term.recv() => tracing::info!("SIGTERM: stopping after the step under way"),
                _ = tokio::signal::ctrl_c() => tracing::info!("interrupted: stopping after the step under way"),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        stop.cancel();
    });
}
