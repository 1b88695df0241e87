//! Golden tests against the JSON examples of the A2A specification.
//!
//! Source: `docs/specification.md` of a2aproject/A2A at commit
//! `16ba52690519bf55b9388e34d4db356efa88aa51` (v1.0.1-47). Every JSON code
//! block, and every JSON body inside an `http` block (requests, responses,
//! SSE `data:` lines and JSON-RPC envelopes), that is valid v1.0 is stored
//! verbatim under `tests/fixtures/spec/NN-name.json`. Each test parses the
//! fixture into its wire type, re-serializes it, and compares
//! `serde_json::Value`s with the input.
//!
//! Fixtures and their source (line of the opening fence in specification.md):
//! - 01 §4.6.2 Artifact with citation extension (1111)
//! - 02 §5.6 timestamp examples (1241)
//! - 03 §5.8 custom binding `supportedInterfaces` fragment (1285)
//! - 04/05 §6.1 basic SendMessage request/response (1314, 1331)
//! - 06 §6.2 streaming request (1355); 07/08 its 1st and 3rd SSE events (1372)
//! - 09/10 §6.3 multi-turn initial and follow-up requests (1389, 1426)
//! - 11 §6.4 request body of the version-negotiation example (1448)
//! - 12/13 §6.5 ListTasks responses (1495, 1528)
//! - 14/15/16 §6.6 push setup request, response, webhook body (1626, 1656, 1674)
//! - 17 §6.7 file-download response (1724)
//! - 18/19 §6.8 structured-data request/response (1759, 1793)
//! - 20 §6.9 public Agent Card fragment (1832)
//! - 21/22 §8.4.1 canonicalization: original fragment and canonical form (2039, 2064)
//! - 23 §8.4.2 AgentCardSignature (2114)
//! - 24 §8.5 sample Agent Card (2148)
//! - 25-29 §9.4 JSON-RPC GetTask, ListTasks, CancelTask, SubscribeToTask,
//!   GetExtendedAgentCard requests (2348, 2366, 2386, 2405, 2433)
//! - 30/31 §11.4 REST SendMessage request/response (2824, 2844)
//! - 32 §A.2.1 v1.0 text Part (3476)
//! - 33 §A.2.2 v1.0 capabilities fragment (3556)
//!
//! Skipped, with the reason:
//! - 848 (§4.3.3 push payload): `/* ... */` placeholders, and it lists all four
//!   StreamResponse members at once (a template, not a valid oneof).
//! - 1008 (§4.6.1 Research Assistant card): not JSON (trailing comma after
//!   `"protocolVersion": "0.3"`), and it lacks the required `version`.
//! - 1055 (§4.6.1 extension opt-in request) and 1087 (§4.6.2 location
//!   extension Message): the message lacks the required `messageId` (digest §9.11).
//! - 1372, 2nd SSE event (`artifactUpdate`): the artifact lacks the required
//!   `artifactId` (digest §9.11).
//! - 1406 (§6.3 input-required response): the status message lacks the
//!   required `messageId` (digest §9.11).
//! - 1466 (§6.4) and 1596 (§6.5 validation error): `application/problem+json`
//!   error bodies, stale (digest §9.11); v1.0 uses google.rpc.Status.
//! - 1570 (§6.5 pagination response): `/* ... additional tasks */` placeholder.
//! - 1698 (§6.7 file upload request): not JSON (missing and trailing commas),
//!   and `raw` is a truncated placeholder (`...`), not base64.
//! - 1859 (§6.9 extended card response): `/* ... */` placeholder, and lacks
//!   the card's required fields.
//! - 2123 (§8.4.2 decoded protected header): a JOSE header, not an A2A type.
//! - 2262 (§9.2): pairs `A2A-Version: 0.3` with a v1 method (digest §9.11) and
//!   `params` is a placeholder.
//! - 2282 (§9.3): `"method": "category/action"` and a placeholder (digest §9.11).
//! - 2299, 2312 (§9.4.1), 2334 (§9.4.2), 2962, 2973 (§11.7): `/* ... */`
//!   placeholders (2312 is also missing its closing brace).
//! - 2469, 2493 (§9.5) and 2930 (§11.6): error envelopes (JSON-RPC error
//!   object, google.rpc.Status). Valid v1.0, but they are binding-level error
//!   shapes with no type in `a2a_kit::protocol`.
//! - 2777 (§11.2): pairs `A2A-Version: 0.3` with a v1 body, and the message
//!   lacks the required `messageId` (digest §9.11).
//! - 3059 (§12.7 custom binding card): the interface lacks the required
//!   `protocolVersion`.
//! - 3451, 3460 (§A.2.1 legacy parts): v0.3 `kind` discriminator (digest §9.3).
//! - 3484 (§A.2.1 v1.0 FilePart): `raw` is `"iVBORw0KGgo..."`, a truncated
//!   placeholder that is not valid base64.
//! - 3545 (§A.2.2 legacy card): pre-1.0 `supportsExtendedAgentCard`.
//! - Inline snippets in §A.2.1 prose are not code blocks and use `...` placeholders.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::PathBuf;

use a2a_kit::protocol::{
    AgentCard, AgentCardSignature, Artifact, CancelTaskRequest, GetExtendedAgentCardRequest,
    GetTaskRequest, ListTasksRequest, ListTasksResponse, Part, PartContent, SecurityScheme,
    SendMessageRequest, SendMessageResponse, StreamResponse, SubscribeToTaskRequest, TaskState,
    Timestamp,
};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

const FIXTURES: &[&str] = &[
    "01-artifact-citation-extension",
    "02-timestamp-formats",
    "03-agent-card-custom-binding-fragment",
    "04-send-message-request-basic",
    "05-send-message-response-basic",
    "06-send-streaming-message-request",
    "07-stream-response-task-working",
    "08-stream-response-status-completed",
    "09-send-message-request-multi-turn-initial",
    "10-send-message-request-multi-turn-follow-up",
    "11-send-message-request-unsupported-version",
    "12-list-tasks-response-by-context",
    "13-list-tasks-response-working",
    "14-send-message-request-push-config",
    "15-send-message-response-submitted",
    "16-push-notification-status-update",
    "17-send-message-response-file-url",
    "18-send-message-request-part-metadata",
    "19-send-message-response-structured",
    "20-agent-card-public-fragment",
    "21-agent-card-canonicalization-original",
    "22-agent-card-canonicalization-canonical",
    "23-agent-card-signature",
    "24-agent-card-sample",
    "25-jsonrpc-get-task",
    "26-jsonrpc-list-tasks",
    "27-jsonrpc-cancel-task",
    "28-jsonrpc-subscribe-to-task",
    "29-jsonrpc-get-extended-agent-card",
    "30-rest-send-message-request",
    "31-rest-send-message-response",
    "32-part-text",
    "33-agent-card-capabilities-fragment",
];

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/spec")
}

fn fixture_text(name: &str) -> String {
    let path = fixture_dir().join(format!("{name}.json"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn fixture_value(name: &str) -> Value {
    serde_json::from_str(&fixture_text(name)).unwrap_or_else(|e| panic!("{name}: not JSON: {e}"))
}

/// Parses the fixture text straight into `T` (the path a server takes).
fn parse<T: DeserializeOwned>(name: &str) -> T {
    serde_json::from_str(&fixture_text(name)).unwrap_or_else(|e| {
        panic!(
            "{name}: does not parse as {}: {e}",
            std::any::type_name::<T>()
        )
    })
}

fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("wire types always serialize")
}

/// Parse, re-serialize, compare with the input, and check the typed value is stable.
fn assert_round_trip<T>(name: &str) -> T
where
    T: DeserializeOwned + Serialize + PartialEq + Debug,
{
    let parsed: T = parse(name);
    let out = to_value(&parsed);
    assert_eq!(
        out,
        fixture_value(name),
        "{name}: re-serialized JSON differs"
    );
    let again: T = serde_json::from_value(out).expect("own output parses");
    assert_eq!(
        again, parsed,
        "{name}: typed value changed across a round trip"
    );
    parsed
}

/// Rewrites A2A timestamps to the wire form this crate writes (UTC, milliseconds, `Z`).
///
/// ProtoJSON lets readers accept any RFC 3339 precision and the spec only
/// says millisecond precision SHOULD be used; this crate always writes
/// exactly three digits. So `2024-03-15T10:15:00Z` legitimately comes back
/// as `2024-03-15T10:15:00.000Z`, and `...09.680794Z` as `...09.680Z`.
/// Only `timestamp` / `statusTimestampAfter` fields of A2A objects are
/// touched; free-form `metadata`/`params`/`header`/`data` values are opaque
/// and must round-trip untouched. Uses chrono directly, not the crate's own
/// `Timestamp`, so the test does not check the code with itself.
fn normalise_timestamps(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                match key.as_str() {
                    "metadata" | "params" | "header" | "data" => {}
                    "timestamp" | "statusTimestampAfter" => {
                        if let Value::String(s) = child {
                            let dt = DateTime::parse_from_rfc3339(s)
                                .unwrap_or_else(|e| panic!("bad timestamp {s}: {e}"));
                            *s = dt
                                .with_timezone(&Utc)
                                .to_rfc3339_opts(SecondsFormat::Millis, true);
                        }
                    }
                    _ => normalise_timestamps(child),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalise_timestamps),
        _ => {}
    }
}

/// Like [`assert_round_trip`] but with timestamps normalised on both sides.
fn assert_round_trip_normalised<T>(name: &str) -> T
where
    T: DeserializeOwned + Serialize + PartialEq + Debug,
{
    let parsed: T = parse(name);
    let mut out = to_value(&parsed);
    let mut input = fixture_value(name);
    let before = out.clone();
    normalise_timestamps(&mut out);
    assert_eq!(
        out, before,
        "{name}: output timestamps are not in wire form"
    );
    normalise_timestamps(&mut input);
    assert_eq!(out, input, "{name}: re-serialized JSON differs");
    let again: T = serde_json::from_value(out).expect("own output parses");
    assert_eq!(
        again, parsed,
        "{name}: typed value changed across a round trip"
    );
    parsed
}

/// Required AgentCard members this crate always writes, even at their default.
const CARD_REQUIRED: &[&str] = &[
    "name",
    "description",
    "supportedInterfaces",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
];

/// For the spec's partial Agent Cards: parse as `AgentCard`, re-serialize,
/// and compare only the members the fragment has. Every other member in the
/// output must be a required one written at its default.
fn card_fragment(name: &str) -> (AgentCard, Value) {
    let card: AgentCard = parse(name);
    let Value::Object(mut out) = to_value(&card) else {
        panic!("{name}: AgentCard did not serialize to an object");
    };
    let Value::Object(input) = fixture_value(name) else {
        panic!("{name}: fixture is not an object");
    };
    let extra: Vec<String> = out
        .keys()
        .filter(|k| !input.contains_key(*k))
        .cloned()
        .collect();
    for key in extra {
        assert!(
            CARD_REQUIRED.contains(&key.as_str()),
            "{name}: unexpected extra member `{key}`"
        );
        let value = out.remove(&key).unwrap_or_default();
        let is_default = matches!(&value, Value::String(s) if s.is_empty())
            || matches!(&value, Value::Array(a) if a.is_empty())
            || matches!(&value, Value::Object(o) if o.is_empty());
        assert!(is_default, "{name}: `{key}` is not a default: {value}");
    }
    (card, Value::Object(out))
}

fn assert_card_fragment(name: &str) -> AgentCard {
    let (card, projected) = card_fragment(name);
    assert_eq!(
        projected,
        fixture_value(name),
        "{name}: re-serialized JSON differs"
    );
    card
}

/// For JSON-RPC request envelopes: `params` parses as `T` and the rebuilt
/// envelope equals the input. A missing `params` is read as `{}`.
fn assert_jsonrpc_request<T>(name: &str, method: &str) -> T
where
    T: DeserializeOwned + Serialize + PartialEq + Debug + Default,
{
    let input = fixture_value(name);
    assert_eq!(input["jsonrpc"], "2.0", "{name}");
    assert_eq!(input["method"], method, "{name}");
    let params = input.get("params").cloned().unwrap_or_else(|| json!({}));
    let parsed: T = serde_json::from_value(params)
        .unwrap_or_else(|e| panic!("{name}: params do not parse: {e}"));
    let out_params = to_value(&parsed);
    let mut rebuilt = input.clone();
    match rebuilt.as_object_mut() {
        Some(envelope) if input.get("params").is_some() => {
            envelope.insert("params".into(), out_params);
        }
        Some(_) => assert_eq!(out_params, json!({}), "{name}: params should be empty"),
        None => panic!("{name}: envelope is not an object"),
    }
    assert_eq!(rebuilt, input, "{name}: re-serialized JSON differs");
    parsed
}

#[test]
fn every_fixture_file_is_tested() {
    let mut on_disk: Vec<String> = std::fs::read_dir(fixture_dir())
        .expect("fixture dir")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect();
    on_disk.sort();
    let listed: Vec<String> = FIXTURES.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(on_disk, listed);
}

#[test]
fn g01_artifact_citation_extension() {
    let artifact: Artifact = assert_round_trip("01-artifact-citation-extension");
    assert_eq!(artifact.artifact_id, "research-summary-001");
    assert_eq!(
        artifact.extensions,
        ["https://standards.org/extensions/citations/v1"]
    );
}

#[test]
fn g02_timestamp_formats() {
    let stamps: BTreeMap<String, Timestamp> = assert_round_trip("02-timestamp-formats");
    assert_eq!(stamps["createdAt"].to_string(), "2025-10-28T14:25:33.142Z");
}

#[test]
fn g03_agent_card_custom_binding_fragment() {
    let card = assert_card_fragment("03-agent-card-custom-binding-fragment");
    assert_eq!(
        card.supported_interfaces[0].protocol_binding,
        "https://example.com/bindings/websocket/v1"
    );
}

#[test]
fn g04_send_message_request_basic() {
    let req: SendMessageRequest = assert_round_trip("04-send-message-request-basic");
    assert_eq!(req.message.text(), "What is the weather today?");
}

#[test]
fn g05_send_message_response_basic() {
    let resp: SendMessageResponse = assert_round_trip("05-send-message-response-basic");
    let SendMessageResponse::Task(task) = resp else {
        panic!("expected a task");
    };
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts[0].name.as_deref(), Some("Weather Report"));
}

#[test]
fn g06_send_streaming_message_request() {
    assert_round_trip::<SendMessageRequest>("06-send-streaming-message-request");
}

#[test]
fn g07_stream_response_task_working() {
    let event: StreamResponse = assert_round_trip("07-stream-response-task-working");
    assert_eq!(event.state(), Some(TaskState::Working));
    assert_eq!(event.task_id(), Some("task-uuid"));
}

#[test]
fn g08_stream_response_status_completed() {
    let event: StreamResponse = assert_round_trip("08-stream-response-status-completed");
    assert!(matches!(event, StreamResponse::StatusUpdate(_)));
    assert_eq!(event.state(), Some(TaskState::Completed));
}

#[test]
fn g09_send_message_request_multi_turn_initial() {
    assert_round_trip::<SendMessageRequest>("09-send-message-request-multi-turn-initial");
}

#[test]
fn g10_send_message_request_multi_turn_follow_up() {
    let req: SendMessageRequest = assert_round_trip("10-send-message-request-multi-turn-follow-up");
    assert_eq!(req.message.task_id.as_deref(), Some("task-uuid"));
}

#[test]
fn g11_send_message_request_unsupported_version() {
    assert_round_trip::<SendMessageRequest>("11-send-message-request-unsupported-version");
}

#[test]
fn g12_list_tasks_response_by_context() {
    let resp: ListTasksResponse = assert_round_trip_normalised("12-list-tasks-response-by-context");
    assert_eq!((resp.page_size, resp.total_size), (10, 5));
    assert_eq!(resp.next_page_token, "");
}

#[test]
fn g13_list_tasks_response_working() {
    let resp: ListTasksResponse = assert_round_trip_normalised("13-list-tasks-response-working");
    let message = resp.tasks[0]
        .status
        .message
        .as_ref()
        .expect("status message");
    assert_eq!(message.message_id, "msg-status-update");
}

#[test]
fn g14_send_message_request_push_config() {
    let req: SendMessageRequest = assert_round_trip("14-send-message-request-push-config");
    let push = req
        .configuration
        .and_then(|c| c.task_push_notification_config)
        .expect("push config");
    assert_eq!(
        push.authentication.map(|a| a.scheme).as_deref(),
        Some("Bearer")
    );
}

#[test]
fn g15_send_message_response_submitted() {
    assert_round_trip_normalised::<SendMessageResponse>("15-send-message-response-submitted");
}

#[test]
fn g16_push_notification_status_update() {
    let event: StreamResponse = assert_round_trip_normalised("16-push-notification-status-update");
    assert_eq!(
        event.task_id(),
        Some("43667960-d455-4453-b0cf-1bae4955270d")
    );
}

#[test]
fn g17_send_message_response_file_url() {
    let resp: SendMessageResponse =
        assert_round_trip_normalised("17-send-message-response-file-url");
    let SendMessageResponse::Task(task) = resp else {
        panic!("expected a task");
    };
    let part = &task.artifacts[0].parts[0];
    assert!(matches!(part.content, PartContent::Url(_)));
    assert_eq!(part.media_type.as_deref(), Some("image/png"));
}

#[test]
fn g18_send_message_request_part_metadata() {
    let req: SendMessageRequest = assert_round_trip("18-send-message-request-part-metadata");
    assert!(req.message.parts[0].metadata.is_some());
}

#[test]
fn g19_send_message_response_structured() {
    // The status timestamp has microseconds (`17:47:09.680794Z`); it is written back as `.680Z`.
    assert_round_trip_normalised::<SendMessageResponse>("19-send-message-response-structured");
}

#[test]
fn g20_agent_card_public_fragment() {
    let card = assert_card_fragment("20-agent-card-public-fragment");
    assert_eq!(card.capabilities.extended_agent_card, Some(true));
    assert!(matches!(
        card.security_schemes["google"],
        SecurityScheme::OpenIdConnectSecurityScheme(_)
    ));
}

#[test]
fn g21_canonicalization_default_removal() {
    // §8.4.1: the serializer drops the non-required empty `extensions`, keeps the
    // explicit `false`s of `optional` fields and the required `""` and `[]`:
    // exactly the spec's canonical form (22), before JCS key ordering.
    let (_, projected) = card_fragment("21-agent-card-canonicalization-original");
    assert_eq!(
        projected,
        fixture_value("22-agent-card-canonicalization-canonical")
    );
}

#[test]
fn g22_canonicalization_canonical() {
    let card = assert_card_fragment("22-agent-card-canonicalization-canonical");
    assert_eq!(card.capabilities.streaming, Some(false));
    assert_eq!(card.capabilities.push_notifications, Some(false));
    assert_eq!(card.description, "");
}

#[test]
fn g23_agent_card_signature() {
    let sig: AgentCardSignature = assert_round_trip("23-agent-card-signature");
    assert!(sig.header.is_none());
}

#[test]
fn g24_agent_card_sample() {
    let card: AgentCard = assert_round_trip("24-agent-card-sample");
    assert_eq!(card.supported_interfaces.len(), 3);
    assert_eq!(card.skills[1].id, "custom-map-generator");
    assert_eq!(
        card.security_requirements[0].schemes["google"].list,
        ["openid", "profile", "email"]
    );
}

#[test]
fn g25_jsonrpc_get_task() {
    let req: GetTaskRequest = assert_jsonrpc_request("25-jsonrpc-get-task", "GetTask");
    assert_eq!(req.history_length, Some(10));
}

#[test]
fn g26_jsonrpc_list_tasks() {
    let req: ListTasksRequest = assert_jsonrpc_request("26-jsonrpc-list-tasks", "ListTasks");
    assert_eq!(req.status, Some(TaskState::Working));
    assert_eq!(req.page_size, Some(50));
}

#[test]
fn g27_jsonrpc_cancel_task() {
    assert_jsonrpc_request::<CancelTaskRequest>("27-jsonrpc-cancel-task", "CancelTask");
}

#[test]
fn g28_jsonrpc_subscribe_to_task() {
    assert_jsonrpc_request::<SubscribeToTaskRequest>(
        "28-jsonrpc-subscribe-to-task",
        "SubscribeToTask",
    );
}

#[test]
fn g29_jsonrpc_get_extended_agent_card() {
    let req: GetExtendedAgentCardRequest =
        assert_jsonrpc_request("29-jsonrpc-get-extended-agent-card", "GetExtendedAgentCard");
    assert_eq!(req, GetExtendedAgentCardRequest::default());
}

#[test]
fn g30_rest_send_message_request() {
    let req: SendMessageRequest = assert_round_trip("30-rest-send-message-request");
    assert_eq!(
        req.configuration.map(|c| c.accepted_output_modes),
        Some(vec!["text/plain".to_owned()])
    );
}

#[test]
fn g31_rest_send_message_response() {
    assert_round_trip::<SendMessageResponse>("31-rest-send-message-response");
}

#[test]
fn g32_part_text() {
    let part: Part = assert_round_trip("32-part-text");
    assert_eq!(part.as_text(), Some("Hello, world!"));
}

#[test]
fn g33_agent_card_capabilities_fragment() {
    let card = assert_card_fragment("33-agent-card-capabilities-fragment");
    assert_eq!(card.capabilities.streaming, Some(true));
    assert_eq!(card.capabilities.extended_agent_card, Some(true));
}
