//! Feature `prometheus`: the kit's metrics as Prometheus text, for a route the host mounts
//! where it wants (a2a-kit-axum's `metrics_route`).
//!
//! ```
//! let (recorder, handle) = a2a_kit::observe::prometheus::recorder();
//! // a2a_kit::observe::metrics::install(vec![Box::new(recorder)])?;  (once per process)
//! # drop(recorder);
//! let text: String = handle.render(); // what GET /metrics answers
//! # let _ = text;
//! ```

pub use metrics_exporter_prometheus::{PrometheusHandle, PrometheusRecorder};

/// The content type of the text [`PrometheusHandle::render`] writes.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A Prometheus recorder (install it with [`metrics::install`](super::metrics::install)) and
/// the handle that renders what it recorded. Request and task durations are histograms with
/// buckets from 1 ms to 60 s.
pub fn recorder() -> (PrometheusRecorder, PrometheusHandle) {
    const BUCKETS: &[f64] = &[
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
    ];
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new()
        .set_buckets(BUCKETS)
        .map(metrics_exporter_prometheus::PrometheusBuilder::build_recorder)
        .unwrap_or_else(|_| metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder());
    let handle = recorder.handle();
    (recorder, handle)
}
