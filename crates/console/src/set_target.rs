//! A profile's set-target operation: how this service sets the version a device's module should
//! update to. The reference does not show that operation (section 4.1: "Other operations on
//! firmware states (for example setting a target version): not shown"), so the console never
//! guesses one: a profile says it, as a method, a path under the base URL and a JSON body, with
//! the placeholders `{deviceId}`, `{moduleId}`, `{version}` and `{packageId}`. Only the built-in
//! simulator profile comes with one, the simulator's own (`PUT
//! /firmware/states/{deviceId}/{moduleId}`, simulator assumption A-38).
//!
//! How values are filled in:
//! - in the path, each value is percent-encoded as one path segment (a `/` in a value never
//!   makes a new segment), and a value that would make a `.` or `..` segment is refused;
//! - in the body, a placeholder standing as a JSON value of its own (`{"v": {version}}`) becomes
//!   a JSON string, and one inside a JSON string (`"dev-{deviceId}"`) becomes the JSON-escaped
//!   text of the value. Each is filled in once: a value holding `{deviceId}` stays as written.
//!
//! "No target" (resetting a target, as an aborted rollout does for devices still updating) is
//! the same operation with `{version}` and `{packageId}` as JSON `null`. That is why these two
//! may stand only as JSON values of their own in the body, never in the path or inside a string.

use dcs_api::firmware::{SetTargetAnswer, SetTargetMethod, SetTargetRequest};
use dcs_api::model::DeviceId;
use dcs_api::Client;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::field_error::FieldError;

/// The placeholders a template may use.
pub const PLACEHOLDERS: [&str; 4] = ["deviceId", "moduleId", "version", "packageId"];
/// Longest path template.
pub const MAX_PATH: usize = 2000;
/// Longest body template.
pub const MAX_BODY: usize = 10_000;

/// The set-target operation as a profile keeps it (in the config file as `[profile.setTarget]`),
/// each field as written; [`SetTarget::check`] names what is wrong with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct SetTarget {
    /// `PUT`, `POST` or `PATCH`.
    pub method: String,
    /// Relative to the base URL, starting with `/`.
    pub path: String,
    /// A JSON document with placeholders.
    pub body: String,
}

/// The values of one request; `version` and `package_id` are `None` to reset the target.
#[derive(Debug, Clone, Copy)]
pub struct Values<'a> {
    pub device_id: &'a str,
    pub module_id: &'a str,
    pub version: Option<&'a str>,
    pub package_id: Option<&'a str>,
}

/// One piece of a template: text as written, or a placeholder (inside a JSON string or not).
#[derive(Debug, PartialEq)]
enum Piece<'a> {
    Text(&'a str),
    Slot { name: &'a str, in_string: bool },
}

impl SetTarget {
    /// The simulator's documented operation (A-38): the built-in simulator profile's setting.
    pub fn simulator() -> SetTarget {
        SetTarget {
            method: "PUT".into(),
            path: "/firmware/states/{deviceId}/{moduleId}".into(),
            body: r#"{"targetFirmwareVersion": {version}}"#.into(),
        }
    }

    /// The operation of the simulator playing `variant`: A-38, or A-38 (alt) at another place.
    pub fn simulator_for(variant: dcs_sim::Variant) -> SetTarget {
        match variant {
            dcs_sim::Variant::Reference => SetTarget::simulator(),
            dcs_sim::Variant::Alt => SetTarget {
                method: "PUT".into(),
                path: "/firmware/devices/{deviceId}/modules/{moduleId}/target".into(),
                body: r#"{"version": {version}}"#.into(),
            },
        }
    }

    /// The method, once checked.
    pub fn method(&self) -> Option<SetTargetMethod> {
        SetTargetMethod::parse(&self.method)
    }

    /// Whether the body names the package (so its id has to be looked up).
    pub fn uses_package(&self) -> bool {
        split(&self.body, true).is_ok_and(|p| p.iter().any(|p| matches!(p, Piece::Slot { name: "packageId", .. })))
    }

    /// One line for people: `PUT /firmware/states/{deviceId}/{moduleId}`.
    pub fn summary(&self) -> String {
        format!("{} {}", self.method.trim().to_ascii_uppercase(), self.path.trim())
    }

    /// Every rule the operation breaks, all at once, each naming its field (`setTarget.method`,
    /// `setTarget.path`, `setTarget.body`). Empty when it is usable.
    pub fn check(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let err = |field: &str, rule: String| FieldError { field: format!("setTarget.{field}"), rule };
        if self.method.trim().is_empty() {
            errors.push(err("method", "is required".into()));
        } else if self.method().is_none() {
            errors.push(err("method", format!("must be PUT, POST or PATCH, not `{}`", self.method.trim())));
        }
        let path = split(&self.path, false);
        match (&path, self.path.as_str()) {
            (_, "") => errors.push(err("path", "is required".into())),
            (_, p) if p.chars().count() > MAX_PATH => {
                errors.push(err("path", format!("must be at most {MAX_PATH} characters")))
            }
            (Err(rule), _) => errors.push(err("path", rule.clone())),
            (Ok(pieces), p) => errors.extend(check_path(p, pieces).err().map(|r| err("path", r))),
        }
        let path_ok = !errors.iter().any(|e| e.field == "setTarget.path");
        let body = split(&self.body, true);
        match (&body, self.body.trim()) {
            (_, "") => errors.push(err(
                "body",
                "is required (a JSON document such as {\"targetFirmwareVersion\": {version}})".into(),
            )),
            (_, b) if b.chars().count() > MAX_BODY => {
                errors.push(err("body", format!("must be at most {MAX_BODY} characters")))
            }
            (Err(rule), _) => errors.push(err("body", rule.clone())),
            (Ok(pieces), _) => errors.extend(check_body(pieces).err().map(|r| err("body", r))),
        }
        let names = |p: &Result<Vec<Piece>, String>, n: &str| {
            p.as_ref().is_ok_and(|p| p.iter().any(|p| matches!(p, Piece::Slot { name, .. } if *name == n)))
        };
        let body_ok = !errors.iter().any(|e| e.field == "setTarget.body");
        if path_ok && body_ok && !names(&path, "deviceId") && !names(&body, "deviceId") {
            errors.push(err("path", "must name the device: put {deviceId} in the path or the body".into()));
        }
        errors
    }

    /// The request for `values`: the path with its values percent-encoded, the body with its
    /// values JSON-escaped (`null` for a reset), checked to be JSON. Refuses a broken template
    /// (see [`SetTarget::check`]) and a value that cannot stand in the path.
    pub fn request(&self, values: Values<'_>) -> Result<SetTargetRequest, FieldError> {
        if let Some(e) = self.check().into_iter().next() {
            return Err(e);
        }
        if let Some(e) = self.check_values(values).into_iter().next() {
            return Err(e);
        }
        let method = self.method().expect("checked");
        let mut path = String::new();
        for piece in split(&self.path, false).expect("checked") {
            match piece {
                Piece::Text(t) => path.push_str(t),
                Piece::Slot { name, .. } => path.push_str(&percent_encode(path_value(name, values))),
            }
        }
        let body = fill_body(split(&self.body, true).expect("checked"), values);
        let body = serde_json::from_str(&body).map_err(|e| FieldError {
            field: "setTarget.body".into(),
            rule: format!("is not valid JSON once its values are filled in ({e})"),
        })?;
        Ok(SetTargetRequest { method, path, body })
    }
}

impl SetTarget {
    /// Every value of one request that cannot stand as a segment of the path (empty, `.` or
    /// `..`), all at once, each named by its placeholder (`deviceId`, `moduleId`). Empty when
    /// the path takes them, or when the path does not read (see [`SetTarget::check`]).
    pub fn check_values(&self, values: Values<'_>) -> Vec<FieldError> {
        let mut errors: Vec<FieldError> = Vec::new();
        for piece in split(&self.path, false).unwrap_or_default() {
            let Piece::Slot { name, .. } = piece else { continue };
            let value = path_value(name, values);
            if (value.is_empty() || value.chars().all(|c| c == '.')) && !errors.iter().any(|e| e.field == name) {
                errors.push(FieldError {
                    field: name.to_owned(),
                    rule: format!("`{value}` cannot stand as a segment of the path"),
                });
            }
        }
        errors
    }
}

/// The value a path placeholder stands for (only `{deviceId}` and `{moduleId}` may stand there).
fn path_value<'a>(name: &str, values: Values<'a>) -> &'a str {
    match name {
        "deviceId" => values.device_id,
        _ => values.module_id,
    }
}

/// A set-target operation as a form or the command line holds it: every field as typed. Blank
/// path and body mean "none" (the method alone, a select's value, is not a setting).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct SetTargetDraft {
    pub method: String,
    pub path: String,
    pub body: String,
}

impl SetTargetDraft {
    /// The setting as typed (method upper-cased, path trimmed), or `None` when blank.
    pub fn parse(&self) -> Option<SetTarget> {
        if self.path.trim().is_empty() && self.body.trim().is_empty() {
            return None;
        }
        Some(SetTarget {
            method: self.method.trim().to_ascii_uppercase(),
            path: self.path.trim().to_owned(),
            body: self.body.trim().to_owned(),
        })
    }

    pub fn of(s: Option<&SetTarget>) -> SetTargetDraft {
        match s {
            Some(s) => SetTargetDraft { method: s.method.clone(), path: s.path.clone(), body: s.body.clone() },
            None => SetTargetDraft { method: "PUT".into(), ..Default::default() },
        }
    }
}

/// Splits a template into text and placeholders. `json` tracks JSON strings (the body), so a
/// placeholder knows whether it stands inside one. A `{` or `}` that is not part of a
/// placeholder is JSON's own in the body, and refused in the path.
fn split(template: &str, json: bool) -> Result<Vec<Piece<'_>>, String> {
    let known = || PLACEHOLDERS.iter().map(|p| format!("{{{p}}}")).collect::<Vec<_>>().join(", ");
    let mut pieces = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    let mut text_start = 0;
    let bytes = template.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if json && in_string && escaped {
            escaped = false;
        } else if json && in_string && b == b'\\' {
            escaped = true;
        } else if json && b == b'"' {
            in_string = !in_string;
        } else if b == b'{' {
            // `{name}`: letters, digits and `_` between the braces.
            let rest = &template[i + 1..];
            let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            if len > 0 && rest[len..].starts_with('}') {
                let name = &rest[..len];
                if !PLACEHOLDERS.contains(&name) {
                    return Err(format!("names an unknown placeholder {{{name}}}; the known ones are {}", known()));
                }
                if text_start < i {
                    pieces.push(Piece::Text(&template[text_start..i]));
                }
                pieces.push(Piece::Slot { name, in_string });
                i += len + 2;
                text_start = i;
                continue;
            }
            if !json || in_string {
                return Err(format!(
                    "has a `{{` that does not open a placeholder such as {{deviceId}} (the known ones are {})",
                    known()
                ));
            }
        } else if b == b'}' && (!json || in_string) {
            return Err("has a `}` that does not close a placeholder".into());
        }
        i += 1;
    }
    if text_start < bytes.len() {
        pieces.push(Piece::Text(&template[text_start..]));
    }
    Ok(pieces)
}

fn check_path(path: &str, pieces: &[Piece<'_>]) -> Result<(), String> {
    if !path.starts_with('/') {
        return Err(
            "must start with `/` (it is relative to the base URL, e.g. /firmware/states/{deviceId}/{moduleId})".into(),
        );
    }
    if path.starts_with("//") || path.contains("://") || path.contains('\\') {
        return Err("must be a path under the base URL, without a scheme or host".into());
    }
    if path.contains(['?', '#']) {
        return Err("must not carry a query or fragment".into());
    }
    if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("must not contain spaces or control characters".into());
    }
    if path
        .split('/')
        .any(|s| matches!(s.to_ascii_lowercase().as_str(), "." | ".." | "%2e" | "%2e%2e" | ".%2e" | "%2e."))
    {
        return Err("must not contain `.` or `..` segments".into());
    }
    for piece in pieces {
        if let Piece::Slot { name: name @ ("version" | "packageId"), .. } = piece {
            return Err(format!(
                "cannot hold {{{name}}}: resetting a target sends no version, so {{{name}}} goes in the body as a JSON value"
            ));
        }
    }
    Ok(())
}

fn check_body(pieces: &[Piece<'_>]) -> Result<(), String> {
    for piece in pieces {
        if let Piece::Slot { name: name @ ("version" | "packageId"), in_string: true } = piece {
            return Err(format!(
                "must hold {{{name}}} as a JSON value of its own, not inside quotes (it becomes a string, or null to reset the target)"
            ));
        }
    }
    if !pieces.iter().any(|p| matches!(p, Piece::Slot { name: "version", .. })) {
        return Err("must hold {version} where the service expects the target version".into());
    }
    // Valid JSON with sample values, both to set and to reset a target.
    let sample = |version| Values { device_id: "d", module_id: "m", version, package_id: version };
    for values in [sample(Some("1.0.0")), sample(None)] {
        if let Err(e) = serde_json::from_str::<serde_json::Value>(&fill_body_ref(pieces, values)) {
            return Err(format!("must be a JSON document once its placeholders are filled in ({e})"));
        }
    }
    Ok(())
}

fn fill_body(pieces: Vec<Piece<'_>>, values: Values<'_>) -> String {
    fill_body_ref(&pieces, values)
}

fn fill_body_ref(pieces: &[Piece<'_>], values: Values<'_>) -> String {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Slot { name, in_string } => {
                let value = match *name {
                    "deviceId" => Some(values.device_id),
                    "moduleId" => Some(values.module_id),
                    "version" => values.version,
                    _ => values.package_id,
                };
                let json = match value {
                    Some(v) => serde_json::Value::String(v.to_owned()).to_string(),
                    None => "null".to_owned(),
                };
                if *in_string {
                    // Inside a string: the escaped text, without its quotes.
                    out.push_str(&json[1..json.len() - 1]);
                } else {
                    out.push_str(&json);
                }
            }
        }
    }
    out
}

/// Everything but the unreserved characters of RFC 3986 percent-encoded (UTF-8 bytes).
fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Sets (or with `version` `None` resets) the target of `module` on `device` with the profile's
/// operation. `package` is the package of `version`, needed only when the template names it.
pub async fn send(
    client: &Client,
    op: &SetTarget,
    device: &DeviceId,
    module: Uuid,
    version: Option<&str>,
    package: Option<Uuid>,
) -> Result<SetTargetAnswer, dcs_api::Error> {
    let (device, module, package) = (device.to_string(), module.to_string(), package.map(|p| p.to_string()));
    let request =
        op.request(Values { device_id: &device, module_id: &module, version, package_id: package.as_deref() })?;
    client.firmware().send_set_target(&request).await
}

/// The id of `module`'s package of `version`, from the service's package listing (for templates
/// that name `{packageId}`).
pub async fn package_of(client: &Client, module: Uuid, version: &str) -> Result<Option<Uuid>, dcs_api::Error> {
    use futures::TryStreamExt;
    let filter = dcs_api::firmware::PackageFilter { module_id: Some(module), ..Default::default() };
    let mut packages = std::pin::pin!(client.firmware().packages(&filter)?);
    while let Some(p) = packages.try_next().await? {
        if p.module_id == module && p.firmware_version == version {
            return Ok(Some(p.id));
        }
    }
    Ok(None)
}

/// What "test on one device" did: the state before, the request sent, what the service
/// answered, and the state after.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct TestReport {
    pub before: dcs_api::model::FirmwareState,
    /// `PUT /firmware/states/…/…` as sent.
    pub request: String,
    /// The JSON body sent.
    pub request_body: String,
    /// The service's answer as JSON text; `None` when it sent no body.
    pub answer: Option<String>,
    /// The state read again after the request; `None` if the service no longer lists it.
    pub after: Option<dcs_api::model::FirmwareState>,
}

/// The device and module of "test on one device", as typed: both UUIDs, or every one that is
/// not, named at once (`deviceId`, `moduleId`).
pub fn test_ids(device_id: &str, module_id: &str) -> Result<(Uuid, Uuid), Vec<FieldError>> {
    let mut broken = Vec::new();
    let mut uuid = |field: &str, text: &str, rule: &str| {
        Uuid::parse_str(text.trim())
            .map_err(|_| broken.push(FieldError { field: field.to_owned(), rule: rule.to_owned() }))
            .ok()
    };
    let device = uuid("deviceId", device_id, "must be the device's UUID (as firmware states name it)");
    let module = uuid("moduleId", module_id, "must be the firmware module's UUID");
    match (device, module) {
        (Some(device), Some(module)) => Ok((device, module)),
        _ => Err(broken),
    }
}

/// Proves an operation on one device without changing anything: reads the device's state of
/// `module`, sends the operation with the version the device runs now as its target (a no-op),
/// and reads the state again. Refused (before any request is sent) when the device has an
/// update under way, since a new target would replace it.
pub async fn test_on_device(
    client: &Client,
    op: &SetTarget,
    device: Uuid,
    module: Uuid,
) -> Result<TestReport, dcs_api::Error> {
    let invalid = |field: &str, rule: String| dcs_api::Error::InvalidInput { field: field.into(), rule };
    if let Some(e) = op.check().into_iter().next() {
        return Err(e.into());
    }
    let before = state_of(client, device, module).await?.ok_or_else(|| {
        invalid("deviceId", format!("the service lists no firmware state of module {module} on device {device}"))
    })?;
    let Some(current) = before.current_firmware_version.clone() else {
        return Err(invalid("deviceId", "the device reports no current version of this module, so there is no version to set without changing anything; pick another device".into()));
    };
    if let Some(target) = before.target_firmware_version.as_deref().filter(|t| *t != current) {
        return Err(invalid(
            "deviceId",
            format!("the device is updating from {current} to {target}; setting a target now would replace that update, so pick a device with no update under way"),
        ));
    }
    let package = if op.uses_package() {
        Some(package_of(client, module, &current).await?.ok_or_else(|| {
            invalid(
                "setTarget.body",
                format!("the body names {{packageId}}, and the service lists no package {current} of module {module}"),
            )
        })?)
    } else {
        None
    };
    let (d, m, p) = (device.to_string(), module.to_string(), package.map(|p| p.to_string()));
    let request =
        op.request(Values { device_id: &d, module_id: &m, version: Some(&current), package_id: p.as_deref() })?;
    let answer = client.firmware().send_set_target(&request).await?;
    let after = state_of(client, device, module).await?;
    Ok(TestReport {
        before,
        request: format!("{} {}", request.method.as_str(), request.path),
        request_body: request.body.to_string(),
        answer: (!answer.body.is_null()).then(|| answer.body.to_string()),
        after,
    })
}

/// The state of `module` on `device`, asked with the listing's filters and matched here too (a
/// service that does not filter is read page by page).
async fn state_of(
    client: &Client,
    device: Uuid,
    module: Uuid,
) -> Result<Option<dcs_api::model::FirmwareState>, dcs_api::Error> {
    use futures::TryStreamExt;
    let filter = dcs_api::firmware::StateFilter {
        device_id: Some(device.to_string()),
        module_id: Some(module),
        ..Default::default()
    };
    let mut states = std::pin::pin!(client.firmware().states(&filter)?);
    while let Some(s) = states.try_next().await? {
        if s.device_id == device && s.module_id == module {
            return Ok(Some(s));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn op(method: &str, path: &str, body: &str) -> SetTarget {
        SetTarget { method: method.into(), path: path.into(), body: body.into() }
    }

    fn fields(s: &SetTarget) -> Vec<String> {
        s.check().into_iter().map(|e| e.field).collect()
    }

    fn values<'a>(device: &'a str, version: Option<&'a str>) -> Values<'a> {
        Values { device_id: device, module_id: "m1", version, package_id: version.map(|_| "p1") }
    }

    #[test]
    fn the_simulators_operation_is_valid_and_fills_in() {
        let s = SetTarget::simulator();
        assert_eq!(s.check(), vec![]);
        let r = s.request(values("d1", Some("1.2.0"))).unwrap();
        assert_eq!((r.method, r.path.as_str()), (SetTargetMethod::Put, "/firmware/states/d1/m1"));
        assert_eq!(r.body, json!({"targetFirmwareVersion": "1.2.0"}));
        let reset = s.request(values("d1", None)).unwrap();
        assert_eq!(reset.body, json!({"targetFirmwareVersion": null}));
        assert!(!s.uses_package());
    }

    #[test]
    fn every_broken_field_is_named_with_its_rule_at_once() {
        let bad = op("DELETE", "firmware/{deviceId}", "{\"v\": \"{version}\"");
        let errors = bad.check();
        let named: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(named, ["setTarget.method", "setTarget.path", "setTarget.body"], "{errors:?}");
        assert!(errors[0].rule.contains("PUT, POST or PATCH"), "{}", errors[0].rule);
        assert!(errors[1].rule.contains("start with `/`"), "{}", errors[1].rule);
        assert!(errors[2].rule.contains("not inside quotes"), "{}", errors[2].rule);
        assert_eq!(fields(&op("", "", "")), ["setTarget.method", "setTarget.path", "setTarget.body"]);
    }

    #[test]
    fn the_path_has_no_scheme_host_query_or_dot_segments() {
        let body = r#"{"v": {version}}"#;
        for path in [
            "https://evil.example/{deviceId}",
            "//evil.example/{deviceId}",
            "/a://b/{deviceId}",
            "/a\\b/{deviceId}",
            "/x/{deviceId}?force=1",
            "/x/{deviceId}#f",
            "/x/../{deviceId}",
            "/x/%2E%2e/{deviceId}",
            "/x/./{deviceId}",
            "/x y/{deviceId}",
            "/x/{deviceId}/{version}",
            "/x/{packageId}/{deviceId}",
            "/x/{device}",
            "/x/{deviceId",
            "/x/}{deviceId}",
        ] {
            assert_eq!(fields(&op("PUT", path, body)), ["setTarget.path"], "{path:?} accepted");
        }
        assert_eq!(fields(&op("patch", "/d/{moduleId}", body)), ["setTarget.path"], "no {{deviceId}} anywhere");
        assert_eq!(fields(&op("POST", "/targets", r#"{"device": {deviceId}, "v": {version}}"#)), Vec::<String>::new());
    }

    #[test]
    fn the_body_is_json_with_known_placeholders_and_a_version() {
        let path = "/x/{deviceId}";
        for body in [
            r#"{"v": {version}, "w": {nope}}"#,
            r#"{"v": "{version}"}"#,
            r#"{"p": "{packageId}", "v": {version}}"#,
            r#"{"device": {deviceId}}"#,
            r#"{"v": {version}"#,
            r#"{"v": {version}} trailing"#,
            r#"{"v": "{ not a placeholder", "w": {version}}"#,
        ] {
            assert_eq!(fields(&op("PUT", path, body)), ["setTarget.body"], "{body:?} accepted");
        }
        let nested = op(
            "PATCH",
            path,
            r#"{"target": {"version": {version}, "package": {packageId}, "note": "for {deviceId} \"{moduleId}\""}}"#,
        );
        assert_eq!(nested.check(), vec![]);
        assert!(nested.uses_package());
    }

    #[test]
    fn hostile_values_are_escaped_in_the_body_and_encoded_in_the_path() {
        let s = op(
            "POST",
            "/devices/{deviceId}/modules/{moduleId}/target",
            r#"{"version": {version}, "module": "m={moduleId}", "device": "dev-{deviceId}"}"#,
        );
        assert_eq!(s.check(), vec![]);
        for hostile in ["a/b", "..", "x\"y", "nul\u{0}", "{deviceId}", "{", "}\"}, \"x\": {", "ü 1%2F"] {
            let device = format!("d{hostile}");
            let r = s.request(values(&device, Some(hostile))).unwrap();
            assert_eq!(r.body["version"], json!(hostile), "{hostile:?}");
            assert_eq!(r.body["device"], json!(format!("dev-{device}")), "{hostile:?}");
            assert_eq!(r.body.as_object().unwrap().len(), 3, "{hostile:?} added a member: {}", r.body);
            let segment = r.path.trim_start_matches("/devices/").split('/').next().unwrap();
            assert!(
                segment.chars().all(|c| c.is_ascii_alphanumeric() || "-._~%".contains(c)),
                "{hostile:?}: {}",
                r.path
            );
            assert_eq!(r.path.matches('/').count(), 5, "{hostile:?} made a segment: {}", r.path);
            let url = r.url("https://h.example/api").unwrap();
            assert_eq!((url.host_str(), url.path().starts_with("/api/devices/")), (Some("h.example"), true), "{url}");
        }
        // A value that would be a whole `.` or `..` segment is refused, naming the field.
        for dots in ["..", ".", ""] {
            let e = s.request(values(dots, Some("1.0.0"))).unwrap_err();
            assert_eq!(e.field, "deviceId", "{dots:?}");
        }
        // `{` in a version is only text: it is never filled in a second time.
        let r = s.request(values("d", Some("{moduleId}"))).unwrap();
        assert_eq!(r.body["version"], json!("{moduleId}"));
    }

    /// A request's values are checked like a draft: every one the path cannot take, at once.
    #[test]
    fn both_values_that_cannot_stand_in_the_path_are_named_at_once() {
        let s = SetTarget::simulator();
        let both = Values { device_id: "..", module_id: "", version: Some("1.0.0"), package_id: None };
        let named: Vec<String> = s.check_values(both).into_iter().map(|e| e.field).collect();
        assert_eq!(named, ["deviceId", "moduleId"]);
        assert_eq!(s.request(both).unwrap_err().field, "deviceId", "a request refuses with the first");
        assert_eq!(s.check_values(values("d1", None)), vec![]);
    }

    #[test]
    fn both_ids_of_a_test_on_one_device_are_named_at_once() {
        let named: Vec<String> = test_ids("dev-1", " ").unwrap_err().into_iter().map(|e| e.field).collect();
        assert_eq!(named, ["deviceId", "moduleId"]);
        let (d, m) = (Uuid::new_v4(), Uuid::new_v4());
        assert_eq!(test_ids(&format!(" {d} "), &m.to_string()), Ok((d, m)));
    }

    #[test]
    fn a_blank_draft_is_no_setting_and_a_typed_one_is_kept_as_typed() {
        assert_eq!(SetTargetDraft { method: "PUT".into(), ..Default::default() }.parse(), None);
        let d = SetTargetDraft {
            method: " patch ".into(),
            path: " /x/{deviceId} ".into(),
            body: "{\"v\": {version}}".into(),
        };
        let s = d.parse().unwrap();
        assert_eq!((s.method.as_str(), s.path.as_str()), ("PATCH", "/x/{deviceId}"));
        assert_eq!(SetTargetDraft::of(Some(&s)).parse(), Some(s));
    }
}
