//! `dcs-console://` links: one item of the console by kind and id, e.g.
//! `dcs-console://device/imei:490154203237518` or `dcs-console://rollout/<id>`. The desktop app
//! opens them (given as an argument, or handed over by a second launch, [`crate::instance`]);
//! `dcs open <kind> <id>` writes them. A link comes from anywhere (a chat message, a web page,
//! another program): it is parsed strictly, capped in length, and opens an item in the scope
//! the app is in; it never acts.

use dcs_api::model::DeviceId;
use uuid::Uuid;

use crate::FieldError;

/// The scheme of the console's links.
pub const SCHEME: &str = "dcs-console";
/// The longest link taken.
pub const MAX_LINK: usize = 2048;

/// What a link names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum LinkKind {
    /// A device, by any of its id forms.
    Device,
    /// A rollout of the console's fleet database, by its id.
    Rollout,
    /// A firmware module, by its id.
    Module,
    /// A firmware package, by its id.
    Package,
    /// A downlink, by its id.
    Downlink,
    /// A connector binding, by its id.
    Binding,
}

impl LinkKind {
    pub const ALL: [LinkKind; 6] = [
        LinkKind::Device,
        LinkKind::Rollout,
        LinkKind::Module,
        LinkKind::Package,
        LinkKind::Downlink,
        LinkKind::Binding,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::Device => "device",
            LinkKind::Rollout => "rollout",
            LinkKind::Module => "module",
            LinkKind::Package => "package",
            LinkKind::Downlink => "downlink",
            LinkKind::Binding => "binding",
        }
    }

    fn names() -> String {
        Self::ALL.map(Self::as_str).join(", ")
    }

    pub fn parse(s: &str) -> Result<LinkKind, FieldError> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| FieldError::new("kind", format!("must be one of {}; `{}` is not", Self::names(), clip(s))))
    }
}

/// An item a link opens: its kind and its id, normalised (a device id in its canonical form,
/// other ids as lower-case UUIDs).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Link {
    pub kind: LinkKind,
    pub id: String,
}

impl Link {
    /// The item `kind` / `id` as typed (a device id in any of its forms), checked.
    pub fn new(kind: LinkKind, id: &str) -> Result<Link, FieldError> {
        let id = id.trim();
        let id = match kind {
            LinkKind::Device => DeviceId::parse(id).map_err(|e| FieldError::new("id", e.to_string()))?.to_string(),
            _ => Uuid::parse_str(id)
                .map_err(|_| FieldError::new("id", format!("a {} id is a UUID; `{}` is not", kind.as_str(), clip(id))))?
                .to_string(),
        };
        Ok(Link { kind, id })
    }

    /// A `dcs-console://<kind>/<id>` link, checked: the scheme, one of the kinds, an id of that
    /// kind, nothing else (no query, fragment, user or port), at most [`MAX_LINK`] characters.
    pub fn parse(link: &str) -> Result<Link, FieldError> {
        let bad = |rule: String| FieldError::new("link", rule);
        if link.len() > MAX_LINK {
            return Err(bad(format!("is {} characters long; a link has at most {MAX_LINK}", link.len())));
        }
        let url = url::Url::parse(link.trim())
            .map_err(|e| bad(format!("is not a link ({e}); expected {SCHEME}://<kind>/<id>")))?;
        if !url.scheme().eq_ignore_ascii_case(SCHEME) {
            return Err(bad(format!("must start with {SCHEME}://; `{}` is another scheme", clip(url.scheme()))));
        }
        if !url.username().is_empty() || url.password().is_some() || url.port().is_some() {
            return Err(bad("has a user or a port; expected {SCHEME}://<kind>/<id>".replace("{SCHEME}", SCHEME)));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(bad(format!("has a query or fragment; expected {SCHEME}://<kind>/<id> alone")));
        }
        let kind = LinkKind::parse(url.host_str().unwrap_or_default())?;
        let path = url.path().strip_prefix('/').unwrap_or(url.path());
        let path = path.strip_suffix('/').unwrap_or(path);
        if path.is_empty() || path.contains('/') {
            return Err(bad(format!("must name one item: {SCHEME}://{}/<id>", kind.as_str())));
        }
        let id = percent_decode(path).ok_or_else(|| FieldError::new("id", "is not valid percent-encoded text"))?;
        Link::new(kind, &id)
    }

    /// The link, as [`Link::parse`] reads it.
    pub fn url(&self) -> String {
        format!("{SCHEME}://{}/{}", self.kind.as_str(), self.id)
    }

    /// The first argument of a launch that is a console link (`dcs-console:` in any case), parsed:
    /// `None` when there is none, the error when it is malformed.
    pub fn from_args<S: AsRef<str>>(args: &[S]) -> Option<Result<Link, FieldError>> {
        args.iter()
            .map(AsRef::as_ref)
            .find(|a| a.get(..SCHEME.len() + 1).is_some_and(|p| p.eq_ignore_ascii_case(&format!("{SCHEME}:"))))
            .map(Link::parse)
    }
}

/// `%XX` sequences decoded; `None` when one is malformed or the result is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// At most 60 characters of what was given, for an error message.
fn clip(s: &str) -> String {
    let mut c: String = s.chars().take(60).collect();
    if c.len() < s.len() {
        c.push('…');
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEVICE: &str = "9d5f8a4e-6a3b-4f6c-8d7e-2b1a0c9f8e7d";

    #[test]
    fn each_kind_round_trips_and_ids_are_normalised() {
        for (link, kind, id) in [
            ("dcs-console://device/imei:490154203237518", LinkKind::Device, "imei:490154203237518"),
            ("DCS-Console://Device/URN:DEV:IMEI:490154203237518", LinkKind::Device, "urn:dev:imei:490154203237518:"),
            ("dcs-console://device/deveui:0011AABBCCDDEEFF", LinkKind::Device, "deveui:0011aabbccddeeff"),
            (&format!("dcs-console://device/{DEVICE}/"), LinkKind::Device, DEVICE),
            (&format!("dcs-console://rollout/{}", DEVICE.to_uppercase()), LinkKind::Rollout, DEVICE),
            (&format!("dcs-console://module/{DEVICE}"), LinkKind::Module, DEVICE),
            (&format!("dcs-console://package/{DEVICE}"), LinkKind::Package, DEVICE),
            (&format!("dcs-console://downlink/{DEVICE}"), LinkKind::Downlink, DEVICE),
            (&format!("dcs-console://binding/{}", DEVICE.to_uppercase()), LinkKind::Binding, DEVICE),
            ("dcs-console://device/imei%3A490154203237518", LinkKind::Device, "imei:490154203237518"),
        ] {
            let parsed = Link::parse(link).unwrap_or_else(|e| panic!("{link}: {e}"));
            assert_eq!(parsed, Link { kind, id: id.to_owned() }, "{link}");
            assert_eq!(Link::parse(&parsed.url()).unwrap(), parsed, "{link} again from {}", parsed.url());
        }
    }

    #[test]
    fn malformed_links_are_refused_naming_the_field_and_the_rule() {
        let long = format!("dcs-console://device/{}", "1".repeat(MAX_LINK));
        for (link, field, rule) in [
            ("https://device/imei:490154203237518", "link", "must start with dcs-console://"),
            ("dcs-console://firmware/x", "kind", "must be one of device, rollout, module, package, downlink, binding"),
            ("dcs-console://device/imei:123", "id", "IMEI"),
            ("dcs-console://rollout/12", "id", "a rollout id is a UUID"),
            ("dcs-console://device/", "link", "must name one item"),
            ("dcs-console://device/a/b", "link", "must name one item"),
            ("dcs-console://device/imei:490154203237518?then=delete", "link", "query or fragment"),
            ("dcs-console://device/imei:490154203237518#x", "link", "query or fragment"),
            ("dcs-console://u:p@device/imei:490154203237518", "link", "a user or a port"),
            ("dcs-console://device/%zz", "id", "percent-encoded"),
            ("dcs-console://device/%ff%fe", "id", "percent-encoded"),
            ("not a link", "link", "is not a link"),
            (long.as_str(), "link", "at most 2048"),
        ] {
            let e = Link::parse(link).err().unwrap_or_else(|| panic!("{link} was taken"));
            assert_eq!(e.field, field, "{link}: {e}");
            assert!(e.to_string().contains(rule), "{link}: {e}");
        }
    }

    #[test]
    fn a_launch_s_link_is_found_among_its_arguments() {
        let args = ["/usr/bin/dcs-console", "--flag", "DCS-CONSOLE://rollout/9d5f8a4e-6a3b-4f6c-8d7e-2b1a0c9f8e7d"];
        assert_eq!(Link::from_args(&args).unwrap().unwrap().kind, LinkKind::Rollout);
        assert!(Link::from_args(&["/usr/bin/dcs-console"]).is_none());
        assert!(Link::from_args(&["x", "dcs-console:nothing"]).unwrap().is_err());
        assert!(Link::from_args(&["x", "é"]).is_none(), "a short argument of multi-byte characters");
    }
}
