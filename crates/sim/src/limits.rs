//! Size limits of a request, answered like every other refusal: a problem document naming the
//! limit. hyper reads a request before the router sees it and answers on its own (a bare 414 at
//! 64 KiB of address, a 431 at about 400 KiB of headers), and axum's body limit answers in plain
//! text; these limits are lower, so a client meets the problem document first.

use axum::extract::Request;
use axum::http::header::CONTENT_TYPE;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;

use crate::error::ApiError;

/// Longest request target (path and query) served.
pub const MAX_URI: usize = 8 * 1024;
/// Most bytes of request headers (names, values and their separators) served.
pub const MAX_HEADERS: usize = 64 * 1024;
/// The largest JSON body accepted (axum's default body limit, which file uploads lift).
pub const MAX_JSON_BODY: usize = 2 * 1024 * 1024;

pub async fn enforce(req: Request, next: Next) -> Response {
    let uri = req.uri().clone();
    let target = uri.path_and_query().map(|p| p.as_str().len()).unwrap_or(0);
    if target > MAX_URI {
        // The instance names the path only (the query may be what is too long).
        return ApiError::new(
            StatusCode::URI_TOO_LONG,
            format!("the request target has {target} characters; at most {MAX_URI} are served"),
        )
        .render(&uri.path().parse().unwrap_or_default());
    }
    let headers: usize = req.headers().iter().map(|(n, v)| n.as_str().len() + v.len() + 4).sum();
    if headers > MAX_HEADERS {
        return ApiError::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            format!("the request headers have {headers} bytes; at most {MAX_HEADERS} are served"),
        )
        .render(&uri);
    }
    let res = next.run(req).await;
    let problem =
        res.headers().get(CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json"));
    if res.status() == StatusCode::PAYLOAD_TOO_LARGE && !problem {
        return ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is over the {MAX_JSON_BODY} bytes this operation accepts"),
        )
        .render(&uri);
    }
    res
}
