//! The one configuration file the app and `dcs` share: the profiles (never their secrets) and
//! which one is the default. It lives in the OS config folder (`$XDG_CONFIG_HOME/dcs-console/`
//! on Linux, `~/Library/Application Support/dcs-console/` on macOS, `%APPDATA%\dcs-console\`
//! on Windows), or where `DCS_CONFIG` points. It is written atomically (a temporary file
//! renamed over the old one), so a crash never leaves half a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::field_error::FieldError;
use crate::profile::{Profile, SIMULATOR_PROFILE};

/// Environment variable naming the config file to use instead of the OS location.
pub const CONFIG_ENV: &str = "DCS_CONFIG";

const HEADER: &str = "# Profiles of the Device Connectivity Console and `dcs`.\n\
# Secrets are never kept here: each profile's API key secret is in the OS keychain.\n\n";

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    /// The profile the app opens with and `dcs` uses without `--profile`; the built-in
    /// simulator when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_profile: Option<String>,
    #[serde(default, rename = "profile", skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<Profile>,
}

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("no config folder is known for this system; set {CONFIG_ENV} to the config file's path")]
    NoConfigDir,
    #[error("could not read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path} is not a valid profiles file: {reason}")]
    Parse { path: String, reason: String },
    #[error("could not write {path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("{0}")]
    Invalid(FieldError),
    #[error("there is no profile `{0}`")]
    UnknownProfile(String),
    #[error("a profile named `{0}` exists already")]
    Exists(String),
}

impl ConfigError {
    /// The field the error concerns, for forms.
    pub fn field(&self) -> Option<&str> {
        match self {
            ConfigError::Invalid(e) => Some(&e.field),
            ConfigError::UnknownProfile(_) | ConfigError::Exists(_) => Some("name"),
            _ => None,
        }
    }
}

impl Config {
    /// Reads the text of a profiles file: TOML whose every profile passes its checks; the
    /// error says what is wrong.
    pub fn parse(text: &str) -> Result<Config, String> {
        let config: Config = toml::from_str(text).map_err(|e| e.to_string())?;
        for (i, p) in config.profiles.iter().enumerate() {
            if let Some(e) = p.check().into_iter().next() {
                return Err(format!("profile `{}`: {e}", p.name));
            }
            if config.profiles[..i].iter().any(|q| q.name == p.name) {
                return Err(format!("profile `{}`: the name is given twice", p.name));
            }
        }
        Ok(config)
    }

    /// The text of a profiles file ([`ConfigStore::save`] writes it), which [`Config::parse`]
    /// reads back.
    pub fn to_text(&self) -> Result<String, String> {
        let body = toml::to_string_pretty(self).map_err(|e| e.to_string())?;
        Ok(format!("{HEADER}{body}"))
    }

    pub fn profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.name == name)
    }

    /// Adds a new profile (`replace` false) or replaces the one of the same name (`replace`
    /// true), after checking every rule.
    pub fn put(&mut self, profile: Profile, replace: bool) -> Result<(), ConfigError> {
        if let Some(e) = profile.check().into_iter().next() {
            return Err(ConfigError::Invalid(e));
        }
        match (self.profiles.iter_mut().find(|p| p.name == profile.name), replace) {
            (Some(_), false) => Err(ConfigError::Exists(profile.name)),
            (None, true) => Err(ConfigError::UnknownProfile(profile.name)),
            (Some(slot), true) => {
                *slot = profile;
                Ok(())
            }
            (None, false) => {
                self.profiles.push(profile);
                Ok(())
            }
        }
    }

    /// Removes a profile; the default falls back to the simulator when it was the default.
    pub fn remove(&mut self, name: &str) -> Result<Profile, ConfigError> {
        let i = self
            .profiles
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| ConfigError::UnknownProfile(name.into()))?;
        if self.default_profile.as_deref() == Some(name) {
            self.default_profile = None;
        }
        Ok(self.profiles.remove(i))
    }

    /// Makes `name` (a stored profile, or `simulator`) the default.
    pub fn set_default(&mut self, name: &str) -> Result<(), ConfigError> {
        if name == SIMULATOR_PROFILE {
            self.default_profile = None;
        } else if self.profile(name).is_some() {
            self.default_profile = Some(name.to_owned());
        } else {
            return Err(ConfigError::UnknownProfile(name.to_owned()));
        }
        Ok(())
    }
}

/// Where the config file is, and reading and writing it.
#[derive(Debug, Clone)]
pub struct ConfigStore {
    path: PathBuf,
    /// Where profile changes are recorded ([`crate::audit`]); none for a store made with
    /// [`ConfigStore::at`] alone.
    audit: Option<crate::audit::AuditLog>,
}

impl ConfigStore {
    /// `DCS_CONFIG` if set, else `config.toml` in the OS config folder's `dcs-console`.
    pub fn locate() -> Result<ConfigStore, ConfigError> {
        let path = match std::env::var_os(CONFIG_ENV).filter(|p| !p.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => dirs::config_dir().ok_or(ConfigError::NoConfigDir)?.join("dcs-console").join("config.toml"),
        };
        Ok(ConfigStore { path, audit: crate::audit::AuditLog::default_location() })
    }

    pub fn at(path: impl Into<PathBuf>) -> ConfigStore {
        ConfigStore { path: path.into(), audit: None }
    }

    /// The same store, recording its profile changes in `log`.
    pub fn with_audit(mut self, log: crate::audit::AuditLog) -> ConfigStore {
        self.audit = Some(log);
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stored configuration; an absent file is an empty one.
    pub fn load(&self) -> Result<Config, ConfigError> {
        let display = self.path.display().to_string();
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(source) => return Err(ConfigError::Read { path: display, source }),
        };
        Config::parse(&text).map_err(|reason| ConfigError::Parse { path: display, reason })
    }

    /// Writes the whole configuration: to a temporary file beside it, then renamed over it. Each
    /// profile added, changed or removed, and a new default, is recorded in the audit log.
    pub fn save(&self, config: &Config) -> Result<(), ConfigError> {
        let before = self.audit.as_ref().map(|_| self.load().unwrap_or_default());
        self.write(config)?;
        if let (Some(log), Some(before)) = (&self.audit, before) {
            for (operation, profile, details) in crate::audit::profile_changes(&before, config) {
                let actor = crate::audit::Actor::local(&profile, config.profile(&profile).or(before.profile(&profile)));
                if let Err(e) = crate::audit::note_local(log, actor, operation, vec![profile], &details) {
                    tracing::error!(error = %e, "a profile change could not be recorded in the audit log");
                }
            }
        }
        Ok(())
    }

    fn write(&self, config: &Config) -> Result<(), ConfigError> {
        let err = |source| ConfigError::Write { path: self.path.display().to_string(), source };
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(err)?;
        let text = config.to_text().map_err(|e| err(std::io::Error::other(e)))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(err)?;
        tmp.write_all(text.as_bytes()).map_err(err)?;
        tmp.as_file().sync_all().map_err(err)?;
        tmp.persist(&self.path).map_err(|e| err(e.error))?;
        Ok(())
    }

    /// Loads, changes and saves in one step.
    pub fn update<T>(&self, change: impl FnOnce(&mut Config) -> Result<T, ConfigError>) -> Result<T, ConfigError> {
        let mut config = self.load()?;
        let out = change(&mut config)?;
        self.save(&config)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Customer;
    use uuid::Uuid;

    fn profile(name: &str) -> Profile {
        Profile {
            name: name.into(),
            base_url: Some("https://dcs.example.com".into()),
            auth_url: Some("https://login.example.com".into()),
            client_id: "key".into(),
            audience: "aud".into(),
            customers: vec![Customer { id: Uuid::from_u128(1), label: "Northwind".into() }],
            deprecated_sub_customer_mode: true,
            set_target: Some(crate::set_target::SetTarget {
                method: "PATCH".into(),
                path: "/devices/{deviceId}/firmware/{moduleId}".into(),
                body: r#"{"target": {"version": {version}}}"#.into(),
            }),
        }
    }

    #[test]
    fn round_trips_through_the_file_and_keeps_no_secret_field() {
        let dir = tempfile::tempdir().unwrap();
        let store = ConfigStore::at(dir.path().join("sub/config.toml"));
        assert_eq!(store.load().unwrap(), Config::default(), "an absent file is an empty config");
        store.update(|c| c.put(profile("prod"), false)).unwrap();
        store.update(|c| c.set_default("prod")).unwrap();
        let back = store.load().unwrap();
        assert_eq!(back.profiles, vec![profile("prod")]);
        assert_eq!(back.default_profile.as_deref(), Some("prod"));
        let text = std::fs::read_to_string(store.path()).unwrap();
        assert!(text.starts_with("# Profiles"), "{text}");
        assert!(text.contains("[[profile.customers]]"), "{text}");
        assert!(text.contains("[profile.setTarget]"), "{text}");
        assert!(!text.to_lowercase().contains("secret ="), "{text}");
    }

    #[test]
    fn add_edit_remove_follow_their_rules() {
        let mut c = Config::default();
        c.put(profile("a"), false).unwrap();
        assert!(matches!(c.put(profile("a"), false), Err(ConfigError::Exists(_))));
        assert!(matches!(c.put(profile("b"), true), Err(ConfigError::UnknownProfile(_))));
        let mut edited = profile("a");
        edited.client_id = "other".into();
        c.put(edited, true).unwrap();
        assert_eq!(c.profile("a").unwrap().client_id, "other");
        let mut bad = profile("c");
        bad.base_url = Some("nope".into());
        let e = c.put(bad, false).unwrap_err();
        assert_eq!(e.field(), Some("baseUrl"));
        c.set_default("a").unwrap();
        assert!(c.set_default("zzz").is_err());
        c.remove("a").unwrap();
        assert_eq!(c.default_profile, None, "removing the default falls back to the simulator");
        assert!(c.remove("a").is_err());
    }

    #[test]
    fn a_name_given_twice_is_refused() {
        // `put` refuses it; a hand-edited file had it read, the second profile unreachable
        // (found by fuzz/user_files' seed corpus).
        let text = "[[profile]]\nname = \"a\"\nbaseUrl = \"https://x.example\"\nclientId = \"k\"\n\n\
                    [[profile]]\nname = \"a\"\nbaseUrl = \"https://y.example\"\nclientId = \"k2\"\n";
        let e = Config::parse(text).unwrap_err();
        assert!(e.contains("`a`") && e.contains("twice"), "{e}");
        let mut c = Config::parse(&text.replacen("\"a\"", "\"b\"", 1)).unwrap();
        assert_eq!(c.profiles.len(), 2);
        c.put(profile("c"), false).unwrap();
        assert_eq!(Config::parse(&c.to_text().unwrap()).unwrap(), c);
    }

    #[test]
    fn a_hand_broken_file_is_reported_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let store = ConfigStore::at(dir.path().join("config.toml"));
        std::fs::write(store.path(), "[[profile]]\nname = \"a b\"\nbaseUrl = \"https://x\"\nclientId = \"k\"\n")
            .unwrap();
        let e = store.load().unwrap_err().to_string();
        assert!(e.contains("config.toml") && e.contains("name:"), "{e}");
        std::fs::write(store.path(), "this is = = not toml").unwrap();
        assert!(matches!(store.load(), Err(ConfigError::Parse { .. })));
    }

    #[test]
    fn each_profile_change_is_recorded_in_the_audit_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = crate::audit::AuditLog::at(dir.path());
        let store = ConfigStore::at(dir.path().join("config.toml")).with_audit(log.clone());
        store.update(|c| c.put(profile("prod"), false)).unwrap();
        store.update(|c| c.put(Profile { client_id: "key-2".into(), ..profile("prod") }, true)).unwrap();
        store.update(|c| c.set_default("prod")).unwrap();
        store.update(|c| c.remove("prod").map(|_| ())).unwrap();
        // Saving what is already there records nothing.
        store.update(|_| Ok(())).unwrap();
        let seen: Vec<(String, Vec<String>, serde_json::Value)> =
            log.entries().unwrap().into_iter().map(|e| (e.operation.unwrap(), e.targets, e.request.unwrap())).collect();
        let ops: Vec<&str> = seen.iter().map(|(o, _, _)| o.as_str()).collect();
        assert_eq!(ops, ["profile.create", "profile.update", "profile.default", "profile.delete", "profile.default"]);
        assert!(seen.iter().take(4).all(|(_, t, _)| t == &["prod".to_string()]));
        assert_eq!(seen[1].2["changed"], serde_json::json!(["clientId"]));
        assert_eq!(seen[4].1, [crate::SIMULATOR_PROFILE.to_string()]);
        assert_eq!(log.verify().unwrap().broken, None);
    }
}
