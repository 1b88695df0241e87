//! Shared by the observability tests (included with `#[path]`): an in-process OpenTelemetry
//! collector endpoint and an SVG waterfall of what it collected.
//!
//! [`OtlpReceiver::start`] binds one port on 127.0.0.1 and serves on it both OTLP/gRPC (h2c:
//! the trace and metrics services) and OTLP/HTTP with protobuf bodies (`POST /v1/traces`,
//! `POST /v1/metrics`), so one [`OtlpReceiver::endpoint`] fits either exporter. Every exported
//! span and metric data point is kept, flattened into [`SpanData`] and [`MetricPoint`].
//! [`render_waterfall_svg`] draws spans as a trace waterfall, for a test to write beside its
//! results.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{Response, StatusCode, header};
use axum::routing::post;
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message as _;
use serde_json::Value;

/// The largest export accepted, over either protocol.
const MAX_EXPORT: usize = 64 << 20;

/// One span, as exported.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanData {
    /// 32 lowercase hex digits.
    pub trace_id: String,
    /// 16 lowercase hex digits.
    pub span_id: String,
    /// 16 lowercase hex digits; `None` for a root span (the field was empty).
    pub parent_span_id: Option<String>,
    pub name: String,
    /// `"unspecified"`, `"internal"`, `"server"`, `"client"`, `"producer"` or `"consumer"`.
    pub kind: &'static str,
    /// Unix time, nanoseconds.
    pub start_ns: u64,
    /// Unix time, nanoseconds.
    pub end_ns: u64,
    /// The span's attributes (strings, booleans, numbers, arrays; a key-value list as an
    /// object, bytes as lowercase hex).
    pub attributes: BTreeMap<String, Value>,
    /// The span's events in order: name and attributes.
    pub events: Vec<(String, BTreeMap<String, Value>)>,
    /// The time of each of `events` (Unix nanoseconds), index for index.
    pub event_times_ns: Vec<u64>,
    /// 0 unset, 1 ok, 2 error.
    pub status_code: i32,
    pub status_message: String,
    /// The resource's `service.name`.
    pub service_name: Option<String>,
    /// The instrumentation scope's name (empty when there was none).
    pub scope: String,
}

impl SpanData {
    /// A string attribute.
    pub fn attr_str(&self, key: &str) -> Option<&str> {
        self.attributes.get(key)?.as_str()
    }
    /// An integer attribute.
    pub fn attr_i64(&self, key: &str) -> Option<i64> {
        self.attributes.get(key)?.as_i64()
    }
    /// A boolean attribute.
    pub fn attr_bool(&self, key: &str) -> Option<bool> {
        self.attributes.get(key)?.as_bool()
    }
    /// The span's length in nanoseconds.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
    /// The attributes of the first event named `name`.
    pub fn event(&self, name: &str) -> Option<&BTreeMap<String, Value>> {
        self.events.iter().find(|(n, _)| n == name).map(|(_, a)| a)
    }
}

/// One metric data point, as exported (cumulative exports repeat a series at each export).
#[derive(Debug, Clone, PartialEq)]
pub struct MetricPoint {
    pub name: String,
    /// `"sum"`, `"gauge"` or `"histogram"` (exponential histograms too).
    pub kind: &'static str,
    pub attributes: BTreeMap<String, Value>,
    /// The value of a sum or gauge point; a histogram's sum (0 when it has none).
    pub value: f64,
    /// A histogram's count; 0 for sums and gauges.
    pub count: u64,
    /// The resource's `service.name`.
    pub service_name: Option<String>,
}

impl MetricPoint {
    /// Whether the point's attributes hold every `(key, value)` pair: a string attribute
    /// equal to the value, or another scalar whose JSON text is it (`200`, `true`).
    fn matches(&self, attrs: &[(&str, &str)]) -> bool {
        attrs.iter().all(|(k, v)| match self.attributes.get(*k) {
            Some(Value::String(s)) => s == v,
            Some(Value::Bool(b)) => v.parse() == Ok(*b),
            Some(Value::Number(n)) => v.parse::<serde_json::Number>().is_ok_and(|v| v == *n),
            _ => false,
        })
    }

    /// The series the point belongs to: its service and attribute set.
    fn series(&self) -> String {
        format!(
            "{:?}|{}",
            self.service_name,
            serde_json::to_string(&self.attributes).unwrap_or_default()
        )
    }
}

#[derive(Default)]
struct Collected {
    spans: Vec<SpanData>,
    metrics: Vec<MetricPoint>,
    grpc: usize,
    http: usize,
}

type Shared = Arc<Mutex<Collected>>;

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Collected> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// A collector endpoint on 127.0.0.1 that keeps what it is sent; it stops when dropped.
pub struct OtlpReceiver {
    addr: std::net::SocketAddr,
    shared: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Start a receiver on a free port.
pub async fn start() -> OtlpReceiver {
    OtlpReceiver::start().await
}

impl OtlpReceiver {
    /// Start a receiver on a free port.
    pub async fn start() -> OtlpReceiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let shared: Shared = Arc::default();
        let traces =
            TraceServiceServer::new(Sink(shared.clone())).max_decoding_message_size(MAX_EXPORT);
        let metrics =
            MetricsServiceServer::new(Sink(shared.clone())).max_decoding_message_size(MAX_EXPORT);
        let app = axum::Router::new()
            .route("/v1/traces", post(http_traces))
            .route("/v1/metrics", post(http_metrics))
            .layer(DefaultBodyLimit::max(MAX_EXPORT))
            .with_state(shared.clone())
            // gRPC: `/{package.Service}/{Method}`, HTTP/2 without TLS (axum's server tells
            // h2c from HTTP/1.1 by the connection preface)
            .route_service(&grpc_path::<TraceServiceServer<Sink>>(), traces)
            .route_service(&grpc_path::<MetricsServiceServer<Sink>>(), metrics);
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("otlp receiver");
        });
        OtlpReceiver { addr, shared, task }
    }

    /// `http://127.0.0.1:PORT`, for either protocol (an HTTP exporter appends `/v1/traces`,
    /// `/v1/metrics`).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every span received so far, in arrival order.
    pub fn spans(&self) -> Vec<SpanData> {
        lock(&self.shared).spans.clone()
    }

    /// The spans once `pred` holds for them, or what there is when `timeout` runs out.
    pub async fn wait_for_spans(
        &self,
        pred: impl Fn(&[SpanData]) -> bool,
        timeout: Duration,
    ) -> Vec<SpanData> {
        let deadline = Instant::now() + timeout;
        loop {
            let spans = self.spans();
            if pred(&spans) || Instant::now() >= deadline {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Every metric data point received so far, in arrival order.
    pub fn metrics(&self) -> Vec<MetricPoint> {
        lock(&self.shared).metrics.clone()
    }

    /// The metric points once `pred` holds for them, or what there is when `timeout` runs
    /// out.
    pub async fn wait_for_metrics(
        &self,
        pred: impl Fn(&[MetricPoint]) -> bool,
        timeout: Duration,
    ) -> Vec<MetricPoint> {
        let deadline = Instant::now() + timeout;
        loop {
            let metrics = self.metrics();
            if pred(&metrics) || Instant::now() >= deadline {
                return metrics;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The exports accepted so far (both signals): `(over gRPC, over HTTP)`. A body that did
    /// not decode is not counted.
    pub fn requests_received(&self) -> (usize, usize) {
        let c = lock(&self.shared);
        (c.grpc, c.http)
    }

    /// The sum, across series (service and attribute set), of the last exported value of the
    /// sum or gauge `name` among the series whose attributes hold every pair of `attrs`; `None`
    /// when no point matches. Meant for cumulative temporality, where the last export of a
    /// series is its total.
    pub fn latest_sum(&self, name: &str, attrs: &[(&str, &str)]) -> Option<f64> {
        let latest = self.latest(name, attrs, |p| p.kind != "histogram");
        (!latest.is_empty()).then(|| latest.values().map(|p| p.value).sum())
    }

    /// Like [`latest_sum`](Self::latest_sum), for the count of the histogram `name`.
    pub fn latest_count(&self, name: &str, attrs: &[(&str, &str)]) -> Option<u64> {
        let latest = self.latest(name, attrs, |p| p.kind == "histogram");
        (!latest.is_empty()).then(|| latest.values().map(|p| p.count).sum())
    }

    /// Like [`latest_sum`](Self::latest_sum), for the sum of the histogram `name`.
    pub fn latest_histogram_sum(&self, name: &str, attrs: &[(&str, &str)]) -> Option<f64> {
        let latest = self.latest(name, attrs, |p| p.kind == "histogram");
        (!latest.is_empty()).then(|| latest.values().map(|p| p.value).sum())
    }

    /// The last point of each matching series.
    fn latest(
        &self,
        name: &str,
        attrs: &[(&str, &str)],
        kind: impl Fn(&MetricPoint) -> bool,
    ) -> HashMap<String, MetricPoint> {
        let mut latest = HashMap::new();
        for p in lock(&self.shared).metrics.iter() {
            if p.name == name && kind(p) && p.matches(attrs) {
                latest.insert(p.series(), p.clone());
            }
        }
        latest
    }

    /// Forget everything received (the counts too).
    pub fn clear(&self) {
        *lock(&self.shared) = Collected::default();
    }
}

/// The route of a generated gRPC service: every method under its name.
fn grpc_path<S: tonic::server::NamedService>() -> String {
    format!("/{}/{{*method}}", S::NAME)
}

/// The gRPC services' implementation.
#[derive(Clone)]
struct Sink(Shared);

#[tonic::async_trait]
impl TraceService for Sink {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let spans = spans_of(request.into_inner());
        let mut c = lock(&self.0);
        c.grpc += 1;
        c.spans.extend(spans);
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

#[tonic::async_trait]
impl MetricsService for Sink {
    async fn export(
        &self,
        request: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        let points = points_of(request.into_inner());
        let mut c = lock(&self.0);
        c.grpc += 1;
        c.metrics.extend(points);
        Ok(tonic::Response::new(ExportMetricsServiceResponse::default()))
    }
}

async fn http_traces(State(shared): State<Shared>, body: Bytes) -> Response<Body> {
    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
        return bad_request("not an ExportTraceServiceRequest");
    };
    let spans = spans_of(request);
    {
        let mut c = lock(&shared);
        c.http += 1;
        c.spans.extend(spans);
    }
    protobuf(ExportTraceServiceResponse::default().encode_to_vec())
}

async fn http_metrics(State(shared): State<Shared>, body: Bytes) -> Response<Body> {
    let Ok(request) = ExportMetricsServiceRequest::decode(body) else {
        return bad_request("not an ExportMetricsServiceRequest");
    };
    let points = points_of(request);
    {
        let mut c = lock(&shared);
        c.http += 1;
        c.metrics.extend(points);
    }
    protobuf(ExportMetricsServiceResponse::default().encode_to_vec())
}

fn protobuf(body: Vec<u8>) -> Response<Body> {
    let mut resp = Response::new(Body::from(body));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/x-protobuf"),
    );
    resp
}

fn bad_request(why: &'static str) -> Response<Body> {
    let mut resp = Response::new(Body::from(why));
    *resp.status_mut() = StatusCode::BAD_REQUEST;
    resp
}

/// Lowercase hex.
fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn json_of(value: Option<&AnyValue>) -> Value {
    use any_value::Value as V;
    match value.and_then(|v| v.value.as_ref()) {
        Some(V::StringValue(s)) => Value::String(s.clone()),
        Some(V::BoolValue(b)) => Value::Bool(*b),
        Some(V::IntValue(i)) => Value::from(*i),
        Some(V::DoubleValue(d)) => {
            serde_json::Number::from_f64(*d).map_or(Value::Null, Value::Number)
        }
        Some(V::ArrayValue(a)) => Value::Array(a.values.iter().map(|v| json_of(Some(v))).collect()),
        Some(V::KvlistValue(kv)) => Value::Object(
            kv.values
                .iter()
                .map(|kv| (kv.key.clone(), json_of(kv.value.as_ref())))
                .collect(),
        ),
        Some(V::BytesValue(b)) => Value::String(hex(b)),
        // dictionary references (profiles) and unset values
        _ => Value::Null,
    }
}

fn attributes_of(kvs: &[KeyValue]) -> BTreeMap<String, Value> {
    kvs.iter()
        .map(|kv| (kv.key.clone(), json_of(kv.value.as_ref())))
        .collect()
}

fn service_of(resource: Option<&Resource>) -> Option<String> {
    resource?
        .attributes
        .iter()
        .find(|kv| kv.key == "service.name")
        .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
            any_value::Value::StringValue(s) => Some(s.clone()),
            _ => None,
        })
}

fn kind_name(kind: i32) -> &'static str {
    match kind {
        1 => "internal",
        2 => "server",
        3 => "client",
        4 => "producer",
        5 => "consumer",
        _ => "unspecified",
    }
}

fn spans_of(request: ExportTraceServiceRequest) -> Vec<SpanData> {
    let mut out = Vec::new();
    for rs in request.resource_spans {
        let service_name = service_of(rs.resource.as_ref());
        for ss in rs.scope_spans {
            let scope = ss.scope.map(|s| s.name).unwrap_or_default();
            for span in ss.spans {
                let status = span.status.unwrap_or_default();
                out.push(SpanData {
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: (!span.parent_span_id.is_empty())
                        .then(|| hex(&span.parent_span_id)),
                    name: span.name,
                    kind: kind_name(span.kind),
                    start_ns: span.start_time_unix_nano,
                    end_ns: span.end_time_unix_nano,
                    attributes: attributes_of(&span.attributes),
                    event_times_ns: span.events.iter().map(|e| e.time_unix_nano).collect(),
                    events: span
                        .events
                        .iter()
                        .map(|e| (e.name.clone(), attributes_of(&e.attributes)))
                        .collect(),
                    status_code: status.code,
                    status_message: status.message,
                    service_name: service_name.clone(),
                    scope: scope.clone(),
                });
            }
        }
    }
    out
}

fn points_of(request: ExportMetricsServiceRequest) -> Vec<MetricPoint> {
    let mut out = Vec::new();
    for rm in request.resource_metrics {
        let service_name = service_of(rm.resource.as_ref());
        for sm in rm.scope_metrics {
            for m in sm.metrics {
                let point = |kind, attributes: &[KeyValue], value, count| MetricPoint {
                    name: m.name.clone(),
                    kind,
                    attributes: attributes_of(attributes),
                    value,
                    count,
                    service_name: service_name.clone(),
                };
                let number = |v: Option<&number_data_point::Value>| match v {
                    Some(number_data_point::Value::AsDouble(d)) => *d,
                    Some(number_data_point::Value::AsInt(i)) => *i as f64,
                    None => 0.0,
                };
                match &m.data {
                    Some(metric::Data::Sum(s)) => out.extend(
                        s.data_points
                            .iter()
                            .map(|p| point("sum", &p.attributes, number(p.value.as_ref()), 0)),
                    ),
                    Some(metric::Data::Gauge(g)) => out.extend(
                        g.data_points
                            .iter()
                            .map(|p| point("gauge", &p.attributes, number(p.value.as_ref()), 0)),
                    ),
                    Some(metric::Data::Histogram(h)) => {
                        out.extend(h.data_points.iter().map(|p| {
                            point("histogram", &p.attributes, p.sum.unwrap_or(0.0), p.count)
                        }))
                    }
                    Some(metric::Data::ExponentialHistogram(h)) => {
                        out.extend(h.data_points.iter().map(|p| {
                            point("histogram", &p.attributes, p.sum.unwrap_or(0.0), p.count)
                        }))
                    }
                    // summaries (no OpenTelemetry SDK makes them) and empty metrics
                    _ => {}
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// The waterfall

/// Colours by service, in the order of the services' sorted names.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

const WIDTH: f64 = 1200.0;
const LABEL_X: f64 = 8.0;
const LABEL_W: f64 = 412.0;
const CHART_X: f64 = 430.0;
const CHART_W: f64 = 680.0;
const ROW_H: f64 = 20.0;
const ROWS_Y: f64 = 72.0;
const INDENT: f64 = 14.0;
/// The advance of one 11px monospace character, near enough.
const CHAR_W: f64 = 6.7;

/// XML text or attribute value.
fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // characters XML 1.0 does not allow
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// `s` cut to `max` characters, with an ellipsis when cut.
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The spans depth-first by parent links, each with its depth: roots (no parent, or a parent
/// not among `spans`) and each span's children by start time.
fn waterfall_order(spans: &[SpanData]) -> Vec<(usize, &SpanData)> {
    let key = |s: &SpanData| (s.trace_id.clone(), s.span_id.clone());
    let present: HashSet<(String, String)> = spans.iter().map(key).collect();
    let mut roots = Vec::new();
    let mut children: HashMap<(String, String), Vec<&SpanData>> = HashMap::new();
    for s in spans {
        match &s.parent_span_id {
            Some(p) if present.contains(&(s.trace_id.clone(), p.clone())) => children
                .entry((s.trace_id.clone(), p.clone()))
                .or_default()
                .push(s),
            _ => roots.push(s),
        }
    }
    let by_start = |a: &&SpanData, b: &&SpanData| {
        (a.start_ns, a.end_ns, &a.name).cmp(&(b.start_ns, b.end_ns, &b.name))
    };
    roots.sort_by(by_start);
    for list in children.values_mut() {
        list.sort_by(by_start);
    }
    let mut out = Vec::with_capacity(spans.len());
    let mut seen: HashSet<*const SpanData> = HashSet::new();
    let mut stack: Vec<(usize, &SpanData)> = roots.into_iter().rev().map(|s| (0, s)).collect();
    while let Some((depth, s)) = stack.pop() {
        if !seen.insert(s as *const SpanData) {
            continue;
        }
        out.push((depth, s));
        if let Some(list) = children.get(&key(s)) {
            stack.extend(list.iter().rev().map(|c| (depth + 1, *c)));
        }
    }
    // spans only reachable through a cycle of parent links
    for s in spans {
        if seen.insert(s as *const SpanData) {
            out.push((0, s));
        }
    }
    out
}

/// A tick step (ms) giving at most about eight ticks over `total_ms`.
fn tick_step(total_ms: f64) -> f64 {
    let raw = (total_ms / 8.0).max(1e-6);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// `ms` with the decimals `step` needs.
fn format_ms(ms: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil() as usize
    };
    format!("{ms:.decimals$}")
}

/// A self-contained SVG (about 1200px wide) of `spans` as a trace waterfall: one row per span,
/// depth-first by parent links, labelled on the left with its service and name (indented by
/// depth), a bar from its start to its end against a millisecond axis from the earliest start,
/// coloured by service, with a marker per event; errors outlined in red.
pub fn render_waterfall_svg(spans: &[SpanData], title: &str) -> String {
    let rows = waterfall_order(spans);
    let origin = spans.iter().map(|s| s.start_ns).min().unwrap_or(0);
    let end = spans
        .iter()
        .map(|s| s.end_ns.max(s.start_ns))
        .max()
        .unwrap_or(0);
    let total_ns = end.saturating_sub(origin).max(1);
    let total_ms = total_ns as f64 / 1e6;
    let x_of = |ns: u64| CHART_X + (ns.saturating_sub(origin) as f64 / total_ns as f64) * CHART_W;

    let services: BTreeSet<&str> = spans
        .iter()
        .map(|s| s.service_name.as_deref().unwrap_or("unknown"))
        .collect();
    let colour: HashMap<&str, &str> = services
        .iter()
        .enumerate()
        .map(|(i, s)| (*s, PALETTE[i % PALETTE.len()]))
        .collect();
    let colour_of = |s: &SpanData| colour[s.service_name.as_deref().unwrap_or("unknown")];

    let rows_h = rows.len() as f64 * ROW_H;
    let legend_y = ROWS_Y + rows_h + 24.0;
    let height = legend_y + 20.0;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="monospace" font-size="11">"#
    );
    let _ = writeln!(svg, "<title>{}</title>", xml_escape(title));
    let _ = writeln!(
        svg,
        r##"<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        svg,
        r##"<text x="{LABEL_X}" y="20" font-size="14" font-weight="bold" fill="#222222">{}</text>"##,
        xml_escape(title)
    );
    let traces: BTreeSet<&str> = spans.iter().map(|s| s.trace_id.as_str()).collect();
    let _ = writeln!(
        svg,
        r##"<text x="{LABEL_X}" y="38" fill="#666666">{} spans, {} trace(s), {} ms</text>"##,
        spans.len(),
        traces.len(),
        format_ms(total_ms, tick_step(total_ms))
    );

    // The axis: ticks, their labels and grid lines down through the rows.
    let step = tick_step(total_ms);
    let _ = writeln!(svg, r#"<g class="axis">"#);
    let axis_y = ROWS_Y - 6.0;
    let _ = writeln!(
        svg,
        r##"<line x1="{CHART_X}" y1="{axis_y}" x2="{}" y2="{axis_y}" stroke="#888888"/>"##,
        CHART_X + CHART_W
    );
    let mut t = 0.0;
    while t <= total_ms + step * 1e-9 {
        let x = CHART_X + t / total_ms * CHART_W;
        let _ = writeln!(
            svg,
            r##"<line x1="{x:.1}" y1="{}" x2="{x:.1}" y2="{:.1}" stroke="#e4e4e4"/>"##,
            axis_y,
            ROWS_Y + rows_h
        );
        let _ = writeln!(
            svg,
            r##"<line x1="{x:.1}" y1="{}" x2="{x:.1}" y2="{axis_y}" stroke="#888888"/>"##,
            axis_y - 4.0
        );
        let _ = writeln!(
            svg,
            r##"<text x="{x:.1}" y="{}" text-anchor="middle" fill="#444444">{}</text>"##,
            axis_y - 8.0,
            xml_escape(&format!("{} ms", format_ms(t, step)))
        );
        t += step;
    }
    let _ = writeln!(svg, "</g>");

    // The rows.
    let _ = writeln!(svg, r#"<g class="spans">"#);
    for (i, (depth, s)) in rows.iter().enumerate() {
        let y = ROWS_Y + i as f64 * ROW_H;
        let _ = writeln!(svg, "<g>");
        if i % 2 == 1 {
            let _ = writeln!(
                svg,
                r##"<rect x="0" y="{y}" width="{WIDTH}" height="{ROW_H}" fill="#f6f6f6"/>"##
            );
        }
        let service = s.service_name.as_deref().unwrap_or("unknown");
        let indent = LABEL_X + *depth as f64 * INDENT;
        let room = ((LABEL_W - indent).max(0.0) / CHAR_W) as usize;
        let service_text = truncate(service, (room / 2).max(4));
        let name_room = room.saturating_sub(service_text.chars().count() + 1);
        let _ = writeln!(
            svg,
            r##"<text x="{indent}" y="{:.1}"><tspan fill="{}" font-weight="bold">{}</tspan> <tspan fill="#222222">{}</tspan></text>"##,
            y + 14.0,
            colour_of(s),
            xml_escape(&service_text),
            xml_escape(&truncate(&s.name, name_room.max(1)))
        );
        let x0 = x_of(s.start_ns);
        let x1 = x_of(s.end_ns.max(s.start_ns));
        let w = (x1 - x0).max(1.0);
        let stroke = if s.status_code == 2 {
            r##" stroke="#d62728" stroke-width="1.5""##
        } else {
            ""
        };
        let duration = format!("{:.3} ms", s.duration_ns() as f64 / 1e6);
        let _ = writeln!(
            svg,
            r#"<rect x="{x0:.1}" y="{:.1}" width="{w:.1}" height="12" rx="2" fill="{}"{stroke}><title>{}</title></rect>"#,
            y + 4.0,
            colour_of(s),
            xml_escape(&format!(
                "{service}: {} ({}, {duration}) span {} trace {}{}",
                s.name,
                s.kind,
                s.span_id,
                s.trace_id,
                if s.status_message.is_empty() {
                    String::new()
                } else {
                    format!(", status: {}", s.status_message)
                }
            ))
        );
        for (j, (name, _)) in s.events.iter().enumerate() {
            let at = s.event_times_ns.get(j).copied().unwrap_or(s.start_ns);
            let ex = x_of(at.clamp(s.start_ns, s.end_ns.max(s.start_ns)));
            let ey = y + 10.0;
            let _ = writeln!(
                svg,
                r##"<path d="M{ex:.1} {:.1} L{:.1} {ey:.1} L{ex:.1} {:.1} L{:.1} {ey:.1} Z" fill="#222222" stroke="#ffffff" stroke-width="0.5"><title>{}</title></path>"##,
                ey - 5.0,
                ex + 3.5,
                ey + 5.0,
                ex - 3.5,
                xml_escape(&format!(
                    "{name} at {:.3} ms",
                    at.saturating_sub(origin) as f64 / 1e6
                ))
            );
        }
        let (tx, anchor) = if x1 + 6.0 + duration.len() as f64 * CHAR_W <= WIDTH {
            (x1 + 4.0, "start")
        } else {
            (x0 - 4.0, "end")
        };
        let _ = writeln!(
            svg,
            r##"<text x="{tx:.1}" y="{:.1}" text-anchor="{anchor}" fill="#555555">{}</text>"##,
            y + 14.0,
            xml_escape(&duration)
        );
        let _ = writeln!(svg, "</g>");
    }
    let _ = writeln!(svg, "</g>");

    // The legend: one swatch per service.
    let _ = writeln!(svg, r#"<g class="legend">"#);
    let mut lx = LABEL_X;
    for service in &services {
        let _ = writeln!(
            svg,
            r#"<rect x="{lx:.1}" y="{:.1}" width="12" height="12" rx="2" fill="{}"/>"#,
            legend_y - 10.0,
            colour[service]
        );
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{legend_y:.1}" fill="#222222">{}</text>"##,
            lx + 16.0,
            xml_escape(service)
        );
        lx += 16.0 + service.chars().count() as f64 * CHAR_W + 20.0;
    }
    let _ = writeln!(svg, "</g>");
    svg.push_str("</svg>");
    svg
}
