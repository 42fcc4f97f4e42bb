//! `dcs profile ...`: the profiles of the config file the app shares (`dcs_console::config`),
//! their secrets in the OS keychain, and testing one against its identity platform.

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, Subcommand};
use dcs_api::Secret;
use dcs_console::set_target::{self, SetTarget};
use dcs_console::{session, ConfigStore, Customer, FieldError, Keychain, Profile, SIMULATOR_PROFILE};
use serde::Serialize;
use uuid::Uuid;

use crate::{invalid, load_config, output, prompt, unknown_profile, ServiceArgs};

#[derive(Subcommand)]
pub enum ProfileCommand {
    /// Store a new profile; its API key secret is read from standard input into the OS keychain.
    #[command(after_help = "Example:\n  \
        dcs profile add prod --base-url https://dcs.example --client-id my-key \\\n      \
        --customer 'Northwind Utilities=0f4c2a1e-7d0b-4c55-9a8e-3b1d2c4e5f60' --default\n  \
        (then type or paste the secret; or pipe it: `pass dcs/prod | dcs profile add ...`)")]
    Add {
        /// The new profile's name (how --profile names it).
        name: String,
        #[command(flatten)]
        fields: Fields,
        /// Store no secret now (set it later with `dcs profile edit NAME --set-secret`).
        #[arg(long)]
        no_secret: bool,
    },
    /// Change what is given of a stored profile (its name stays).
    #[command(after_help = "Example:\n  \
        dcs profile edit prod --add-customer 'Contoso=7a1c...' --remove-customer Northwind\n  \
        dcs profile edit prod --set-secret        # then type or paste the new secret")]
    Edit {
        /// The profile's name.
        name: String,
        #[command(flatten)]
        fields: Fields,
        /// Add a customer, as LABEL=UUID (repeatable).
        #[arg(long, value_name = "LABEL=UUID")]
        add_customer: Vec<String>,
        /// Remove a customer, by label or UUID (repeatable).
        #[arg(long, value_name = "LABEL|UUID")]
        remove_customer: Vec<String>,
        /// Act for customers with the security-context header again (the mode's default).
        #[arg(long, conflicts_with = "deprecated_sub_customer_mode")]
        no_deprecated_sub_customer_mode: bool,
        /// Read a new secret from standard input into the OS keychain.
        #[arg(long)]
        set_secret: bool,
        /// Remove the set-target operation (rollouts become unavailable with this profile).
        #[arg(long, conflicts_with_all = ["set_target_method", "set_target_path", "set_target_body"])]
        no_set_target: bool,
    },
    /// The profiles, with the built-in simulator one; `*` marks the default.
    #[command(after_help = "Example:\n  dcs profile list --json")]
    List,
    /// Every field of a profile, its customers, and whether its secret is stored (never the secret).
    #[command(after_help = "Example:\n  dcs profile show prod")]
    Show {
        /// The profile's name.
        name: String,
    },
    /// Remove a profile and its secret from the OS keychain (asks first).
    #[command(after_help = "Example:\n  dcs profile remove prod --yes")]
    Remove {
        /// The profile's name.
        name: String,
    },
    /// Get a token with a profile's key; prints its type, lifetime, scopes and subject, never the token.
    #[command(after_help = "Example:\n  dcs profile test prod")]
    Test {
        /// The profile; default: --profile (DCS_PROFILE), else the default profile.
        name: Option<String>,
    },
    /// Try a profile's set-target operation on one device without changing anything: reads the
    /// device's state, sends the operation with the version it runs now as its target, reads the
    /// state again and prints what the service answered (asks first: it is a write).
    #[command(after_help = "Example:\n  \
        dcs profile test-set-target prod --device 3b1d2c4e-0f4c-4c55-9a8e-7d0b2a1e5f60 --module 9a8e3b1d-2c4e-4f60-8c55-0f4c2a1e7d0b\n  \
        dcs profile test-set-target prod --customer Northwind --device ... --module ... --yes")]
    TestSetTarget {
        /// The profile's name.
        name: String,
        /// The device's UUID (as firmware states name it).
        #[arg(long, value_name = "UUID")]
        device: String,
        /// The firmware module's UUID.
        #[arg(long, value_name = "UUID")]
        module: String,
    },
    /// Make a profile the default of commands without --profile (`simulator`: the built-in one).
    #[command(after_help = "Example:\n  dcs profile use prod\n  dcs profile use simulator")]
    Use {
        /// The profile's name, or `simulator`.
        name: String,
    },
}

/// The profile's fields as options. Their ids are those of the global options of the same
/// names, so clap keeps one option of each name; see [`given`].
#[derive(Args)]
pub struct Fields {
    /// Base address of the service ({base_url}).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Address of the identity platform ({auth_url}); the base address when not given.
    #[arg(long, value_name = "URL")]
    auth_url: Option<String>,
    /// The API key id.
    #[arg(long, value_name = "ID")]
    client_id: Option<String>,
    /// Application id tokens are requested for; default: the service's.
    #[arg(long)]
    audience: Option<String>,
    /// A customer the profile acts for as a reseller, as LABEL=UUID (repeatable; for `edit`, the
    /// whole new list).
    #[arg(long, value_name = "LABEL=UUID")]
    customer: Vec<String>,
    /// Deprecated: act for customers with a context switch and `x-client-id` instead of the
    /// security-context header.
    #[arg(long)]
    deprecated_sub_customer_mode: bool,
    /// Make it the default profile.
    #[arg(long)]
    default: bool,
    /// The service's set-target operation (rollouts need it; the reference does not show one):
    /// its method, PUT, POST or PATCH.
    #[arg(long, value_name = "METHOD")]
    set_target_method: Option<String>,
    /// The operation's path under the base URL, with {deviceId} and {moduleId}, e.g.
    /// '/firmware/states/{deviceId}/{moduleId}'.
    #[arg(long, value_name = "PATH")]
    set_target_path: Option<String>,
    /// The operation's JSON body, with {version} as a JSON value of its own (null to reset) and
    /// optionally {deviceId}, {moduleId}, {packageId}, e.g. '{"targetFirmwareVersion": {version}}'.
    #[arg(long, value_name = "JSON")]
    set_target_body: Option<String>,
}

impl Fields {
    /// Keeps only what was given on the command line: the global options of the same names
    /// would otherwise hand down values of DCS_BASE_URL, DCS_AUTH_URL and DCS_CLIENT_ID.
    fn given_only(mut self, m: Option<&ArgMatches>) -> Fields {
        let given = |id: &str| m.is_some_and(|m| m.value_source(id) == Some(ValueSource::CommandLine));
        if !given("base_url") {
            self.base_url = None;
        }
        if !given("auth_url") {
            self.auth_url = None;
        }
        if !given("client_id") {
            self.client_id = None;
        }
        if !given("customer") {
            self.customer.clear();
        }
        self
    }

    /// `existing` with the given set-target fields replacing its own (all three for a new one).
    fn set_target(&self, existing: Option<&SetTarget>) -> Option<SetTarget> {
        if self.set_target_method.is_none() && self.set_target_path.is_none() && self.set_target_body.is_none() {
            return existing.cloned();
        }
        let mut op = existing.cloned().unwrap_or_default();
        if let Some(m) = &self.set_target_method {
            op.method = m.trim().to_ascii_uppercase();
        }
        if let Some(p) = &self.set_target_path {
            op.path = p.trim().to_owned();
        }
        if let Some(b) = &self.set_target_body {
            op.body = b.trim().to_owned();
        }
        Some(op)
    }
}

pub async fn run(
    command: ProfileCommand,
    leaf: Option<&ArgMatches>,
    service: &ServiceArgs,
    json: bool,
    yes: bool,
) -> anyhow::Result<()> {
    match command {
        ProfileCommand::Add { name, fields, no_secret } => add(name, fields.given_only(leaf), no_secret, json),
        ProfileCommand::Edit {
            name,
            fields,
            add_customer,
            remove_customer,
            no_deprecated_sub_customer_mode,
            set_secret,
            no_set_target,
        } => {
            let edit = Edit {
                fields: fields.given_only(leaf),
                add_customer,
                remove_customer,
                no_deprecated_sub_customer_mode,
                set_secret,
                no_set_target,
            };
            self::edit(&name, edit, json)
        }
        ProfileCommand::List => list(json).await,
        ProfileCommand::Show { name } => show(&name, json).await,
        ProfileCommand::Remove { name } => remove(&name, json, yes),
        ProfileCommand::Test { name } => test(name.or_else(|| service.profile.clone()), json).await,
        ProfileCommand::TestSetTarget { name, device, module } => {
            test_set_target(&name, &device, &module, service, json, yes).await
        }
        ProfileCommand::Use { name } => use_profile(&name, json),
    }
}

fn store() -> anyhow::Result<ConfigStore> {
    Ok(ConfigStore::locate()?)
}

/// Every broken rule as one input error (exit code 2): "name: rule; baseUrl: rule".
fn refuse(errors: Vec<FieldError>) -> anyhow::Result<()> {
    let mut errors = errors.into_iter();
    let Some(first) = errors.next() else { return Ok(()) };
    let rest: Vec<String> = errors.map(|e| e.to_string()).collect();
    let rule = if rest.is_empty() { first.rule } else { format!("{}; {}", first.rule, rest.join("; ")) };
    Err(dcs_api::Error::InvalidInput { field: first.field, rule }.into())
}

/// `LABEL=UUID` as a customer; the label may hold `=`, the UUID cannot.
fn parse_customer(field: String, s: &str) -> Result<Customer, FieldError> {
    let Some((label, id)) = s.rsplit_once('=') else {
        return Err(FieldError {
            field,
            rule: format!("`{s}` must be LABEL=UUID, e.g. 'Northwind Utilities=0f4c2a1e-7d0b-4c55-9a8e-3b1d2c4e5f60'"),
        });
    };
    match Uuid::parse_str(id.trim()) {
        Ok(id) => Ok(Customer { id, label: label.trim().to_owned() }),
        Err(_) => Err(FieldError { field, rule: format!("`{}` is not a UUID (the form is LABEL=UUID)", id.trim()) }),
    }
}

/// Parses `--customer`-style values, collecting refusals.
fn parse_customers(flag: &str, values: &[String], errors: &mut Vec<FieldError>) -> Vec<Customer> {
    values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| parse_customer(format!("{flag}[{i}]"), v).map_err(|e| errors.push(e)).ok())
        .collect()
}

/// Stores the secret for `name`, then runs `save`; a failed save leaves the keychain as it was.
fn with_secret(name: &str, secret: &Secret, save: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<()> {
    Keychain.set_secret_then(name, secret, save)
}

fn add(name: String, f: Fields, no_secret: bool, json: bool) -> anyhow::Result<()> {
    let mut errors = Vec::new();
    let customers = parse_customers("customers", &f.customer, &mut errors);
    let set_target = f.set_target(None);
    let profile = Profile {
        name: name.clone(),
        base_url: f.base_url,
        auth_url: f.auth_url,
        client_id: f.client_id.unwrap_or_default(),
        audience: f.audience.unwrap_or_else(|| dcs_api::model::SERVICE_AUDIENCE.to_owned()),
        customers,
        deprecated_sub_customer_mode: f.deprecated_sub_customer_mode,
        set_target,
    };
    refuse(profile.check().into_iter().chain(errors).collect())?;
    let store = store()?;
    let mut config = store.load()?;
    if config.profile(&name).is_some() {
        return Err(invalid(
            "name",
            format!("a profile named `{name}` exists already (change it with `dcs profile edit {name}`)"),
        ));
    }
    config.put(profile, false)?;
    if f.default {
        config.set_default(&name)?;
    }
    let save = || Ok(store.save(&config)?);
    if no_secret {
        save()?;
    } else {
        with_secret(&name, &crate::read_secret(&name)?, save)?;
    }
    let stored = if no_secret { "no secret stored yet" } else { "its secret is in the OS keychain" };
    eprintln!("dcs: profile `{name}` added to {}; {stored}", store.path().display());
    finish(&name, json)
}

struct Edit {
    fields: Fields,
    add_customer: Vec<String>,
    remove_customer: Vec<String>,
    no_deprecated_sub_customer_mode: bool,
    set_secret: bool,
    no_set_target: bool,
}

fn edit(name: &str, e: Edit, json: bool) -> anyhow::Result<()> {
    if name == SIMULATOR_PROFILE {
        return Err(invalid("name", "the built-in `simulator` profile cannot be changed"));
    }
    let store = store()?;
    let mut config = store.load()?;
    let Some(mut profile) = config.profile(name).cloned() else { return Err(unknown_profile("name", name, &config)) };
    let stored = profile.clone();
    let f = e.fields;
    let set_target = if e.no_set_target { None } else { f.set_target(profile.set_target.as_ref()) };
    let mut errors = Vec::new();
    if let Some(url) = f.base_url {
        profile.base_url = Some(url);
    }
    if let Some(url) = f.auth_url {
        profile.auth_url = Some(url);
    }
    if let Some(id) = f.client_id {
        profile.client_id = id;
    }
    if let Some(audience) = f.audience {
        profile.audience = audience;
    }
    if !f.customer.is_empty() {
        profile.customers = parse_customers("customers", &f.customer, &mut errors);
    }
    for (i, which) in e.remove_customer.iter().enumerate() {
        let id = Uuid::parse_str(which.trim()).ok();
        let before = profile.customers.len();
        profile.customers.retain(|c| Some(c.id) != id && !c.label.eq_ignore_ascii_case(which.trim()));
        if profile.customers.len() == before {
            errors.push(FieldError {
                field: format!("removeCustomer[{i}]"),
                rule: format!("profile `{name}` has no customer `{which}`"),
            });
        }
    }
    profile.customers.extend(parse_customers("addCustomer", &e.add_customer, &mut errors));
    if f.deprecated_sub_customer_mode {
        profile.deprecated_sub_customer_mode = true;
    }
    if e.no_deprecated_sub_customer_mode {
        profile.deprecated_sub_customer_mode = false;
    }
    profile.set_target = set_target;
    if !e.set_secret {
        // The stored secret stays only while the profile sends it where it was stored for.
        if let Err(mut rule) = profile.may_use_secret_of(Some(&stored)) {
            rule.rule.push_str(" (add --set-secret)");
            errors.push(rule);
        }
    }
    refuse(profile.check().into_iter().chain(errors).collect())?;
    config.put(profile, true)?;
    if f.default {
        config.set_default(name)?;
    }
    let save = || Ok(store.save(&config)?);
    if e.set_secret {
        with_secret(name, &crate::read_secret(name)?, save)?;
    } else {
        save()?;
    }
    eprintln!(
        "dcs: profile `{name}` changed{}",
        if e.set_secret { "; its new secret is in the OS keychain" } else { "" }
    );
    finish(name, json)
}

/// After a change: the profile as `show --json` prints it, for scripts.
fn finish(name: &str, json: bool) -> anyhow::Result<()> {
    if !json {
        return Ok(());
    }
    let config = load_config()?;
    let p = config.profile(name).expect("just saved");
    output::print_json(&View::of(p, config.default_profile.as_deref() == Some(name)))
}

/// A profile as `list --json` and `show --json` print it: every field, never the secret.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct View<'a> {
    name: &'a str,
    default: bool,
    built_in: bool,
    base_url: Option<&'a str>,
    auth_url: Option<&'a str>,
    client_id: &'a str,
    audience: &'a str,
    customers: &'a [Customer],
    deprecated_sub_customer_mode: bool,
    /// How this profile sets target versions; absent: rollouts are unavailable with it.
    set_target: Option<&'a SetTarget>,
    /// `keychain`, `missing`, `unavailable` (no keychain to ask), or `built-in` (the simulator's).
    secret: &'static str,
}

impl<'a> View<'a> {
    fn of(p: &'a Profile, default: bool) -> View<'a> {
        let secret = if p.is_simulator() {
            "built-in"
        } else {
            match Keychain.secret(&p.name) {
                Ok(Some(_)) => "keychain",
                Ok(None) => "missing",
                Err(_) => "unavailable",
            }
        };
        View {
            name: &p.name,
            default,
            built_in: p.is_simulator(),
            base_url: p.base_url.as_deref(),
            auth_url: p.auth_url.as_deref(),
            client_id: &p.client_id,
            audience: &p.audience,
            customers: &p.customers,
            deprecated_sub_customer_mode: p.deprecated_sub_customer_mode,
            set_target: p.set_target.as_ref(),
            secret,
        }
    }
}

/// The built-in profile as the in-process simulator of `dcs` has it, without starting one.
async fn simulator_profile() -> anyhow::Result<Profile> {
    Ok(dcs_console::simulator::builtin_profile(dcs_sim::SimOptions::default().seed))
}

async fn list(json: bool) -> anyhow::Result<()> {
    let config = load_config()?;
    let sim = simulator_profile().await?;
    let default = config.default_profile.as_deref().unwrap_or(SIMULATOR_PROFILE);
    let views: Vec<View> =
        std::iter::once(&sim).chain(&config.profiles).map(|p| View::of(p, p.name == default)).collect();
    if json {
        return output::print_json(&views);
    }
    output::table(
        &["", "NAME", "BASE URL", "CLIENT ID", "CUSTOMERS", "SECRET"],
        views
            .iter()
            .map(|v| {
                vec![
                    if v.default { "*" } else { "" }.to_owned(),
                    v.name.to_owned(),
                    v.base_url.unwrap_or("(in-process simulator)").to_owned(),
                    v.client_id.to_owned(),
                    v.customers.len().to_string(),
                    v.secret.to_owned(),
                ]
            })
            .collect(),
    );
    Ok(())
}

async fn show(name: &str, json: bool) -> anyhow::Result<()> {
    let config = load_config()?;
    let sim;
    let p = if name == SIMULATOR_PROFILE {
        sim = simulator_profile().await?;
        &sim
    } else {
        config.profile(name).ok_or_else(|| unknown_profile("name", name, &config))?
    };
    let v = View::of(p, config.default_profile.as_deref().unwrap_or(SIMULATOR_PROFILE) == name);
    if json {
        return output::print_json(&v);
    }
    let secret = match v.secret {
        "keychain" => "stored in the OS keychain".to_owned(),
        "missing" => format!("missing; store it with `dcs profile edit {name} --set-secret`"),
        "unavailable" => "unknown: no OS keychain is available".to_owned(),
        _ => "built in (the simulator's demo key)".to_owned(),
    };
    let mode = if v.deprecated_sub_customer_mode {
        "deprecated sub-customer mode: context switch, then x-client-id"
    } else {
        "security-context header (Service-Security-Context)"
    };
    output::fields(&[
        ("name", v.name.to_owned()),
        ("default", if v.default { "yes" } else { "no" }.to_owned()),
        ("base URL", v.base_url.unwrap_or("(in-process simulator, on a free loopback port)").to_owned()),
        ("auth URL", v.auth_url.map(str::to_owned).unwrap_or_else(|| "(the base URL)".to_owned())),
        ("client id", v.client_id.to_owned()),
        ("audience", v.audience.to_owned()),
        ("customer mode", mode.to_owned()),
        ("secret", secret),
        ("customers", v.customers.len().to_string()),
        (
            "set-target operation",
            match v.set_target {
                Some(op) => format!("{}  body: {}", op.summary(), op.body),
                None => format!(
                    "none: rollouts are unavailable (add the one your service documents with `dcs profile edit {name} \
                     --set-target-method ... --set-target-path ... --set-target-body ...`)"
                ),
            },
        ),
    ]);
    if !v.customers.is_empty() {
        println!();
        output::table(
            &["LABEL", "CUSTOMER UUID"],
            v.customers.iter().map(|c| vec![c.label.clone(), c.id.to_string()]).collect(),
        );
    }
    Ok(())
}

fn remove(name: &str, json: bool, yes: bool) -> anyhow::Result<()> {
    if name == SIMULATOR_PROFILE {
        return Err(invalid("name", "the built-in `simulator` profile cannot be removed"));
    }
    let store = store()?;
    let mut config = store.load()?;
    if config.profile(name).is_none() {
        return Err(unknown_profile("name", name, &config));
    }
    prompt::confirm(
        &format!("Remove profile `{name}` from {} and its API key secret from the OS keychain", store.path().display()),
        yes,
    )?;
    // The secret first: a failure leaves the profile, never a secret no profile refers to.
    Keychain.delete_secret(name)?;
    config.remove(name)?;
    store.save(&config).map_err(|e| {
        anyhow::Error::from(e)
            .context(format!("the secret of profile `{name}` left the keychain, but the profile could not be removed"))
    })?;
    if json {
        return output::print_json(&serde_json::json!({ "removed": name }));
    }
    eprintln!("dcs: profile `{name}` and its secret are removed");
    Ok(())
}

async fn test(name: Option<String>, json: bool) -> anyhow::Result<()> {
    let config = load_config()?;
    let name = name.or_else(|| config.default_profile.clone()).unwrap_or_else(|| SIMULATOR_PROFILE.to_owned());
    let (auth_url, client_id, check) = if name == SIMULATOR_PROFILE {
        let embedded = crate::embedded_simulator(true).await?;
        let base = embedded.running.base_url();
        let secret = Secret::new(embedded.sim.demo_key().secret);
        let check = session::test_connection(&embedded.profile, &base, secret).await;
        (base, embedded.profile.client_id.clone(), check)
    } else {
        let p = config.profile(&name).ok_or_else(|| unknown_profile("name", &name, &config))?;
        let base = p.base_url.clone().unwrap_or_default();
        let check = session::test_connection(p, &base, crate::secret_of(&name)?).await;
        (p.auth_url.clone().unwrap_or(base), p.client_id.clone(), check)
    };
    let check = check.map_err(|e| {
        anyhow::Error::from(e).context(format!("profile `{name}` (API key `{client_id}` at {auth_url})"))
    })?;
    if json {
        let mut v = serde_json::to_value(&check)?;
        v["ok"] = true.into();
        v["profile"] = name.into();
        v["clientId"] = client_id.into();
        v["authUrl"] = auth_url.into();
        return output::print_json(&v);
    }
    println!("OK: profile `{name}`: API key `{client_id}` got a token from {auth_url}");
    output::fields(&[
        ("token type", check.token_type.clone()),
        ("lifetime", format!("{} s", check.expires_in)),
        (
            "scopes",
            check.scopes.as_ref().map(|s| s.join(" ")).unwrap_or_else(|| "(not readable from the token)".to_owned()),
        ),
        ("subject", check.subject.clone().unwrap_or_else(|| "(not readable from the token)".to_owned())),
    ]);
    Ok(())
}

/// `dcs profile test-set-target`: the profile's operation on one device, with the version it
/// runs now as its target, so nothing changes.
async fn test_set_target(
    name: &str,
    device: &str,
    module: &str,
    service: &ServiceArgs,
    json: bool,
    yes: bool,
) -> anyhow::Result<()> {
    let device = Uuid::parse_str(device.trim())
        .map_err(|_| invalid("device", format!("`{device}` must be the device's UUID (as firmware states name it)")))?;
    let module = Uuid::parse_str(module.trim())
        .map_err(|_| invalid("module", format!("`{module}` must be the firmware module's UUID")))?;
    let config = load_config()?;
    let embedded;
    let (profile, base, secret) = if name == SIMULATOR_PROFILE {
        embedded = crate::embedded_simulator(false).await?;
        let secret = Secret::new(embedded.sim.demo_key().secret);
        (embedded.profile.clone(), embedded.running.base_url(), secret)
    } else {
        let p = config.profile(name).ok_or_else(|| unknown_profile("name", name, &config))?.clone();
        let base = p.base_url.clone().unwrap_or_default();
        (p, base, crate::secret_of(name)?)
    };
    let Some(op) = profile.set_target.clone() else {
        return Err(invalid(
            "setTarget",
            format!(
                "profile `{name}` has no set-target operation; add the one your service documents with `dcs profile edit {name} \
                 --set-target-method ... --set-target-path ... --set-target-body ...`"
            ),
        ));
    };
    let acting = match &service.customer {
        Some(c) => session::Acting::Customer(profile.resolve_customer(c).map_err(dcs_api::Error::from)?),
        None => session::Acting::Yourself,
    };
    prompt::confirm(
        &format!(
            "Send {} of profile `{name}` for device {device}, module {module}, with the version it runs now as its target (a write to the service, in {})",
            op.summary(),
            acting.describe()
        ),
        yes,
    )?;
    let client = session::connect(&profile, &base, secret, &acting).await?;
    let report = set_target::test_on_device(&client, &op, device, module).await?;
    if json {
        return output::print_json(&report);
    }
    let state = |s: Option<&dcs_api::model::FirmwareState>| match s {
        None => "(no longer listed)".to_owned(),
        Some(s) => format!(
            "current {}, target {}, status {}",
            s.current_firmware_version.as_deref().unwrap_or("-"),
            s.target_firmware_version.as_deref().unwrap_or("-"),
            s.firmware_update_status.as_ref().map(|x| x.as_str()).unwrap_or("-")
        ),
    };
    println!("OK: the service accepted {} of profile `{name}`", report.request);
    output::fields(&[
        ("before", state(Some(&report.before))),
        ("sent", format!("{} {}", report.request, report.request_body)),
        ("answer", report.answer.clone().unwrap_or_else(|| "(no body)".to_owned())),
        ("after", state(report.after.as_ref())),
    ]);
    Ok(())
}

fn use_profile(name: &str, json: bool) -> anyhow::Result<()> {
    let store = store()?;
    let mut config = store.load()?;
    if name != SIMULATOR_PROFILE && config.profile(name).is_none() {
        return Err(unknown_profile("name", name, &config));
    }
    config.set_default(name)?;
    store.save(&config)?;
    if json {
        return output::print_json(&serde_json::json!({ "defaultProfile": name }));
    }
    if name == SIMULATOR_PROFILE {
        eprintln!("dcs: commands without --profile use the built-in simulator again");
    } else {
        eprintln!("dcs: commands without --profile use profile `{name}`");
    }
    Ok(())
}
