//! The browser harness (`support::browser`) on a page of its own: headless Chromium opens a
//! page served here, a click and typed text reach the server through the page's `fetch`, the
//! answer shows on the page, and a screenshot is a PNG on disk.

mod support;

use axum::Router;
use axum::response::Html;
use axum::routing::{get, post};
use support::browser::Browser;

const PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>smoke</title></head>
<body>
  <h1>Browser smoke</h1>
  <input id="name" value="placeholder">
  <button id="greet">Greet</button>
  <p id="out">nothing yet</p>
  <script>
    document.getElementById('greet').addEventListener('click', async () => {
      const name = document.getElementById('name').value;
      const response = await fetch('/greet', { method: 'POST', body: name });
      document.getElementById('out').textContent = await response.text();
    });
  </script>
</body></html>"#;

/// Serve [`PAGE`] and `POST /greet` on 127.0.0.1:0; the base URL.
async fn serve() -> String {
    let app = Router::new()
        .route("/", get(|| async { Html(PAGE) }))
        .route(
            "/greet",
            post(|name: String| async move { format!("hello, {name}, from the server") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

#[tokio::test]
async fn a_click_reaches_the_server_and_the_answer_shows() {
    let url = serve().await;
    let browser = Browser::start().await;
    browser.goto(&url).await;
    assert_eq!(browser.text("#out").await, "nothing yet");

    browser.fill("#name", "Ada").await;
    browser.click("#greet").await;
    browser
        .wait_for_text("#out", "hello, Ada, from the server")
        .await;
    assert_eq!(
        browser.eval("return document.title").await,
        serde_json::json!("smoke")
    );

    let path = browser.screenshot("browser-smoke").await;
    let png = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is not a PNG",
        path.display()
    );
    browser.close().await;
}

/// A timeout names the selector and shows the page's text.
#[tokio::test]
async fn a_missing_element_fails_naming_it_and_the_page() {
    let url = serve().await;
    let browser = Browser::start().await;
    browser.goto(&url).await;
    let waited = tokio::spawn(async move {
        browser.wait_for("#absent").await;
    })
    .await;
    let panic = waited.expect_err("no such element");
    let message = panic
        .into_panic()
        .downcast::<String>()
        .map(|m| *m)
        .unwrap_or_default();
    assert!(message.contains("`#absent`"), "{message}");
    assert!(message.contains("Browser smoke"), "{message}");
}
