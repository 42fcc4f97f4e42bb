//! What `dcs` prints: tables for people, JSON for scripts, errors on stderr with an exit code
//! per category.

use std::fmt::Display;
use std::process::ExitCode;

use dcs_api::model::{FirmwareModule, Problem};
use dcs_api::{Error, ErrorCode};
use dcs_console::{AppCode, Code, ConfigError, FieldError, KeychainError};
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

/// Exit code of each error category, stable for scripts: the client's categories, and the
/// console's own codes where one means the same (a refused customer is forbidden, the fleet
/// database a local file); 1 for the rest.
pub fn exit_code(code: Code) -> u8 {
    match code {
        Code::Api(code) => match code {
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
        },
        Code::App(code) => match code {
            AppCode::CustomerRefused => 4,
            AppCode::Conflict => 6,
            AppCode::Storage => 13,
            AppCode::Keychain
            | AppCode::NoSecret
            | AppCode::Config
            | AppCode::ContextChanged
            | AppCode::Clipboard
            | AppCode::Unavailable
            | AppCode::Internal => 1,
        },
    }
}

/// What an error of the console's layers in `e`'s chain says: its code, its fields and the
/// service's problem. `None` for errors of `dcs` itself (a refused confirmation, a bad flag of
/// clap's), which exit with 1.
pub struct Classified {
    pub code: Code,
    pub fields: Vec<FieldError>,
    pub problem: Option<Problem>,
}

pub fn classify(e: &anyhow::Error) -> Option<Classified> {
    let of = |c: &dcs_console::Error| Classified { code: c.code(), fields: c.fields(), problem: c.problem().cloned() };
    e.chain().find_map(|cause| {
        if let Some(c) = cause.downcast_ref::<dcs_console::Error>() {
            return Some(of(c));
        }
        if let Some(a) = cause.downcast_ref::<Error>() {
            let fields = match (a.field_error(), a.problem()) {
                (Some(f), _) => vec![f],
                (None, Some(p)) => dcs_console::listing::problem_fields(p),
                (None, None) => Vec::new(),
            };
            return Some(Classified { code: Code::Api(a.code()), fields, problem: a.problem().cloned() });
        }
        if let Some(c) = cause.downcast_ref::<ConfigError>() {
            return Some(Classified { code: c.code(), fields: Vec::new(), problem: None });
        }
        cause.downcast_ref::<KeychainError>().map(|k| Classified { code: k.code(), fields: Vec::new(), problem: None })
    })
}

/// The customer-naming rule of the console ([`dcs_console::Error::acting_for`]) applied to an
/// error met acting for `customer`: a refusal of its context names it.
pub fn acting_for(e: anyhow::Error, customer: &str) -> anyhow::Error {
    let refused = e.chain().any(|cause| {
        cause.downcast_ref::<dcs_console::Error>().is_some_and(dcs_console::Error::refuses_customer)
            || cause.downcast_ref::<Error>().is_some_and(dcs_console::Error::refuses_context)
    });
    if !refused {
        return e;
    }
    match e.downcast::<dcs_console::Error>() {
        Ok(c) => c.acting_for(customer).into(),
        Err(e) => match e.downcast::<Error>() {
            Ok(a) => dcs_console::Error::from(a).acting_for(customer).into(),
            Err(e) => e,
        },
    }
}

pub fn report_error(e: &anyhow::Error, json: bool) -> ExitCode {
    let found = classify(e);
    let code = found.as_ref().map(|f| f.code);
    let problem = found.as_ref().and_then(|f| f.problem.as_ref());
    if json {
        let body = serde_json::json!({
            "error": {
                "code": code,
                "message": format!("{e:#}"),
                "problem": problem,
            }
        });
        eprintln!("{body}");
    } else {
        eprintln!("dcs: {e:#}");
        // Each field the service's refusal names, on its own line.
        for f in found.iter().filter(|f| f.problem.is_some()).flat_map(|f| &f.fields) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The table test of issue 17: every kind of console error gets from `dcs` the code the app
    /// answers (`CommandError.code` is `code()` too; src-tauri's error tests check that side)
    /// and an exit code, the same for the same code.
    #[test]
    fn every_console_error_has_the_apps_code_and_an_exit_code() {
        let mut exits = std::collections::BTreeMap::new();
        for e in dcs_console::Error::one_of_each() {
            let app = e.code();
            let text = e.to_string();
            let e = anyhow::Error::from(e);
            let found = classify(&e).expect("a console error is classified");
            assert_eq!(found.code, app, "{text}");
            assert_eq!(serde_json::to_value(found.code).unwrap(), serde_json::Value::String(app.as_str()), "{text}");
            let exit = exit_code(found.code);
            assert_eq!(*exits.entry(app.as_str()).or_insert(exit), exit, "one exit code per code");
            // Wrapped with a context, or as the client's own error, it is found the same.
            let wrapped = e.context("while doing something");
            assert_eq!(classify(&wrapped).map(|f| f.code), Some(app), "{text}");
        }
        // The codes README.md documents.
        assert_eq!(exits["invalid_input"], 2);
        assert_eq!(exits["customer_refused"], 4, "a refused customer is forbidden");
        assert_eq!(exits["forbidden"], 4);
        assert_eq!(exits["conflict"], 6);
        assert_eq!(exits["cancelled"], 12);
        assert_eq!(exits["storage"], 13, "the fleet database is a local file");
        assert_eq!(exits["keychain"], 1);
    }

    #[test]
    fn a_refusal_met_acting_for_a_customer_names_it() {
        let refusal = || {
            anyhow::Error::from(Error::Api {
                status: 403,
                problem: Box::new(Problem::new(403, "Forbidden", "no access")),
            })
        };
        let named = acting_for(refusal(), "customer Northwind (7)");
        assert!(format!("{named:#}").starts_with("refused while acting for customer Northwind (7): 403"), "{named:#}");
        assert_eq!(classify(&named).map(|f| exit_code(f.code)), Some(4));
        let not_found = Error::Api { status: 404, problem: Box::new(Problem::new(404, "Not Found", "no")) };
        let kept = acting_for(not_found.into(), "customer Northwind (7)");
        assert!(kept.downcast_ref::<Error>().is_some(), "left as the client's error");
    }
}
