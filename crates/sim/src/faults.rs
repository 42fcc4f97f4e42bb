//! Fault injection, set per run (options, or `PUT /_sim/faults`) and per request (header
//! `X-Sim-Fault`): added latency, a rate of 5xx answers, 429 bursts with `Retry-After` from a
//! request-rate limit, dropped connections, and short token lifetimes.
//!
//! Per-request directives, comma-separated: `latency=<ms>`, `status=<code>` (answer that
//! status without doing the operation), `retry-after=<s>` (with status 429), `drop` (close the
//! connection without an answer), `error-rate=<0..1>`, `token-lifetime=<s>` (on the token
//! request).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

/// Header carrying per-request fault directives.
pub const FAULT_HEADER: &str = "x-sim-fault";

/// Faults applied to every request of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Faults {
    /// Added to every answer, in milliseconds.
    pub latency_ms: u64,
    /// Share of requests (0 to 1) answered 500, 502, 503 or 504 without doing anything.
    pub error_rate: f64,
    /// Share of requests (0 to 1) whose connection is closed without an answer.
    pub drop_rate: f64,
    /// Requests per second the whole simulator accepts; above it, 429 with `Retry-After`.
    pub rate_limit: Option<u32>,
}

impl Faults {
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in [("errorRate", self.error_rate), ("dropRate", self.drop_rate)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("{name}: must be between 0 and 1"));
            }
        }
        if self.rate_limit == Some(0) {
            return Err("rateLimit: must be at least 1 request per second".into());
        }
        Ok(())
    }
}

/// Directives of one request's `X-Sim-Fault` header.
#[derive(Debug, Clone, Default)]
pub struct RequestFaults {
    pub latency: Option<Duration>,
    pub status: Option<u16>,
    pub retry_after: Option<u64>,
    pub drop: bool,
    pub error_rate: Option<f64>,
    pub token_lifetime: Option<u64>,
}

impl RequestFaults {
    pub fn parse(header: &str) -> Result<RequestFaults, String> {
        let mut f = RequestFaults::default();
        for part in header.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').map(|(k, v)| (k.trim(), Some(v.trim()))).unwrap_or((part, None));
            let num =
                |v: Option<&str>| v.and_then(|v| v.parse::<u64>().ok()).ok_or(format!("`{key}` needs a whole number"));
            match key {
                "latency" => f.latency = Some(Duration::from_millis(num(value)?)),
                "status" => {
                    let s = num(value)?;
                    if !(400..=599).contains(&s) {
                        return Err("`status` must be 400 to 599".into());
                    }
                    f.status = Some(s as u16);
                }
                "retry-after" => f.retry_after = Some(num(value)?),
                "drop" => f.drop = true,
                "error-rate" => {
                    let r = value.and_then(|v| v.parse::<f64>().ok()).filter(|r| (0.0..=1.0).contains(r));
                    f.error_rate = Some(r.ok_or("`error-rate` must be between 0 and 1")?);
                }
                "token-lifetime" => {
                    let s = num(value)?;
                    if s > crate::MAX_TOKEN_LIFETIME {
                        return Err(format!("`token-lifetime` must be at most {} seconds", crate::MAX_TOKEN_LIFETIME));
                    }
                    f.token_lifetime = Some(s);
                }
                other => return Err(format!("unknown directive `{other}`")),
            }
        }
        Ok(f)
    }
}

/// The run's faults and the rate limiter's bucket.
pub struct FaultState {
    config: Mutex<Faults>,
    /// Tokens left and when they were counted; `None` is a full bucket.
    bucket: Mutex<Option<(f64, Instant)>>,
}

impl FaultState {
    pub fn new(faults: Faults) -> FaultState {
        FaultState { config: Mutex::new(faults), bucket: Mutex::new(None) }
    }

    pub fn get(&self) -> Faults {
        self.config.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn set(&self, faults: Faults) {
        *self.config.lock().unwrap_or_else(|p| p.into_inner()) = faults;
        *self.bucket.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Takes one request from the bucket; `Err(seconds)` to wait when it is empty. The bucket
    /// holds one second of requests, so a burst above the rate gets 429s.
    fn admit(&self, per_second: u32) -> Result<(), u64> {
        let mut b = self.bucket.lock().unwrap_or_else(|p| p.into_inner());
        let rate = f64::from(per_second);
        let now = Instant::now();
        let tokens = match *b {
            None => rate,
            Some((tokens, last)) => (tokens + now.duration_since(last).as_secs_f64() * rate).min(rate),
        };
        if tokens >= 1.0 {
            *b = Some((tokens - 1.0, now));
            Ok(())
        } else {
            *b = Some((tokens, now));
            Err(((1.0 - tokens) / rate).ceil().max(1.0) as u64)
        }
    }
}

fn server_error(rng: &mut impl Rng) -> ApiError {
    let status = [500, 502, 503, 504][rng.gen_range(0..4)];
    ApiError::new(StatusCode::from_u16(status).expect("valid"), "simulated failure (fault injection)")
}

/// The middleware: applies the run's faults and the request's directives.
pub(crate) async fn inject(
    State(state): State<std::sync::Arc<crate::SimState>>,
    mut req: Request,
    next: Next,
) -> Response {
    let directives = match req.headers().get(FAULT_HEADER).map(|v| v.to_str().map(RequestFaults::parse)) {
        None => RequestFaults::default(),
        Some(Ok(Ok(f))) => f,
        Some(Ok(Err(why))) => return ApiError::invalid("X-Sim-Fault", why).into_response(),
        Some(Err(_)) => return ApiError::invalid("X-Sim-Fault", "must be readable text").into_response(),
    };
    let run = state.faults.get();
    let latency = directives.latency.unwrap_or(Duration::ZERO) + Duration::from_millis(run.latency_ms);
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let (drop, error) = {
        let mut rng = rand::thread_rng();
        let drop = directives.drop || (run.drop_rate > 0.0 && rng.gen_bool(run.drop_rate));
        let rate = directives.error_rate.unwrap_or(run.error_rate);
        let error = (rate > 0.0 && rng.gen_bool(rate)).then(|| server_error(&mut rng));
        (drop, error)
    };
    if drop {
        // Ends this connection's task: the client sees the connection closed, no answer.
        std::panic::resume_unwind(Box::new("simulated dropped connection"));
    }
    if let Some(status) = directives.status {
        let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut err = ApiError::new(code, "simulated answer (X-Sim-Fault)");
        if status == 429 {
            err.retry_after = Some(directives.retry_after.unwrap_or(1));
        }
        return err.into_response();
    }
    if let Some(limit) = run.rate_limit {
        if let Err(wait) = state.faults.admit(limit) {
            let mut err =
                ApiError::new(StatusCode::TOO_MANY_REQUESTS, format!("rate limit of {limit} requests per second hit"));
            err.retry_after = Some(wait);
            return err.into_response();
        }
    }
    if let Some(err) = error {
        return err.into_response();
    }
    req.extensions_mut().insert(directives);
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_directives_and_refuses_unknown_ones() {
        let f = RequestFaults::parse("latency=20, status=429, retry-after=3, drop, error-rate=0.5, token-lifetime=2")
            .unwrap();
        assert_eq!(f.latency, Some(Duration::from_millis(20)));
        assert_eq!((f.status, f.retry_after, f.drop, f.token_lifetime), (Some(429), Some(3), true, Some(2)));
        assert!(RequestFaults::parse("explode").is_err());
        assert!(RequestFaults::parse("status=200").is_err());
        assert!(RequestFaults::parse("error-rate=2").is_err());
    }

    #[test]
    fn the_bucket_lets_a_seconds_worth_through_then_asks_to_wait() {
        let s = FaultState::new(Faults { rate_limit: Some(5), ..Default::default() });
        let admitted = (0..20).filter(|_| s.admit(5).is_ok()).count();
        assert!((4..=6).contains(&admitted), "{admitted}");
        assert_eq!(s.admit(5), Err(1));
    }
}
