//! `dcs firmware ...`: modules, packages, their files, and firmware states (section 4.1).

use std::path::PathBuf;

use clap::{ArgGroup, Subcommand, ValueEnum};
use dcs_api::files::{Transfer, UploadOptions};
use dcs_api::firmware::{Embed, ModuleFilter, NewPackage, PackageFilter, StateFilter};
use dcs_api::model::{DeviceId, FirmwarePackage, FirmwareState, UpdateStatus};
use futures::TryStreamExt;
use indicatif::{ProgressBar, ProgressStyle};
use time::OffsetDateTime;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::output::{self, opt, ts};
use crate::{invalid, parse_time, Ctx};

#[derive(Subcommand)]
pub enum FirmwareCommand {
    /// Firmware modules.
    Modules {
        #[command(subcommand)]
        command: ModulesCommand,
    },
    /// Firmware packages: one version of one module.
    Packages {
        #[command(subcommand)]
        command: PackagesCommand,
    },
    /// A package's firmware file and release notes: upload and download.
    Files {
        #[command(subcommand)]
        command: FilesCommand,
    },
    /// A package's release-notes file.
    ReleaseNotes {
        #[command(subcommand)]
        command: ReleaseNotesCommand,
    },
    /// Firmware states: one module on one device.
    States {
        #[command(subcommand)]
        command: StatesCommand,
    },
}

#[derive(Subcommand)]
pub enum ModulesCommand {
    /// List modules: every page, or one with --limit / --cursor.
    #[command(after_help = "Examples:\n  dcs firmware modules list --sort -createdAt,name --json\n  \
        dcs firmware modules list --limit 10          # one page, then the --cursor of the next")]
    List {
        /// Only modules of this device specification.
        #[arg(long)]
        device_specification_id: Option<Uuid>,
        /// Only modules whose device specification this client owns.
        #[arg(long)]
        client_id_filter: Option<Uuid>,
        /// Sort fields, `-` for descending, e.g. `-createdAt,name`.
        #[arg(long, allow_hyphen_values = true)]
        sort: Option<String>,
        #[command(flatten)]
        page: output::PageArgs,
    },
    /// One module: its fields (audit fields and members this version does not know included)
    /// and its packages. With --json: `{"module": ..., "packages": [...]}`.
    #[command(visible_alias = "show")]
    #[command(after_help = "Example:\n  dcs firmware modules get 3f0e8f4c-5b1a-4d2e-9c8b-7a6f5e4d3c2b")]
    Get {
        /// The module's UUID.
        id: Uuid,
    },
}

/// Related resources a package answer can embed.
#[derive(Clone, Copy, ValueEnum)]
pub enum EmbedArg {
    #[value(name = "module")]
    Module,
    #[value(name = "deviceSpecification")]
    DeviceSpecification,
}

fn embeds(e: &[EmbedArg]) -> Vec<Embed> {
    e.iter()
        .map(|e| match e {
            EmbedArg::Module => Embed::Module,
            EmbedArg::DeviceSpecification => Embed::DeviceSpecification,
        })
        .collect()
}

#[derive(Subcommand)]
pub enum PackagesCommand {
    /// List packages: every page, or one with --limit / --cursor.
    #[command(
        after_help = "Example:\n  dcs firmware packages list --module-id 3f0e8f4c-5b1a-4d2e-9c8b-7a6f5e4d3c2b --embed module --sort -createdAt"
    )]
    List {
        /// Only packages of this device specification (its UUID).
        #[arg(long)]
        device_specification_id: Option<Uuid>,
        /// Only packages (versions) of this module (its UUID).
        #[arg(long)]
        module_id: Option<Uuid>,
        /// Only packages of this client.
        #[arg(long)]
        client_id_filter: Option<Uuid>,
        /// Related resources to include: module, deviceSpecification (comma-separated).
        #[arg(long, value_delimiter = ',')]
        embed: Vec<EmbedArg>,
        /// Sort fields, `-` for descending, e.g. `-createdAt,firmwareVersion`.
        #[arg(long, allow_hyphen_values = true)]
        sort: Option<String>,
        #[command(flatten)]
        page: output::PageArgs,
    },
    /// One package.
    #[command(after_help = "Example:\n  dcs firmware packages get 9b2d... --embed module,deviceSpecification")]
    Get {
        /// The package's UUID.
        id: Uuid,
        /// Related resources to include: module, deviceSpecification (comma-separated).
        #[arg(long, value_delimiter = ',')]
        embed: Vec<EmbedArg>,
    },
    /// Create a package (a version of a module).
    #[command(
        after_help = "Example:\n  dcs firmware packages create --device-specification-id 5c1e... --module-id 3f0e... \\\n      --firmware-version 1.4.0 --description 'Fixes the sleep timer'"
    )]
    Create {
        /// The device specification the package is for (its UUID).
        #[arg(long)]
        device_specification_id: Uuid,
        /// The module the package is a version of (its UUID).
        #[arg(long)]
        module_id: Uuid,
        /// The version, e.g. 1.4.0.
        #[arg(long)]
        firmware_version: String,
        /// A description of the version for people, e.g. what it fixes.
        #[arg(long)]
        description: Option<String>,
    },
    /// Change a package's description (the only field that can change).
    #[command(group(ArgGroup::new("change").required(true).args(["description", "clear_description"])))]
    #[command(after_help = "Example:\n  dcs firmware packages update 9b2d... --description 'Fixes the sleep timer'")]
    Update {
        /// The package's UUID.
        id: Uuid,
        /// The new description.
        #[arg(long)]
        description: Option<String>,
        /// Remove the description.
        #[arg(long)]
        clear_description: bool,
    },
    /// Delete a package and its files (asks first; --yes to skip).
    #[command(after_help = "Example:\n  dcs firmware packages delete 9b2d... --yes")]
    Delete {
        /// The package's UUID.
        id: Uuid,
    },
}

#[derive(Subcommand)]
pub enum FilesCommand {
    /// Upload a package's firmware file (once per package), or its release notes.
    #[command(
        after_help = "Example:\n  dcs firmware files upload 9b2d... ./fw-1.4.0.bin\n  dcs firmware files upload 9b2d... ./NOTES.md --release-notes"
    )]
    Upload {
        /// The package's UUID.
        package: Uuid,
        /// The local file to upload.
        path: PathBuf,
        /// Upload the release-notes file instead of the firmware file.
        #[arg(long)]
        release_notes: bool,
        /// The file name the service stores (default: the file's own name).
        #[arg(long)]
        file_name: Option<String>,
        /// Content type (default: guessed from the extension).
        #[arg(long)]
        content_type: Option<String>,
    },
    /// Download a package's firmware file (or release notes) and print its SHA-256.
    #[command(after_help = "Example:\n  dcs firmware files download 9b2d... ./fw.bin")]
    Download {
        /// The package's UUID.
        package: Uuid,
        /// Where to write the downloaded file (replaced if it exists).
        path: PathBuf,
        /// Download the release-notes file instead of the firmware file.
        #[arg(long)]
        release_notes: bool,
    },
}

#[derive(Subcommand)]
pub enum ReleaseNotesCommand {
    /// Delete a package's release-notes file (asks first; --yes to skip).
    #[command(after_help = "Example:\n  dcs firmware release-notes delete 9b2d... --yes")]
    Delete {
        /// The package's UUID.
        package: Uuid,
    },
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant, reason = "parsed once from the command line")]
pub enum StatesCommand {
    /// List firmware states: every page, or one with --limit / --cursor. The reference documents
    /// only --client-id-filter: the other filters are sent to the service too (the simulator
    /// takes them, A-41), and when its answer shows it ignored one they are applied here (said
    /// on stderr; --filter-here applies them here without sending them).
    #[command(after_help = "Examples:\n  dcs firmware states list --module-id 3f0e... --status FAILED\n  \
        dcs firmware states list --limit 100 --cursor '<the next link printed before>'")]
    List(StatesListArgs),
    /// Set the version a device's module should update to, or --reset it (asks first).
    #[command(group(ArgGroup::new("target").required(true).args(["version", "reset"])))]
    #[command(after_help = "Examples:\n  dcs firmware states set-target deveui:70b3d57ed0000001 3f0e... 1.4.0\n  \
        dcs firmware states set-target imei:350000000000001 3f0e... --reset --yes")]
    SetTarget {
        /// The device, in any of the id forms (UUID, deveui:..., imei:..., ...).
        device_id: String,
        /// The firmware module's UUID.
        module_id: Uuid,
        /// A version with an uploaded firmware file.
        version: Option<String>,
        /// Clear the target version.
        #[arg(long)]
        reset: bool,
    },
}

#[derive(clap::Args)]
pub struct StatesListArgs {
    /// Only devices owned by this client.
    #[arg(long)]
    client_id_filter: Option<Uuid>,
    /// Only states of this module (its UUID).
    #[arg(long)]
    module_id: Option<Uuid>,
    /// A device in any id form.
    #[arg(long)]
    device_id: Option<String>,
    /// Only devices of this device specification (its UUID).
    #[arg(long)]
    device_specification_id: Option<Uuid>,
    /// Update status, e.g. PENDING, DOWNLOADING, INSTALLING, SUCCEEDED, FAILED.
    #[arg(long = "status")]
    firmware_update_status: Option<String>,
    /// Only devices running this firmware version, e.g. 1.3.0.
    #[arg(long)]
    current_firmware_version: Option<String>,
    /// Only devices whose target is this firmware version, e.g. 1.4.0.
    #[arg(long)]
    target_firmware_version: Option<String>,
    /// Only states created strictly before, e.g. 2024-05-01T00:00:00Z (RFC 3339).
    #[arg(long, value_parser = parse_time)]
    created_before: Option<OffsetDateTime>,
    /// Only states created at or after (RFC 3339).
    #[arg(long, value_parser = parse_time)]
    created_since: Option<OffsetDateTime>,
    /// Only states modified strictly before (RFC 3339).
    #[arg(long, value_parser = parse_time)]
    modified_before: Option<OffsetDateTime>,
    /// Only states modified at or after (RFC 3339).
    #[arg(long, value_parser = parse_time)]
    modified_since: Option<OffsetDateTime>,
    /// Sort fields, `-` for descending, e.g. `-modifiedAt`.
    #[arg(long, allow_hyphen_values = true)]
    sort: Option<String>,
    /// Send only the documented clientId; apply the other filters here.
    #[arg(long)]
    filter_here: bool,
    #[command(flatten)]
    page: output::PageArgs,
}

pub async fn run(ctx: &Ctx, command: FirmwareCommand) -> anyhow::Result<()> {
    let fw = ctx.client.firmware();
    match command {
        FirmwareCommand::Modules { command } => match command {
            ModulesCommand::List { device_specification_id, client_id_filter, sort, page } => {
                let filter =
                    ModuleFilter { device_specification_id, client_id: client_id_filter, sort, limit: page.limit };
                let listing =
                    output::fetch_list(&ctx.client, &page, "firmware/modules", fw.modules_page(&filter)).await?;
                output::print_listing(&listing, ctx.json, output::modules_table)
            }
            ModulesCommand::Get { id } => module_out(ctx, id).await,
        },
        FirmwareCommand::Packages { command } => match command {
            PackagesCommand::List { device_specification_id, module_id, client_id_filter, embed, sort, page } => {
                let filter = PackageFilter {
                    device_specification_id,
                    module_id,
                    client_id: client_id_filter,
                    embed: embeds(&embed),
                    sort,
                    limit: page.limit,
                };
                let listing =
                    output::fetch_list(&ctx.client, &page, "firmware/packages", fw.packages_page(&filter)).await?;
                output::print_listing(&listing, ctx.json, packages_table)
            }
            PackagesCommand::Get { id, embed } => package_out(&fw.package(id, &embeds(&embed)).await?, ctx.json),
            PackagesCommand::Create { device_specification_id, module_id, firmware_version, description } => {
                let mut new = NewPackage::new(device_specification_id, module_id, firmware_version);
                new.description = description;
                new.validate()?;
                package_out(&fw.create_package(&new).await?, ctx.json)
            }
            PackagesCommand::Update { id, description, clear_description: _ } => {
                package_out(&fw.update_package_description(id, description.as_deref()).await?, ctx.json)
            }
            PackagesCommand::Delete { id } => {
                ctx.confirm(&format!("Delete firmware package {id} and its files"))?;
                fw.delete_package(id).await?;
                done(ctx, &format!("deleted package {id}"), serde_json::json!({ "deleted": id }))
            }
        },
        FirmwareCommand::Files { command } => files(ctx, command).await,
        FirmwareCommand::ReleaseNotes { command: ReleaseNotesCommand::Delete { package } } => {
            ctx.confirm(&format!("Delete the release-notes file of package {package}"))?;
            fw.delete_release_notes(package).await?;
            done(
                ctx,
                &format!("deleted the release notes of package {package}"),
                serde_json::json!({ "deleted": package }),
            )
        }
        FirmwareCommand::States { command } => match command {
            StatesCommand::List(args) => states_list(ctx, args).await,
            StatesCommand::SetTarget { device_id, module_id, version, reset: _ } => {
                let device = DeviceId::parse(&device_id).map_err(|e| invalid("deviceId", e.to_string()))?;
                if let Some(v) = &version {
                    dcs_api::model::validate::firmware_version(v).map_err(|r| invalid("targetFirmwareVersion", r))?;
                }
                let what = match &version {
                    Some(v) => format!("Set the target firmware of module {module_id} on device {device_id} to {v}"),
                    None => format!("Reset the target firmware of module {module_id} on device {device_id}"),
                };
                let Some(op) = &ctx.set_target else {
                    return Err(invalid(
                        "setTarget",
                        format!(
                            "profile `{}` has no set-target operation (the service's API documentation does not describe one); add the one your service \
                             documents with `dcs profile edit NAME --set-target-method ... --set-target-path ... --set-target-body ...`",
                            ctx.profile_name
                        ),
                    ));
                };
                ctx.confirm(&what)?;
                let answer =
                    dcs_console::set_target::send(&ctx.client, op, &device, module_id, version.as_deref(), None)
                        .await?;
                match answer.state() {
                    Some(state) => states_out(&[state], ctx.json),
                    None if ctx.json => output::print_json(&answer.body),
                    None => {
                        println!("the service accepted the request; it answered: {}", answer.body);
                        Ok(())
                    }
                }
            }
        },
    }
}

/// A confirmation for people, or a small JSON object for scripts.
fn done(ctx: &Ctx, text: &str, json: serde_json::Value) -> anyhow::Result<()> {
    if ctx.json {
        output::print_json(&json)
    } else {
        println!("{text}");
        Ok(())
    }
}

/// A module with everything the service sent of it, and its packages.
async fn module_out(ctx: &Ctx, id: Uuid) -> anyhow::Result<()> {
    let fw = ctx.client.firmware();
    let m = fw.module(id).await?;
    let filter = PackageFilter { module_id: Some(id), ..Default::default() };
    let packages: Vec<FirmwarePackage> = fw.packages(&filter)?.try_collect().await?;
    // The module filter is not the client's to trust blindly: only this module's packages.
    let packages: Vec<FirmwarePackage> = packages.into_iter().filter(|p| p.module_id == id).collect();
    if ctx.json {
        return output::print_json(&serde_json::json!({ "module": m, "packages": packages }));
    }
    let mut pairs = vec![
        ("id", m.id.to_string()),
        ("name", m.name.clone()),
        ("firmware version attribute", m.firmware_version_attribute_name.clone()),
        ("device specification", m.device_specification_id.to_string()),
        ("client", opt(&m.client_id)),
        ("created", format!("{} by {}", ts(&m.created_at), opt(&m.created_by))),
        ("modified", format!("{} by {}", ts(&m.modified_at), opt(&m.modified_by))),
    ];
    let extra: Vec<(String, String)> = m.extra.iter().map(|(k, v)| (k.clone(), v.to_string())).collect();
    for (k, v) in &extra {
        pairs.push((k.as_str(), v.clone()));
    }
    output::fields(&pairs);
    println!();
    if packages.is_empty() {
        println!("no packages");
    } else {
        packages_table(&packages);
    }
    Ok(())
}

fn packages_table(packages: &[FirmwarePackage]) {
    output::table(
        &["ID", "VERSION", "MODULE", "FIRMWARE FILE", "RELEASE NOTES", "DESCRIPTION"],
        packages
            .iter()
            .map(|p| {
                vec![
                    p.id.to_string(),
                    p.firmware_version.clone(),
                    p.module_id.to_string(),
                    opt(&p.firmware_file_name),
                    opt(&p.release_notes_file_name),
                    opt(&p.description),
                ]
            })
            .collect(),
    );
}

fn package_out(p: &FirmwarePackage, json: bool) -> anyhow::Result<()> {
    if json {
        return output::print_json(p);
    }
    let mut pairs = vec![
        ("id", p.id.to_string()),
        ("firmware version", p.firmware_version.clone()),
        ("module", p.module_id.to_string()),
        ("device specification", p.device_specification_id.to_string()),
        ("client", opt(&p.client_id)),
        ("description", opt(&p.description)),
        ("firmware file", opt(&p.firmware_file_name)),
        ("release notes", opt(&p.release_notes_file_name)),
        ("created", format!("{} by {}", ts(&p.created_at), opt(&p.created_by))),
        ("modified", format!("{} by {}", ts(&p.modified_at), opt(&p.modified_by))),
    ];
    if let Some(e) = &p.embedded {
        if let Some(m) = &e.module {
            pairs.push(("module name", m.name.clone()));
        }
        if let Some(d) = &e.device_specification {
            pairs.push(("device spec (embedded)", serde_json::to_string(d)?));
        }
    }
    output::fields(&pairs);
    Ok(())
}

fn states_out(states: &[FirmwareState], json: bool) -> anyhow::Result<()> {
    if json {
        return output::print_json(states);
    }
    states_table(states);
    Ok(())
}

fn states_table(states: &[FirmwareState]) {
    output::table(
        &["DEVICE", "MODULE", "CURRENT", "TARGET", "STATUS", "STATUS CHANGED"],
        states
            .iter()
            .map(|s| {
                vec![
                    s.device_id.to_string(),
                    s.module_id.to_string(),
                    opt(&s.current_firmware_version),
                    opt(&s.target_firmware_version),
                    opt(&s.firmware_update_status),
                    ts(&s.firmware_update_status_modified_at),
                ]
            })
            .collect(),
    );
}

async fn states_list(ctx: &Ctx, a: StatesListArgs) -> anyhow::Result<()> {
    use dcs_console::listing;
    let fw = ctx.client.firmware();
    let filter = StateFilter {
        client_id: a.client_id_filter,
        module_id: a.module_id,
        device_id: a.device_id,
        device_specification_id: a.device_specification_id,
        firmware_update_status: a.firmware_update_status.as_deref().map(UpdateStatus::from),
        current_firmware_version: a.current_firmware_version,
        target_firmware_version: a.target_firmware_version,
        created_before: a.created_before,
        created_since: a.created_since,
        modified_before: a.modified_before,
        modified_since: a.modified_since,
        sort: a.sort,
        limit: a.page.limit,
    };
    let on_service = !a.filter_here;
    let sent = listing::state_request(&filter, on_service);
    let spinner =
        if ctx.interactive() && !a.page.one_page() { ProgressBar::new_spinner() } else { ProgressBar::hidden() };
    spinner.set_message("fetching firmware states");
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    let fetched = output::fetch_list(&ctx.client, &a.page, "firmware/states", fw.states_page(&sent)).await;
    spinner.finish_and_clear();
    let mut note = None;
    let listing = fetched?.map_items(|items| {
        let checked = listing::check_states(&filter, on_service, items);
        note = listing::describe_check(&checked);
        checked.items
    });
    if let Some(note) = note {
        eprintln!("dcs: {note}");
    }
    output::print_listing(&listing, ctx.json, states_table)
}

async fn files(ctx: &Ctx, command: FilesCommand) -> anyhow::Result<()> {
    let fw = ctx.client.firmware();
    let cancel = CancellationToken::new();
    let watcher = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        })
    };
    let bar = if ctx.interactive() { ProgressBar::new(0) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let transfer = {
        let bar = bar.clone();
        Transfer::default().with_cancel(cancel.clone()).with_progress(move |done, total| {
            if total != 0 {
                bar.set_length(total);
            }
            bar.set_position(done);
        })
    };
    let result = match command {
        FilesCommand::Upload { package, path, release_notes, file_name, content_type } => {
            bar.set_message(if release_notes { "uploading release notes" } else { "uploading" });
            if !release_notes && std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() == 0) {
                // The service does not say it refuses an empty file, so it is not refused here.
                eprintln!(
                    "warning: {} is empty (0 bytes); the service does not say it refuses one, but a device would get nothing to install",
                    path.display()
                );
            }
            let options = UploadOptions { file_name, content_type, ..Default::default() };
            let attrs = if release_notes {
                fw.upload_release_notes(package, &path, &options, &transfer).await
            } else {
                fw.upload_firmware_file(package, &path, &options, &transfer).await
            };
            bar.finish_and_clear();
            attrs.map_err(anyhow::Error::from).and_then(|attrs| {
                if ctx.json {
                    output::print_json(&attrs)
                } else {
                    println!("uploaded {} ({}) to package {package}", attrs.name, attrs.content_type);
                    Ok(())
                }
            })
        }
        FilesCommand::Download { package, path, release_notes } => {
            bar.set_message(if release_notes { "downloading release notes" } else { "downloading" });
            let got = if release_notes {
                fw.download_release_notes(package, &path, &transfer).await
            } else {
                fw.download_firmware_file(package, &path, &transfer).await
            };
            bar.finish_and_clear();
            got.map_err(anyhow::Error::from).and_then(|d| {
                if ctx.json {
                    output::print_json(&serde_json::json!({
                        "path": d.path, "size": d.size, "sha256": d.sha256,
                        "fileName": d.file_name, "contentType": d.content_type,
                    }))
                } else {
                    println!("{}  {}", d.sha256, d.path.display());
                    eprintln!(
                        "{} bytes{}",
                        d.size,
                        d.file_name.map(|n| format!(", stored as {n}")).unwrap_or_default()
                    );
                    Ok(())
                }
            })
        }
    };
    watcher.abort();
    result
}
