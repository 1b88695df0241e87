//! The OTLP receiver (`support_otlp.rs`) takes both protocols on one port and flattens what
//! it is sent; its waterfall is well-formed SVG.

#[path = "support_otlp.rs"]
mod otlp;

use std::time::Duration;

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_client::MetricsServiceClient;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_client::TraceServiceClient;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{
    AnyValue, ArrayValue, InstrumentationScope, KeyValue, any_value,
};
use opentelemetry_proto::tonic::metrics::v1::{
    AggregationTemporality, Histogram, HistogramDataPoint, Metric, NumberDataPoint,
    ResourceMetrics, ScopeMetrics, Sum, metric, number_data_point,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::{Event, SpanKind};
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status, status};
use prost::Message as _;
use serde_json::json;

const TRACE: [u8; 16] = [
    0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c,
];
const PARENT: [u8; 8] = [0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31];
const CHILD: [u8; 8] = [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7];
/// 2024-01-01T00:00:00Z
const T0: u64 = 1_704_067_200_000_000_000;
const MS: u64 = 1_000_000;

fn kv(key: &str, value: any_value::Value) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(value) }),
        ..Default::default()
    }
}

fn s(v: &str) -> any_value::Value {
    any_value::Value::StringValue(v.into())
}

fn resource(service: &str) -> Option<Resource> {
    Some(Resource {
        attributes: vec![kv("service.name", s(service))],
        ..Default::default()
    })
}

fn scope(name: &str) -> Option<InstrumentationScope> {
    Some(InstrumentationScope {
        name: name.into(),
        ..Default::default()
    })
}

/// A server span and a client span under it, one trace.
fn two_spans() -> ExportTraceServiceRequest {
    let parent = Span {
        trace_id: TRACE.to_vec(),
        span_id: PARENT.to_vec(),
        name: "POST /a2a <message/send>".into(),
        kind: SpanKind::Server as i32,
        start_time_unix_nano: T0,
        end_time_unix_nano: T0 + 12 * MS,
        attributes: vec![
            kv("http.request.method", s("POST")),
            kv("http.response.status_code", any_value::Value::IntValue(200)),
            kv("a2a.streaming", any_value::Value::BoolValue(false)),
            kv("load", any_value::Value::DoubleValue(0.25)),
            kv(
                "a2a.skills",
                any_value::Value::ArrayValue(ArrayValue {
                    values: vec![
                        AnyValue {
                            value: Some(s("echo")),
                        },
                        AnyValue {
                            value: Some(s("shout")),
                        },
                    ],
                }),
            ),
        ],
        events: vec![Event {
            time_unix_nano: T0 + 3 * MS,
            name: "task.state".into(),
            attributes: vec![kv("a2a.task.state", s("working"))],
            ..Default::default()
        }],
        status: Some(Status {
            code: status::StatusCode::Ok as i32,
            message: String::new(),
        }),
        ..Default::default()
    };
    let child = Span {
        trace_id: TRACE.to_vec(),
        span_id: CHILD.to_vec(),
        parent_span_id: PARENT.to_vec(),
        name: "store.save & <flush>".into(),
        kind: SpanKind::Client as i32,
        start_time_unix_nano: T0 + 4 * MS,
        end_time_unix_nano: T0 + 9 * MS,
        status: Some(Status {
            code: status::StatusCode::Error as i32,
            message: "disk full".into(),
        }),
        ..Default::default()
    };
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: resource("echo-agent"),
            scope_spans: vec![ScopeSpans {
                scope: scope("a2a-kit"),
                spans: vec![parent, child],
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

/// A third span, another service's, under the client span (sent over HTTP).
fn remote_span() -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: resource("store-server"),
            scope_spans: vec![ScopeSpans {
                scope: scope("store"),
                spans: vec![Span {
                    trace_id: TRACE.to_vec(),
                    span_id: vec![1, 2, 3, 4, 5, 6, 7, 8],
                    parent_span_id: CHILD.to_vec(),
                    name: "INSERT tasks".into(),
                    kind: SpanKind::Server as i32,
                    start_time_unix_nano: T0 + 5 * MS,
                    end_time_unix_nano: T0 + 8 * MS,
                    attributes: vec![kv("db.system.name", s("sqlite"))],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

fn metrics(requests: f64, histogram_count: u64) -> ExportMetricsServiceRequest {
    let point = |value: f64, outcome: &str| NumberDataPoint {
        attributes: vec![
            kv("a2a.method", s("message/send")),
            kv("outcome", s(outcome)),
            kv("http.response.status_code", any_value::Value::IntValue(200)),
            kv("retried", any_value::Value::BoolValue(outcome == "error")),
        ],
        start_time_unix_nano: T0,
        time_unix_nano: T0 + 60_000 * MS,
        value: Some(number_data_point::Value::AsDouble(value)),
        ..Default::default()
    };
    let sum = Metric {
        name: "a2a.server.requests".into(),
        data: Some(metric::Data::Sum(Sum {
            data_points: vec![point(requests, "ok"), point(1.0, "error")],
            aggregation_temporality: AggregationTemporality::Cumulative as i32,
            is_monotonic: true,
        })),
        ..Default::default()
    };
    let histogram = Metric {
        name: "a2a.server.duration".into(),
        unit: "s".into(),
        data: Some(metric::Data::Histogram(Histogram {
            data_points: vec![HistogramDataPoint {
                attributes: vec![kv("a2a.method", s("message/send"))],
                count: histogram_count,
                sum: Some(0.5),
                bucket_counts: vec![histogram_count, 0],
                explicit_bounds: vec![1.0],
                ..Default::default()
            }],
            aggregation_temporality: AggregationTemporality::Cumulative as i32,
        })),
        ..Default::default()
    };
    ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: resource("echo-agent"),
            scope_metrics: vec![ScopeMetrics {
                scope: scope("a2a-kit"),
                metrics: vec![sum, histogram],
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

#[tokio::test]
async fn receives_both_protocols_on_one_port() {
    let rx = otlp::start().await;
    let endpoint = rx.endpoint();
    assert!(endpoint.starts_with("http://127.0.0.1:"), "{endpoint}");

    // gRPC: the generated client, h2c.
    let mut traces = TraceServiceClient::connect(endpoint.clone())
        .await
        .expect("connect");
    traces.export(two_spans()).await.expect("export traces");
    let mut metric_client = MetricsServiceClient::connect(endpoint.clone())
        .await
        .expect("connect");
    metric_client
        .export(metrics(3.0, 4))
        .await
        .expect("export metrics");
    metric_client
        .export(metrics(7.0, 9))
        .await
        .expect("export metrics");

    // HTTP: protobuf body, protobuf answer.
    let http = reqwest::Client::new();
    let resp = http
        .post(format!("{endpoint}/v1/traces"))
        .header("content-type", "application/x-protobuf")
        .body(remote_span().encode_to_vec())
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/x-protobuf");
    let body = resp.bytes().await.expect("body");
    ExportTraceServiceResponse::decode(body).expect("an ExportTraceServiceResponse");

    // A body that is not protobuf: 400, nothing kept, nothing counted, the server still up.
    let resp = http
        .post(format!("{endpoint}/v1/traces"))
        .header("content-type", "application/x-protobuf")
        .body("not protobuf")
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), 400);

    let spans = rx
        .wait_for_spans(|s| s.len() >= 3, Duration::from_secs(5))
        .await;
    assert_eq!(spans.len(), 3, "{spans:#?}");
    assert_eq!(rx.requests_received(), (3, 1));

    let parent = &spans[0];
    assert_eq!(parent.trace_id, "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(parent.span_id, "b7ad6b7169203331");
    assert_eq!(parent.parent_span_id, None);
    assert_eq!(parent.name, "POST /a2a <message/send>");
    assert_eq!(parent.kind, "server");
    assert_eq!(parent.duration_ns(), 12 * MS);
    assert_eq!(parent.service_name.as_deref(), Some("echo-agent"));
    assert_eq!(parent.scope, "a2a-kit");
    assert_eq!(parent.status_code, 1);
    assert_eq!(parent.attr_str("http.request.method"), Some("POST"));
    assert_eq!(parent.attr_i64("http.response.status_code"), Some(200));
    assert_eq!(parent.attr_bool("a2a.streaming"), Some(false));
    assert_eq!(parent.attributes["load"], json!(0.25));
    assert_eq!(parent.attributes["a2a.skills"], json!(["echo", "shout"]));
    assert_eq!(parent.events.len(), 1);
    assert_eq!(parent.events[0].0, "task.state");
    assert_eq!(parent.events[0].1["a2a.task.state"], json!("working"));
    assert_eq!(parent.event_times_ns, vec![T0 + 3 * MS]);
    assert_eq!(
        parent
            .event("task.state")
            .and_then(|a| a["a2a.task.state"].as_str()),
        Some("working")
    );

    let child = &spans[1];
    assert_eq!(child.trace_id, parent.trace_id);
    assert_eq!(child.span_id, "00f067aa0ba902b7");
    assert_eq!(child.parent_span_id.as_deref(), Some("b7ad6b7169203331"));
    assert_eq!(child.kind, "client");
    assert_eq!(child.status_code, 2);
    assert_eq!(child.status_message, "disk full");
    assert!(child.attributes.is_empty());

    let remote = &spans[2];
    assert_eq!(remote.span_id, "0102030405060708");
    assert_eq!(remote.parent_span_id.as_deref(), Some("00f067aa0ba902b7"));
    assert_eq!(remote.service_name.as_deref(), Some("store-server"));
    assert_eq!(remote.scope, "store");

    // Metrics: every point of both exports is kept; the latest per series counts.
    let points = rx
        .wait_for_metrics(|m| m.len() >= 6, Duration::from_secs(5))
        .await;
    assert_eq!(points.len(), 6, "{points:#?}");
    assert!(
        points
            .iter()
            .all(|p| p.service_name.as_deref() == Some("echo-agent"))
    );
    let hist = points
        .iter()
        .rfind(|p| p.kind == "histogram")
        .expect("histogram");
    assert_eq!((hist.count, hist.value), (9, 0.5));
    assert_eq!(
        rx.latest_sum("a2a.server.requests", &[("outcome", "ok")]),
        Some(7.0)
    );
    // across series: ok (7) and error (1)
    assert_eq!(
        rx.latest_sum("a2a.server.requests", &[("a2a.method", "message/send")]),
        Some(8.0)
    );
    assert_eq!(
        rx.latest_sum("a2a.server.requests", &[("outcome", "nope")]),
        None
    );
    // a number or boolean attribute matches its JSON text
    assert_eq!(
        rx.latest_sum(
            "a2a.server.requests",
            &[("http.response.status_code", "200"), ("retried", "false")]
        ),
        Some(7.0)
    );
    assert_eq!(rx.latest_sum("no.such.metric", &[]), None);
    assert_eq!(rx.latest_count("a2a.server.duration", &[]), Some(9));
    assert_eq!(
        rx.latest_histogram_sum("a2a.server.duration", &[("a2a.method", "message/send")]),
        Some(0.5)
    );
    // a histogram is not a sum
    assert_eq!(rx.latest_sum("a2a.server.duration", &[]), None);

    // The waterfall: depth-first rows, escaped text, balanced groups.
    let svg = otlp::render_waterfall_svg(&spans, "selftest <trace> & more");
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.ends_with("</svg>"), "{svg}");
    assert!(svg.contains("POST /a2a &lt;message/send&gt;"), "{svg}");
    assert!(svg.contains("store.save &amp; &lt;flush&gt;"), "{svg}");
    assert!(svg.contains("INSERT tasks"), "{svg}");
    assert!(svg.contains("selftest &lt;trace&gt; &amp; more"), "{svg}");
    assert!(!svg.contains("<flush>") && !svg.contains("<message/send>"));
    assert_eq!(svg.matches("<g").count(), svg.matches("</g>").count());
    assert_eq!(svg.matches("<svg").count(), 1);
    // an error outline for the failed span, one event marker
    assert!(svg.contains(r##"stroke="#d62728""##));
    assert_eq!(svg.matches("<path").count(), 1);
    // rows in depth-first order, whatever order the spans came in
    let mut shuffled = spans.clone();
    shuffled.reverse();
    let again = otlp::render_waterfall_svg(&shuffled, "selftest <trace> & more");
    assert_eq!(again, svg);
    let at = |needle: &str| svg.find(needle).expect(needle);
    assert!(at("POST /a2a") < at("store.save") && at("store.save") < at("INSERT tasks"));
    assert_well_formed(&svg);
    // no spans at all still draws
    assert_well_formed(&otlp::render_waterfall_svg(&[], "empty"));

    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/otlp-selftest");
    std::fs::create_dir_all(&dir).expect("create dir");
    let path = dir.join("waterfall.svg");
    std::fs::write(&path, &svg).expect("write svg");
    eprintln!("waterfall: {}", path.display());

    rx.clear();
    assert!(rx.spans().is_empty() && rx.metrics().is_empty());
    assert_eq!(rx.requests_received(), (0, 0));
}

/// Every element closed in order, every `&` an entity, no `<` in text or attribute values.
fn assert_well_formed(xml: &str) {
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = xml;
    while let Some(open) = rest.find('<') {
        let text = &rest[..open];
        check_text(text);
        let close = rest[open..].find('>').expect("unclosed tag") + open;
        let tag = &rest[open + 1..close];
        assert!(!tag.contains('<'), "`<` inside tag: {tag}");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop(), Some(name.trim()), "mismatched </{name}>");
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().expect("tag name");
            stack.push(name);
        }
        // attribute values: quoted, no raw `&` outside entities
        check_text(tag);
        rest = &rest[close + 1..];
    }
    check_text(rest);
    assert!(stack.is_empty(), "unclosed: {stack:?}");
}

fn check_text(text: &str) {
    for (i, _) in text.match_indices('&') {
        let entity = &text[i..text.len().min(i + 7)];
        assert!(
            ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                .iter()
                .any(|e| entity.starts_with(e)),
            "raw & in {text:?}"
        );
    }
    assert!(!text.contains('>'), "raw > in {text:?}");
}
