//! Errors as problem+json (reference section 7).
//!
//! Handlers return [`ApiError`]; it travels in the response's extensions and a middleware
//! renders it with `instance` set to the request URI, so no handler has to pass the URI around.

use axum::http::{header, HeaderValue, Request, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use dcs_model::problem::PROBLEM_JSON;
use dcs_model::{InvalidParam, Problem};

use crate::store::StoreError;

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub detail: String,
    pub invalid_params: Vec<InvalidParam>,
    /// Seconds, sent as `Retry-After` (429).
    pub retry_after: Option<u64>,
    /// `Location` header of the response (the beta API's 302 to the token endpoint).
    pub location: Option<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        ApiError { status, detail: detail.into(), invalid_params: Vec::new(), retry_after: None, location: None }
    }

    /// A 400 naming the parameter or field and the rule it broke.
    pub fn invalid(name: &str, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        ApiError {
            status: StatusCode::BAD_REQUEST,
            detail: format!("{name}: {reason}"),
            invalid_params: vec![InvalidParam { name: name.to_owned(), reason }],
            retry_after: None,
            location: None,
        }
    }

    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, detail)
    }

    /// A 302 to `location`: how the deprecated beta API answers a missing, invalid or expired
    /// token (reference section 4.5). The body is still a problem document saying why.
    pub fn found(location: &str, detail: impl Into<String>) -> Self {
        ApiError { location: Some(location.to_owned()), ..Self::new(StatusCode::FOUND, detail) }
    }

    pub fn forbidden(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, detail)
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, detail)
    }

    fn into_problem(self, instance: &Uri) -> Problem {
        let mut p = Problem::new(self.status.as_u16(), self.status.canonical_reason().unwrap_or("Error"), self.detail);
        p.instance = Some(instance.path().to_owned());
        p.invalid_params = self.invalid_params;
        p
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        tracing::error!(error = %e, "simulator store failed");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "the simulator's database failed; see its log")
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut res = self.status.into_response();
        res.extensions_mut().insert(self);
        res
    }
}

/// Renders any [`ApiError`] left in a response as a problem document for this request.
pub async fn render_problems(req: Request<axum::body::Body>, next: Next) -> Response {
    let uri = req.uri().clone();
    let mut res = next.run(req).await;
    if let Some(err) = res.extensions_mut().remove::<ApiError>() {
        return err.render(&uri);
    }
    res
}

impl ApiError {
    /// The problem document (with its headers) of this error for a request to `uri`.
    pub fn render(self, uri: &Uri) -> Response {
        let status = self.status;
        let retry_after = self.retry_after;
        let location = self.location.clone();
        let body = serde_json::to_vec(&self.into_problem(uri)).unwrap_or_default();
        let mut out = (status, body).into_response();
        out.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if let Some(secs) = retry_after {
            out.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if let Some(location) = location.and_then(|l| HeaderValue::from_str(&l).ok()) {
            out.headers_mut().insert(header::LOCATION, location);
        }
        out
    }
}
