//! What an operator sees of an agent: spans, trace context, metrics.
//!
//! **Spans** (`tracing`, named after OpenTelemetry's conventions; `otel.name` gives each its
//! OpenTelemetry name):
//!
//! | span | kind | attributes |
//! |---|---|---|
//! | `{a2a.method.name}` (e.g. `SendMessage`; `unknown` for a request naming none), target `a2a_kit::request`: one operation, from its method known to its answer | server | `a2a.method.name`, `a2a.binding` (`jsonrpc`, `http+json`, `grpc`), `a2a.protocol.version`, `rpc.system.name`, `rpc.method`, `a2a.task.id`, `a2a.context.id`, `error.type` (the error's reason) |
//! | `invoke_agent {agent}`, target `a2a_kit::task`: one run of a skill on a task | internal | `gen_ai.operation.name` = `invoke_agent`, `gen_ai.agent.name`, `gen_ai.conversation.id`, `a2a.task.id`, `a2a.context.id`, `a2a.skill.id`, `a2a.task.state` (where the run ended), `a2a.artifact.chunks`, `error.type`; events `a2a.task.status` (`a2a.task.state`), `a2a.task.artifact` (`a2a.artifact.id`, `a2a.artifact.chunks` so far, `a2a.artifact.last_chunk`), `a2a.task.cancel` |
//! | `{a2a.method.name}`, target `a2a_kit::client`: a call to another agent | client | `a2a.method.name`, `rpc.method`, `server.address`, `server.port`, `http.response.status_code`, `gen_ai.operation.name` = `invoke_agent` for a send |
//! | `execute_tool {name}`, target `a2a_kit::llm`: a model's call of an agent tool | internal | `gen_ai.operation.name` = `execute_tool`, `gen_ai.tool.name` |
//! | `a2a.push.deliver`, target `a2a_kit::push`: one event to one webhook | client | `a2a.task.id`, `url.full` (without query), `http.response.status_code`, `a2a.push.attempts`, `a2a.push.outcome` |
//!
//! With no subscriber listening they cost next to nothing. With feature **`otel`**, [`otel`]
//! exports them over OTLP and ties them to the callers' traces.
//!
//! **Trace context**: [`TraceContext`], the W3C `traceparent`/`tracestate`/`baggage` of a
//! request, read on every binding, kept with the task, written by the client, delegation,
//! model tools and push delivery. Without `otel` the kit passes its callers' context on
//! unchanged (it takes part in no trace of its own); with it, its own spans are the parents.
//!
//! **Metrics**: [`metrics`](mod@metrics), recorded once enabled; feature **`prometheus`**
//! renders them as Prometheus text ([`prometheus`]), `otel` exports them over OTLP.

pub mod metrics;
#[cfg(feature = "otel")]
pub mod otel;
#[cfg(feature = "prometheus")]
pub mod prometheus;
mod trace_context;

pub use trace_context::{TRACE_METADATA_KEY, TraceContext};

use tracing::Span;
use tracing::field::Empty;

/// The span of one operation (`method` over `binding`): a child of the caller's trace when
/// the request carried one. Named when made: an OpenTelemetry span cannot be renamed once it
/// has started.
pub(crate) fn request_span(
    method: &'static str,
    binding: &'static str,
    v03: bool,
    trace: Option<&TraceContext>,
) -> Span {
    let span = tracing::info_span!(
        target: "a2a_kit::request",
        "a2a.request",
        otel.name = method,
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        a2a.method.name = method,
        a2a.binding = binding,
        a2a.protocol.version = if v03 { "0.3" } else { "1.0" },
        rpc.system.name = match binding {
            "jsonrpc" => "jsonrpc",
            "grpc" => "grpc",
            _ => "http",
        },
        rpc.method = method,
        a2a.task.id = Empty,
        a2a.context.id = Empty,
        "error.type" = Empty,
    );
    if let Some(trace) = trace {
        set_parent(&span, trace);
    }
    span
}

/// Whether any subscriber may want the kit's spans (one load of `tracing`'s global level):
/// with none, the current span is not even looked up.
#[inline]
pub(crate) fn listening() -> bool {
    tracing::level_enabled!(tracing::Level::INFO)
}

/// Record the task a request or run is about on the current span.
pub(crate) fn record_task(task_id: &str, context_id: Option<&str>) {
    if !listening() {
        return;
    }
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    span.record("a2a.task.id", task_id);
    if let Some(c) = context_id {
        span.record("a2a.context.id", c);
    }
}

/// Record an A2A error as `span`'s outcome.
pub(crate) fn record_error(span: &Span, err: &crate::error::A2aError) {
    if span.is_disabled() {
        return;
    }
    span.record("error.type", err.reason());
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", tracing::field::display(err));
}

/// The span of one run of a skill: a child of the current span (the request that started
/// it), or of `stored` (the task's context, for a run a later process starts).
pub(crate) fn run_span(
    agent: &str,
    skill: &str,
    task_id: &str,
    context_id: &str,
    stored: Option<&TraceContext>,
) -> Span {
    let span = tracing::info_span!(
        target: "a2a_kit::task",
        "invoke_agent",
        otel.name = format_args!("invoke_agent {agent}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = agent,
        gen_ai.conversation.id = context_id,
        a2a.task.id = task_id,
        a2a.context.id = context_id,
        a2a.skill.id = skill,
        a2a.task.state = Empty,
        a2a.artifact.chunks = Empty,
        "error.type" = Empty,
    );
    if let Some(stored) = stored {
        set_parent(&span, stored);
    }
    span
}

/// The trace context a run's span stands for (what its outgoing calls and its task's push
/// deliveries carry): the span's own with `otel`, else the one the run was started in.
pub(crate) fn context_of(_span: &Span, started_in: Option<&TraceContext>) -> Option<TraceContext> {
    #[cfg(feature = "otel")]
    if let Some(cx) = otel::span_context(_span) {
        return Some(cx);
    }
    started_in.cloned()
}

/// The trace context of the code running now: the current span's with `otel`, else `fallback`
/// (what the request came in). No span is looked up without `otel`.
pub(crate) fn current_context(fallback: Option<&TraceContext>) -> Option<TraceContext> {
    #[cfg(feature = "otel")]
    if listening()
        && let Some(cx) = otel::span_context(&Span::current())
    {
        return Some(cx);
    }
    fallback.cloned()
}

/// The span of one call to another agent (`operation` at `url`): its context is what the
/// call's `traceparent` carries.
#[cfg(feature = "client")]
pub(crate) fn client_span(operation: &str, url: &url::Url) -> Span {
    let span = tracing::info_span!(
        target: "a2a_kit::client",
        "a2a.call",
        otel.name = operation,
        otel.kind = "client",
        otel.status_code = Empty,
        otel.status_description = Empty,
        a2a.method.name = operation,
        rpc.method = operation,
        gen_ai.operation.name = Empty,
        server.address = url.host_str().unwrap_or_default(),
        server.port = url.port_or_known_default().unwrap_or_default(),
        http.response.status_code = Empty,
        "error.type" = Empty,
    );
    if matches!(operation, "SendMessage" | "SendStreamingMessage") && !span.is_disabled() {
        span.record("gen_ai.operation.name", "invoke_agent");
    }
    span
}

/// Record a failed call on the current span.
#[cfg(feature = "client")]
pub(crate) fn record_failure(what: &'static str, why: &dyn std::fmt::Display) {
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    span.record("error.type", what);
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", tracing::field::display(why));
}

/// The span of one model call (`chat {model}`).
#[cfg(feature = "llm")]
pub(crate) fn chat_span(model: &str) -> Span {
    tracing::info_span!(
        target: "a2a_kit::llm",
        "chat",
        otel.name = format_args!("chat {model}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.request.model = model,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        "error.type" = Empty,
        otel.status_code = Empty,
    )
}

/// The span of a model's call of a tool (`execute_tool {name}`).
#[cfg(feature = "llm")]
pub(crate) fn tool_span(name: &str) -> Span {
    tracing::info_span!(
        target: "a2a_kit::llm",
        "execute_tool",
        otel.name = format_args!("execute_tool {name}"),
        otel.kind = "internal",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        "error.type" = Empty,
        otel.status_code = Empty,
    )
}

/// Make `stored` the parent of `span` (with `otel`; nothing without).
pub(crate) fn set_parent(_span: &Span, _stored: &TraceContext) {
    #[cfg(feature = "otel")]
    otel::set_parent(_span, _stored);
}
