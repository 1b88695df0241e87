//! What an operator sees of a delivery: its span, a child of the task's trace, and its
//! outcome in the metrics.

use tracing::Span;

use super::DeliveryOutcome;
use crate::observe::TraceContext;

/// The span of one event's delivery to one webhook: a child of the task's stored context.
pub(super) fn push_span(task_id: &str, url: &str, stored: Option<&TraceContext>) -> Span {
    let span = tracing::info_span!(
        target: "a2a_kit::push",
        "a2a.push.deliver",
        otel.name = "a2a.push.deliver",
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        a2a.task.id = task_id,
        url.full = url.split(['?', '#']).next().unwrap_or_default(),
        http.response.status_code = tracing::field::Empty,
        a2a.push.attempts = tracing::field::Empty,
        a2a.push.outcome = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
    );
    if let Some(stored) = stored {
        crate::observe::set_parent(&span, stored);
    }
    span
}

/// Record a delivery's fate on its span and in the metrics.
pub(super) fn record_push(span: &Span, attempts: u32, outcome: &DeliveryOutcome) {
    let what = match outcome {
        DeliveryOutcome::Delivered { .. } => "delivered",
        DeliveryOutcome::GaveUp { .. } => "failed",
        _ => "refused",
    };
    crate::observe::metrics::push_delivery(what, attempts);
    if span.is_disabled() {
        return;
    }
    span.record("a2a.push.attempts", attempts);
    span.record("a2a.push.outcome", what);
    if let DeliveryOutcome::Delivered { status } = outcome {
        span.record("http.response.status_code", *status);
    } else {
        span.record("error.type", what);
        span.record("otel.status_code", "ERROR");
    }
}
