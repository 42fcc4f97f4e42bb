//! What `dcs` prints: tables for people, JSON for scripts, errors on stderr with an exit code
//! per category.

use std::fmt::Display;
use std::process::ExitCode;

use dcs_api::model::FirmwareModule;
use dcs_api::{Error, ErrorCode};
use dcs_console::fleet::FleetError;
use dcs_console::{ConfigError, SessionError};
use serde::Serialize;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

pub fn modules_table(modules: &[FirmwareModule]) {
    table(
        &["ID", "NAME", "DEVICE SPECIFICATION", "ATTRIBUTE"],
        modules
            .iter()
            .map(|m| {
                vec![
                    m.id.to_string(),
                    m.name.clone(),
                    m.device_specification_id.to_string(),
                    m.firmware_version_attribute_name.clone(),
                ]
            })
            .collect(),
    );
}

/// Pretty JSON on stdout.
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// A table with a header line; columns as wide as their widest cell, the last one unpadded.
pub fn table(headers: &[&str], rows: Vec<Vec<String>>) {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len() - 1;
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i == last {
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        println!("{}", out.trim_end());
    };
    line(headers.to_vec());
    for row in &rows {
        line(row.iter().map(String::as_str).collect());
    }
}

/// A list of `name: value` lines for one resource.
pub fn fields(pairs: &[(&str, String)]) {
    let w = pairs.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in pairs {
        println!("{:<w$}  {}", format!("{k}:"), v, w = w + 1);
    }
}

/// An optional value, `-` when absent.
pub fn opt<T: Display>(v: &Option<T>) -> String {
    v.as_ref().map(ToString::to_string).unwrap_or_else(|| "-".into())
}

/// An optional timestamp in RFC 3339, `-` when absent.
pub fn ts(v: &Option<OffsetDateTime>) -> String {
    v.and_then(|t| t.format(&Rfc3339).ok()).unwrap_or_else(|| "-".into())
}

/// Exit code of each error category, stable for scripts.
pub fn exit_code(code: ErrorCode) -> u8 {
    match code {
        ErrorCode::InvalidInput => 2,
        ErrorCode::WrongCredentials | ErrorCode::ServiceNotGranted | ErrorCode::Unauthorized => 3,
        ErrorCode::Forbidden => 4,
        ErrorCode::NotFound => 5,
        ErrorCode::Conflict => 6,
        ErrorCode::RateLimited => 7,
        ErrorCode::BadRequest => 8,
        ErrorCode::Server => 9,
        ErrorCode::Network => 10,
        ErrorCode::Protocol => 11,
        ErrorCode::Cancelled => 12,
        ErrorCode::LocalFile => 13,
    }
}

/// The client's error in `e`, also when it came through connecting a profile.
pub fn api_error(e: &anyhow::Error) -> Option<&Error> {
    e.downcast_ref::<Error>()
        .or_else(|| match e.downcast_ref::<SessionError>() {
            Some(SessionError::Api(api)) => Some(api),
            _ => None,
        })
        .or_else(|| match e.downcast_ref::<FleetError>() {
            Some(FleetError::Api(api)) => Some(api),
            _ => None,
        })
}

/// The category of `e`: the client's, or that of a profile's refusal (a bad value, an unknown
/// or existing name, a customer the deprecated context switch was refused for).
fn category(e: &anyhow::Error) -> Option<ErrorCode> {
    if let Some(api) = api_error(e) {
        return Some(api.code());
    }
    if let Some(f) = e.downcast_ref::<FleetError>() {
        return match f {
            FleetError::Api(api) => Some(api.code()),
            FleetError::Invalid { .. } => Some(ErrorCode::InvalidInput),
            FleetError::Conflict(_) => Some(ErrorCode::Conflict),
            FleetError::Cancelled => Some(ErrorCode::Cancelled),
            FleetError::Db(_) | FleetError::Open { .. } => Some(ErrorCode::LocalFile),
        };
    }
    match (e.downcast_ref::<SessionError>(), e.downcast_ref::<ConfigError>()) {
        (Some(SessionError::SwitchRefused(_)), _) => Some(ErrorCode::Forbidden),
        (_, Some(ConfigError::Invalid(_) | ConfigError::UnknownProfile(_) | ConfigError::Exists(_))) => {
            Some(ErrorCode::InvalidInput)
        }
        _ => None,
    }
}

pub fn report_error(e: &anyhow::Error, json: bool) -> ExitCode {
    let api = api_error(e);
    let code = category(e);
    if json {
        let body = serde_json::json!({
            "error": {
                "code": code,
                "message": format!("{e:#}"),
                "problem": api.and_then(Error::problem),
            }
        });
        eprintln!("{body}");
    } else {
        eprintln!("dcs: {e:#}");
        // Each field the service's refusal names, on its own line.
        for f in api.and_then(Error::problem).map(dcs_console::listing::problem_fields).unwrap_or_default() {
            eprintln!("  {}: {}", f.field, f.rule);
        }
    }
    ExitCode::from(code.map(exit_code).unwrap_or(1))
}

/// How a list command pages, the same for every list: every page by default; one page with
/// `--limit` or `--cursor` (printed with the page's `next`/`prev` links); `--all` follows every
/// page with `--limit` as the page size.
#[derive(clap::Args, Clone, Default)]
pub struct PageArgs {
    /// Results per page. Alone (without --all) it prints one page and how to get the next one.
    #[arg(long)]
    pub limit: Option<u32>,
    /// Print the page a `next` or `prev` link points to (as printed after an earlier page; a
    /// bare cursor works too).
    #[arg(long, visible_alias = "page-url", value_name = "CURSOR|LINK", conflicts_with = "all")]
    pub cursor: Option<String>,
    /// Follow every page (the default unless --limit or --cursor is given).
    #[arg(long)]
    pub all: bool,
}

impl PageArgs {
    /// Whether one page is asked for.
    pub fn one_page(&self) -> bool {
        !self.all && (self.limit.is_some() || self.cursor.is_some())
    }
}

/// A list as fetched: every item, or one page with the links to its neighbours.
pub enum Listing<T> {
    All(Vec<T>),
    Page { items: Vec<T>, next: Option<url::Url>, prev: Option<url::Url> },
}

impl<T> Listing<T> {
    /// The same listing with its items changed (filtered here, say).
    pub fn map_items<U>(self, f: impl FnOnce(Vec<T>) -> Vec<U>) -> Listing<U> {
        match self {
            Listing::All(items) => Listing::All(f(items)),
            Listing::Page { items, next, prev } => Listing::Page { items: f(items), next, prev },
        }
    }
}

/// Where `--cursor` points: a link (absolute, or relative to the list) is followed as it is;
/// a bare cursor is sent as `cursor` (with `--limit`) on the list's path.
fn cursor_url(client: &dcs_api::Client, path: &str, cursor: &str, limit: Option<u32>) -> anyhow::Result<url::Url> {
    let list = client.config().base_url.join(path.trim_start_matches('/'))?;
    let looks_like_link = cursor.contains("://") || cursor.starts_with('/') || cursor.contains('?');
    if looks_like_link {
        return dcs_api::paging::resolve_link(&list, cursor)
            .map_err(|_| crate::invalid("cursor", "must be a page link or cursor printed by an earlier page"));
    }
    if cursor.is_empty() {
        return Err(crate::invalid("cursor", "must not be empty"));
    }
    let mut url = list;
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("cursor", cursor);
        if let Some(l) = limit {
            q.append_pair("limit", &l.to_string());
        }
    }
    Ok(url)
}

/// Fetches a list as `args` says. `path` is the list's path under the base URL (for bare
/// cursors); `first` asks for its first page with the command's filters.
pub async fn fetch_list<T, F>(
    client: &dcs_api::Client,
    args: &PageArgs,
    path: &str,
    first: F,
) -> anyhow::Result<Listing<T>>
where
    T: serde::de::DeserializeOwned + 'static,
    F: std::future::Future<Output = dcs_api::error::Result<(dcs_api::model::Page<T>, Option<url::Url>)>>,
{
    let (page, next, asked) = match &args.cursor {
        Some(c) => {
            let url = cursor_url(client, path, c, args.limit)?;
            let (page, next) = dcs_api::paging::fetch_page::<T>(client, url.clone()).await?;
            (page, next, url)
        }
        None => {
            let (page, next) = first.await?;
            (page, next, client.config().base_url.join(path.trim_start_matches('/'))?)
        }
    };
    if args.one_page() {
        let prev = page.prev.as_deref().map(|l| dcs_api::paging::resolve_link(&asked, l)).transpose()?;
        return Ok(Listing::Page { items: page.items, next, prev });
    }
    let mut all = page.items;
    let mut next = next;
    while let Some(url) = next {
        let (page, following) = dcs_api::paging::fetch_page::<T>(client, url).await?;
        all.extend(page.items);
        next = following;
    }
    Ok(Listing::All(all))
}

/// Prints a listing: JSON (an array of every item, or `{items, next, prev}` for one page), or
/// `table` for people followed, for one page, by a line saying how to get its neighbours.
pub fn print_listing<T: Serialize>(listing: &Listing<T>, json: bool, table: impl FnOnce(&[T])) -> anyhow::Result<()> {
    match listing {
        Listing::All(items) if json => print_json(items),
        Listing::Page { items, next, prev } if json => print_json(&serde_json::json!({
            "items": items,
            "next": next.as_ref().map(url::Url::as_str),
            "prev": prev.as_ref().map(url::Url::as_str),
        })),
        Listing::All(items) => {
            table(items);
            Ok(())
        }
        Listing::Page { items, next, prev } => {
            table(items);
            println!("{}", page_hint(next.as_ref(), prev.as_ref()));
            Ok(())
        }
    }
}

/// The last line of one page printed for people.
pub fn page_hint(next: Option<&url::Url>, prev: Option<&url::Url>) -> String {
    let mut parts = Vec::new();
    if let Some(n) = next {
        parts.push(format!("next page: --cursor '{n}'"));
    }
    if let Some(p) = prev {
        parts.push(format!("previous page: --cursor '{p}'"));
    }
    if parts.is_empty() {
        "(no other page)".to_owned()
    } else {
        parts.join("; ")
    }
}
