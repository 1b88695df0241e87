//! The `a2a` binary against a live a2a-kit agent (the TestAgent) and against hosts that are
//! not usable agents.

use std::process::Output;

use a2a_tests::serve_test_agent;
use serde_json::Value;

async fn a2a(args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_a2a"))
            .args(&args)
            .env("NO_COLOR", "1")
            .env_remove("A2A_TOKEN")
            .env_remove("A2A_API_KEY")
            .output()
            .expect("run a2a")
    })
    .await
    .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}
fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(o), stderr(o)))
}

#[tokio::test(flavor = "multi_thread")]
async fn card_human_and_json() {
    let s = serve_test_agent().await;
    let o = a2a(&["card", &s.base]).await;
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("Test Agent") && out.contains("JSONRPC") && out.contains("HTTP+JSON"),
        "{out}"
    );
    assert!(
        out.contains("chunks") && out.contains("streaming: yes"),
        "{out}"
    );
    let v = json(&a2a(&["--json", "card", &s.base]).await);
    assert_eq!(v["name"], "Test Agent");
}

#[tokio::test(flavor = "multi_thread")]
async fn send_blocking_streaming_and_json() {
    let s = serve_test_agent().await;
    for binding in ["jsonrpc", "rest", "grpc"] {
        let o = a2a(&[
            "send",
            &s.base,
            "hello cli",
            "--skill",
            "echo",
            "--binding",
            binding,
        ])
        .await;
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(
            stdout(&o).contains("COMPLETED") && stdout(&o).contains("hello cli"),
            "{}",
            stdout(&o)
        );

        let o = a2a(&[
            "send",
            &s.base,
            "3",
            "--skill",
            "chunks",
            "--stream",
            "--binding",
            binding,
        ])
        .await;
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let out = stdout(&o);
        assert!(
            out.contains("── chunks ──") && out.contains("c0 c1 c2"),
            "{out}"
        );
        assert!(out.contains("COMPLETED"), "{out}");

        let o = a2a(&[
            "--json",
            "send",
            &s.base,
            "2",
            "--skill",
            "chunks",
            "--stream",
            "--binding",
            binding,
        ])
        .await;
        let lines: Vec<Value> = stdout(&o)
            .lines()
            .map(|l| serde_json::from_str(l).expect("NDJSON"))
            .collect();
        assert!(lines[0].get("task").is_some(), "{lines:?}");
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.get("artifactUpdate").is_some())
                .count(),
            2
        );

        let v = json(
            &a2a(&[
                "--json",
                "send",
                &s.base,
                "x",
                "--skill",
                "echo",
                "--binding",
                binding,
            ])
            .await,
        );
        assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    }
    // Progress statuses show in the live view.
    let o = a2a(&["send", &s.base, "go", "--skill", "status", "--stream"]).await;
    assert!(stdout(&o).contains("step 2"), "{}", stdout(&o));
    // Direct replies print the message.
    let o = a2a(&["send", &s.base, "hey", "--skill", "direct"]).await;
    assert_eq!(stdout(&o).trim(), "direct: hey");
    // Counts read as English (issue #30: "1 messages").
    let o = a2a(&["send", &s.base, "hey", "--skill", "echo", "--history", "5"]).await;
    let out = stdout(&o);
    assert!(out.contains("history (1 message)"), "{out}");
    // A file rides along with the text.
    let dir = std::env::temp_dir().join(format!("a2a-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("note.txt");
    std::fs::write(&file, "attached").unwrap();
    let o = a2a(&[
        "--json",
        "send",
        &s.base,
        "with file",
        "--skill",
        "echo",
        "--file",
        file.to_str().unwrap(),
        "--history",
        "5",
    ])
    .await;
    let v = json(&o);
    let parts = &v["task"]["history"][0]["parts"];
    assert_eq!(parts[1]["filename"], "note.txt", "{v}");
    assert_eq!(parts[1]["mediaType"], "text/plain");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn task_lifecycle_commands_and_a2a_errors() {
    let s = serve_test_agent().await;
    let v = json(
        &a2a(&[
            "--json",
            "send",
            &s.base,
            "20000",
            "--skill",
            "slow",
            "--no-wait",
        ])
        .await,
    );
    let id = v["task"]["id"].as_str().unwrap().to_string();
    let o = a2a(&["get", &s.base, &id]).await;
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains(&id));
    let o = a2a(&["list", &s.base]).await;
    assert!(stdout(&o).contains(&id), "{}", stdout(&o));
    let v = json(&a2a(&["--json", "list", &s.base, "--all", "--status", "working"]).await);
    assert_eq!(v["tasks"][0]["id"], id.as_str());

    // push configs
    let o = a2a(&[
        "push",
        "create",
        &s.base,
        &id,
        "https://example.com/hook",
        "--id",
        "c1",
        "--auth-scheme",
        "Bearer",
        "--auth-credentials",
        "x",
    ])
    .await;
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("c1"));
    assert!(
        stdout(&a2a(&["push", "get", &s.base, &id, "c1"]).await)
            .contains("https://example.com/hook")
    );
    assert_eq!(
        json(&a2a(&["--json", "push", "list", &s.base, &id]).await)["configs"][0]["id"],
        "c1"
    );
    assert_eq!(code(&a2a(&["push", "delete", &s.base, &id, "c1"]).await), 0);

    let o = a2a(&["cancel", &s.base, &id]).await;
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("CANCELED"));
    // Canceling again: the A2A error, its code and reason, and a hint; exit 1.
    let o = a2a(&["cancel", &s.base, &id]).await;
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert!(
        err.contains("TaskNotCancelableError (-32002, TASK_NOT_CANCELABLE)"),
        "{err}"
    );
    assert!(err.contains("hint:"), "{err}");
    let v = json(&a2a(&["--json", "get", &s.base, "missing"]).await);
    assert_eq!(v["error"]["code"], -32001);
    assert_eq!(v["error"]["reason"], "TASK_NOT_FOUND");
    assert_eq!(v["error"]["name"], "TaskNotFoundError");

    // subscribe follows a running task to the end.
    let v = json(
        &a2a(&[
            "--json",
            "send",
            &s.base,
            "500",
            "--skill",
            "slow",
            "--no-wait",
        ])
        .await,
    );
    let id = v["task"]["id"].as_str().unwrap().to_string();
    let o = a2a(&["subscribe", &s.base, &id]).await;
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("COMPLETED"), "{}", stdout(&o));

    // A failing task exits 4; a question prints how to answer it.
    assert_eq!(
        code(&a2a(&["send", &s.base, "x", "--skill", "fail"]).await),
        4
    );
    let o = a2a(&["send", &s.base, "x", "--skill", "ask"]).await;
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("What is your name?"), "{}", stdout(&o));
    assert!(stderr(&o).contains("--task"), "{}", stderr(&o));
    // Unknown skill: InvalidParams.
    let o = a2a(&["send", &s.base, "x", "--skill", "nope"]).await;
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("-32602"), "{}", stderr(&o));
}

#[tokio::test(flavor = "multi_thread")]
async fn unusable_hosts_exit_3_with_a_clear_message() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = a2a(&["card", &format!("http://127.0.0.1:{port}")]).await;
    assert_eq!(code(&o), 3);
    assert!(
        stderr(&o).contains("cannot reach") && stderr(&o).contains("is the agent running"),
        "{}",
        stderr(&o)
    );

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card03 =
        serde_json::json!({"name": "Old", "url": base, "protocolVersion": "0.2.5", "version": "1"});
    let app = axum::Router::new().fallback(move || async move { axum::Json(card03) });
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let o = a2a(&["card", &base]).await;
    assert_eq!(code(&o), 3);
    assert!(
        stderr(&o).contains("does not support A2A 1.0"),
        "{}",
        stderr(&o)
    );
    let o = a2a(&["--json", "card", &format!("{base}/nothing-here/")]).await;
    assert_eq!(code(&o), 3);
    let v = json(&o);
    assert_eq!(v["error"]["kind"], "unsupported-version", "{v}");

    let s = serve_test_agent().await;
    let o = a2a(&["card", &format!("{}/other.json", s.base)]).await;
    assert_eq!(code(&o), 3);
    assert!(stderr(&o).contains("is not an A2A agent"), "{}", stderr(&o));

    let o = a2a(&["send", &s.base, "--data", "{not json"]).await;
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("--data is not valid JSON"),
        "{}",
        stderr(&o)
    );
}

/// Output into a pipe that closes early (`a2a card URL | head -0`) ends the command quietly:
/// no panic, no backtrace, success.
#[tokio::test(flavor = "multi_thread")]
async fn a_closed_pipe_ends_quietly() {
    let s = serve_test_agent().await;
    let base = s.base.clone();
    let out = tokio::task::spawn_blocking(move || {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_a2a"))
            .args(["card", &base])
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run a2a");
        // The reader goes away before the card arrives.
        drop(child.stdout.take());
        child.wait_with_output().expect("wait")
    })
    .await
    .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("panicked") && !stderr(&out).contains("Broken pipe"),
        "{}",
        stderr(&out)
    );
}

/// An agent that repeats its answer in the final status message: the CLI prints it once,
/// blocking and streaming.
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_is_printed_once() {
    let s = a2a_tests::serve(
        a2a_kit::server::AgentService::builder(a2a_tests::TestAgent).execution(
            a2a_kit::runtime::ExecutionConfig {
                answer_in_status: true,
                ..Default::default()
            },
        ),
    )
    .await;
    for stream in [false, true] {
        // `slow` answers `slept N`, which the request does not contain.
        let mut args = vec!["send", &s.base, "7", "--skill", "slow"];
        if stream {
            args.push("--stream");
        }
        let o = a2a(&args).await;
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let out = stdout(&o);
        assert_eq!(out.matches("slept 7").count(), 1, "stream: {stream}\n{out}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn card_verify_accepts_a_trusted_signature_and_refuses_others() {
    use a2a_kit::server::AgentService;
    use a2a_kit::signing::Signer;
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/signing");
    let pem = std::fs::read_to_string(format!("{fixtures}/es256.pem")).unwrap();
    let signer = Signer::from_pem(pem, "card-es256").unwrap();
    let s = a2a_tests::serve(AgentService::builder(a2a_tests::TestAgent).sign_card(signer)).await;

    // Good: a PEM file, a JWKS file, the agent's JWKS URL.
    let jwks_url = format!("{}/.well-known/jwks.json", s.base);
    for key in [
        format!("{fixtures}/es256.pub.pem"),
        format!("{fixtures}/jwks.json"),
        jwks_url,
    ] {
        let o = a2a(&["card", &s.base, "--verify", &key]).await;
        assert_eq!(code(&o), 0, "{key}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("signature verified (kid card-es256)"),
            "{}",
            stdout(&o)
        );
    }

    // Bad: a key that did not sign it, an unsigned agent, a key file that is no key.
    let other = format!("{fixtures}/ed25519.pub.jwk.json");
    let o = a2a(&["card", &s.base, "--verify", &other]).await;
    assert_eq!(code(&o), 3, "{}", stdout(&o));
    assert!(
        stderr(&o).contains("no trusted key has kid `card-es256`"),
        "{}",
        stderr(&o)
    );
    let unsigned = serve_test_agent().await;
    let o = a2a(&[
        "card",
        &unsigned.base,
        "--verify",
        &format!("{fixtures}/es256.pub.pem"),
    ])
    .await;
    assert_eq!(code(&o), 3);
    assert!(stderr(&o).contains("no signature"), "{}", stderr(&o));
    let o = a2a(&[
        "card",
        &s.base,
        "--verify",
        &format!("{fixtures}/README.md"),
    ])
    .await;
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

/// The travel example's agent on a random port.
async fn serve_travel() -> a2a_tests::TestServer {
    a2a_tests::serve(a2a_examples::travel::a2a()).await
}

/// `a2a card` shows each skill's tags and the JSON Schema of its data input, the schema's
/// lines indented under the skill as JSON indents them.
#[tokio::test(flavor = "multi_thread")]
async fn card_shows_skill_tags_and_input_schemas() {
    let s = serve_travel().await;
    let o = a2a(&["card", &s.base]).await;
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    let skill = |id: &str| -> Vec<&str> {
        out.lines()
            .skip_while(|l| !l.starts_with(&format!("  {id}  ")))
            .skip(1)
            .take_while(|l| l.starts_with("      ") || l.is_empty())
            .collect()
    };
    let book = skill("book-flight");
    assert!(book.contains(&"      tags: travel, booking"), "{out}");
    assert!(
        book.contains(&"      input (a data part), JSON Schema:"),
        "{out}"
    );
    // The schema as JSON indents it, under the skill.
    let schema: Vec<&str> = book
        .iter()
        .skip_while(|l| !l.contains("JSON Schema"))
        .skip(1)
        .copied()
        .collect();
    assert_eq!(schema.first(), Some(&"        {"), "{out}");
    assert_eq!(schema.last(), Some(&"        }"), "{out}");
    assert!(schema.contains(&"          \"type\": \"object\","), "{out}");
    assert!(schema.contains(&"            \"passengers\": {"), "{out}");
    let joined = schema
        .iter()
        .map(|l| {
            l.strip_prefix("        ")
                .expect("indented under the skill")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let parsed: Value = serde_json::from_str(&joined).expect("the schema is the JSON itself");
    assert_eq!(parsed["properties"]["passengers"]["type"], "integer");
    assert!(parsed.get("$schema").is_none());
    let convert = skill("convert");
    assert!(convert.contains(&"      tags: money"), "{out}");
    assert!(convert.iter().any(|l| l.trim() == "\"amount\": {"), "{out}");
    // The free-text skill has tags and no schema.
    let suggest = skill("suggest");
    assert!(suggest.contains(&"      tags: travel, ideas"), "{out}");
    assert!(!suggest.iter().any(|l| l.contains("JSON Schema")), "{out}");
}

/// A data answer keeps its JSON's lines and indentation, indented under its artifact.
#[tokio::test(flavor = "multi_thread")]
async fn data_answers_keep_their_json_indentation() {
    let s = serve_travel().await;
    for binding in ["jsonrpc", "rest", "grpc"] {
        let o = a2a(&[
            "send",
            &s.base,
            "--skill",
            "book-flight",
            "--data",
            r#"{"from":"LIS","to":"AMS","date":"2026-12-01","passengers":2}"#,
            "--binding",
            binding,
        ])
        .await;
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let out = stdout(&o);
        let artifact: Vec<&str> = out
            .lines()
            .skip_while(|l| !l.starts_with("  artifact"))
            .skip(1)
            .take_while(|l| l.starts_with("    "))
            .collect();
        // The agent's key order over JSON; a protobuf `Struct` is a map, whose keys arrive
        // sorted.
        let want: &[&str] = if binding == "grpc" {
            &[
                "    {",
                "      \"confirmation\": \"A2A03514\",",
                "      \"date\": \"2026-12-01\",",
                "      \"passengers\": 2,",
                "      \"price_eur\": 178,",
                "      \"route\": \"LIS-AMS\"",
                "    }",
            ]
        } else {
            &[
                "    {",
                "      \"confirmation\": \"A2A03514\",",
                "      \"route\": \"LIS-AMS\",",
                "      \"date\": \"2026-12-01\",",
                "      \"passengers\": 2,",
                "      \"price_eur\": 178",
                "    }",
            ]
        };
        assert_eq!(artifact, want, "{binding}:\n{out}");
    }
}

/// A root card naming a URL where no agent answers (an agent nested under a path, its card
/// merged at the root without a public URL): the error names the URL that answered 404 and
/// says what that likely means, in both bindings.
#[tokio::test(flavor = "multi_thread")]
async fn a_404_names_the_url_and_what_it_likely_means() {
    let service = a2a_kit::server::AgentService::builder(a2a_tests::TestAgent)
        .build()
        .expect("a valid configuration");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .nest("/agents/test", a2a_kit_axum::router(&service))
        .merge(a2a_kit_axum::well_known_router(&service));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    for (binding, answered) in [
        ("jsonrpc", format!("{base}/")),
        ("rest", format!("{base}/message:send")),
    ] {
        let o = a2a(&["send", &base, "hi", "--skill", "echo", "--binding", binding]).await;
        let err = stderr(&o);
        assert_eq!(code(&o), 1, "{binding}: {err}");
        assert!(
            err.contains(&format!("HTTP 404 (not found) from {answered}:")),
            "{binding}: the URL that answered 404: {err}"
        );
        assert!(
            err.contains(&format!("the agent card read from {base}"))
                && err.contains("likely names a URL where no agent is")
                && err.contains("public URL"),
            "{binding}: what it likely means: {err}"
        );
    }
    // Through the agent's own card, the same command works.
    let o = a2a(&[
        "send",
        &format!("{base}/agents/test"),
        "hi",
        "--skill",
        "echo",
    ])
    .await;
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

/// `a2a console ARGS..` running, and the URL of the page it says it serves.
async fn spawn_console(args: &[&str]) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a"))
        .arg("console")
        .args(args)
        .env("NO_COLOR", "1")
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run a2a console");
    let mut lines =
        tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(child.stderr.take().unwrap()));
    let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
        .await
        .expect("a2a console says where it serves")
        .unwrap()
        .unwrap();
    let page = line
        .split(" at ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    assert!(page.ends_with("/_console/"), "{line}");
    (child, page)
}

async fn get_json(http: &reqwest::Client, url: String) -> Value {
    http.get(url).send().await.unwrap().json().await.unwrap()
}

/// `a2a console URL` serves the console for a remote agent, forwarding the page's calls to
/// it; an agent that is not there is refused before anything is served.
#[tokio::test(flavor = "multi_thread")]
async fn console_serves_the_page_for_a_remote_agent() {
    let s = serve_test_agent().await;
    let (mut child, page) = spawn_console(&[&s.base, "--bind", "127.0.0.1:0"]).await;
    let http = reqwest::Client::new();
    let html = http.get(&page).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("A2A console"), "{html}");
    let config = get_json(&http, format!("{page}config.json")).await;
    assert_eq!(config["remote"], Value::String(s.base.clone()));
    let card = get_json(&http, format!("{page}remote/.well-known/agent-card.json")).await;
    assert_eq!(card["name"], s.service.card().name.as_str());
    let _ = child.kill().await;

    // Credentials given on the command line go with the page's calls.
    let keyed = a2a_tests::serve(
        a2a_kit::server::AgentService::builder(a2a_tests::TestAgent)
            .authenticate(a2a_kit::auth::ApiKeys::header("X-Key").key("k-1", "alice")),
    )
    .await;
    let args = [
        keyed.base.as_str(),
        "--bind",
        "127.0.0.1:0",
        "--api-key",
        "k-1",
    ];
    let (mut child, page) = spawn_console(&args).await;
    let listed: Value = http
        .post(format!("{page}remote/"))
        .header("A2A-Version", "1.0")
        .json(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(listed["result"]["tasks"].is_array(), "{listed}");
    let _ = child.kill().await;

    let gone = a2a(&["console", "http://127.0.0.1:9", "--bind", "127.0.0.1:0"]).await;
    assert_eq!(code(&gone), 3, "{}", stderr(&gone));
    let not_http = a2a(&["console", "ftp://example.com"]).await;
    assert_ne!(code(&not_http), 0);
}
