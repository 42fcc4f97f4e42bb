//! The profile editor: list, check as the user types, save (the secret straight into the OS
//! keychain), delete, and test a connection. Secrets travel only from the web view to Rust,
//! never back: a profile's answer says whether a secret is stored, not what it is.

use dcs_api::auth::TokenCheck;
use dcs_api::Secret;
use dcs_console::app::{secret_state, ProfileList, ProfileSummary};
use dcs_console::session;
use dcs_console::{FieldError, Keychain, Profile, ProfileDraft, SIMULATOR_PROFILE};
use serde::Deserialize;
use tauri::State;

use super::AppInfo;
use crate::error::CommandError;
use crate::state::AppState;

// Every profile with whether it is active, the default, and its secret stored
// (dcs_console::app::Console::profiles).
#[tauri::command]
#[specta::specta]
pub async fn list_profiles(state: State<'_, AppState>) -> Result<ProfileList, CommandError> {
    Ok(state.profiles().await)
}

/// Every rule the profile breaks, for marking the form's fields as the user types. A new
/// profile's name must also be free.
#[tauri::command]
#[specta::specta]
pub async fn check_profile(
    state: State<'_, AppState>,
    draft: ProfileDraft,
    is_new: bool,
) -> Result<Vec<FieldError>, CommandError> {
    let mut errors = draft.parse().err().unwrap_or_default();
    if is_new && !errors.iter().any(|e| e.field == "name") && state.config.load()?.profile(draft.name.trim()).is_some()
    {
        errors.insert(0, FieldError { field: "name".into(), rule: "is already the name of another profile".into() });
    }
    Ok(errors)
}

/// The draft as a profile, or its first broken rule as an error naming the field.
fn parse(draft: &ProfileDraft) -> Result<Profile, CommandError> {
    draft.parse().map_err(|errors| errors.into_iter().next().expect("a refused draft names a rule").into())
}

/// A profile to save and, when the user typed one, its new secret. No `Debug`: it holds a secret.
#[derive(Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SaveProfile {
    pub draft: ProfileDraft,
    /// Goes straight into the OS keychain; empty or absent keeps the stored one.
    pub secret: Option<String>,
    pub is_new: bool,
}

fn typed_secret(secret: Option<String>) -> Option<Secret> {
    secret.filter(|s| !s.is_empty()).map(Secret::new)
}

/// Saves a new or edited profile: the secret into the keychain first, then the profiles file;
/// if the file cannot be written the keychain is put back as it was.
#[tauri::command]
#[specta::specta]
pub async fn save_profile(state: State<'_, AppState>, request: SaveProfile) -> Result<ProfileSummary, CommandError> {
    let SaveProfile { draft, secret, is_new } = request;
    let profile = parse(&draft)?;
    let config = state.config.load()?;
    let exists = config.profile(&profile.name).is_some();
    if is_new && exists {
        return Err(CommandError::invalid("name", "is already the name of another profile"));
    }
    let secret = typed_secret(secret);
    if secret.is_none() && Keychain.secret(&profile.name)?.is_none() {
        return Err(CommandError::invalid("secret", "is required: the API key's secret is kept in the OS keychain"));
    }
    if secret.is_none() {
        // The stored secret stays only while the profile sends it where it was stored for.
        profile.may_use_secret_of(config.profile(&profile.name))?;
    }
    let save = || state.config.update(|c| c.put(profile.clone(), !is_new)).map_err(CommandError::from);
    match &secret {
        Some(s) => Keychain.set_secret_then(&profile.name, s, save)?,
        None => save()?,
    }
    tracing::info!(profile = %profile.name, new = is_new, secret_changed = secret.is_some(), "profile saved");
    let active = state.current().await;
    if active.profile.name == profile.name && !active.simulator() {
        state.reload_active(false).await?;
    }
    let default = state.config.load()?.default_profile;
    Ok(ProfileSummary {
        draft: ProfileDraft::of(&profile),
        active: active.profile.name == profile.name,
        is_default: default.as_deref() == Some(profile.name.as_str()),
        secret: secret_state(&profile.name),
        profile,
        builtin: false,
    })
}

/// Removes a profile and its keychain secret; the app falls back to the simulator if it was
/// the active one.
#[tauri::command]
#[specta::specta]
pub async fn delete_profile(state: State<'_, AppState>, name: String) -> Result<AppInfo, CommandError> {
    if name == SIMULATOR_PROFILE {
        return Err(CommandError::invalid("name", "the built-in simulator profile cannot be removed"));
    }
    state.config.update(|c| c.remove(&name))?;
    Keychain.delete_secret(&name)?;
    tracing::info!(profile = %name, "profile removed");
    let active = state.current().await;
    let s = if active.profile.name == name && !active.simulator() { state.reload_active(true).await? } else { active };
    Ok(super::info(&state, &s))
}

/// A profile to test as it stands in the form, with the secret the user typed, or the stored
/// one. No `Debug`: it holds a secret.
#[derive(Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TestProfile {
    pub draft: ProfileDraft,
    pub secret: Option<String>,
}

/// Exchanges the key of the profile in the form for a token and reports what the identity
/// platform said: the token's type, lifetime and scopes, or its refusal in plain words.
#[tauri::command]
#[specta::specta]
pub async fn test_profile(state: State<'_, AppState>, request: TestProfile) -> Result<TokenCheck, CommandError> {
    let TestProfile { draft, secret } = request;
    let (profile, base, secret) = form_profile(&state, &draft, secret)?;
    Ok(session::test_connection(&profile, &base, secret).await?)
}

/// The profile as it stands in the form (an unsaved one may be tested before it has a good
/// name), its base URL and the secret to send: the one typed, or the stored one only when the
/// form sends it to the origins it was stored for (the page never decides where a stored secret
/// goes).
fn form_profile(
    state: &AppState,
    draft: &ProfileDraft,
    secret: Option<String>,
) -> Result<(Profile, String, Secret), CommandError> {
    let profile = draft.parse().or_else(|errors| match errors.into_iter().find(|e| e.field != "name") {
        None => parse(&ProfileDraft { name: "unsaved".into(), ..draft.clone() }),
        Some(e) => Err(CommandError::from(e)),
    })?;
    let secret = match typed_secret(secret) {
        Some(s) => s,
        None => {
            let config = state.config.load()?;
            profile.may_use_secret_of(config.profile(&profile.name))?;
            session::stored_secret(&profile.name).map_err(|e| match e {
                dcs_console::SessionError::NoSecret(_) => {
                    CommandError::invalid("secret", "type the API key's secret to test a profile that has none stored")
                }
                other => other.into(),
            })?
        }
    };
    let base = profile.base_url.clone().expect("a parsed profile has a base URL");
    Ok((profile, base, secret))
}

/// Tests a stored profile (or the built-in one) with its stored secret.
#[tauri::command]
#[specta::specta]
pub async fn test_stored_profile(state: State<'_, AppState>, name: String) -> Result<TokenCheck, CommandError> {
    let (profile, base, secret) = state.resolve(&name).await?;
    Ok(session::test_connection(&profile, &base, secret).await?)
}

/// "Test on one device" of the set-target operation as it stands in the form. No `Debug`: it
/// holds a secret.
#[derive(Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TestSetTarget {
    pub draft: ProfileDraft,
    /// The secret the user typed; empty or absent: the stored one.
    pub secret: Option<String>,
    /// The device's UUID, as typed.
    pub device_id: String,
    /// The firmware module's UUID, as typed.
    pub module_id: String,
    /// Act for this customer of the profile (its devices are seen only in its context).
    pub customer_id: Option<uuid::Uuid>,
}

/// Reads the device's firmware state, sends the form's set-target operation with the version
/// the device runs now as its target (a no-op that proves the operation), reads the state again
/// and reports what the service answered. The UI asks first: it is a write.
#[tauri::command]
#[specta::specta]
pub async fn test_set_target(
    state: State<'_, AppState>,
    request: TestSetTarget,
) -> Result<dcs_console::set_target::TestReport, CommandError> {
    let TestSetTarget { draft, secret, device_id, module_id, customer_id } = request;
    let (device, module) =
        dcs_console::set_target::test_ids(&device_id, &module_id).map_err(dcs_console::Error::from)?;
    let (profile, base, secret) = if draft.name == SIMULATOR_PROFILE {
        state.resolve(SIMULATOR_PROFILE).await?
    } else {
        form_profile(&state, &draft, secret)?
    };
    let Some(op) = profile.set_target.clone() else {
        return Err(CommandError::invalid("setTarget.path", "enter the operation's method, path and body first"));
    };
    let acting = match customer_id {
        Some(id) => session::Acting::Customer(profile.resolve_customer(&id.to_string())?),
        None => session::Acting::Yourself,
    };
    let client = session::connect(&profile, &base, secret, &acting).await?;
    tracing::info!(profile = %profile.name, %device, %module, "testing the set-target operation on one device");
    Ok(dcs_console::set_target::test_on_device(&client, &op, device, module).await?)
}
