//! Connector bindings as the console's editors handle them, one set of calls for the three kinds
//! (reference sections 2.8, 4.4; simulator assumptions A-56..A-68).
//!
//! Lists answer [`BindingView`]s, which say whether a binding has a secret but never carry it:
//! the secret (`appKey`, `sharedSecret`, `password`) is fetched only by [`reveal`], when the
//! operator asks. An editor sends a [`BindingDraft`]; an update starts from the binding as the
//! service holds it ([`update`] reads it first): a draft without a secret keeps the stored one
//! so a full `PUT` does not make the operator retype a key, and members this version
//! does not know are sent back, not dropped. Every rule is the client's ([`BindingSpec::check`]).

use dcs_api::bindings::{BindingFilter, BindingSpec, Http, KindBindings, Lora, Mqtt};
use dcs_api::model::{
    secrets, BindingKind, HttpBinding, HttpBindingRequest, HttpBindingType, LoraBinding, LoraBindingRequest,
    MqttBinding, MqttBindingRequest, Timestamp,
};
use dcs_api::{Client, Error};
use serde::{Deserialize, Serialize};
use serde_json::Map;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use crate::FieldError;

/// One binding as a list or an editor shows it: the fields of its kind, and whether a secret is
/// stored. Never the secret.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BindingView {
    pub kind: BindingKind,
    pub id: Uuid,
    /// As the service shows it: the device's UUID.
    pub device_id: String,
    /// LoRa: 16 hex characters.
    pub application_server_id: Option<String>,
    /// LoRa: `INVENTORY` or `ACTIVE` (or another value the service sends).
    pub status: Option<String>,
    /// HTTP: `http-streamline` or `http-senml`.
    #[serde(rename = "type")]
    pub binding_type: Option<String>,
    /// MQTT: the device's login, set by the service.
    pub username: Option<String>,
    /// The service holds a secret for it (and answered it, A-61); [`reveal`] fetches it.
    pub has_secret: bool,
    pub created_at: Option<String>,
    pub created_by: Option<String>,
    pub modified_at: Option<String>,
    pub modified_by: Option<String>,
}

/// A binding as an editor holds it: the writable fields of every kind, as typed.
#[derive(Clone, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BindingDraft {
    pub kind: BindingKind,
    /// Any of the seven device-id forms (section 1).
    pub device_id: String,
    /// LoRa only.
    pub application_server_id: Option<String>,
    /// HTTP only: `http-streamline` or `http-senml`.
    #[serde(rename = "type")]
    pub binding_type: Option<String>,
    /// The kind's secret (`appKey`, `sharedSecret`, `password`). On an update, `None` keeps the
    /// stored one.
    pub secret: Option<String>,
}

impl std::fmt::Debug for BindingDraft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BindingDraft")
            .field("kind", &self.kind)
            .field("device_id", &self.device_id)
            .field("application_server_id", &self.application_server_id)
            .field("binding_type", &self.binding_type)
            .field("secret", &self.secret.as_ref().map(|_| "***"))
            .finish()
    }
}

/// Which page of a kind's bindings to fetch: the first for these filters (each as typed, checked
/// here and by the client), or the one a `next` link of an earlier page points to.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BindingPageRequest {
    pub next: Option<String>,
    pub sort: Option<String>,
    /// Owner of the devices (a UUID).
    pub client_id: Option<String>,
    pub device_id: Option<String>,
    /// RFC 3339, or `YYYY-MM-DDTHH:MM` / `YYYY-MM-DD` in UTC.
    pub created_before: Option<String>,
    pub created_since: Option<String>,
    pub modified_before: Option<String>,
    pub modified_since: Option<String>,
    /// HTTP only.
    #[serde(rename = "type")]
    pub binding_type: Option<String>,
    /// MQTT only: exact equality.
    pub username: Option<String>,
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BindingPage {
    pub items: Vec<BindingView>,
    /// Pass back as `next` for the following page; absent on the last page.
    pub next: Option<String>,
}

/// What the console needs of each kind beside the client's [`BindingSpec`].
pub trait EditorKind: BindingSpec + Sized {
    fn api(client: &Client) -> KindBindings<'_, Self>;
    fn view(b: &Self::Binding) -> BindingView;
    fn secret(b: &Self::Binding) -> Option<&str>;
    /// The request body of `draft` with `secret` as the kind's secret.
    fn request(draft: &BindingDraft, secret: String) -> Self::Request;
}

fn ts(t: &Option<Timestamp>) -> Option<String> {
    t.and_then(|t| t.format(&Rfc3339).ok())
}

fn text(s: &Option<String>) -> String {
    s.as_deref().map(str::trim).unwrap_or_default().to_owned()
}

impl EditorKind for Lora {
    fn api(client: &Client) -> KindBindings<'_, Self> {
        client.bindings().lora()
    }
    fn view(b: &LoraBinding) -> BindingView {
        BindingView {
            kind: BindingKind::Lora,
            id: b.id,
            device_id: b.device_id.clone(),
            application_server_id: b.application_server_id.clone(),
            status: b.status.as_ref().map(ToString::to_string),
            binding_type: None,
            username: None,
            has_secret: b.app_key.is_some(),
            created_at: ts(&b.created_at),
            created_by: b.created_by.clone(),
            modified_at: ts(&b.modified_at),
            modified_by: b.modified_by.clone(),
        }
    }
    fn secret(b: &LoraBinding) -> Option<&str> {
        b.app_key.as_deref()
    }
    fn request(d: &BindingDraft, secret: String) -> LoraBindingRequest {
        LoraBindingRequest {
            device_id: d.device_id.trim().to_owned(),
            application_server_id: text(&d.application_server_id),
            app_key: secret.trim().to_owned(),
            extra: Map::new(),
        }
    }
}

impl EditorKind for Http {
    fn api(client: &Client) -> KindBindings<'_, Self> {
        client.bindings().http()
    }
    fn view(b: &HttpBinding) -> BindingView {
        BindingView {
            kind: BindingKind::Http,
            id: b.id,
            device_id: b.device_id.clone(),
            application_server_id: None,
            status: None,
            binding_type: b.binding_type.as_ref().map(ToString::to_string),
            username: None,
            has_secret: b.shared_secret.is_some(),
            created_at: ts(&b.created_at),
            created_by: b.created_by.clone(),
            modified_at: ts(&b.modified_at),
            modified_by: b.modified_by.clone(),
        }
    }
    fn secret(b: &HttpBinding) -> Option<&str> {
        b.shared_secret.as_deref()
    }
    fn request(d: &BindingDraft, secret: String) -> HttpBindingRequest {
        HttpBindingRequest {
            device_id: d.device_id.trim().to_owned(),
            binding_type: HttpBindingType::from(text(&d.binding_type).as_str()),
            // A secret is taken as typed: spaces are part of what the rule checks.
            shared_secret: secret,
            extra: Map::new(),
        }
    }
}

impl EditorKind for Mqtt {
    fn api(client: &Client) -> KindBindings<'_, Self> {
        client.bindings().mqtt()
    }
    fn view(b: &MqttBinding) -> BindingView {
        BindingView {
            kind: BindingKind::Mqtt,
            id: b.id,
            device_id: b.device_id.clone(),
            application_server_id: None,
            status: None,
            binding_type: None,
            username: b.username.clone(),
            has_secret: b.password.is_some(),
            created_at: ts(&b.created_at),
            created_by: b.created_by.clone(),
            modified_at: ts(&b.modified_at),
            modified_by: b.modified_by.clone(),
        }
    }
    fn secret(b: &MqttBinding) -> Option<&str> {
        b.password.as_deref()
    }
    fn request(d: &BindingDraft, secret: String) -> MqttBindingRequest {
        MqttBindingRequest { device_id: d.device_id.trim().to_owned(), password: secret, extra: Map::new() }
    }
}

/// Runs `$body` with `$S` standing for the kind's type ([`Lora`], [`Http`] or [`Mqtt`]).
macro_rules! by_kind {
    ($kind:expr, $S:ident => $body:expr) => {
        match $kind {
            BindingKind::Lora => {
                type $S = Lora;
                $body
            }
            BindingKind::Http => {
                type $S = Http;
                $body
            }
            BindingKind::Mqtt => {
                type $S = Mqtt;
                $body
            }
        }
    };
}

/// The field that holds `kind`'s secret.
pub fn secret_field(kind: BindingKind) -> &'static str {
    by_kind!(kind, S => S::SECRET_FIELD)
}

/// Every rule `draft` breaks, for the editor as the user types. `editing`: the draft replaces a
/// stored binding, so no secret means "keep the stored one" and is not an error.
pub fn check(draft: &BindingDraft, editing: bool) -> Vec<FieldError> {
    by_kind!(draft.kind, S => {
        let keep = editing && draft.secret.is_none();
        let req = S::request(draft, draft.secret.clone().unwrap_or_default());
        let mut errors: Vec<FieldError> = S::check(&req)
            .into_iter()
            .filter(|e| !(keep && e.field == S::SECRET_FIELD))
            .collect();
        // A new binding needs a secret to send, whether or not the kind's rule is known.
        if !editing && draft.secret.as_deref().is_none_or(str::is_empty) && !errors.iter().any(|e| e.field == S::SECRET_FIELD) {
            errors.push(FieldError { field: S::SECRET_FIELD.to_owned(), rule: "is required".into() });
        }
        errors
    })
}

/// The secret a `PUT` sends: the one typed, else the one stored (`field` names it when the
/// service did not answer one to keep).
pub fn merge_secret(typed: Option<String>, stored: Option<&str>, field: &str) -> Result<String, FieldError> {
    match (typed, stored) {
        (Some(typed), _) => Ok(typed),
        (None, Some(stored)) => Ok(stored.to_owned()),
        (None, None) => Err(FieldError {
            field: field.to_owned(),
            rule: "the service did not send the stored secret back, so it cannot be kept: type it again".into(),
        }),
    }
}

fn invalid(field: &str, rule: &str) -> Error {
    Error::InvalidInput { field: field.to_owned(), rule: rule.to_owned() }
}

fn optional(s: Option<&str>) -> Option<String> {
    s.map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
}

/// The client's filter for `req` (the `next` link aside).
pub fn filter(kind: BindingKind, req: &BindingPageRequest) -> Result<BindingFilter, FieldError> {
    let client_id = match optional(req.client_id.as_deref()) {
        None => None,
        Some(s) => Some(
            Uuid::parse_str(&s).map_err(|_| FieldError { field: "clientId".into(), rule: "must be a UUID".into() })?,
        ),
    };
    let binding_type = optional(req.binding_type.as_deref()).map(|t| HttpBindingType::from(t.as_str()));
    let username = optional(req.username.as_deref());
    if kind != BindingKind::Http && binding_type.is_some() {
        return Err(FieldError { field: "type".into(), rule: "filters HTTP bindings only".into() });
    }
    if kind != BindingKind::Mqtt && username.is_some() {
        return Err(FieldError { field: "username".into(), rule: "filters MQTT bindings only".into() });
    }
    Ok(BindingFilter {
        client_id,
        device_id: optional(req.device_id.as_deref()),
        time: crate::filters::time_filter(
            req.created_before.as_deref(),
            req.created_since.as_deref(),
            req.modified_before.as_deref(),
            req.modified_since.as_deref(),
        )?,
        binding_type,
        username,
        sort: optional(req.sort.as_deref()),
        limit: req.limit,
    })
}

async fn page_of<S: EditorKind>(client: &Client, req: &BindingPageRequest) -> Result<BindingPage, Error> {
    let api = S::api(client);
    let (page, next) = match optional(req.next.as_deref()) {
        Some(link) => {
            let link = url::Url::parse(&link).map_err(|_| invalid("next", "must be a page link"))?;
            api.page_at(&link).await?
        }
        None => api.page(&filter(S::KIND, req)?).await?,
    };
    Ok(BindingPage { items: page.items.iter().map(S::view).collect(), next: next.map(|u| u.to_string()) })
}

/// One page of `kind`'s bindings, without their secrets.
pub async fn page(client: &Client, kind: BindingKind, req: &BindingPageRequest) -> Result<BindingPage, Error> {
    by_kind!(kind, S => page_of::<S>(client, req).await)
}

/// One binding as the service holds it now, without its secret.
pub async fn get(client: &Client, kind: BindingKind, id: Uuid) -> Result<BindingView, Error> {
    by_kind!(kind, S => S::api(client).get(id).await.map(|b| S::view(&b)))
}

/// The stored secret of a binding, for the operator who asked to see or copy it.
pub async fn reveal(client: &Client, kind: BindingKind, id: Uuid) -> Result<String, Error> {
    by_kind!(kind, S => {
        let b = S::api(client).get(id).await?;
        S::secret(&b).map(str::to_owned).ok_or_else(|| {
            invalid(S::SECRET_FIELD, "the service did not send this binding's secret (it may mask secrets)")
        })
    })
}

/// Creates a binding from `draft`; its secret is required.
pub async fn create(client: &Client, draft: &BindingDraft) -> Result<BindingView, Error> {
    by_kind!(draft.kind, S => {
        let secret = merge_secret(draft.secret.clone(), None, S::SECRET_FIELD)
            .map_err(|_| invalid(S::SECRET_FIELD, "is required"))?;
        let made = S::api(client).create(&S::request(draft, secret)).await?;
        Ok(S::view(&made))
    })
}

/// Replaces binding `id` with `draft` (a full `PUT`), starting from the binding as the service
/// holds it: it is read first, a draft without a secret keeps the stored one, and the members of
/// the binding this version does not know are sent back unchanged.
pub async fn update(client: &Client, id: Uuid, draft: &BindingDraft) -> Result<BindingView, Error> {
    // Check the typed fields first, so a bad value is named before any request.
    if let Some(e) = check(draft, true).into_iter().next() {
        return Err(invalid(&e.field, &e.rule));
    }
    by_kind!(draft.kind, S => {
        let api = S::api(client);
        let current = api.get(id).await?;
        let secret = merge_secret(draft.secret.clone(), S::secret(&current), S::SECRET_FIELD)?;
        let mut req = S::request(draft, secret);
        S::carry_unknown_members(&current, &mut req);
        let updated = api.update(id, &req).await?;
        Ok(S::view(&updated))
    })
}

pub async fn delete(client: &Client, kind: BindingKind, id: Uuid) -> Result<(), Error> {
    by_kind!(kind, S => S::api(client).delete(id).await)
}

/// A LoRa binding after the service fetched its latest state from the network server.
pub async fn sync_lora(client: &Client, id: Uuid) -> Result<BindingView, Error> {
    let b = client.bindings().lora().get_synced(id, true).await?;
    Ok(Lora::view(&b))
}

/// Deletes each binding of `kind` in `ids`, one after the other; each has its outcome (a
/// refusal does not stop the others).
pub async fn delete_many(
    client: &Client,
    kind: BindingKind,
    ids: &[Uuid],
) -> Result<Vec<crate::bulk::ItemOutcome>, FieldError> {
    crate::bulk::check_items(ids)?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        out.push(crate::bulk::ItemOutcome::of(id.to_string(), delete(client, kind, *id).await));
    }
    Ok(out)
}

/// The columns of a binding list's CSV: never a secret, only whether one is stored.
pub const CSV_HEADER: [&str; 16] = [
    "id",
    "kind",
    "deviceId",
    "deviceName",
    "imei",
    "devEui",
    "applicationServerId",
    "status",
    "type",
    "username",
    "secretStored",
    "createdAt",
    "createdBy",
    "modifiedAt",
    "modifiedBy",
    "deviceDescription",
];

/// One binding as a CSV row, its device named by `device`. A [`BindingView`] carries no secret.
pub fn csv_row(b: &BindingView, device: &crate::devices::DeviceLabel) -> Vec<String> {
    let o = |v: &Option<String>| v.clone().unwrap_or_default();
    vec![
        b.id.to_string(),
        b.kind.to_string(),
        b.device_id.clone(),
        o(&device.name),
        o(&device.imei),
        o(&device.dev_eui),
        o(&b.application_server_id),
        o(&b.status),
        o(&b.binding_type),
        o(&b.username),
        b.has_secret.to_string(),
        o(&b.created_at),
        o(&b.created_by),
        o(&b.modified_at),
        o(&b.modified_by),
        o(&device.description),
    ]
}

/// Writes every binding of `kind` the request's filters and sort give (every page) to `path` as
/// CSV, each device named from `names`; answers the number of rows. No secret is written.
pub async fn export_csv(
    client: &Client,
    kind: BindingKind,
    req: &BindingPageRequest,
    names: &crate::devices::Directory,
    path: &std::path::Path,
) -> Result<u32, Error> {
    let mut req = BindingPageRequest { next: None, ..req.clone() };
    let mut file = crate::csv_file::CsvFile::create(path, &CSV_HEADER)?;
    loop {
        let page = page(client, kind, &req).await?;
        for b in &page.items {
            if file.rows() >= crate::downlinks::MAX_EXPORT_ROWS {
                return Err(invalid("filters", "match more bindings than one export writes; narrow them"));
            }
            file.row(csv_row(b, &names.label(&b.device_id)))?;
        }
        match page.next {
            Some(next) => req.next = Some(next),
            None => break,
        }
    }
    file.finish()
}

/// A fresh secret for `kind` that passes its rule, from the operating system's randomness: an
/// MQTT password or an HTTP shared secret. A LoRa `appKey` is provisioned in the device, so it
/// is not made up here.
pub fn generate_secret(kind: BindingKind) -> Result<String, FieldError> {
    let mut rng = rand::rngs::OsRng;
    match kind {
        BindingKind::Mqtt => Ok(secrets::mqtt_password(&mut rng)),
        BindingKind::Http => Ok(secrets::shared_secret(&mut rng)),
        BindingKind::Lora => Err(FieldError {
            field: "appKey".into(),
            rule: "is provisioned in the device by its maker: type the device's key".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcs_api::model::{validate, LoraBindingStatus};

    fn draft(kind: BindingKind, secret: Option<&str>) -> BindingDraft {
        BindingDraft {
            kind,
            device_id: " deveui:70b3d57ed0000001 ".into(),
            application_server_id: Some("0011223344556677".into()),
            binding_type: Some("http-senml".into()),
            secret: secret.map(str::to_owned),
        }
    }

    fn fields(errors: Vec<FieldError>) -> Vec<String> {
        errors.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn check_names_each_field_and_a_kept_secret_is_no_error() {
        let mut d = draft(BindingKind::Lora, Some("00112233"));
        d.application_server_id = Some("00112233445566778".into());
        let errors = check(&d, false);
        assert_eq!(fields(errors.clone()), ["applicationServerId", "appKey"]);
        assert!(errors[0].rule.contains("16 hex"), "{}", errors[0].rule);

        // No key on a new binding is an error; on an edit it keeps the stored one.
        assert_eq!(fields(check(&draft(BindingKind::Lora, None), false)), ["appKey"]);
        assert!(check(&draft(BindingKind::Lora, None), true).is_empty());
        // A key typed on an edit is checked.
        assert_eq!(fields(check(&draft(BindingKind::Lora, Some("xyz")), true)), ["appKey"]);

        let weak = check(&draft(BindingKind::Mqtt, Some("password")), false);
        assert_eq!(fields(weak.clone()), ["password"]);
        assert!(weak[0].rule.contains("upper-case"), "{}", weak[0].rule);

        let mut h = draft(BindingKind::Http, Some("a shared secret with spaces"));
        h.binding_type = Some("http-xml".into());
        h.device_id = "imei:12".into();
        // The sharedSecret rule is not shown: the service judges a typed one (A-62 is the
        // simulator's), but a new binding still needs one.
        assert_eq!(fields(check(&h, false)), ["deviceId", "type"]);
        h.secret = None;
        assert_eq!(fields(check(&h, false)), ["deviceId", "type", "sharedSecret"]);
        assert_eq!(fields(check(&h, true)), ["deviceId", "type"]);
    }

    #[test]
    fn a_kept_secret_is_the_stored_one_and_a_typed_one_wins() {
        assert_eq!(merge_secret(None, Some("stored"), "appKey").unwrap(), "stored");
        assert_eq!(merge_secret(Some("typed".into()), Some("stored"), "appKey").unwrap(), "typed");
        let e = merge_secret(None, None, "password").unwrap_err();
        assert_eq!(e.field, "password");
    }

    #[test]
    fn requests_take_the_fields_of_their_kind() {
        let r = Lora::request(&draft(BindingKind::Lora, None), " 00112233445566778899aabbccddeeff ".into());
        assert_eq!(r.device_id, "deveui:70b3d57ed0000001");
        assert_eq!(r.app_key, "00112233445566778899aabbccddeeff");
        let h = Http::request(&draft(BindingKind::Http, None), "kept as typed ".into());
        assert_eq!(h.binding_type, HttpBindingType::Senml);
        assert_eq!(h.shared_secret, "kept as typed ");
    }

    #[test]
    fn views_say_a_secret_is_there_but_never_carry_it() {
        let b = LoraBinding {
            id: Uuid::nil(),
            device_id: "d".into(),
            application_server_id: Some("0011223344556677".into()),
            app_key: Some("00112233445566778899aabbccddeeff".into()),
            status: Some(LoraBindingStatus::Active),
            created_at: Some(time::macros::datetime!(2026-01-05 08:00 UTC)),
            created_by: None,
            modified_at: None,
            modified_by: None,
            extra: Map::new(),
        };
        let v = Lora::view(&b);
        assert!(v.has_secret);
        assert_eq!(v.status.as_deref(), Some("ACTIVE"));
        assert_eq!(v.created_at.as_deref(), Some("2026-01-05T08:00:00Z"));
        let json = serde_json::to_string(&v).unwrap();
        assert!(!json.contains("8899aabb"), "{json}");
        assert!(
            !format!("{:?}", draft(BindingKind::Mqtt, Some("Secret-Password-1234567890"))).contains("Secret-Password")
        );
        let masked = LoraBinding { app_key: None, ..b };
        assert!(!Lora::view(&masked).has_secret);
    }

    #[test]
    fn filters_of_another_kind_are_refused_by_name() {
        let req = BindingPageRequest { binding_type: Some("http-senml".into()), ..Default::default() };
        assert_eq!(filter(BindingKind::Lora, &req).unwrap_err().field, "type");
        assert!(filter(BindingKind::Http, &req).unwrap().binding_type.is_some());
        let req = BindingPageRequest { username: Some("urn:dev:imei:1:".into()), ..Default::default() };
        assert_eq!(filter(BindingKind::Http, &req).unwrap_err().field, "username");
        let req = BindingPageRequest { client_id: Some("nope".into()), ..Default::default() };
        assert_eq!(filter(BindingKind::Mqtt, &req).unwrap_err().field, "clientId");
        let req = BindingPageRequest { device_id: Some("  ".into()), sort: Some("".into()), ..Default::default() };
        let f = filter(BindingKind::Mqtt, &req).unwrap();
        assert_eq!((f.device_id, f.sort), (None, None));
    }

    #[test]
    fn generated_secrets_pass_their_rules_and_lora_keys_are_not_made_up() {
        assert_eq!(validate::mqtt_password(&generate_secret(BindingKind::Mqtt).unwrap()), Ok(()));
        assert_eq!(validate::shared_secret(&generate_secret(BindingKind::Http).unwrap()), Ok(()));
        assert_eq!(generate_secret(BindingKind::Lora).unwrap_err().field, "appKey");
    }
}
