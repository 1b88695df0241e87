//! The official Python client (a2a-sdk 1.3.0, pinned) against our server (the TestAgent), over
//! JSON-RPC and HTTP+JSON: card, send, stream, get, list, cancel, subscribe (and push
//! configs). tests/interop/python/client.py also parses every response strictly into the
//! SDK's protobuf types and reports any wire deviation, which fails this test.
//!
//! Skipped, with a printed note, only when `python3 -m venv` is unavailable.

#[path = "support_python_sdk.rs"]
mod python_sdk;

use a2a_tests::serve_test_agent;
use serde_json::Value;

/// Run `script` (in tests/interop/python) with `args`; its JSON summary (last stdout line).
async fn run_script(py: &std::path::Path, script: &str, args: &[&str]) -> Value {
    let script_path = python_sdk::script(script);
    // Output goes to files, so a chatty child can never block on a full pipe.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("interop-python")
        .join(format!("{script}-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let child = std::process::Command::new(py)
        .arg(&script_path)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("start {script}: {e}"));
    let mut child = python_sdk::ChildGuard(child);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("poll the script") {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{script} took more than 180 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        status.success(),
        "{script} failed ({status}):\n{stdout}\n{stderr}"
    );
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{script} printed no JSON summary ({e}):\n{stdout}\n{stderr}"));
    println!("{}", serde_json::to_string_pretty(&summary).unwrap());
    if !stderr.trim().is_empty() {
        eprintln!("{script} stderr:\n{stderr}");
    }
    summary
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_client_against_our_server() {
    let Some(py) = tokio::task::spawn_blocking(python_sdk::python)
        .await
        .unwrap()
    else {
        return;
    };
    let server = serve_test_agent().await;
    let summary = run_script(&py, "client.py", &[&server.base]).await;

    for binding in ["JSONRPC", "HTTP+JSON"] {
        let r = &summary["bindings"][binding];
        let ctx = format!("{binding}: {}", serde_json::to_string_pretty(r).unwrap());
        assert!(r.get("fatal").is_none(), "{ctx}");
        // card
        assert_eq!(r["card"]["name"], "Test Agent", "{ctx}");
        assert_eq!(r["card"]["streaming"], true);
        let transport = if binding == "JSONRPC" {
            "JsonRpcTransport"
        } else {
            "RestTransport"
        };
        assert_eq!(r["transport"], transport, "{ctx}");
        // send (blocking) and a direct message
        assert_eq!(r["send"]["state"], "TASK_STATE_COMPLETED", "{ctx}");
        assert_eq!(r["send"]["text"], "hi from python");
        assert_eq!(r["direct"]["payload"], "message", "{ctx}");
        assert_eq!(r["direct"]["text"], "direct: yo");
        // stream
        let kinds: Vec<&str> = r["stream"]["kinds"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(kinds.first(), Some(&"task"), "{ctx}");
        assert_eq!(r["stream"]["final"], "TASK_STATE_COMPLETED", "{ctx}");
        assert_eq!(
            r["stream"]["chunks"],
            serde_json::json!([
                ["c0 ", false, false],
                ["c1 ", true, false],
                ["c2 ", true, true]
            ]),
            "{ctx}"
        );
        // returnImmediately, get, subscribe
        let g = &r["get_subscribe"];
        assert!(
            matches!(
                g["initial"].as_str(),
                Some("TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING")
            ),
            "{ctx}"
        );
        assert!(
            g["get"]
                .as_str()
                .is_some_and(|s| s.starts_with("TASK_STATE_")),
            "{ctx}"
        );
        assert_eq!(
            g["subscribe_kinds"][0], "task",
            "{ctx}: subscribe starts with a snapshot"
        );
        assert_eq!(g["subscribe_final"], "TASK_STATE_COMPLETED", "{ctx}");
        assert_eq!(g["done"], "TASK_STATE_COMPLETED");
        assert_eq!(g["text"], "slept 600");
        // list
        let l = &r["list"];
        assert_eq!(l["count"], 2, "{ctx}");
        assert_eq!(l["page_size"], 2);
        assert_eq!(l["has_next"], true);
        assert!(l["total"].as_i64().unwrap() >= 3, "{ctx}");
        assert_eq!(l["page2_distinct"], true, "{ctx}");
        assert_eq!(l["completed_all_completed"], true, "{ctx}");
        assert_eq!(l["completed_have_artifacts"], true, "{ctx}");
        // cancel, then the typed error for canceling again
        assert_eq!(r["cancel"]["state"], "TASK_STATE_CANCELED", "{ctx}");
        assert_eq!(r["cancel"]["again"], "TaskNotCancelableError", "{ctx}");
        // errors map to the SDK's typed exceptions
        assert_eq!(r["not_found"]["exception"], "TaskNotFoundError", "{ctx}");
        // input required and the reply
        assert_eq!(r["ask"]["first"], "TASK_STATE_INPUT_REQUIRED", "{ctx}");
        assert_eq!(r["ask"]["final"], "TASK_STATE_COMPLETED");
        assert_eq!(r["ask"]["text"], "Hello, Grace");
        // push configs
        assert_eq!(r["push"]["created"], "cfg1", "{ctx}");
        assert_eq!(r["push"]["listed"], 1);
        assert_eq!(r["push"]["after_delete"], 0);
    }

    // Every response parsed strictly into the SDK's protobuf types.
    let strict = &summary["strict"];
    let parsed = &strict["parsed"];
    for ty in [
        "AgentCard",
        "SendMessageResponse",
        "StreamResponse",
        "Task",
        "ListTasksResponse",
        "TaskPushNotificationConfig",
        "ErrorInfo",
    ] {
        assert!(
            parsed[ty].as_i64().unwrap_or(0) > 0,
            "nothing parsed as {ty}: {parsed}"
        );
    }
    let violations = strict["violations"].as_array().unwrap();
    assert!(
        violations.is_empty(),
        "wire deviations found by strict ProtoJSON parsing:\n{}",
        serde_json::to_string_pretty(violations).unwrap()
    );
}

/// The SDK's own credential support (an `AuthInterceptor` reading the card's security
/// schemes) reaches an agent that takes API keys; without credentials it is refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_client_authenticates_with_an_api_key() {
    let Some(py) = tokio::task::spawn_blocking(python_sdk::python)
        .await
        .unwrap()
    else {
        return;
    };
    let keys = a2a_kit::auth::ApiKeys::header("X-API-Key").key("py-key", "python");
    let server = a2a_tests::serve(
        a2a_kit::server::AgentService::builder(a2a_tests::TestAgent).authenticate(keys),
    )
    .await;
    let summary = run_script(&py, "auth_client.py", &[&server.base, "py-key"]).await;
    assert_eq!(
        summary["card"]["schemes"]["apiKey"],
        serde_json::json!({"kind": "api_key_security_scheme", "location": "header", "name": "X-API-Key"}),
        "{summary}"
    );
    assert_eq!(
        summary["card"]["requirements"],
        serde_json::json!([["apiKey"]])
    );
    assert_sent_only_with_credentials(&summary);
}

/// A JWT for `sub` signed with `secret` (HS256), valid for ten minutes.
fn hs256_token(secret: &[u8], sub: &str) -> String {
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600;
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &serde_json::json!({"sub": sub, "exp": exp, "iss": "interop"}),
        &jsonwebtoken::EncodingKey::from_secret(secret),
    )
    .expect("signs")
}

/// The SDK's `AuthInterceptor` also speaks HTTP bearer: it reads the card's bearer scheme and
/// sends a JWT the agent accepts; without one it is refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_client_authenticates_with_a_bearer_jwt() {
    let Some(py) = tokio::task::spawn_blocking(python_sdk::python)
        .await
        .unwrap()
    else {
        return;
    };
    let secret = b"interop-secret-of-at-least-32-bytes!";
    let jwt = a2a_kit::auth::Jwt::hmac(secret)
        .expect("a secret")
        .issuer("interop");
    let server = a2a_tests::serve(
        a2a_kit::server::AgentService::builder(a2a_tests::TestAgent).authenticate(jwt),
    )
    .await;
    let token = hs256_token(secret, "python");
    let summary = run_script(&py, "auth_client.py", &[&server.base, &token]).await;
    let schemes = summary["card"]["schemes"].as_object().expect("schemes");
    assert_eq!(schemes.len(), 1, "{summary}");
    let (name, scheme) = schemes.iter().next().unwrap();
    assert_eq!(
        scheme,
        &serde_json::json!({"kind": "http_auth_security_scheme", "scheme": "Bearer", "bearer_format": "JWT"}),
        "{summary}"
    );
    assert_eq!(summary["card"]["requirements"], serde_json::json!([[name]]));
    assert_sent_only_with_credentials(&summary);
}

/// In both bindings of an auth_client.py summary: the message with credentials completed, the
/// one without was refused with 401.
fn assert_sent_only_with_credentials(summary: &Value) {
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let r = &summary["bindings"][binding];
        assert_eq!(
            r["with_key"]["state"], "TASK_STATE_COMPLETED",
            "{binding}: {r}"
        );
        let refused = r["without_key"]["message"].as_str().unwrap_or_default();
        assert!(refused.contains("401"), "{binding}: {r}");
    }
}

/// Issue #30: the official Python client sends a data part's numbers as doubles
/// (`"passengers": 2.0`); the travel agent's `book-flight` (a `u8` field) books it. A
/// fraction is still refused, naming the field.
#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_client_books_a_flight_with_a_data_part() {
    let Some(py) = tokio::task::spawn_blocking(python_sdk::python)
        .await
        .unwrap()
    else {
        return;
    };
    let server = a2a_tests::serve(a2a_kit::server::AgentService::builder(
        a2a_examples::travel::TravelAgent::default(),
    ))
    .await;
    let summary = run_script(&py, "data_client.py", &[&server.base]).await;
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let r = &summary[binding];
        let two = &r["two"];
        assert_eq!(
            two["state"], 3,
            "{binding}: COMPLETED is 3 in the SDK's enum: {r}"
        );
        assert_eq!(two["data"][0]["passengers"], 2.0, "{binding}: {r}");
        assert_eq!(two["data"][0]["route"], "LIS-AMS", "{binding}: {r}");
        let fraction = r["fraction"].to_string();
        assert!(
            fraction.contains("passengers") && fraction.contains("2.5"),
            "{binding}: a fraction is refused naming the field: {fraction}"
        );
    }
}
