//! Feature `otel`: the kit's spans and metrics exported over OTLP through the official
//! OpenTelemetry crates, configured by the standard `OTEL_*` variables, and the callers'
//! traces continued by the kit's own spans.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use tracing_subscriber::layer::SubscriberExt;
//! use tracing_subscriber::util::SubscriberInitExt;
//!
//! let otel = a2a_kit::observe::otel::Otel::from_env()?; // in a Tokio runtime
//! tracing_subscriber::registry()
//!     .with(tracing_subscriber::fmt::layer())
//!     .with(otel.tracing_layer())
//!     .init();
//! a2a_kit::observe::metrics::install(vec![Box::new(otel.metrics_recorder())])?;
//! // ... serve the agent; at the end:
//! otel.shutdown();
//! # Ok(()) }
//! ```
//!
//! The variables read: `OTEL_EXPORTER_OTLP_ENDPOINT` (and the per-signal
//! `OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT`), `OTEL_EXPORTER_OTLP_PROTOCOL`
//! (`http/protobuf`, the default, or `grpc`), `OTEL_EXPORTER_OTLP_HEADERS`,
//! `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
//! `OTEL_TRACES_SAMPLER(_ARG)`, `OTEL_METRIC_EXPORT_INTERVAL`. Propagation is W3C trace
//! context and baggage.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::TraceContext;

/// The instrumentation scope of the kit's spans and metrics.
const SCOPE: &str = "a2a-kit";

/// Why the OTLP pipeline could not be built.
#[derive(Debug, thiserror::Error)]
#[error("OpenTelemetry: {0}")]
pub struct OtelError(String);

/// The OTLP trace and metric pipelines, built from the `OTEL_*` variables.
#[derive(Debug, Clone)]
pub struct Otel {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
}

impl Otel {
    /// Build the exporters as the `OTEL_*` variables say and make them the global providers
    /// (with W3C trace context and baggage as the global propagator). Call it inside a Tokio
    /// runtime: the exports run on it.
    pub fn from_env() -> Result<Otel, OtelError> {
        Self::build(None)
    }

    /// [`from_env`](Self::from_env), the service named `service` unless `OTEL_SERVICE_NAME`
    /// (or `service.name` in `OTEL_RESOURCE_ATTRIBUTES`) names it.
    pub fn from_env_or_named(service: &str) -> Result<Otel, OtelError> {
        Self::build(Some(service))
    }

    fn build(default_name: Option<&str>) -> Result<Otel, OtelError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(OtelError("Otel::from_env needs a Tokio runtime".into()));
        }
        let named = std::env::var_os("OTEL_SERVICE_NAME").is_some_and(|v| !v.is_empty())
            || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|v| v.contains("service.name="));
        let mut resource = opentelemetry_sdk::Resource::builder();
        if let Some(name) = default_name.filter(|_| !named) {
            resource = resource.with_service_name(name.to_string());
        }
        let resource = resource.build();
        let spans = opentelemetry_otlp::SpanExporter::builder()
            .build()
            .map_err(|e| OtelError(format!("the span exporter: {e}")))?;
        let metrics = opentelemetry_otlp::MetricExporter::builder()
            .build()
            .map_err(|e| OtelError(format!("the metric exporter: {e}")))?;
        let runtime = opentelemetry_sdk::runtime::Tokio;
        let batch =
            opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor::builder(
                spans,
                runtime.clone(),
            )
            .build();
        let tracer_provider = SdkTracerProvider::builder()
            .with_span_processor(batch)
            .with_resource(resource.clone())
            .build();
        let reader =
            opentelemetry_sdk::metrics::periodic_reader_with_async_runtime::PeriodicReader::builder(
                metrics, runtime,
            )
            .build();
        let meter_provider = SdkMeterProvider::builder()
            .with_reader(reader)
            .with_resource(resource)
            .build();
        opentelemetry::global::set_text_map_propagator(propagator());
        opentelemetry::global::set_tracer_provider(tracer_provider.clone());
        opentelemetry::global::set_meter_provider(meter_provider.clone());
        Ok(Otel {
            tracer_provider,
            meter_provider,
        })
    }

    /// The `tracing` layer that exports spans (and their events) over OTLP: every span at
    /// `info` and above, and the kit's task events at `debug`.
    pub fn tracing_layer<S>(&self) -> impl tracing_subscriber::Layer<S> + 'static
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        use tracing_subscriber::Layer as _;
        let filter = tracing_subscriber::filter::Targets::new()
            .with_default(tracing::Level::INFO)
            .with_target("a2a_kit", tracing::Level::DEBUG);
        tracing_opentelemetry::layer()
            .with_tracer(self.tracer_provider.tracer(SCOPE))
            .with_threads(false)
            .with_filter(filter)
    }

    /// A `metrics` recorder that exports over OTLP (install it with
    /// [`metrics::install`](super::metrics::install)).
    pub fn metrics_recorder(&self) -> metrics_exporter_opentelemetry::Recorder {
        use opentelemetry::metrics::MeterProvider as _;
        metrics_exporter_opentelemetry::Recorder::with_meter(self.meter_provider.meter(SCOPE))
    }

    /// Export what is pending and stop (at the end of the program).
    pub fn shutdown(&self) {
        let _ = self.tracer_provider.force_flush();
        let _ = self.meter_provider.force_flush();
        let _ = self.tracer_provider.shutdown();
        let _ = self.meter_provider.shutdown();
    }

    /// Export what is pending now.
    pub fn flush(&self) {
        let _ = self.tracer_provider.force_flush();
        let _ = self.meter_provider.force_flush();
    }
}

fn propagator() -> opentelemetry::propagation::TextMapCompositePropagator {
    opentelemetry::propagation::TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ])
}

/// Make the caller's context `trace` the parent of `span` (before anything is recorded under
/// it).
pub(crate) fn set_parent(span: &tracing::Span, trace: &TraceContext) {
    if span.is_disabled() {
        return;
    }
    let mut carrier = HashMap::with_capacity(3);
    carrier.insert("traceparent".to_string(), trace.traceparent().to_string());
    if let Some(v) = trace.tracestate() {
        carrier.insert("tracestate".to_string(), v.to_string());
    }
    if let Some(v) = trace.baggage() {
        carrier.insert("baggage".to_string(), v.to_string());
    }
    let cx = propagator().extract(&carrier);
    let _ = span.set_parent(cx);
}

/// The trace context `span` stands for, if an OpenTelemetry layer records it: written
/// straight from its ids (no propagator round trip on every task and call).
pub(crate) fn span_context(span: &tracing::Span) -> Option<TraceContext> {
    use opentelemetry::baggage::BaggageExt;
    if span.is_disabled() {
        return None;
    }
    let cx = span.context();
    let (traceparent, tracestate) = {
        let otel_span = cx.span();
        let sc = otel_span.span_context();
        if !sc.is_valid() {
            return None;
        }
        let traceparent = format!(
            "00-{:032x}-{:016x}-{:02x}",
            sc.trace_id(),
            sc.span_id(),
            sc.trace_flags().to_u8()
        );
        (traceparent, sc.trace_state().header())
    };
    let baggage = (!cx.baggage().is_empty()).then(|| {
        let mut carrier: HashMap<String, String> = HashMap::with_capacity(1);
        BaggagePropagator::new().inject_context(&cx, &mut carrier);
        carrier.remove("baggage").unwrap_or_default()
    });
    TraceContext::parse(
        &traceparent,
        Some(tracestate.as_str()).filter(|s| !s.is_empty()),
        baggage.as_deref(),
    )
}
