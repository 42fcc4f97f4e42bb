//! Profiles: which service environment to talk to, as which API key, and for which customers.
//! No secret is ever part of a profile; the secret of a profile lives in the OS keychain under
//! the profile's name (see [`crate::keychain`]).

use dcs_api::model::SERVICE_AUDIENCE;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::field_error::FieldError;
use crate::set_target::{SetTarget, SetTargetDraft};

/// Name of the built-in profile that talks to the embedded simulator.
pub const SIMULATOR_PROFILE: &str = "simulator";

/// Longest profile name; it also names the keychain entry.
pub const MAX_NAME: usize = 64;
/// Longest customer label.
pub const MAX_LABEL: usize = 100;

/// A customer a reseller profile may act for, with a label people recognise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Customer {
    pub id: Uuid,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    pub name: String,
    /// `{base_url}`. `None` only for the built-in simulator profile, whose address is known
    /// once it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// `{auth_url}` of the identity platform; the base URL when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_url: Option<String>,
    /// The API key id.
    pub client_id: String,
    /// The application id tokens are requested for (section 5.3).
    #[serde(default = "default_audience")]
    pub audience: String,
    /// Customers this profile acts for as a reseller (section 5.4).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub customers: Vec<Customer>,
    /// Deprecated: act for customers with `x-client-id` after a context switch (section 4.5)
    /// instead of the security-context header. Off unless asked for.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deprecated_sub_customer_mode: bool,
    /// How this service sets a target version (the reference does not show it): rollouts and
    /// `set-target` need it. Only the built-in simulator profile has one without being told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_target: Option<SetTarget>,
}

fn default_audience() -> String {
    SERVICE_AUDIENCE.to_owned()
}

impl Profile {
    /// The built-in profile: the demo reseller's key on the embedded simulator, with the
    /// simulator's customers.
    pub fn simulator(client_id: &str, customers: Vec<Customer>) -> Profile {
        Profile {
            name: SIMULATOR_PROFILE.to_owned(),
            base_url: None,
            auth_url: None,
            client_id: client_id.to_owned(),
            audience: default_audience(),
            customers,
            deprecated_sub_customer_mode: false,
            set_target: Some(SetTarget::simulator()),
        }
    }

    pub fn is_simulator(&self) -> bool {
        self.base_url.is_none()
    }

    /// Every rule a stored profile must meet, all broken ones at once so a form can mark each
    /// field. Empty when the profile is valid.
    pub fn check(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if let Err(e) = check_name(&self.name) {
            errors.push(e);
        }
        match &self.base_url {
            None => errors.push(FieldError::new("baseUrl", "is required")),
            Some(url) => errors.extend(check_url("baseUrl", url).err()),
        }
        if let Some(url) = &self.auth_url {
            errors.extend(check_url("authUrl", url).err());
        }
        errors.extend(check_token_value("clientId", &self.client_id).err());
        errors.extend(check_token_value("audience", &self.audience).err());
        for (i, c) in self.customers.iter().enumerate() {
            let label = c.label.trim();
            if label.is_empty() {
                errors.push(FieldError::new(format!("customers[{i}].label"), "is required"));
            } else if label.chars().count() > MAX_LABEL {
                errors.push(FieldError::new(
                    format!("customers[{i}].label"),
                    format!("must be at most {MAX_LABEL} characters"),
                ));
            } else if self.customers[..i].iter().any(|o| o.label.trim().eq_ignore_ascii_case(label)) {
                errors.push(FieldError::new(
                    format!("customers[{i}].label"),
                    "is already used by another customer of this profile",
                ));
            }
            if c.id.is_nil() {
                errors.push(FieldError::new(
                    format!("customers[{i}].id"),
                    "must be the customer's UUID, not the nil UUID",
                ));
            } else if self.customers[..i].iter().any(|o| o.id == c.id) {
                errors.push(FieldError::new(format!("customers[{i}].id"), "is listed twice"));
            }
        }
        if let Some(op) = &self.set_target {
            errors.extend(op.check());
        }
        errors
    }

    /// The customer named by `s`: its UUID, or its label (any case) from this profile's list.
    /// A UUID not in the list is accepted (the service decides whether the key may act for it).
    pub fn resolve_customer(&self, s: &str) -> Result<Customer, FieldError> {
        let s = s.trim();
        if let Ok(id) = Uuid::parse_str(s) {
            let label = self.customers.iter().find(|c| c.id == id).map(|c| c.label.clone()).unwrap_or_default();
            return Ok(Customer { id, label });
        }
        self.customers.iter().find(|c| c.label.eq_ignore_ascii_case(s)).cloned().ok_or_else(|| {
            let known: Vec<&str> = self.customers.iter().map(|c| c.label.as_str()).collect();
            FieldError::new(
                "customer",
                if known.is_empty() {
                    format!("must be a customer UUID (profile `{}` lists no customers by label)", self.name)
                } else {
                    format!(
                        "must be a customer UUID or one of the labels of profile `{}`: {}",
                        self.name,
                        known.join(", ")
                    )
                },
            )
        })
    }
}

/// A profile as a form holds it: every field as typed, ids not yet parsed. Turned into a
/// [`Profile`] with every broken rule named, so a form can mark its fields.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ProfileDraft {
    pub name: String,
    pub base_url: String,
    /// Empty: the base URL.
    pub auth_url: String,
    pub client_id: String,
    /// Empty: the service's application id.
    pub audience: String,
    pub customers: Vec<CustomerDraft>,
    pub deprecated_sub_customer_mode: bool,
    /// Blank path and body: no set-target operation.
    pub set_target: SetTargetDraft,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CustomerDraft {
    pub id: String,
    pub label: String,
}

impl Profile {
    /// Where this profile sends its API key's secret: the origins (scheme, host, port) of its
    /// auth URL (the base URL when it has none) and of its base URL, as text.
    pub fn secret_origins(&self) -> Vec<String> {
        let origin =
            |u: &str| url::Url::parse(u).map(|u| u.origin().ascii_serialization()).unwrap_or_else(|_| u.to_owned());
        let mut origins: Vec<String> =
            [self.auth_url.as_deref().or(self.base_url.as_deref()), self.base_url.as_deref()]
                .into_iter()
                .flatten()
                .map(origin)
                .collect();
        origins.dedup();
        origins
    }

    /// Whether the secret stored for `stored` may be sent by this profile: only to the origins
    /// it was stored for, so that a changed (or a forged) base or auth URL never receives it.
    /// Otherwise the rule to show beside the secret field.
    pub fn may_use_secret_of(&self, stored: Option<&Profile>) -> Result<(), FieldError> {
        let Some(stored) = stored.filter(|s| s.name == self.name) else {
            return Err(FieldError::new("secret", "type the API key's secret: none is stored for this profile"));
        };
        let (was, now) = (stored.secret_origins(), self.secret_origins());
        if was == now {
            return Ok(());
        }
        Err(FieldError::new(
            "secret",
            format!(
                "type the API key's secret again: the stored one is sent only to {}, and this profile would send it to {}",
                was.join(" and "),
                now.join(" and ")
            ),
        ))
    }
}

impl ProfileDraft {
    /// The profile, or every rule it breaks (all at once, in field order).
    pub fn parse(&self) -> Result<Profile, Vec<FieldError>> {
        let mut id_errors = Vec::new();
        let customers = self
            .customers
            .iter()
            .enumerate()
            .map(|(i, c)| Customer {
                id: Uuid::parse_str(c.id.trim()).unwrap_or_else(|_| {
                    id_errors.push(FieldError::new(
                        format!("customers[{i}].id"),
                        "must be the customer's UUID, such as 0f4c2a1e-7d0b-4c55-9a8e-3b1d2c4e5f60",
                    ));
                    Uuid::nil()
                }),
                label: c.label.trim().to_owned(),
            })
            .collect();
        let optional = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        let profile = Profile {
            name: self.name.trim().to_owned(),
            base_url: Some(self.base_url.trim().to_owned()),
            auth_url: optional(&self.auth_url),
            client_id: self.client_id.trim().to_owned(),
            audience: optional(&self.audience).unwrap_or_else(default_audience),
            customers,
            deprecated_sub_customer_mode: self.deprecated_sub_customer_mode,
            set_target: self.set_target.parse(),
        };
        let mut errors: Vec<FieldError> =
            profile.check().into_iter().filter(|e| !id_errors.iter().any(|i| i.field == e.field)).collect();
        errors.extend(id_errors);
        if errors.is_empty() {
            Ok(profile)
        } else {
            Err(errors)
        }
    }

    /// The form's view of a stored profile.
    pub fn of(p: &Profile) -> ProfileDraft {
        ProfileDraft {
            name: p.name.clone(),
            base_url: p.base_url.clone().unwrap_or_default(),
            auth_url: p.auth_url.clone().unwrap_or_default(),
            client_id: p.client_id.clone(),
            audience: p.audience.clone(),
            customers: p
                .customers
                .iter()
                .map(|c| CustomerDraft { id: c.id.to_string(), label: c.label.clone() })
                .collect(),
            deprecated_sub_customer_mode: p.deprecated_sub_customer_mode,
            set_target: SetTargetDraft::of(p.set_target.as_ref()),
        }
    }
}

/// Profile names: 1 to 64 letters, digits, `-`, `_` or `.`, starting with a letter or digit;
/// `simulator` is the built-in profile's.
pub fn check_name(name: &str) -> Result<(), FieldError> {
    let rule = |r: &str| Err(FieldError::new("name", r));
    if name.is_empty() {
        return rule("is required");
    }
    if name.chars().count() > MAX_NAME {
        return rule("must be at most 64 characters");
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        || !name.starts_with(|c: char| c.is_ascii_alphanumeric())
    {
        return rule("may hold only letters, digits, `-`, `_` and `.`, and must start with a letter or digit");
    }
    if name.eq_ignore_ascii_case(SIMULATOR_PROFILE) {
        return rule("`simulator` is the built-in profile's name");
    }
    Ok(())
}

fn check_url(field: &str, s: &str) -> Result<(), FieldError> {
    if s.trim().is_empty() {
        return Err(FieldError::new(field, "is required"));
    }
    match url::Url::parse(s.trim()) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {
            if u.query().is_some() || u.fragment().is_some() {
                Err(FieldError::new(field, "must not carry a query or fragment"))
            } else if !u.username().is_empty() || u.password().is_some() {
                // A password in the profiles file, and sent in every request's address: the
                // API key's secret belongs in the keychain.
                Err(FieldError::new(
                    field,
                    "must not carry a user name or password (user:password@): the API key's secret goes in the keychain",
                ))
            } else if let Some(rule) = dcs_api::client::insecure_address(&u) {
                Err(FieldError::new(field, rule))
            } else {
                Ok(())
            }
        }
        Ok(_) => Err(FieldError::new(field, "must be an http or https address such as https://dcs.example.com")),
        Err(e) => Err(FieldError::new(field, format!("must be an absolute http(s) address ({e})"))),
    }
}

fn check_token_value(field: &str, s: &str) -> Result<(), FieldError> {
    if s.trim().is_empty() {
        Err(FieldError::new(field, "is required"))
    } else if s.chars().any(char::is_whitespace) {
        Err(FieldError::new(field, "must not contain spaces"))
    } else if s.chars().count() > 200 {
        Err(FieldError::new(field, "must be at most 200 characters"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_stored_secret_goes_only_to_the_origins_it_was_stored_for() {
        let stored = Profile {
            name: "prod".into(),
            base_url: Some("https://api.example.com/v1".into()),
            auth_url: Some("https://auth.example.com".into()),
            client_id: "key".into(),
            audience: SERVICE_AUDIENCE.into(),
            customers: vec![],
            deprecated_sub_customer_mode: false,
            set_target: None,
        };
        // Same origins (another path, another key id, customers): the stored secret may go.
        let mut same = stored.clone();
        same.base_url = Some("https://api.example.com/v2/".into());
        same.client_id = "other".into();
        assert_eq!(same.may_use_secret_of(Some(&stored)), Ok(()));
        // A changed base or auth origin, or the auth URL dropped (tokens then go to the base URL).
        for (base, auth) in [
            (Some("https://evil.example.net/v1"), Some("https://auth.example.com")),
            (Some("https://api.example.com/v1"), Some("https://auth.example.com:8443")),
            (Some("http://api.example.com/v1"), Some("https://auth.example.com")),
            (Some("https://api.example.com/v1"), None),
        ] {
            let mut moved = stored.clone();
            moved.base_url = base.map(Into::into);
            moved.auth_url = auth.map(Into::into);
            let e = moved.may_use_secret_of(Some(&stored)).unwrap_err();
            assert_eq!(e.field, "secret");
            assert!(
                e.rule.contains("type the API key's secret again") && e.rule.contains("https://auth.example.com"),
                "{e:?}"
            );
        }
        // No stored profile of that name: nothing may be taken from the keychain.
        let mut renamed = stored.clone();
        renamed.name = "other".into();
        assert!(renamed.may_use_secret_of(Some(&stored)).is_err());
        assert!(stored.may_use_secret_of(None).is_err());
    }
    use super::*;

    fn prod() -> Profile {
        Profile {
            name: "prod".into(),
            base_url: Some("https://dcs.example.com/api".into()),
            auth_url: None,
            client_id: "key-1".into(),
            audience: SERVICE_AUDIENCE.into(),
            customers: vec![Customer { id: Uuid::from_u128(7), label: "Northwind".into() }],
            deprecated_sub_customer_mode: false,
            set_target: None,
        }
    }

    #[test]
    fn a_complete_profile_is_valid() {
        assert_eq!(prod().check(), vec![]);
    }

    #[test]
    fn every_broken_field_is_named_with_its_rule() {
        let mut p = prod();
        p.name = "my prod".into();
        p.base_url = Some("ftp://x".into());
        p.auth_url = Some("not a url".into());
        p.client_id = " ".into();
        p.customers.push(Customer { id: Uuid::from_u128(7), label: "northwind".into() });
        let fields: Vec<String> = p.check().into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["name", "baseUrl", "authUrl", "clientId", "customers[1].label", "customers[1].id"]);
    }

    #[test]
    fn an_address_with_a_user_or_password_is_refused() {
        for url in ["https://ops:hunter2@dcs.example.com", "https://ops@dcs.example.com", "http://:pw@127.0.0.1:8080"] {
            let mut p = prod();
            p.base_url = Some(url.into());
            p.auth_url = Some(url.into());
            let errors = p.check();
            let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
            assert_eq!(fields, ["baseUrl", "authUrl"], "{url}: {errors:?}");
            assert!(errors[0].rule.contains("user name or password"), "{url}: {errors:?}");
        }
    }

    #[test]
    fn a_draft_becomes_a_profile_or_names_every_broken_field() {
        let draft = ProfileDraft::of(&prod());
        assert_eq!(draft.parse(), Ok(prod()));
        let mut blank_audience = draft.clone();
        blank_audience.audience = " ".into();
        blank_audience.auth_url = "".into();
        assert_eq!(blank_audience.parse().unwrap().audience, SERVICE_AUDIENCE);
        let mut bad = draft;
        bad.customers.push(CustomerDraft { id: "not-a-uuid".into(), label: "".into() });
        bad.base_url = "".into();
        let fields: Vec<String> = bad.parse().unwrap_err().into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["baseUrl", "customers[1].label", "customers[1].id"]);
    }

    #[test]
    fn the_set_target_operation_is_checked_with_the_other_fields() {
        let mut p = prod();
        p.client_id = "".into();
        p.set_target =
            Some(SetTarget { method: "GET".into(), path: "/x/{deviceId}".into(), body: "{\"v\": {version}}".into() });
        let fields: Vec<String> = p.check().into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["clientId", "setTarget.method"]);
        let mut draft = ProfileDraft::of(&prod());
        assert_eq!(draft.parse().unwrap().set_target, None, "a blank operation is none");
        draft.set_target = SetTargetDraft { method: "put".into(), path: "/x/{deviceId}".into(), body: "".into() };
        let errors = draft.parse().unwrap_err();
        assert_eq!(errors.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(), ["setTarget.body"], "{errors:?}");
        draft.set_target.body = "{\"v\": {version}}".into();
        assert_eq!(draft.parse().unwrap().set_target.unwrap().method, "PUT");
        // Only the built-in simulator profile has one without being told.
        assert_eq!(Profile::simulator("k", vec![]).set_target, Some(SetTarget::simulator()));
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("eu-prod_2.a").is_ok());
        for bad in ["", "-x", "a b", "ä", "Simulator", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_customer_is_found_by_uuid_or_label() {
        let p = prod();
        assert_eq!(p.resolve_customer("NORTHWIND").unwrap().id, Uuid::from_u128(7));
        let listed = p.resolve_customer(&Uuid::from_u128(7).to_string()).unwrap();
        assert_eq!(listed.label, "Northwind");
        let other = p.resolve_customer(&Uuid::from_u128(8).to_string()).unwrap();
        assert_eq!((other.id, other.label.as_str()), (Uuid::from_u128(8), ""));
        let e = p.resolve_customer("Contoso").unwrap_err();
        assert_eq!(e.field, "customer");
        assert!(e.rule.contains("Northwind"), "{}", e.rule);
    }

    #[test]
    fn the_audience_defaults_to_the_services_application_id() {
        let p: Profile = serde_json::from_str(r#"{"name":"a","baseUrl":"https://x","clientId":"k"}"#).unwrap();
        assert_eq!(p.audience, SERVICE_AUDIENCE);
        assert!(!p.deprecated_sub_customer_mode);
    }
}
