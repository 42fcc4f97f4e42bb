//! The command palette's search: every entity the console can open, by name or id, fuzzily.
//!
//! Candidates come from what is at hand and from the service:
//! - devices from the device listing ([`crate::devices::Directories`]) by name, UUID, IMEI,
//!   DevEUI, barcode or any id form of section 1 typed whole (a device the listing does not
//!   hold is offered as typed, and resolved when opened);
//! - modules and packages (by module name and version) from the service's catalogue, read once
//!   per scope and kept a few minutes ([`Catalogues`]);
//! - rollouts from the fleet database; profiles and customers from the configuration;
//! - downlinks and bindings from the service as the text is typed: an id typed whole is asked of
//!   every kind at once, and the actuator list is searched with `q` (which matches `tagValue`
//!   exactly, `networkId` and `message` partially, section 5).
//!
//! Matching is nucleo's fuzzy matcher (the one of the Helix editor), case ignored; the best of
//! each kind are kept, so that one kind with many hits does not hide the others.

use std::sync::Arc;
use std::time::Duration;

use dcs_api::firmware::{Embed, ModuleFilter, PackageFilter};
use dcs_api::model::{BindingKind, DeviceId};
use dcs_api::{Client, Error};
use futures::{future::join_all, StreamExt, TryStreamExt};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use serde::Serialize;
use uuid::Uuid;

use crate::devices::Directory;
use crate::downlinks::{self, DownlinkKind, DownlinkPageRequest};
use crate::fleet::{FleetDb, Scope};
use crate::kept::Kept;
use crate::FieldError;

/// Longest search text.
pub const MAX_QUERY: usize = 200;
/// Best matches kept of each kind.
pub const PER_KIND: usize = 8;
/// Most packages and modules read into a catalogue.
pub const MAX_CATALOGUE: usize = 5_000;
/// How long a catalogue is used before it is read again.
pub const CATALOGUE_FRESH_FOR: Duration = Duration::from_secs(120);

/// An entity the palette can open.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PaletteItem {
    /// `device`, `module`, `package`, `rollout`, `downlink`, `binding`, `customer` or `profile`.
    pub kind: String,
    /// What opens it: a device id, a UUID, a downlink id, a profile's name.
    pub id: String,
    pub title: String,
    pub detail: Option<String>,
    /// Downlinks and bindings: their kind (`lora`, `actuator`, ...).
    pub sub_kind: Option<String>,
    /// Higher is better.
    pub score: u32,
}

/// What the palette found, and the sources that could not be asked (the others still answer).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PaletteAnswer {
    pub items: Vec<PaletteItem>,
    pub problems: Vec<String>,
    /// A later search came before this one finished: it stopped, and its items are not all.
    pub superseded: bool,
}

/// An entity before it is matched: what it is, and the texts it is found by.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub item: PaletteItem,
    pub keys: Vec<String>,
}

impl Candidate {
    fn new(kind: &str, id: impl Into<String>, title: impl Into<String>, detail: Option<String>) -> Candidate {
        let (id, title) = (id.into(), title.into());
        Candidate {
            keys: vec![title.clone(), id.clone()],
            item: PaletteItem { kind: kind.to_owned(), id, title, detail, sub_kind: None, score: 0 },
        }
    }

    fn key(mut self, key: Option<&str>) -> Candidate {
        if let Some(k) = key.filter(|k| !k.is_empty()) {
            self.keys.push(k.to_owned());
        }
        self
    }
}

/// The search text as typed, checked: at most [`MAX_QUERY`] characters, no control characters.
pub fn check_query(query: &str) -> Result<&str, FieldError> {
    if query.chars().count() > MAX_QUERY || query.chars().any(char::is_control) {
        return Err(FieldError::new(
            "query",
            format!("must be at most {MAX_QUERY} characters without control characters"),
        ));
    }
    Ok(query.trim())
}

/// The candidates that match `query`, best first, at most [`PER_KIND`] of each kind.
pub fn rank(query: &str, candidates: impl IntoIterator<Item = Candidate>) -> Vec<PaletteItem> {
    let pattern = Pattern::parse(query, CaseMatching::Ignore, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT);
    let mut buf = Vec::new();
    let mut hits: Vec<PaletteItem> = candidates
        .into_iter()
        .filter_map(|c| {
            let best = c.keys.iter().filter_map(|k| pattern.score(Utf32Str::new(k, &mut buf), &mut matcher)).max()?;
            Some(PaletteItem { score: best, ..c.item })
        })
        .collect();
    hits.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.title.cmp(&b.title)));
    let mut per_kind: std::collections::HashMap<String, usize> = Default::default();
    hits.retain(|h| {
        let n = per_kind.entry(h.kind.clone()).or_default();
        *n += 1;
        *n <= PER_KIND
    });
    hits
}

/// The devices of the listing, by name, UUID, network ids and barcode.
pub fn device_candidates(dir: &Directory) -> impl Iterator<Item = Candidate> + '_ {
    dir.entries().iter().map(|d| {
        let ids: Vec<String> =
            [d.imei.as_ref().map(|i| format!("IMEI {i}")), d.dev_eui.as_ref().map(|e| format!("DevEUI {e}"))]
                .into_iter()
                .flatten()
                .collect();
        let detail = if ids.is_empty() { d.uuid.to_string() } else { ids.join(" · ") };
        Candidate::new("device", d.uuid.to_string(), d.name.clone(), Some(detail))
            .key(d.imei.as_deref())
            .key(d.dev_eui.as_deref())
            .key(d.barcode.as_deref())
            .key(d.imei.as_ref().map(|i| format!("imei:{i}")).as_deref())
            .key(d.dev_eui.as_ref().map(|e| format!("deveui:{e}")).as_deref())
    })
}

/// A device id typed whole, in any form: the device, by the listing's name where it holds it.
/// Matched exactly, so it comes first.
pub fn typed_device(dir: &Directory, query: &str) -> Option<PaletteItem> {
    DeviceId::parse(query).ok()?;
    let label = dir.label(query);
    Some(PaletteItem {
        kind: "device".into(),
        id: label.uuid.map_or_else(|| query.to_owned(), |u| u.to_string()),
        title: label.name.unwrap_or_else(|| query.to_owned()),
        detail: Some(format!("device {query}")),
        sub_kind: None,
        score: u32::MAX,
    })
}

/// The rollouts of the fleet database in `scope`, by module name, version, state and id.
pub fn rollout_candidates(db: &FleetDb, scope: Scope) -> crate::fleet::Result<Vec<Candidate>> {
    let conn = db.conn();
    let mut stmt = conn.prepare_cached(
        "SELECT r.id, COALESCE(m.name, r.module_id), r.version, r.state FROM rollouts r
           LEFT JOIN modules m ON m.scope = r.scope AND m.module_id = r.module_id
          WHERE r.scope = ?1 ORDER BY r.created_at DESC LIMIT 1000",
    )?;
    let rows = stmt.query_map([scope.0], |r| {
        let (id, module, version, state): (String, String, String, String) =
            (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
        Ok(Candidate::new("rollout", id, format!("Rollout of {module} {version}"), Some(state)))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The service's modules and packages of one scope, as candidates.
pub type Catalogue = Vec<Candidate>;

/// The catalogues of the scopes the app acted in, each read once and kept for
/// [`CATALOGUE_FRESH_FOR`].
pub struct Catalogues(Kept<Catalogue>);

impl Default for Catalogues {
    fn default() -> Catalogues {
        Catalogues(Kept::new(CATALOGUE_FRESH_FOR))
    }
}

impl Catalogues {
    pub async fn get(&self, scope: &str, client: &Client) -> Result<Arc<Catalogue>, Error> {
        self.0.get(scope, || load_catalogue(client)).await
    }
}

/// Reads the modules and packages (at most [`MAX_CATALOGUE`] each).
pub async fn load_catalogue(client: &Client) -> Result<Catalogue, Error> {
    let firmware = client.firmware();
    let modules: Vec<_> = firmware.modules(&ModuleFilter::default())?.take(MAX_CATALOGUE).try_collect().await?;
    let filter = PackageFilter { embed: vec![Embed::Module], ..Default::default() };
    let packages: Vec<_> = firmware.packages(&filter)?.take(MAX_CATALOGUE).try_collect().await?;
    let name_of = |id: Uuid| modules.iter().find(|m| m.id == id).map(|m| m.name.clone());
    let mut out: Catalogue = modules
        .iter()
        .map(|m| Candidate::new("module", m.id.to_string(), m.name.clone(), Some("module".into())))
        .collect();
    out.extend(packages.iter().map(|p| {
        let module = name_of(p.module_id).unwrap_or_else(|| p.module_id.to_string());
        Candidate::new("package", p.id.to_string(), format!("{module} {}", p.firmware_version), Some("package".into()))
            .key(Some(&p.firmware_version))
    }));
    Ok(out)
}

/// Downlinks and bindings the service finds for `query`: an id typed whole asked of every kind
/// at once (a kind that does not hold it answers 404, which is no problem), and the actuator
/// list searched with `q`. Answers the items and the kinds that failed otherwise.
pub async fn service_items(client: &Client, query: &str) -> (Vec<PaletteItem>, Vec<String>) {
    let mut items = Vec::new();
    let mut problems = Vec::new();
    let found = |kind: &str, sub: &str, id: String, title: String, detail: Option<String>, score: u32| PaletteItem {
        kind: kind.to_owned(),
        id,
        title,
        detail,
        sub_kind: Some(sub.to_owned()),
        score,
    };
    let by_id = Uuid::parse_str(query).ok();
    // An actuator downlink's id is a string: asked when it could be one (short, no spaces).
    let actuator_id = query.len() <= 100 && !query.is_empty() && !query.contains(char::is_whitespace);
    let kinds: Vec<DownlinkKind> = DownlinkKind::ALL
        .into_iter()
        .filter(|k| if k.connection().is_some() { by_id.is_some() } else { actuator_id })
        .collect();
    let gets = join_all(kinds.iter().map(|k| downlinks::get(client, *k, query)));
    let binding_gets = join_all(
        by_id
            .iter()
            .flat_map(|id| BindingKind::ALL.map(move |k| (k, *id)))
            .map(|(k, id)| async move { (k, crate::bindings::get(client, k, id).await) }),
    );
    let search = DownlinkPageRequest {
        q: Some(query.to_owned()),
        ..DownlinkPageRequest::first(DownlinkKind::Actuator, PER_KIND as u32)
    };
    let (gets, binding_gets, searched) = futures::join!(gets, binding_gets, downlinks::list(client, &search));
    for (kind, got) in kinds.iter().zip(gets) {
        match got {
            Ok(d) => items.push(found(
                "downlink",
                kind.as_str(),
                d.id.clone(),
                format!("{} downlink {}", kind.label(), d.id),
                Some(format!("{} · {}", d.status, d.device)),
                u32::MAX,
            )),
            Err(e) if is_absent(&e) => {}
            Err(e) => problems.push(format!("{} downlinks: {e}", kind.label())),
        }
    }
    for (kind, got) in binding_gets {
        match got {
            Ok(b) => items.push(found(
                "binding",
                kind.as_str(),
                b.id.to_string(),
                format!("{} binding {}", kind.as_str().to_uppercase(), b.id),
                Some(format!("device {}", b.device_id)),
                u32::MAX,
            )),
            Err(e) if is_absent(&e) => {}
            Err(e) => problems.push(format!("{} bindings: {e}", kind.as_str())),
        }
    }
    match searched {
        Ok(page) => {
            for d in page.items {
                if items.iter().any(|i| i.id == d.id) {
                    continue;
                }
                let title = format!("Actuator downlink {}", d.external_reference.as_deref().unwrap_or(&d.id));
                items.push(found(
                    "downlink",
                    "actuator",
                    d.id.clone(),
                    title,
                    Some(format!("{} · {}", d.status, d.device)),
                    1,
                ));
            }
        }
        Err(e) => problems.push(format!("actuator downlinks: {e}")),
    }
    (items, problems)
}

/// What is at hand to search, besides the service.
pub struct Local<'a> {
    pub dir: &'a Directory,
    pub catalogue: Option<&'a Catalogue>,
    pub rollouts: Vec<Candidate>,
    /// The profiles' names (the built-in simulator's among them) and their services.
    pub profiles: Vec<(String, String)>,
    /// The active profile's customers.
    pub customers: Vec<(Uuid, String)>,
}

/// The items at hand that match `query`, best first: a device id typed whole first, then the
/// fuzzy matches of every kind.
pub fn search_local(query: &str, local: &Local<'_>) -> Vec<PaletteItem> {
    let mut candidates: Vec<Candidate> = device_candidates(local.dir).collect();
    candidates.extend(local.catalogue.into_iter().flatten().cloned());
    candidates.extend(local.rollouts.iter().cloned());
    candidates.extend(
        local
            .profiles
            .iter()
            .map(|(name, service)| Candidate::new("profile", name.clone(), name.clone(), Some(service.clone()))),
    );
    candidates.extend(
        local
            .customers
            .iter()
            .map(|(id, label)| Candidate::new("customer", id.to_string(), label.clone(), Some(id.to_string()))),
    );
    let typed = typed_device(local.dir, query);
    let ranked = rank(query, candidates);
    let same = |i: &PaletteItem| typed.as_ref().is_some_and(|t| t.kind == i.kind && t.id == i.id);
    let rest: Vec<PaletteItem> = ranked.into_iter().filter(|i| !same(i)).collect();
    typed.into_iter().chain(rest).collect()
}

/// A refusal that only says the item is not of that kind or not there.
fn is_absent(e: &Error) -> bool {
    matches!(e, Error::Api { status: 400 | 404 | 405, .. })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(kind: &str, title: &str) -> Candidate {
        Candidate::new(kind, title.to_lowercase(), title, None)
    }

    #[test]
    fn fuzzy_matches_rank_closest_first_and_each_kind_keeps_its_best() {
        let mut all =
            vec![c("module", "Cellular Modem"), c("module", "Main MCU"), c("package", "Cellular Modem 1.2.0")];
        all.extend((0..20).map(|i| c("device", &format!("Cold store sensor {i:02}"))));
        let hits = rank("celmod", all.clone());
        assert_eq!(hits[0].title, "Cellular Modem", "{hits:?}");
        assert!(hits.iter().any(|h| h.kind == "package"));
        assert!(hits.iter().all(|h| h.title != "Main MCU"));
        let devices = rank("cold", all.clone());
        assert_eq!(devices.len(), PER_KIND, "one kind is cut at PER_KIND");
        assert!(rank("zzzz", all).is_empty());
    }

    #[test]
    fn a_query_is_refused_when_too_long_or_with_control_characters() {
        assert_eq!(check_query("  modem ").unwrap(), "modem");
        assert_eq!(check_query(&"x".repeat(MAX_QUERY + 1)).unwrap_err().field, "query");
        assert_eq!(check_query("a\u{7}b").unwrap_err().field, "query");
    }
}
