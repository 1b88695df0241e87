//! The page's files, embedded in the binary (no CDN: the console works offline).

use std::sync::OnceLock;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

/// Name, media type, bytes.
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_bytes!("assets/index.html"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_bytes!("assets/app.js"),
    ),
    (
        "dom.js",
        "text/javascript; charset=utf-8",
        include_bytes!("assets/dom.js"),
    ),
    (
        "wire.js",
        "text/javascript; charset=utf-8",
        include_bytes!("assets/wire.js"),
    ),
    (
        "task-view.js",
        "text/javascript; charset=utf-8",
        include_bytes!("assets/task-view.js"),
    ),
    (
        "schema-form.js",
        "text/javascript; charset=utf-8",
        include_bytes!("assets/schema-form.js"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_bytes!("assets/app.css"),
    ),
    (
        "icon.svg",
        "image/svg+xml",
        include_bytes!("assets/icon.svg"),
    ),
];

/// The page may load only its own files and call only its own origin (the agent, or the
/// proxy to it); no other site may frame it.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

/// Each file's ETag (a digest of its bytes), computed once.
fn etags() -> &'static [String] {
    static ETAGS: OnceLock<Vec<String>> = OnceLock::new();
    ETAGS.get_or_init(|| {
        use sha2::Digest as _;
        FILES
            .iter()
            .map(|(_, _, bytes)| {
                let digest = sha2::Sha256::digest(bytes);
                let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
                format!("\"{hex}\"")
            })
            .collect()
    })
}

/// The file `name` (revalidated on every load, so a new binary's page is never stale), or 404.
pub(super) fn serve(name: &str, if_none_match: Option<&HeaderValue>) -> Response {
    let Some(index) = FILES.iter().position(|(n, _, _)| *n == name) else {
        let mut response = Response::new(Body::from(format!("no such console file: {name}")));
        *response.status_mut() = StatusCode::NOT_FOUND;
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        return response;
    };
    let (_, media_type, bytes) = FILES[index];
    let etag = &etags()[index];
    let fresh = if_none_match.is_some_and(|v| v.as_bytes() == etag.as_bytes());
    let mut response = if fresh {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        Response::new(Body::from(bytes))
    };
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(v) = HeaderValue::from_str(etag) {
        headers.insert(header::ETAG, v);
    }
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}
