//! Client secrets in the OS keychain (Secret Service on Linux, Keychain on macOS, Credential
//! Manager on Windows), through `keyring`. There is no plaintext fallback: where no keychain
//! is available the error says what to install or unlock.

use dcs_api::Secret;
use thiserror::Error;

/// Service name under which every secret of the console is stored.
pub const SERVICE: &str = "dcs-console";

#[derive(Debug, Error)]
pub enum KeychainError {
    #[error(
        "no OS keychain is available ({0}). On Linux install and unlock a Secret Service \
         (for example gnome-keyring: `gnome-keyring-daemon --unlock`) inside a D-Bus session; \
         secrets are never stored in plain files"
    )]
    Unavailable(String),
    #[error("the keychain is locked or refused access ({0}); unlock it and try again")]
    Denied(String),
    #[error("the keychain holds an unreadable entry for profile `{profile}`; remove it and set the secret again")]
    BadEntry { profile: String },
    #[error("keychain error: {0}")]
    Other(String),
}

impl KeychainError {
    fn from_keyring(profile: &str, e: keyring::Error) -> KeychainError {
        match e {
            keyring::Error::PlatformFailure(inner) => KeychainError::Unavailable(inner.to_string()),
            keyring::Error::NoStorageAccess(inner) => KeychainError::Denied(inner.to_string()),
            keyring::Error::BadEncoding(_) => KeychainError::BadEntry { profile: profile.to_owned() },
            other => KeychainError::Other(other.to_string()),
        }
    }
}

/// The keychain entries of the console, one per profile.
#[derive(Debug, Clone, Copy, Default)]
pub struct Keychain;

fn account(profile: &str) -> String {
    format!("profile:{profile}")
}

impl Keychain {
    /// Fails when keyring would use its mock store (no platform store compiled in), which keeps
    /// nothing and would make every secret vanish.
    pub fn ensure_platform_store() -> Result<(), KeychainError> {
        let entry = keyring::Entry::new(SERVICE, "probe").map_err(|e| KeychainError::from_keyring("probe", e))?;
        let credential = format!("{:?}", entry.get_credential());
        if credential.contains("MockCredential") {
            return Err(KeychainError::Unavailable("keyring was built without a platform store".into()));
        }
        Ok(())
    }

    fn entry(profile: &str) -> Result<keyring::Entry, KeychainError> {
        Self::ensure_platform_store()?;
        keyring::Entry::new(SERVICE, &account(profile)).map_err(|e| KeychainError::from_keyring(profile, e))
    }

    pub fn set_secret(&self, profile: &str, secret: &Secret) -> Result<(), KeychainError> {
        Self::entry(profile)?.set_password(secret.expose()).map_err(|e| KeychainError::from_keyring(profile, e))
    }

    /// The stored secret, or `None` when the profile has none.
    pub fn secret(&self, profile: &str) -> Result<Option<Secret>, KeychainError> {
        match Self::entry(profile)?.get_password() {
            Ok(s) => Ok(Some(Secret::new(s))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(KeychainError::from_keyring(profile, e)),
        }
    }

    /// Stores `secret` for `profile`, then runs `save` (writing the profiles file); when `save`
    /// fails the keychain gets back what it held before (the previous secret, or none), so a
    /// failed save leaves no secret behind. A failure to restore is logged and the save's error
    /// returned.
    pub fn set_secret_then<T, E: From<KeychainError>>(
        &self,
        profile: &str,
        secret: &Secret,
        save: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        let previous = self.secret(profile)?;
        self.set_secret(profile, secret)?;
        let replaced = previous.as_ref().is_some_and(|p| p.expose() != secret.expose());
        save()
            .inspect(|_| {
                if previous.is_none() || replaced {
                    crate::audit::note_secret(profile, if replaced { "replaced" } else { "stored" });
                }
            })
            .inspect_err(|_| {
                let undo = match &previous {
                    Some(old) => self.set_secret(profile, old),
                    None => self.delete_secret(profile),
                };
                if let Err(u) = undo {
                    tracing::error!(profile, error = %u, "the keychain could not be restored after a failed save");
                }
            })
    }

    /// Removes the profile's secret; removing one that is not there is not an error.
    pub fn delete_secret(&self, profile: &str) -> Result<(), KeychainError> {
        match Self::entry(profile)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(KeychainError::from_keyring(profile, e)),
        }
    }
}
