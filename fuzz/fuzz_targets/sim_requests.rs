//! What the simulator reads from a request: the `X-Sim-Fault` header, and a list's query string
//! (`cursor`, `limit`, `sort`, filters, the four time filters), for both variants.
//! - Fault directives stay in range: a status of 400 to 599, an error rate of 0 to 1, a token
//!   lifetime of at most `MAX_TOKEN_LIFETIME`, a latency that adds to any run latency.
//! - A page request it accepts, from parameters or from a cursor (even a forged one), pages by
//!   1 to the variant's page cap from an offset within `MAX_OFFSET`; its time filters are in the
//!   store's fixed-width UTC form; its `next` link carries the following page, which is accepted
//!   in turn; a cursor decodes to what was encoded.
//!
//! The input is read as a header, as a query string, and as the JSON inside a cursor (the
//! fuzzer cannot see through base64).
#![no_main]

use std::time::Duration;

use dcs_sim::faults::RequestFaults;
use dcs_sim::paging::{Cursor, PageRequest, QueryParams, MAX_OFFSET, TIME_FILTERS};
use dcs_sim::{Variant, MAX_TOKEN_LIFETIME};
use libfuzzer_sys::fuzz_target;

const SORTABLE: &[&str] = &["createdAt", "modifiedAt", "name", "id"];

fn faults(s: &str) {
    let Ok(f) = RequestFaults::parse(s) else { return };
    assert!(f.status.is_none_or(|s| (400..=599).contains(&s)), "{s:?}");
    assert!(f.error_rate.is_none_or(|r| (0.0..=1.0).contains(&r)), "{s:?}");
    assert!(f.token_lifetime.is_none_or(|t| t <= MAX_TOKEN_LIFETIME), "{s:?}");
    // The middleware adds the run's latency (any u64 of milliseconds) to the request's.
    assert!(f.latency.unwrap_or_default().checked_add(Duration::from_millis(u64::MAX)).is_some());
}

fn page_request(query: &str) {
    let filters: Vec<&str> = TIME_FILTERS.iter().copied().chain(["embed", "deviceId"]).collect();
    for variant in [Variant::Reference, Variant::Alt] {
        let q = QueryParams::from_query(Some(query)).for_variant(variant);
        let Ok(req) = PageRequest::from_params(&q, &filters, SORTABLE) else { continue };
        let c = &req.cursor;
        assert!((1..=q.max_limit()).contains(&c.limit) && c.offset <= MAX_OFFSET, "{query:?} gave {c:?}");
        assert_eq!(req.window(&[("name", "name")]).limit, c.limit + 1);
        if let Ok(w) = req.time_window() {
            for t in [w.created_before, w.created_since, w.modified_before, w.modified_since].into_iter().flatten() {
                assert!(t.len() == 24 && t.ends_with('Z'), "{query:?} gave {t:?}");
                dcs_model::timestamp::parse(&t).expect("the store's form reads back");
            }
        }
        assert_eq!(Cursor::decode(&c.encode()).ok().as_ref(), Some(c));
        let (next, prev) = req.links("", "/p", true);
        let next = next.expect("a page with more has a next link");
        assert!(prev.is_some() == (c.offset > 0));
        if c.offset + c.limit <= MAX_OFFSET {
            let after = PageRequest::from_params(
                &QueryParams::from_query(next.split_once('?').map(|(_, q)| q)).for_variant(variant),
                &filters,
                SORTABLE,
            )
            .unwrap_or_else(|_| panic!("{query:?}: the next link {next} is refused"));
            assert_eq!(after.cursor, Cursor { offset: c.offset + c.limit, ..c.clone() });
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(cursor) = serde_json::from_slice::<Cursor>(data) {
        page_request(&format!("cursor={}", cursor.encode()));
    }
    let Ok(s) = std::str::from_utf8(data) else { return };
    faults(s);
    page_request(s);
    let _ = Cursor::decode(s);
});
