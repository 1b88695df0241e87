//! One event to one webhook: the HTTP request, its answer judged, retries with backoff.

use std::time::Duration;

use crate::protocol::{TaskPushNotificationConfig, Timestamp};
use bytes::Bytes;

use crate::observe::TraceContext;

use crate::store::{PushLane, PushOutbox, Seq};

use super::{config::*, report::*, *};

/// What one HTTP attempt says about the next.
pub(super) enum Attempt {
    Done(DeliveryOutcome),
    Retry {
        error: String,
        after: Option<Duration>,
    },
}

/// A retry in progress, recorded in the config's lane of a durable outbox: attempts made, the
/// last error and when the next attempt is due, readable meanwhile
/// ([`PushDispatcher::stored_statuses`]) and kept by whoever delivers next (a restart,
/// another replica).
pub(super) struct Retrying<'a> {
    pub(super) outbox: &'a dyn PushOutbox,
    pub(super) task_id: &'a str,
    pub(super) lane: PushLane,
}

impl Retrying<'_> {
    /// Wait until the lane's next attempt is due (a retry scheduled before a restart).
    async fn due(&self) {
        let Some(at) = self.lane.next_attempt_at else {
            return;
        };
        let wait = at.saturating_sub(Timestamp::now().0.timestamp_millis());
        if let Ok(ms) = u64::try_from(wait) {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
    }

    async fn record(&mut self, attempts: u32, error: &str, wait: Duration) {
        self.lane.attempts = attempts;
        self.lane.last_error = Some(error.to_string());
        let wait_ms = i64::try_from(wait.as_millis()).unwrap_or(i64::MAX);
        self.lane.next_attempt_at = Some(
            Timestamp::now()
                .0
                .timestamp_millis()
                .saturating_add(wait_ms),
        );
        // Progress only: a claim lost meanwhile shows when the outcome is saved.
        if let Err(e) = self.outbox.save_push_lane(self.task_id, &self.lane).await {
            tracing::warn!(target: "a2a_kit::push", task_id = self.task_id, error = %e, "could not record a push retry");
        }
    }
}

/// An event as it is posted: its sequence number and its JSON body.
pub(super) struct Outgoing {
    pub(super) seq: Seq,
    pub(super) body: Bytes,
}

/// Post `out` to the config's webhook until it is delivered, refused for good, or the retry
/// policy gives up; returns the attempts made and the outcome. Each attempt takes a turn of
/// `in_flight` for as long as its request is open (not during a backoff).
pub(super) async fn send_with_retries(
    client: &reqwest::Client,
    cfg: &PushConfig,
    in_flight: &tokio::sync::Semaphore,
    (config, trace): (&TaskPushNotificationConfig, Option<&TraceContext>),
    out: &Outgoing,
    mut retrying: Option<Retrying<'_>>,
) -> (u32, DeliveryOutcome) {
    let url = match checked_url(cfg, config) {
        Ok(url) => url,
        Err(outcome) => return (0, outcome),
    };
    let mut headers = match push_headers(config, cfg.token_as_bearer) {
        Ok(h) => h,
        Err(reason) => return (0, DeliveryOutcome::Invalid { reason }),
    };
    if let Some(trace) = trace {
        trace.inject(&mut headers);
    }
    let body = match body_for_config(config, &out.body) {
        Ok(body) => body,
        Err(reason) => return (0, DeliveryOutcome::Invalid { reason }),
    };
    let max = cfg.retry.max_attempts.max(1);
    // Attempts made before (recorded in the lane) count, and their schedule holds.
    let mut attempt = retrying.as_ref().map_or(0, |r| r.lane.attempts);
    if let Some(r) = &retrying {
        r.due().await;
    }
    loop {
        attempt += 1;
        let verdict = {
            // Waiting holds nothing else: a durable store's claim on the task is renewed
            // with the store's lease while the process lives (PushOutbox), and the attempt's
            // timeout starts when the request does.
            let _turn = in_flight.acquire().await;
            // Signed once its turn came: a signature's `iat` is the moment it is sent.
            let Some(headers) = attempt_headers(cfg, &headers, &body) else {
                let reason = "the delivery could not be signed".to_string();
                return (attempt - 1, DeliveryOutcome::Invalid { reason });
            };
            let sent = client
                .post(url.clone())
                .headers(headers)
                .body(body.clone())
                .send()
                .await;
            // The response (and its connection, unless kept idle) is let go before the turn.
            match sent {
                Ok(resp) => judge_response(resp.status(), resp.headers()),
                Err(e) => judge_error(&e),
            }
        };
        match verdict {
            // A refusal by the resolver sent nothing.
            Attempt::Done(outcome @ DeliveryOutcome::Blocked { .. }) => {
                return (attempt - 1, outcome);
            }
            Attempt::Done(outcome) => return (attempt, outcome),
            Attempt::Retry { error, after } => {
                if attempt >= max {
                    return (attempt, DeliveryOutcome::GaveUp { error });
                }
                let wait = match after {
                    Some(d) if d > cfg.retry.max_retry_after => {
                        let error = format!(
                            "{error}; the receiver asked to retry after {d:?}, more than allowed"
                        );
                        return (attempt, DeliveryOutcome::GaveUp { error });
                    }
                    Some(d) => d,
                    None => cfg.retry.backoff(attempt),
                };
                tracing::info!(
                    target: "a2a_kit::push", task_id = config.task_id.as_deref().unwrap_or_default(),
                    config_id = config.id.as_deref().unwrap_or_default(), seq = out.seq, url = %url,
                    attempts = attempt, error, retry_in = ?wait, "push attempt failed; retrying"
                );
                if let Some(r) = &mut retrying {
                    r.record(attempt, &error, wait).await;
                }
                tokio::time::sleep(wait).await;
            }
        }
    }
}

/// The config's webhook URL, if a delivery may go there: http or https, and no address the
/// SSRF guard refuses as written (names are checked again when resolved).
fn checked_url(
    cfg: &PushConfig,
    config: &TaskPushNotificationConfig,
) -> Result<reqwest::Url, DeliveryOutcome> {
    let url = match reqwest::Url::parse(&config.url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => u,
        Ok(u) => {
            return Err(DeliveryOutcome::Invalid {
                reason: format!("unsupported scheme `{}`", u.scheme()),
            });
        }
        Err(e) => {
            return Err(DeliveryOutcome::Invalid {
                reason: format!("`{}` is not a valid URL: {e}", config.url),
            });
        }
    };
    cfg.ssrf
        .check_literal(&url)
        .map_err(|reason| DeliveryOutcome::Blocked { reason })?;
    Ok(url)
}

/// The headers of one attempt: the config's and, with a signer (feature `jose`), a signature
/// of its own, since a retry is a new delivery with its own `iat` and `jti`. `None` if the
/// delivery could not be signed.
#[cfg_attr(not(feature = "jose"), allow(unused_variables))]
fn attempt_headers(
    cfg: &PushConfig,
    headers: &reqwest::header::HeaderMap,
    body: &[u8],
) -> Option<reqwest::header::HeaderMap> {
    #[allow(unused_mut)]
    let mut headers = headers.clone();
    #[cfg(feature = "jose")]
    if let Some(signer) = &cfg.signer {
        let signature = signer.sign_delivery(body).ok()?;
        let value = reqwest::header::HeaderValue::from_str(&signature).ok()?;
        headers.insert(crate::signing::SIGNATURE_HEADER, value);
    }
    Some(headers)
}

/// The body `config`'s webhook gets for an event posted as `body`: as it is, or for a
/// webhook an A2A 0.3 client registered, the bare 0.3 event (`kind`, lowercase states,
/// `final` on a status update that settles the task).
fn body_for_config(config: &TaskPushNotificationConfig, body: &Bytes) -> Result<Bytes, String> {
    if config.protocol_version != crate::protocol::ProtocolVersion::V0_3 {
        return Ok(body.clone());
    }
    let event: crate::protocol::StreamResponse = serde_json::from_slice(body)
        .map_err(|e| format!("the event could not be read back for a 0.3 webhook: {e}"))?;
    let settled = super::config::is_settled(event.state());
    let v03 = crate::v03::convert::event_to_v03(event, settled);
    serde_json::to_vec(&v03)
        .map(Bytes::from)
        .map_err(|e| format!("the event could not be written for a 0.3 webhook: {e}"))
}

/// The headers of every attempt to `config`: the content type, `Authorization` from its
/// `authentication` (or, with `token_as_bearer` and no `authentication`, its token as a
/// bearer token), and its token in [`NOTIFICATION_TOKEN_HEADER`].
pub(super) fn push_headers(
    config: &TaskPushNotificationConfig,
    token_as_bearer: bool,
) -> Result<reqwest::header::HeaderMap, String> {
    use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
    let mut h = HeaderMap::new();
    // A 0.3 webhook gets plain JSON, as 0.3 agents send it.
    let content_type = match config.protocol_version {
        crate::protocol::ProtocolVersion::V0_3 => "application/json",
        crate::protocol::ProtocolVersion::V1_0 => PUSH_CONTENT_TYPE,
    };
    h.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Some(auth) = config
        .authentication
        .as_ref()
        .filter(|a| !a.scheme.trim().is_empty())
    {
        let value = match auth.credentials.as_deref().filter(|c| !c.is_empty()) {
            Some(c) => format!("{} {c}", auth.scheme.trim()),
            None => auth.scheme.trim().to_string(),
        };
        let mut v = HeaderValue::from_str(&value).map_err(|_| {
            "the authentication credentials are not a valid header value".to_string()
        })?;
        v.set_sensitive(true);
        h.insert(AUTHORIZATION, v);
    }
    if let Some(token) = config.token.as_deref().filter(|t| !t.is_empty()) {
        let mut v = HeaderValue::from_str(token)
            .map_err(|_| "the token is not a valid header value".to_string())?;
        v.set_sensitive(true);
        if token_as_bearer && !h.contains_key(AUTHORIZATION) {
            let mut bearer = HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| "the token is not a valid header value".to_string())?;
            bearer.set_sensitive(true);
            h.insert(AUTHORIZATION, bearer);
        }
        h.insert(NOTIFICATION_TOKEN_HEADER, v);
    }
    Ok(h)
}

pub(super) fn judge_response(
    status: reqwest::StatusCode,
    headers: &reqwest::header::HeaderMap,
) -> Attempt {
    let code = status.as_u16();
    if status.is_success() {
        Attempt::Done(DeliveryOutcome::Delivered { status: code })
    } else if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        let after = headers
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        Attempt::Retry {
            error: format!("the webhook answered {status}"),
            after,
        }
    } else {
        Attempt::Done(DeliveryOutcome::Rejected { status: code })
    }
}

pub(super) fn judge_error(e: &reqwest::Error) -> Attempt {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(b) = s.downcast_ref::<BlockedDestination>() {
            return Attempt::Done(DeliveryOutcome::Blocked {
                reason: b.reason.clone(),
            });
        }
        source = s.source();
    }
    let chain = error_chain(e);
    if e.is_builder() {
        return Attempt::Done(DeliveryOutcome::Invalid { reason: chain });
    }
    // The connector refuses https when reqwest has no TLS backend: retrying cannot help.
    if chain.contains("scheme is not http") {
        return Attempt::Done(DeliveryOutcome::Invalid {
            reason: format!(
                "{chain} (https webhooks need a TLS backend: enable a2a-kit's `rustls` feature)"
            ),
        });
    }
    Attempt::Retry {
        error: chain,
        after: None,
    }
}

pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        source = inner.source();
    }
    s
}

/// `Retry-After`: delay-seconds or an HTTP date.
pub(crate) fn parse_retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let delta = when.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(delta.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{StreamResponse, TaskState};
    use crate::push::{PushTriggers, RetryPolicy};

    #[test]
    fn retry_after() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(Duration::ZERO)
        );
        let later = (chrono::Utc::now() + chrono::Duration::seconds(30))
            .format("%a, %d %b %Y %H:%M:%S GMT")
            .to_string();
        let d = parse_retry_after(&later).unwrap();
        assert!(
            d > Duration::from_secs(25) && d <= Duration::from_secs(30),
            "{d:?}"
        );
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn backoff_grows_with_jitter_in_upper_half() {
        let p = RetryPolicy::default();
        for attempt in 1..8 {
            let base = RetryPolicy {
                jitter: false,
                ..p.clone()
            }
            .backoff(attempt);
            for _ in 0..20 {
                let d = p.backoff(attempt);
                assert!(d >= base / 2 && d <= base, "{attempt}: {d:?} vs {base:?}");
            }
        }
    }

    #[test]
    fn triggers() {
        use crate::protocol::{TaskStatus, TaskStatusUpdateEvent};
        let ev = |state| {
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: "t".into(),
                context_id: "c".into(),
                status: TaskStatus::new(state),
                metadata: None,
            })
        };
        let t = PushTriggers::TerminalAndInterrupted;
        assert!(t.matches(&ev(TaskState::Completed)));
        assert!(t.matches(&ev(TaskState::InputRequired)));
        assert!(!t.matches(&ev(TaskState::Working)));
        assert!(PushTriggers::Every.matches(&ev(TaskState::Working)));
    }

    #[test]
    fn headers() {
        use crate::protocol::AuthenticationInfo;
        let config = TaskPushNotificationConfig {
            url: "http://x".into(),
            token: Some("tok".into()),
            authentication: Some(AuthenticationInfo {
                scheme: "Bearer".into(),
                credentials: Some("secret".into()),
            }),
            ..Default::default()
        };
        // The config's `authentication` keeps `Authorization`, bearer token or not.
        for token_as_bearer in [false, true] {
            let h = push_headers(&config, token_as_bearer).unwrap();
            assert_eq!(h["authorization"], "Bearer secret");
            assert_eq!(h[NOTIFICATION_TOKEN_HEADER], "tok");
            assert_eq!(h["content-type"], PUSH_CONTENT_TYPE);
        }
        // `{url, token}`: the token in its own header, and as a bearer token when asked.
        let plain = TaskPushNotificationConfig {
            authentication: None,
            ..config.clone()
        };
        let h = push_headers(&plain, false).unwrap();
        assert!(!h.contains_key("authorization"));
        assert_eq!(h[NOTIFICATION_TOKEN_HEADER], "tok");
        let h = push_headers(&plain, true).unwrap();
        assert_eq!(h["authorization"], "Bearer tok");
        assert_eq!(h[NOTIFICATION_TOKEN_HEADER], "tok");
        // No token, no bearer.
        let none = TaskPushNotificationConfig {
            token: None,
            ..plain
        };
        assert!(
            !push_headers(&none, true)
                .unwrap()
                .contains_key("authorization")
        );
        let bad = TaskPushNotificationConfig {
            token: Some("a\nb".into()),
            ..config
        };
        assert!(push_headers(&bad, false).is_err());
        assert!(push_headers(&bad, true).is_err());
    }
}
