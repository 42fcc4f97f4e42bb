//! Keyset paging of `GET /firmware/states`: a page sequence equals the whole ordered
//! list in every sort, a row changed between pages is neither skipped nor makes others skip,
//! `prev` walks the same pages back, and a cursor the service never issued is a 400 naming
//! `cursor`.

use std::cmp::Ordering;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use dcs_sim::SimOptions;
use reqwest::StatusCode;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;

mod common;
use common::{start, Env};

const SORTS: &[&str] = &[
    "deviceId",
    "moduleId",
    "modifiedAt",
    "createdAt",
    "currentFirmwareVersion",
    "targetFirmwareVersion",
    "firmwareUpdateStatus",
    "firmwareUpdateStatusModifiedAt",
    "targetFirmwareVersionModifiedAt",
];

/// A simulator whose devices stand still once the seed's due updates are applied.
async fn env() -> Env {
    let e = start(SimOptions { devices_per_client: 15, speed: 0.001, ..Default::default() }).await;
    e.sim.step().unwrap();
    e
}

async fn get(e: &Env, path: &str) -> (StatusCode, Value) {
    let url = if path.starts_with("http") { path.to_owned() } else { format!("{}{path}", e.base) };
    let res = e.http.get(url).bearer_auth(&e.token).send().await.unwrap();
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

fn key(s: &Value) -> (String, String) {
    (s["deviceId"].as_str().unwrap().to_owned(), s["moduleId"].as_str().unwrap().to_owned())
}

/// Every page from `first` on by `next`: each page's items. `prev` is on every page but the
/// list's first.
async fn forward(e: &Env, first: &str) -> Vec<Vec<Value>> {
    let at_start = !first.contains("cursor=");
    let mut pages = Vec::new();
    let mut link = Some(first.to_owned());
    while let Some(l) = link {
        let (status, page) = get(e, &l).await;
        assert_eq!(status, StatusCode::OK, "{l}: {page}");
        assert_eq!(page["prev"].is_null(), at_start && pages.is_empty(), "prev only off the first page: {l}");
        pages.push(page["items"].as_array().unwrap().clone());
        link = page["next"].as_str().map(str::to_owned);
        assert!(pages.len() < 1000, "next never ends");
    }
    pages
}

/// A member's order as the service sorts it: NULL first ascending, time members as instants.
fn compare(a: &Value, b: &Value, field: &str) -> Ordering {
    let value = |v: &Value| -> Option<String> {
        let s = v[field].as_str()?;
        Some(match time::OffsetDateTime::parse(s, &Rfc3339) {
            Ok(t) if field.ends_with("At") => format!("{:020}", t.unix_timestamp_nanos()),
            _ => s.to_owned(),
        })
    };
    value(a).cmp(&value(b))
}

#[tokio::test]
async fn keyset_pages_equal_the_whole_ordered_list_in_every_sort_and_prev_walks_them_back() {
    let e = env().await;
    for sort in SORTS.iter().flat_map(|s| [s.to_string(), format!("-{s}")]) {
        for filter in ["", "&firmwareUpdateStatus=SUCCEEDED", "&modifiedSince=2026-02-01T00:00:00Z"] {
            let (status, whole) = get(&e, &format!("/firmware/states?limit=1000&sort={sort}{filter}")).await;
            assert_eq!(status, StatusCode::OK, "{sort}{filter}: {whole}");
            assert!(whole["next"].is_null(), "one page holds them all");
            let whole = whole["items"].as_array().unwrap().clone();
            assert!(whole.len() >= 10, "{sort}{filter}: {} states", whole.len());
            // Ordered by the member (where a state shows it: not its creation and modification
            // times), then device and module.
            let field = sort.trim_start_matches('-');
            let shown = !matches!(field, "createdAt" | "modifiedAt");
            for pair in whole.windows(2) {
                let mut by = if !shown { Ordering::Equal } else { compare(&pair[0], &pair[1], field) };
                if sort.starts_with('-') {
                    by = by.reverse();
                }
                let ok = match by {
                    Ordering::Less => true,
                    Ordering::Greater => false,
                    // Ties by device and module, the way of the sort.
                    Ordering::Equal => !shown || (key(&pair[0]) < key(&pair[1])) != sort.starts_with('-'),
                };
                assert!(ok, "{sort}{filter}: {} before {}", pair[0], pair[1]);
            }

            let pages = forward(&e, &format!("/firmware/states?limit=4&sort={sort}{filter}")).await;
            let paged: Vec<Value> = pages.iter().flatten().cloned().collect();
            assert_eq!(paged, whole, "{sort}{filter}: the pages are the whole list");

            // From the last page back by `prev`: the same pages in reverse.
            let mut link = None;
            let mut page_link = Some(format!("/firmware/states?limit=4&sort={sort}{filter}"));
            while let Some(l) = page_link {
                let (_, page) = get(&e, &l).await;
                link = Some(l);
                page_link = page["next"].as_str().map(str::to_owned);
            }
            let mut back = Vec::new();
            while let Some(l) = link {
                let (status, page) = get(&e, &l).await;
                assert_eq!(status, StatusCode::OK, "{l}");
                back.push(page["items"].as_array().unwrap().clone());
                link = page["prev"].as_str().map(str::to_owned);
            }
            back.reverse();
            assert_eq!(back, pages, "{sort}{filter}: prev walks the pages back");
        }
    }
}

/// A state changed after its page was read moves (here to the end of the time order): the
/// rows after it are neither skipped nor read twice, and the changed one is read again after its
/// change. With offsets, the row that moved shifted every later one: one was skipped.
#[tokio::test]
async fn a_state_changed_between_pages_skips_no_other() {
    let e = env().await;
    for sort in ["modifiedAt", "deviceId", "-firmwareUpdateStatusModifiedAt"] {
        let (_, whole) = get(&e, &format!("/firmware/states?limit=1000&sort={sort}")).await;
        let whole = whole["items"].as_array().unwrap().clone();
        let (_, first) = get(&e, &format!("/firmware/states?limit=5&sort={sort}")).await;
        let changed = key(&first["items"][0]);
        let res = e
            .http
            .put(format!("{}/firmware/states/{}/{}", e.base, changed.0, changed.1))
            .bearer_auth(&e.token)
            .json(&json!({"targetFirmwareVersion": null}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{sort}: target reset");
        let mut seen: Vec<(String, String)> = first["items"].as_array().unwrap().iter().map(key).collect();
        let rest = forward(&e, first["next"].as_str().unwrap()).await;
        seen.extend(rest.iter().flatten().map(key));
        for s in &whole {
            let k = key(s);
            let times = seen.iter().filter(|x| **x == k).count();
            let expected = if k == changed && sort == "modifiedAt" { 2 } else { 1 };
            assert_eq!(times, expected, "{sort}: {k:?} read {times} times");
        }
        e.sim.reset().unwrap();
        e.sim.step().unwrap();
    }
}

#[tokio::test]
async fn cursors_the_service_never_issued_are_400s_naming_cursor() {
    let e = env().await;
    let (_, page) = get(&e, "/firmware/states?limit=3&sort=-modifiedAt").await;
    let next = page["next"].as_str().unwrap();
    let issued: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(next.split("cursor=").nth(1).unwrap()).unwrap()).unwrap();
    let position = issued["a"].as_array().expect("a next cursor holds the position after its page").clone();
    assert_eq!(position.len(), 3, "modification time, device, module: {issued}");
    let forge = |edit: &dyn Fn(&mut Value)| {
        let mut c = issued.clone();
        edit(&mut c);
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&c).unwrap())
    };
    let cursors = [
        "not a cursor".to_owned(),
        URL_SAFE_NO_PAD.encode(b"{\"l\":"),
        forge(&|c| c["a"] = json!(["2026-01-05T08:00:00.000Z"])),
        forge(&|c| c["a"][1] = json!({"deviceId": 1})),
        forge(&|c| c["a"][2] = json!(1.5)),
        forge(&|c| c["b"] = c["a"].clone()),
        forge(&|c| c["s"] = json!("deviceId")),
    ];
    for cursor in cursors {
        let (status, body) = get(&e, &format!("/firmware/states?cursor={}", common::urlencode(&cursor))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{cursor}: {body}");
        assert_eq!(body["invalidParams"][0]["name"], "cursor", "{cursor}: {body}");
    }
    // Any value of the right kind is only a position: a page from there.
    let (status, _) = get(&e, &format!("/firmware/states?cursor={}", forge(&|c| c["a"][0] = json!("zzz")))).await;
    assert_eq!(status, StatusCode::OK);
}
