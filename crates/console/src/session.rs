//! Connecting a profile: its secret from the keychain, the client for its service, and the
//! customer it acts for. The app and `dcs` both go through here, so both send the same
//! headers for the same choice.

use dcs_api::auth::TokenCheck;
use dcs_api::{Client, ClientConfig, Secret};
use uuid::Uuid;

use crate::keychain::Keychain;
use crate::profile::{Customer, Profile};

/// A connected profile: the profile in use, the customer it acts for and the client acting so.
/// The app keeps one as its active session (replaced whole when the profile or customer
/// changes; commands that are running finish on the session they started with).
pub struct Session {
    pub profile: Profile,
    pub acting: Acting,
    pub client: Client,
    /// Base address of the service the client talks to.
    pub base_url: String,
}

impl Session {
    /// Connects `profile` at `base_url` acting as `acting` ([`connect`]); a refusal of the
    /// customer's context names the customer.
    pub async fn open(
        profile: Profile,
        base_url: String,
        secret: Secret,
        acting: Acting,
    ) -> Result<Session, crate::Error> {
        let client = connect(&profile, &base_url, secret, &acting).await.map_err(|e| e.acting(&acting))?;
        Ok(Session { profile, acting, client, base_url })
    }

    pub fn simulator(&self) -> bool {
        self.profile.is_simulator()
    }

    /// Refuses a write confirmed for another customer than the one now active (the user may
    /// have switched between the confirmation and the click reaching Rust).
    pub fn check_acting_for(&self, confirmed: Option<Uuid>) -> Result<(), crate::Error> {
        if confirmed != self.acting.customer_id() {
            return Err(crate::Error::ContextChanged(format!(
                "the active customer changed to {} after you confirmed; nothing was sent",
                self.acting.describe()
            )));
        }
        Ok(())
    }

    /// Names the service and customer this session acts in, to keep what is seen per scope apart.
    pub fn scope(&self) -> String {
        crate::fleet::ScopeKey::new(&self.profile.name, &self.base_url, self.acting.customer_id()).key()
    }

    /// An error met acting in this session, named for the customer where it refuses it.
    pub fn named(&self, e: impl Into<crate::Error>) -> crate::Error {
        e.into().acting(&self.acting)
    }
}

/// Connecting fails with the console's one error (a keychain, secret, client or context-switch
/// failure); the old name stays for callers.
pub type SessionError = crate::Error;

/// Who requests act for: the profile's own environment, or one customer's (section 5.4).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Acting {
    #[default]
    Yourself,
    Customer(Customer),
}

impl Acting {
    pub fn customer_id(&self) -> Option<Uuid> {
        match self {
            Acting::Yourself => None,
            Acting::Customer(c) => Some(c.id),
        }
    }

    /// How confirmations name it: "customer Northwind (uuid)" or "your own environment".
    pub fn describe(&self) -> String {
        match self {
            Acting::Yourself => "your own environment".to_owned(),
            Acting::Customer(c) if c.label.is_empty() => format!("customer {}", c.id),
            Acting::Customer(c) => format!("customer {} ({})", c.label, c.id),
        }
    }
}

/// The stored profile `name` of `config` with what it takes to reach it: its address and its
/// secret (from the OS keychain).
pub fn stored(config: &crate::ConfigStore, name: &str) -> Result<(Profile, String, Secret), crate::Error> {
    let profile =
        config.load()?.profile(name).cloned().ok_or_else(|| crate::ConfigError::UnknownProfile(name.to_owned()))?;
    let base = profile.base_url.clone().expect("stored profiles have a base URL");
    let secret = stored_secret(name)?;
    Ok((profile, base, secret))
}

/// The name of the runner's secret among systemd's credentials (`LoadCredential=`), read from
/// `$CREDENTIALS_DIRECTORY`.
pub const CREDENTIAL_NAME: &str = "dcs-client-secret";

/// An API key's secret kept in a file (a server's runner): its first line. Refused, naming the
/// file and the rule, when the file is readable or writable by anyone but its owner, or empty.
pub fn secret_from_file(path: &std::path::Path) -> Result<Secret, SessionError> {
    let shown = path.display().to_string();
    let bad = |rule: String| SessionError::invalid("secretFile", format!("{shown}: {rule}"));
    let meta = std::fs::metadata(path).map_err(|e| bad(format!("cannot be read ({e})")))?;
    if !meta.is_file() {
        return Err(bad("is not a file".into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(bad(format!(
                "may be read or written by others (mode {mode:03o}); make it the owner's only: chmod 600 {shown}"
            )));
        }
    }
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot be read ({e})")))?;
    let secret = text.lines().next().unwrap_or("").trim_end_matches('\r');
    if secret.is_empty() {
        return Err(bad("holds no secret (its first line is empty)".into()));
    }
    Ok(Secret::new(secret))
}

/// The secret of a stored profile, from the OS keychain.
pub fn stored_secret(profile: &str) -> Result<Secret, SessionError> {
    Keychain.secret(profile)?.ok_or_else(|| SessionError::NoSecret(profile.to_owned()))
}

/// The client configuration of `profile` at `base_url` (the profile's own, or the running
/// simulator's for the built-in one), acting as `acting`: the security-context header, or in
/// the deprecated mode `x-client-id`.
pub fn client_config(
    profile: &Profile,
    base_url: &str,
    secret: Secret,
    acting: &Acting,
) -> Result<ClientConfig, dcs_api::Error> {
    let auth_url = profile.auth_url.as_deref().unwrap_or(base_url);
    let mut config = ClientConfig::new(base_url, auth_url, &profile.client_id, secret)?;
    config.audience = profile.audience.clone();
    // Every write of this client is recorded in the data folder's audit log first.
    config.audit = crate::audit::Recorder::for_profile(profile, &config.base_url, acting.customer_id());
    if profile.deprecated_sub_customer_mode {
        config.x_client_id = acting.customer_id();
    } else {
        config.customer = acting.customer_id();
    }
    Ok(config)
}

/// A client for `profile` acting as `acting`. In the deprecated sub-customer mode the context
/// switch (needed once per key and customer) is made first, with the key's own context.
pub async fn connect(
    profile: &Profile,
    base_url: &str,
    secret: Secret,
    acting: &Acting,
) -> Result<Client, SessionError> {
    let config = client_config(profile, base_url, secret, acting)?;
    if let (true, Some(customer)) = (profile.deprecated_sub_customer_mode, acting.customer_id()) {
        let mut own = config.clone();
        own.x_client_id = None;
        let switched = Client::new(own)?.beta().context_switch(customer).await?;
        if dcs_api::model::beta::switch_refused(&switched) {
            return Err(SessionError::SwitchRefused(customer));
        }
    }
    Ok(Client::new(config)?)
}

/// Exchanges the profile's key for a fresh token and says what it holds (never the token).
pub async fn test_connection(profile: &Profile, base_url: &str, secret: Secret) -> Result<TokenCheck, SessionError> {
    let client = Client::new(client_config(profile, base_url, secret, &Acting::Yourself)?)?;
    Ok(client.test_credentials().await?)
}
