//! Wire-format tests for `a2a_kit::protocol`: round trips for every type and
//! the ProtoJSON rules (oneofs, enums, int32, base64, timestamps, presence).

use std::collections::BTreeMap;
use std::fmt::Debug;

use a2a_kit::protocol::*;
use chrono::{TimeZone, Utc};
use proptest::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

// ---------------------------------------------------------------- helpers

/// `json` parses as `T`, writes back as exactly `json`, and the typed value is stable.
fn round_trip<T>(json: Value) -> T
where
    T: DeserializeOwned + Serialize + PartialEq + Debug,
{
    let parsed: T = serde_json::from_value(json.clone()).unwrap_or_else(|e| {
        panic!(
            "{} does not parse: {e}\n{json:#}",
            std::any::type_name::<T>()
        )
    });
    let out = serde_json::to_value(&parsed).expect("serializes");
    assert_eq!(
        out,
        json,
        "{} re-serialized differently",
        std::any::type_name::<T>()
    );
    let again: T = serde_json::from_value(out).expect("own output parses");
    assert_eq!(again, parsed);
    parsed
}

/// `value` writes as exactly `json` and reads back equal.
fn writes_as<T>(value: &T, json: Value)
where
    T: DeserializeOwned + Serialize + PartialEq + Debug,
{
    let out = serde_json::to_value(value).expect("serializes");
    assert_eq!(out, json);
    let back: T = serde_json::from_value(out).expect("own output parses");
    assert_eq!(&back, value);
}

fn parse<T: DeserializeOwned>(json: Value) -> T {
    serde_json::from_value(json).unwrap_or_else(|e| panic!("does not parse: {e}"))
}

fn parse_err<T: DeserializeOwned + Debug>(json: &str) -> String {
    match serde_json::from_str::<T>(json) {
        Ok(v) => panic!("expected an error for {json}, got {v:?}"),
        Err(e) => e.to_string(),
    }
}

fn ts(s: &str) -> Timestamp {
    s.parse().expect("valid timestamp")
}

fn meta(value: Value) -> Metadata {
    match value {
        Value::Object(map) => map.into(),
        other => panic!("not an object: {other}"),
    }
}

fn full_message() -> Value {
    json!({
        "messageId": "m-1",
        "contextId": "c-1",
        "taskId": "t-1",
        "role": "ROLE_AGENT",
        "parts": [{"text": "hi"}],
        "metadata": {"k": [1, 2]},
        "extensions": ["urn:ext"],
        "referenceTaskIds": ["t-0"]
    })
}

fn full_artifact() -> Value {
    json!({
        "artifactId": "a-1",
        "name": "report",
        "description": "the report",
        "parts": [{"text": "body"}, {"data": {"x": 1}}],
        "metadata": {"m": true},
        "extensions": ["urn:ext"]
    })
}

fn full_status() -> Value {
    json!({
        "state": "TASK_STATE_INPUT_REQUIRED",
        "message": full_message(),
        "timestamp": "2025-10-28T10:30:00.123Z"
    })
}

fn full_task() -> Value {
    json!({
        "id": "t-1",
        "contextId": "c-1",
        "status": full_status(),
        "artifacts": [full_artifact()],
        "history": [full_message()],
        "metadata": {"a": "b"}
    })
}

fn full_push_config() -> Value {
    json!({
        "tenant": "acme",
        "id": "cfg-1",
        "taskId": "t-1",
        "url": "https://client.example.com/hook",
        "token": "opaque",
        "authentication": {"scheme": "Bearer", "credentials": "secret"}
    })
}

fn full_card() -> Value {
    json!({
        "name": "Agent",
        "description": "Does things",
        "supportedInterfaces": [
            {"url": "https://a.example.com/rpc", "protocolBinding": "JSONRPC", "tenant": "t1", "protocolVersion": "1.0"},
            {"url": "a.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "0.3"}
        ],
        "provider": {"url": "https://example.com", "organization": "Example"},
        "version": "1.2.3",
        "documentationUrl": "https://docs.example.com",
        "capabilities": {
            "streaming": true,
            "pushNotifications": false,
            "extensions": [{"uri": "urn:ext", "description": "d", "required": true, "params": {"p": 1}}],
            "extendedAgentCard": true
        },
        "securitySchemes": {
            "key": {"apiKeySecurityScheme": {"description": "d", "location": "header", "name": "X-Key"}},
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
            "oauth": {"oauth2SecurityScheme": {
                "flows": {"clientCredentials": {"tokenUrl": "https://t", "scopes": {"read": "Read"}}},
                "oauth2MetadataUrl": "https://as/.well-known/oauth-authorization-server"
            }},
            "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://oidc/.well-known/openid-configuration"}},
            "mtls": {"mtlsSecurityScheme": {}}
        },
        "securityRequirements": [
            {"schemes": {"oauth": {"list": ["read"]}, "mtls": {}}},
            {"schemes": {"key": {}}}
        ],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{
            "id": "s1",
            "name": "Skill",
            "description": "A skill",
            "tags": ["t"],
            "examples": ["e"],
            "inputModes": ["text/plain"],
            "outputModes": ["application/json"],
            "securityRequirements": [{"schemes": {"bearer": {}}}]
        }],
        "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2ln", "header": {"kid": "k1"}}],
        "iconUrl": "https://a.example.com/icon.png"
    })
}

// ------------------------------------------------ round trips, every type

#[test]
fn round_trip_part_every_content_kind() {
    let text: Part = round_trip(
        json!({"text": "hi", "metadata": {"a": 1}, "filename": "a.txt", "mediaType": "text/plain"}),
    );
    assert_eq!(text.as_text(), Some("hi"));
    let raw: Part = round_trip(
        json!({"raw": "aGVsbG8=", "filename": "h.bin", "mediaType": "application/octet-stream"}),
    );
    assert_eq!(raw.as_raw(), Some(&b"hello"[..]));
    let url: Part = round_trip(
        json!({"url": "https://x/y.pdf", "filename": "y.pdf", "mediaType": "application/pdf"}),
    );
    assert_eq!(url.as_url(), Some("https://x/y.pdf"));
    let data: Part = round_trip(json!({"data": {"k": "v"}, "mediaType": "application/json"}));
    assert_eq!(data.as_data(), Some(&json!({"k": "v"})));
    for value in [json!([1, "two"]), json!("s"), json!(3.5), json!(false)] {
        round_trip::<Part>(json!({ "data": value }));
    }
}

#[test]
fn round_trip_part_builders() {
    let part = Part::raw(vec![0u8, 1, 2])
        .with_media_type("image/png")
        .with_filename("x.png")
        .with_metadata(meta(json!({"k": 1})));
    writes_as(
        &part,
        json!({"raw": "AAEC", "metadata": {"k": 1}, "filename": "x.png", "mediaType": "image/png"}),
    );
    writes_as(&Part::url("https://x"), json!({"url": "https://x"}));
    writes_as(&Part::data(json!({"a": 1})), json!({"data": {"a": 1}}));
    writes_as(&Part::text("t"), json!({"text": "t"}));
}

#[test]
fn round_trip_role_and_task_state() {
    for role in [Role::Unspecified, Role::User, Role::Agent] {
        let back: Role = parse(json!(role.as_str()));
        assert_eq!(back, role);
        writes_as(&role, json!(role.as_str()));
    }
    for state in TaskState::ALL {
        writes_as(&state, json!(state.as_str()));
        assert_eq!(TaskState::from_proto_name(state.as_str()), Some(state));
        assert_eq!(state.as_str().parse::<TaskState>(), Ok(state));
        assert_eq!(state.to_string(), state.as_str());
    }
    assert_eq!(TaskState::ALL.len(), 9);
    assert_eq!(Role::ALL.len(), 3);
}

#[test]
fn round_trip_message() {
    let message: Message = round_trip(full_message());
    assert_eq!(message.role, Role::Agent);
    assert_eq!(message.reference_task_ids, ["t-0"]);
    round_trip::<Message>(json!({"messageId": "m", "role": "ROLE_USER", "parts": []}));
}

#[test]
fn round_trip_task_status_task_artifact() {
    round_trip::<TaskStatus>(full_status());
    round_trip::<TaskStatus>(json!({"state": "TASK_STATE_WORKING"}));
    round_trip::<Artifact>(full_artifact());
    let task: Task = round_trip(full_task());
    assert_eq!(task.status.state, TaskState::InputRequired);
    round_trip::<Task>(json!({"id": "t", "status": {"state": "TASK_STATE_SUBMITTED"}}));
}

#[test]
fn round_trip_update_events() {
    round_trip::<TaskStatusUpdateEvent>(json!({
        "taskId": "t-1", "contextId": "c-1", "status": full_status(), "metadata": {"x": 1}
    }));
    let event: TaskArtifactUpdateEvent = round_trip(json!({
        "taskId": "t-1", "contextId": "c-1", "artifact": full_artifact(),
        "append": true, "lastChunk": true, "metadata": {"x": 1}
    }));
    assert!(event.append && event.last_chunk);
}

#[test]
fn round_trip_stream_response_every_member() {
    let task: StreamResponse = round_trip(json!({"task": full_task()}));
    assert_eq!(task.task_id(), Some("t-1"));
    assert_eq!(task.context_id(), Some("c-1"));
    assert_eq!(task.state(), Some(TaskState::InputRequired));
    assert_eq!(task.member_name(), "task");

    let message: StreamResponse = round_trip(json!({"message": full_message()}));
    assert_eq!(message.task_id(), Some("t-1"));
    assert_eq!(message.state(), None);

    let status: StreamResponse = round_trip(json!({"statusUpdate": {
        "taskId": "t-2", "contextId": "c-2", "status": {"state": "TASK_STATE_FAILED"}
    }}));
    assert_eq!(status.task_id(), Some("t-2"));
    assert_eq!(status.state(), Some(TaskState::Failed));

    let artifact: StreamResponse = round_trip(json!({"artifactUpdate": {
        "taskId": "t-3", "contextId": "c-3", "artifact": full_artifact(), "lastChunk": true
    }}));
    assert_eq!(artifact.task_id(), Some("t-3"));
    assert_eq!(artifact.state(), None);
}

#[test]
fn round_trip_send_message_response() {
    let task: SendMessageResponse = round_trip(json!({"task": full_task()}));
    let as_stream = StreamResponse::from(task);
    assert!(matches!(as_stream, StreamResponse::Task(_)));
    round_trip::<SendMessageResponse>(json!({"message": full_message()}));
}

#[test]
fn round_trip_push_types() {
    round_trip::<AuthenticationInfo>(json!({"scheme": "Basic", "credentials": "dXNlcjpwYXNz"}));
    round_trip::<AuthenticationInfo>(json!({"scheme": "Bearer"}));
    round_trip::<TaskPushNotificationConfig>(full_push_config());
    round_trip::<TaskPushNotificationConfig>(json!({"url": "https://x"}));
}

#[test]
fn round_trip_send_message_request_and_configuration() {
    round_trip::<SendMessageConfiguration>(json!({
        "acceptedOutputModes": ["text/plain"],
        "taskPushNotificationConfig": full_push_config(),
        "historyLength": 10,
        "returnImmediately": true
    }));
    let req: SendMessageRequest = round_trip(json!({
        "tenant": "acme",
        "message": full_message(),
        "configuration": {"historyLength": 0},
        "metadata": {"skillId": "s1"}
    }));
    assert_eq!(req.configuration.and_then(|c| c.history_length), Some(0));
}

#[test]
fn round_trip_task_requests() {
    round_trip::<GetTaskRequest>(json!({"tenant": "t", "id": "task", "historyLength": 3}));
    round_trip::<CancelTaskRequest>(
        json!({"tenant": "t", "id": "task", "metadata": {"why": "user"}}),
    );
    round_trip::<SubscribeToTaskRequest>(json!({"tenant": "t", "id": "task"}));
    round_trip::<GetExtendedAgentCardRequest>(json!({"tenant": "t"}));
    round_trip::<GetExtendedAgentCardRequest>(json!({}));
}

#[test]
fn round_trip_list_tasks() {
    let req: ListTasksRequest = round_trip(json!({
        "tenant": "t",
        "contextId": "c",
        "status": "TASK_STATE_WORKING",
        "pageSize": 50,
        "pageToken": "cursor",
        "historyLength": 3,
        "statusTimestampAfter": "2025-01-01T00:00:00.000Z",
        "includeArtifacts": true
    }));
    assert_eq!(req.status, Some(TaskState::Working));
    round_trip::<ListTasksRequest>(json!({}));
    round_trip::<ListTasksResponse>(json!({
        "tasks": [full_task()], "nextPageToken": "next", "pageSize": 1, "totalSize": 7
    }));
}

#[test]
fn round_trip_push_config_requests() {
    round_trip::<GetTaskPushNotificationConfigRequest>(
        json!({"tenant": "t", "taskId": "task", "id": "cfg"}),
    );
    round_trip::<DeleteTaskPushNotificationConfigRequest>(
        json!({"tenant": "t", "taskId": "task", "id": "cfg"}),
    );
    round_trip::<ListTaskPushNotificationConfigsRequest>(json!({
        "tenant": "t", "taskId": "task", "pageSize": 10, "pageToken": "p"
    }));
    round_trip::<ListTaskPushNotificationConfigsResponse>(json!({
        "configs": [full_push_config()], "nextPageToken": "n"
    }));
    round_trip::<ListTaskPushNotificationConfigsResponse>(json!({}));
}

#[test]
fn round_trip_agent_card_and_parts() {
    let card: AgentCard = round_trip(full_card());
    assert_eq!(card.capabilities.push_notifications, Some(false));
    assert_eq!(card.security_schemes.len(), 5);
    round_trip::<AgentInterface>(
        json!({"url": "u", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}),
    );
    round_trip::<AgentProvider>(json!({"url": "u", "organization": "o"}));
    round_trip::<AgentCapabilities>(json!({}));
    round_trip::<AgentExtension>(json!({"uri": "urn:x", "required": true}));
    round_trip::<AgentSkill>(json!({"id": "i", "name": "n", "description": "d", "tags": []}));
    round_trip::<AgentCardSignature>(json!({"protected": "p", "signature": "s"}));
    round_trip::<StringList>(json!({"list": ["a"]}));
    round_trip::<StringList>(json!({}));
    round_trip::<SecurityRequirement>(json!({"schemes": {"a": {"list": ["x", "y"]}}}));
}

#[test]
fn round_trip_security_schemes() {
    round_trip::<ApiKeySecurityScheme>(
        json!({"description": "d", "location": "query", "name": "key"}),
    );
    round_trip::<HttpAuthSecurityScheme>(json!({"scheme": "Basic"}));
    round_trip::<OpenIdConnectSecurityScheme>(json!({"openIdConnectUrl": "https://o"}));
    round_trip::<MutualTlsSecurityScheme>(json!({"description": "client certs"}));
    round_trip::<OAuth2SecurityScheme>(json!({
        "description": "d",
        "flows": {"deviceCode": {"deviceAuthorizationUrl": "https://d", "tokenUrl": "https://t", "scopes": {}}}
    }));
    for (key, body) in [
        (
            "apiKeySecurityScheme",
            json!({"location": "cookie", "name": "sid"}),
        ),
        ("httpAuthSecurityScheme", json!({"scheme": "Bearer"})),
        (
            "oauth2SecurityScheme",
            json!({"flows": {"implicit": {"authorizationUrl": "https://a"}}}),
        ),
        (
            "openIdConnectSecurityScheme",
            json!({"openIdConnectUrl": "https://o"}),
        ),
        ("mtlsSecurityScheme", json!({})),
    ] {
        let scheme: SecurityScheme = round_trip(json!({ key: body }));
        assert_eq!(scheme.member_name(), key);
    }
}

#[test]
fn round_trip_oauth_flows() {
    let flows = [
        (
            "authorizationCode",
            json!({
                "authorizationUrl": "https://a", "tokenUrl": "https://t", "refreshUrl": "https://r",
                "scopes": {"read": "Read", "write": "Write"}, "pkceRequired": true
            }),
        ),
        (
            "clientCredentials",
            json!({"tokenUrl": "https://t", "refreshUrl": "https://r", "scopes": {"s": "S"}}),
        ),
        (
            "implicit",
            json!({"authorizationUrl": "https://a", "refreshUrl": "https://r", "scopes": {"s": "S"}}),
        ),
        (
            "password",
            json!({"tokenUrl": "https://t", "refreshUrl": "https://r", "scopes": {"s": "S"}}),
        ),
        (
            "deviceCode",
            json!({
                "deviceAuthorizationUrl": "https://d", "tokenUrl": "https://t", "refreshUrl": "https://r", "scopes": {"s": "S"}
            }),
        ),
    ];
    for (key, body) in flows {
        let flow: OAuthFlows = round_trip(json!({ key: body }));
        assert_eq!(flow.member_name(), key);
    }
    // The deprecated flows have no required fields.
    round_trip::<OAuthFlows>(json!({"implicit": {}}));
    round_trip::<OAuthFlows>(json!({"password": {}}));
}

#[test]
fn required_oauth_scopes_are_always_written() {
    let flow = OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
        token_url: "https://t".into(),
        ..Default::default()
    });
    writes_as(
        &flow,
        json!({"clientCredentials": {"tokenUrl": "https://t", "scopes": {}}}),
    );
}

#[test]
fn round_trip_timestamp_and_metadata_map() {
    round_trip::<Timestamp>(json!("2025-10-28T10:30:00.000Z"));
    round_trip::<BTreeMap<String, Timestamp>>(json!({"a": "1999-12-31T23:59:59.999Z"}));
}

// ------------------------------------------------------------------ oneofs

const STREAM_MEMBERS: &str = "`task`, `message`, `statusUpdate`, `artifactUpdate`";

#[test]
fn oneof_with_no_member_is_an_error() {
    let err = parse_err::<StreamResponse>("{}");
    assert!(
        err.starts_with(&format!("expected one of {STREAM_MEMBERS}")),
        "{err}"
    );
    let err = parse_err::<StreamResponse>(r#"{"kind": "task", "other": 1}"#);
    assert!(
        err.contains(&format!("expected one of {STREAM_MEMBERS}")),
        "{err}"
    );
    let err = parse_err::<SendMessageResponse>("{}");
    assert!(
        err.starts_with("expected one of `task`, `message`"),
        "{err}"
    );
    let err = parse_err::<SecurityScheme>("{}");
    assert!(
        err.starts_with(
            "expected one of `apiKeySecurityScheme`, `httpAuthSecurityScheme`, `oauth2SecurityScheme`, \
             `openIdConnectSecurityScheme`, `mtlsSecurityScheme`"
        ),
        "{err}"
    );
    let err = parse_err::<OAuthFlows>("{}");
    assert!(
        err.starts_with(
            "expected one of `authorizationCode`, `clientCredentials`, `implicit`, `password`, `deviceCode`"
        ),
        "{err}"
    );
    let err = parse_err::<Part>(r#"{"mediaType": "text/plain"}"#);
    assert!(
        err.starts_with("expected one of `text`, `raw`, `url`, `data`"),
        "{err}"
    );
}

#[test]
fn oneof_with_two_members_is_an_error() {
    // Built by hand: `json!` would sort the keys and put `message` first.
    let json = format!(
        r#"{{"task": {}, "message": {}}}"#,
        full_task(),
        full_message()
    );
    let err = parse_err::<StreamResponse>(&json);
    assert!(
        err.starts_with(&format!(
            "only one of {STREAM_MEMBERS} may be set, found `task` and `message`"
        )),
        "{err}"
    );
    let err = parse_err::<SendMessageResponse>(&json);
    assert!(
        err.starts_with("only one of `task`, `message` may be set, found `task` and `message`"),
        "{err}"
    );
    let err = parse_err::<SecurityScheme>(
        r#"{"mtlsSecurityScheme": {}, "httpAuthSecurityScheme": {"scheme": "Bearer"}}"#,
    );
    assert!(
        err.contains("found `mtlsSecurityScheme` and `httpAuthSecurityScheme`"),
        "{err}"
    );
    let err = parse_err::<OAuthFlows>(r#"{"implicit": {}, "password": {}}"#);
    assert!(
        err.starts_with(
            "only one of `authorizationCode`, `clientCredentials`, `implicit`, `password`, `deviceCode` \
             may be set, found `implicit` and `password`"
        ),
        "{err}"
    );
    let err = parse_err::<Part>(r#"{"text": "a", "data": {}}"#);
    assert!(
        err.starts_with(
            "only one of `text`, `raw`, `url`, `data` may be set, found `text` and `data`"
        ),
        "{err}"
    );
    // A member given under both spellings is still two members.
    let err = parse_err::<StreamResponse>(
        r#"{"statusUpdate": {"status": {}}, "status_update": {"status": {}}}"#,
    );
    assert!(err.contains("duplicate field `statusUpdate`"), "{err}");
}

#[test]
fn oneof_null_member_counts_as_unset_and_unknown_keys_are_ignored() {
    let event: StreamResponse = parse(json!({
        "task": null,
        "kind": "status-update",
        "statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}
    }));
    assert!(matches!(event, StreamResponse::StatusUpdate(_)));
    let part: Part = parse(json!({"text": null, "url": "https://x", "kind": "file"}));
    assert_eq!(part.as_url(), Some("https://x"));
}

#[test]
fn oneof_member_errors_propagate() {
    let err = parse_err::<StreamResponse>(r#"{"task": {"id": "t"}}"#);
    assert!(err.contains("missing field `status`"), "{err}");
    let err = parse_err::<OAuth2SecurityScheme>(r#"{"description": "no flows"}"#);
    assert!(err.contains("missing field `flows`"), "{err}");
}

// -------------------------------------------------------------- snake_case

#[test]
fn snake_case_input_is_accepted() {
    let message: Message = parse(json!({
        "message_id": "m", "context_id": "c", "task_id": "t", "role": "ROLE_USER",
        "parts": [{"text": "x", "media_type": "text/plain"}], "reference_task_ids": ["r"]
    }));
    assert_eq!(message.message_id, "m");
    assert_eq!(message.context_id.as_deref(), Some("c"));
    assert_eq!(message.task_id.as_deref(), Some("t"));
    assert_eq!(message.reference_task_ids, ["r"]);
    assert_eq!(message.parts[0].media_type.as_deref(), Some("text/plain"));

    let event: StreamResponse = parse(json!({"artifact_update": {
        "task_id": "t", "context_id": "c", "last_chunk": true,
        "artifact": {"artifact_id": "a", "parts": [{"text": "x"}]}
    }}));
    let StreamResponse::ArtifactUpdate(update) = event else {
        panic!("expected an artifact update");
    };
    assert!(update.last_chunk);
    assert_eq!(update.artifact.artifact_id, "a");

    let req: ListTasksRequest = parse(json!({
        "context_id": "c", "page_size": 5, "page_token": "p", "history_length": 1,
        "status_timestamp_after": "2025-01-01T00:00:00Z", "include_artifacts": false
    }));
    assert_eq!(req.page_size, Some(5));
    assert_eq!(req.include_artifacts, Some(false));

    let card: AgentCard = parse(json!({
        "name": "n", "supported_interfaces": [{"url": "u", "protocol_binding": "GRPC", "protocol_version": "1.0"}],
        "documentation_url": "d", "icon_url": "i",
        "capabilities": {"push_notifications": true, "extended_agent_card": false},
        "security_schemes": {"o": {"oauth2_security_scheme": {
            "oauth2_metadata_url": "m",
            "flows": {"authorization_code": {"authorization_url": "a", "token_url": "t", "pkce_required": true}}
        }}},
        "security_requirements": [{"schemes": {"o": {}}}],
        "default_input_modes": ["text/plain"], "default_output_modes": ["text/plain"],
        "skills": [{"id": "s", "input_modes": ["a"], "output_modes": ["b"], "security_requirements": []}]
    }));
    assert_eq!(
        card.supported_interfaces[0].protocol_binding,
        AgentInterface::GRPC
    );
    assert_eq!(card.capabilities.push_notifications, Some(true));
    assert_eq!(card.default_output_modes, ["text/plain"]);
    let SecurityScheme::Oauth2SecurityScheme(oauth) = &card.security_schemes["o"] else {
        panic!("expected oauth2");
    };
    assert_eq!(oauth.oauth2_metadata_url.as_deref(), Some("m"));
    assert!(matches!(&oauth.flows, OAuthFlows::AuthorizationCode(f) if f.pkce_required));

    let config: SendMessageConfiguration = parse(json!({
        "accepted_output_modes": ["x"], "return_immediately": true,
        "task_push_notification_config": {"url": "u", "task_id": "t"}
    }));
    assert!(config.return_immediately);
    assert_eq!(
        config
            .task_push_notification_config
            .and_then(|c| c.task_id)
            .as_deref(),
        Some("t")
    );

    let resp: ListTasksResponse =
        parse(json!({"next_page_token": "n", "page_size": 2, "total_size": 3}));
    assert_eq!(
        (
            resp.next_page_token.as_str(),
            resp.page_size,
            resp.total_size
        ),
        ("n", 2, 3)
    );
}

// ------------------------------------------------------------------- enums

#[test]
fn integer_enum_input_is_accepted() {
    let status: TaskStatus = parse(json!({"state": 2}));
    assert_eq!(status.state, TaskState::Working);
    let message: Message = parse(json!({"messageId": "m", "role": 1, "parts": []}));
    assert_eq!(message.role, Role::User);
    for state in TaskState::ALL {
        let parsed: TaskState = parse(json!(state.as_i32()));
        assert_eq!(parsed, state);
        assert_eq!(TaskState::from_i32(state.as_i32()), Some(state));
        assert_eq!(state.as_i32().to_string().parse::<TaskState>(), Ok(state));
    }
    // Written back by name, never by number.
    writes_as(&status, json!({"state": "TASK_STATE_WORKING"}));
}

#[test]
fn invalid_enum_values_list_the_valid_ones() {
    let err = parse_err::<TaskState>(r#""TASK_STATE_RUNNING""#);
    assert!(
        err.starts_with(
            "unknown variant `TASK_STATE_RUNNING`, expected one of `TASK_STATE_UNSPECIFIED`, \
             `TASK_STATE_SUBMITTED`, `TASK_STATE_WORKING`, `TASK_STATE_COMPLETED`, `TASK_STATE_FAILED`, \
             `TASK_STATE_CANCELED`, `TASK_STATE_INPUT_REQUIRED`, `TASK_STATE_REJECTED`, \
             `TASK_STATE_AUTH_REQUIRED`"
        ),
        "{err}"
    );
    // v0.3 spellings are not v1.0.
    for bad in [
        r#""working""#,
        r#""TASK_STATE_CANCELLED""#,
        r#""task_state_working""#,
    ] {
        let err = parse_err::<TaskState>(bad);
        assert!(
            err.contains("expected one of `TASK_STATE_UNSPECIFIED`"),
            "{err}"
        );
    }
    let err = parse_err::<Role>(r#""user""#);
    assert!(
        err.starts_with(
            "unknown variant `user`, expected one of `ROLE_UNSPECIFIED`, `ROLE_USER`, `ROLE_AGENT`"
        ),
        "{err}"
    );
    let err = parse_err::<TaskState>("9");
    assert!(
        err.contains("`TASK_STATE_AUTH_REQUIRED` or its number"),
        "{err}"
    );
    let err = parse_err::<Role>("-1");
    assert!(err.contains("`ROLE_AGENT` or its number"), "{err}");
    let err = parse_err::<TaskState>("true");
    assert!(
        err.contains("expected one of `TASK_STATE_UNSPECIFIED`"),
        "{err}"
    );

    let err = "TASK_STATE_RUNNING".parse::<TaskState>().unwrap_err();
    assert_eq!(err.value(), "TASK_STATE_RUNNING");
    assert_eq!(err.valid_values().len(), 9);
    assert!(err.to_string().starts_with(
        "unknown TaskState `TASK_STATE_RUNNING`, expected one of `TASK_STATE_UNSPECIFIED`"
    ));
    assert!("ROLE_ROBOT".parse::<Role>().is_err());
}

#[test]
fn task_state_classification() {
    use TaskState::*;
    let terminal: Vec<_> = TaskState::ALL
        .into_iter()
        .filter(|s| s.is_terminal())
        .collect();
    assert_eq!(terminal, [Completed, Failed, Canceled, Rejected]);
    let interrupted: Vec<_> = TaskState::ALL
        .into_iter()
        .filter(|s| s.is_interrupted())
        .collect();
    assert_eq!(interrupted, [InputRequired, AuthRequired]);
    assert_eq!(TaskState::default(), Unspecified);
    assert_eq!(Role::default(), Role::Unspecified);
}

#[test]
fn unspecified_list_filter_means_no_filter() {
    let req: ListTasksRequest = parse(json!({"status": "TASK_STATE_UNSPECIFIED"}));
    assert_eq!(req.status, None);
    let req: ListTasksRequest = parse(json!({"status": 0}));
    assert_eq!(req.status, None);
}

// ------------------------------------------------------------------- int32

#[test]
fn int32_accepts_numeric_strings() {
    let req: GetTaskRequest = parse(json!({"id": "t", "historyLength": "5"}));
    assert_eq!(req.history_length, Some(5));
    let req: ListTasksRequest = parse(json!({"pageSize": "-3", "historyLength": 1e1}));
    assert_eq!((req.page_size, req.history_length), (Some(-3), Some(10)));
    let resp: ListTasksResponse = parse(json!({"pageSize": "50", "totalSize": "2147483647"}));
    assert_eq!((resp.page_size, resp.total_size), (50, i32::MAX));
    let config: SendMessageConfiguration = parse(json!({"historyLength": "0"}));
    assert_eq!(config.history_length, Some(0));
    let req: ListTaskPushNotificationConfigsRequest =
        parse(json!({"taskId": "t", "pageSize": "7"}));
    assert_eq!(req.page_size, Some(7));
    // Written back as numbers.
    writes_as(
        &GetTaskRequest {
            id: "t".into(),
            history_length: Some(5),
            ..Default::default()
        },
        json!({"id": "t", "historyLength": 5}),
    );
}

#[test]
fn int32_rejects_garbage_and_out_of_range() {
    for bad in [
        r#"{"historyLength": "five"}"#,
        r#"{"historyLength": ""}"#,
        r#"{"historyLength": 1.5}"#,
        r#"{"historyLength": "1.5"}"#,
        r#"{"historyLength": 2147483648}"#,
        r#"{"historyLength": "-2147483649"}"#,
        r#"{"historyLength": true}"#,
        r#"{"historyLength": "NaN"}"#,
        r#"{"historyLength": "inf"}"#,
    ] {
        let err = parse_err::<GetTaskRequest>(bad);
        assert!(err.contains("expected a 32-bit integer"), "{bad}: {err}");
    }
}

#[test]
fn int32_null_is_unset() {
    let req: GetTaskRequest = parse(json!({"id": "t", "historyLength": null}));
    assert_eq!(req.history_length, None);
    let resp: ListTasksResponse = parse(json!({"pageSize": null}));
    assert_eq!(resp.page_size, 0);
}

// ------------------------------------------------------------------- parts

#[test]
fn data_null_is_a_present_value() {
    let part: Part = parse(json!({"data": null}));
    assert_eq!(part.content, PartContent::Data(Value::Null));
    assert_eq!(part.as_data(), Some(&Value::Null));
    writes_as(&part, json!({"data": null}));
    let message: Message = parse(
        json!({"messageId": "m", "parts": [{"data": null, "mediaType": "application/json"}]}),
    );
    assert_eq!(message.parts[0].as_data(), Some(&Value::Null));
}

#[test]
fn base64_any_flavour_in_standard_padded_out() {
    // 0xfb 0xff encodes to "+/8=" (standard) or "-_8=" (URL-safe).
    let bytes = [0xfb, 0xff];
    for input in ["+/8=", "+/8", "-_8=", "-_8"] {
        let part: Part = parse(json!({ "raw": input }));
        assert_eq!(part.as_raw(), Some(&bytes[..]), "{input}");
        assert_eq!(
            serde_json::to_value(&part).expect("serializes"),
            json!({"raw": "+/8="})
        );
    }
    let part: Part = parse(json!({"raw": ""}));
    assert_eq!(part.as_raw(), Some(&[][..]));
    for bad in ["not base64!", "iVBORw0KGgo...", "+/8=x"] {
        let err = parse_err::<Part>(&json!({ "raw": bad }).to_string());
        assert!(err.contains("invalid base64 in `raw`"), "{bad}: {err}");
    }
}

#[test]
fn part_common_fields_empty_strings_are_unset() {
    let part: Part = parse(json!({"text": "", "filename": "", "mediaType": ""}));
    assert_eq!(part.as_text(), Some(""));
    assert_eq!((part.filename, part.media_type), (None, None));
}

#[test]
fn duplicate_part_fields_are_errors() {
    let err = parse_err::<Part>(r#"{"text": "a", "text": "b"}"#);
    assert!(err.contains("duplicate field `text`"), "{err}");
    let err = parse_err::<Part>(r#"{"text": "a", "mediaType": "x", "media_type": "y"}"#);
    assert!(err.contains("duplicate field `mediaType`"), "{err}");
}

#[test]
fn non_object_inputs_are_errors_not_panics() {
    for input in ["null", "[]", "1", r#""x""#, "true"] {
        assert!(serde_json::from_str::<Part>(input).is_err(), "{input}");
        assert!(
            serde_json::from_str::<StreamResponse>(input).is_err(),
            "{input}"
        );
        assert!(serde_json::from_str::<Task>(input).is_err(), "{input}");
    }
    // Derived structs also accept a JSON array (serde's positional form), so
    // `[]` is an all-default card; scalars are still rejected.
    for input in ["null", "1", r#""x""#, "true"] {
        assert!(serde_json::from_str::<AgentCard>(input).is_err(), "{input}");
    }
}

// -------------------------------------------------------------- timestamps

#[test]
fn timestamps_are_normalised_to_utc_milliseconds() {
    for (input, expected) in [
        ("2025-10-28T12:30:00+02:00", "2025-10-28T10:30:00.000Z"),
        ("2025-10-28T05:00:00-05:30", "2025-10-28T10:30:00.000Z"),
        ("2025-10-28T10:30:00Z", "2025-10-28T10:30:00.000Z"),
        ("2025-10-28T10:30:00.5Z", "2025-10-28T10:30:00.500Z"),
        ("2025-10-28T10:30:00.123456789Z", "2025-10-28T10:30:00.123Z"),
        (
            "2025-10-28T10:30:00.999999+00:00",
            "2025-10-28T10:30:00.999Z",
        ),
        ("2025-12-31T23:30:00-01:00", "2026-01-01T00:30:00.000Z"),
    ] {
        let status: TaskStatus = parse(json!({"state": "TASK_STATE_WORKING", "timestamp": input}));
        let out = serde_json::to_value(&status).expect("serializes");
        assert_eq!(out["timestamp"], expected, "{input}");
        assert_eq!(ts(input).to_string(), expected);
        // The typed value is already at wire precision, so it survives a round trip.
        assert_eq!(ts(expected), ts(input));
    }
}

#[test]
fn timestamp_api() {
    let dt = Utc
        .with_ymd_and_hms(2025, 10, 28, 10, 30, 0)
        .single()
        .expect("valid date");
    let stamp = Timestamp::from(dt + chrono::Duration::microseconds(1_500));
    assert_eq!(stamp.to_string(), "2025-10-28T10:30:00.001Z");
    assert_eq!(
        chrono::DateTime::<Utc>::from(stamp),
        dt + chrono::Duration::milliseconds(1)
    );
    assert_eq!(stamp.as_datetime(), &stamp.0);
    assert!(ts("2025-01-01T00:00:00Z") < ts("2025-01-01T00:00:00.001Z"));

    let now = Timestamp::now();
    assert_eq!(now.0.timestamp_subsec_nanos() % 1_000_000, 0);
    assert_eq!(now.to_string().parse::<Timestamp>(), Ok(now));

    let err = "yesterday".parse::<Timestamp>().unwrap_err();
    assert_eq!(err.value(), "yesterday");
    assert!(err.to_string().contains("`yesterday`"), "{err}");
    for bad in [
        r#""2025-10-28""#,
        r#""2025-10-28T10:30:00""#,
        "1730111400",
        r#""""#,
    ] {
        assert!(serde_json::from_str::<Timestamp>(bad).is_err(), "{bad}");
    }
    let err = parse_err::<TaskStatus>(r#"{"state": 1, "timestamp": "soon"}"#);
    assert!(err.contains("`soon`"), "{err}");
}

// ---------------------------------------------------------------- presence

#[test]
fn explicit_false_and_zero_survive() {
    round_trip::<AgentCapabilities>(
        json!({"streaming": false, "pushNotifications": false, "extendedAgentCard": false}),
    );
    round_trip::<GetTaskRequest>(json!({"id": "t", "historyLength": 0}));
    round_trip::<SendMessageConfiguration>(json!({"historyLength": 0}));
    round_trip::<ListTasksRequest>(
        json!({"pageSize": 0, "historyLength": 0, "includeArtifacts": false}),
    );
    // `optional string` keeps an explicit "" (needed for signature canonicalization).
    let card: AgentCard = parse(json!({"documentationUrl": "", "iconUrl": ""}));
    assert_eq!(card.documentation_url.as_deref(), Some(""));
    let out = serde_json::to_value(&card).expect("serializes");
    assert_eq!(
        (&out["documentationUrl"], &out["iconUrl"]),
        (&json!(""), &json!(""))
    );
}

#[test]
fn implicit_defaults_are_omitted() {
    let artifact_update = TaskArtifactUpdateEvent {
        task_id: "t".into(),
        context_id: "c".into(),
        artifact: Artifact {
            artifact_id: "a".into(),
            parts: vec![Part::text("x")],
            ..Default::default()
        },
        append: false,
        last_chunk: false,
        metadata: None,
    };
    writes_as(
        &artifact_update,
        json!({"taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}),
    );
    writes_as(&SendMessageConfiguration::default(), json!({}));
    writes_as(&AgentExtension::default(), json!({}));
    writes_as(
        &ListTaskPushNotificationConfigsResponse::default(),
        json!({}),
    );
    // Implicit-presence string and int fields: "" and 0 read as unset.
    let config: TaskPushNotificationConfig =
        parse(json!({"url": "u", "tenant": "", "id": "", "taskId": "", "token": ""}));
    assert_eq!(
        config,
        TaskPushNotificationConfig {
            url: "u".into(),
            ..Default::default()
        }
    );
    let req: ListTaskPushNotificationConfigsRequest =
        parse(json!({"taskId": "t", "pageSize": 0, "pageToken": ""}));
    assert_eq!((req.page_size, req.page_token), (None, None));
    let message: Message =
        parse(json!({"messageId": "m", "contextId": "", "taskId": "", "parts": []}));
    assert_eq!((message.context_id, message.task_id), (None, None));
    let task: Task = parse(json!({"id": "t", "contextId": "", "status": {}}));
    assert_eq!(
        serde_json::to_value(&task).expect("serializes"),
        json!({"id": "t", "status": {"state": "TASK_STATE_UNSPECIFIED"}})
    );
}

#[test]
fn required_fields_are_always_written() {
    writes_as(
        &Message {
            parts: vec![],
            ..Default::default()
        },
        json!({"messageId": "", "role": "ROLE_UNSPECIFIED", "parts": []}),
    );
    writes_as(&Artifact::default(), json!({"artifactId": "", "parts": []}));
    writes_as(
        &AgentCard::default(),
        json!({
            "name": "", "description": "", "supportedInterfaces": [], "version": "",
            "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []
        }),
    );
    writes_as(
        &AgentSkill::default(),
        json!({"id": "", "name": "", "description": "", "tags": []}),
    );
    writes_as(
        &TaskStatusUpdateEvent::default(),
        json!({"taskId": "", "contextId": "", "status": {"state": "TASK_STATE_UNSPECIFIED"}}),
    );
}

#[test]
fn list_tasks_response_always_has_four_fields() {
    writes_as(
        &ListTasksResponse::default(),
        json!({"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0}),
    );
    let resp: ListTasksResponse = parse(json!({}));
    assert_eq!(resp, ListTasksResponse::default());
}

#[test]
fn missing_required_messages_are_errors() {
    let err = parse_err::<Message>(r#"{"messageId": "m", "role": "ROLE_USER"}"#);
    assert!(err.contains("missing field `parts`"), "{err}");
    let err = parse_err::<Artifact>(r#"{"artifactId": "a"}"#);
    assert!(err.contains("missing field `parts`"), "{err}");
    let err = parse_err::<SendMessageRequest>(r#"{"configuration": {}}"#);
    assert!(err.contains("missing field `message`"), "{err}");
    let err = parse_err::<Task>(r#"{"id": "t"}"#);
    assert!(err.contains("missing field `status`"), "{err}");
    let err = parse_err::<TaskArtifactUpdateEvent>(r#"{"taskId": "t"}"#);
    assert!(err.contains("missing field `artifact`"), "{err}");
}

#[test]
fn unknown_fields_are_ignored() {
    let task: Task = parse(json!({
        "id": "t",
        "kind": "task",
        "status": {"state": "TASK_STATE_WORKING", "future": [1]},
        "artifacts": [{"artifactId": "a", "index": 3, "parts": [{"text": "x", "kind": "text"}]}],
        "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [], "nested": {"deep": true}}]
    }));
    assert_eq!(task.artifacts[0].parts[0].as_text(), Some("x"));
    let card: AgentCard = parse(json!({
        "name": "n", "supportsExtendedAgentCard": true, "capabilities": {"newThing": 1},
        "securitySchemes": {"x": {"mtlsSecurityScheme": {"extra": 1}, "type": "mutualTLS"}}
    }));
    assert!(matches!(
        card.security_schemes["x"],
        SecurityScheme::MtlsSecurityScheme(_)
    ));
    let resp: ListTasksResponse = parse(json!({"tasks": [], "cursor": "c", "nextCursor": "n"}));
    assert_eq!(resp.next_page_token, "");
}

// ---------------------------------------------------------- constructors

#[test]
fn constructors_and_accessors() {
    let message = Message::user_text("hello ")
        .with_context_id("c")
        .with_task_id("t")
        .with_metadata(meta(json!({"skillId": "s"})));
    assert_eq!(message.role, Role::User);
    assert!(uuid::Uuid::parse_str(&message.message_id).is_ok());
    assert_eq!(message.context_id.as_deref(), Some("c"));
    assert_eq!(message.task_id.as_deref(), Some("t"));
    let other = Message::user_text("x");
    assert_ne!(message.message_id, other.message_id);

    let reply = Message::agent(vec![Part::text("a"), Part::data(json!(1)), Part::text("b")]);
    assert_eq!(reply.role, Role::Agent);
    assert_eq!(reply.text(), "ab");
    assert_eq!(Message::agent_text("z").text(), "z");
    assert_eq!(Message::user(vec![]).role, Role::User);

    let artifact = Artifact::new(vec![Part::text("x")])
        .with_name("n")
        .with_description("d");
    assert!(uuid::Uuid::parse_str(&artifact.artifact_id).is_ok());
    assert_eq!(
        (artifact.name.as_deref(), artifact.description.as_deref()),
        (Some("n"), Some("d"))
    );

    let status = TaskStatus::new(TaskState::Working).with_message(Message::agent_text("busy"));
    assert!(status.timestamp.is_some());
    assert_eq!(status.message.map(|m| m.text()).as_deref(), Some("busy"));

    let interface = AgentInterface::new("https://a", AgentInterface::JSONRPC).with_tenant("t");
    assert_eq!(interface.protocol_version, PROTOCOL_VERSION);
    assert_eq!(PROTOCOL_VERSION, "1.0");
    writes_as(
        &interface,
        json!({"url": "https://a", "protocolBinding": "JSONRPC", "tenant": "t", "protocolVersion": "1.0"}),
    );
    assert_eq!(AgentInterface::HTTP_JSON, "HTTP+JSON");

    let event = StreamResponse::from(TaskStatusUpdateEvent {
        task_id: "t".into(),
        context_id: "c".into(),
        status: TaskStatus::new(TaskState::Completed),
        metadata: None,
    });
    assert_eq!(event.member_name(), "statusUpdate");
    assert_eq!(
        StreamResponse::MEMBERS,
        ["task", "message", "statusUpdate", "artifactUpdate"]
    );
}

#[test]
fn struct_literals_build_wire_values() {
    let card = AgentCard {
        name: "Hello".into(),
        description: "Greets".into(),
        supported_interfaces: vec![AgentInterface::new(
            "https://h/rpc",
            AgentInterface::JSONRPC,
        )],
        version: "0.1.0".into(),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            ..Default::default()
        },
        security_schemes: BTreeMap::from([(
            "bearer".to_owned(),
            SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                scheme: "Bearer".into(),
                ..Default::default()
            }),
        )]),
        security_requirements: vec![SecurityRequirement {
            schemes: BTreeMap::from([("bearer".to_owned(), StringList::default())]),
        }],
        default_input_modes: vec!["text/plain".into()],
        default_output_modes: vec!["text/plain".into()],
        skills: vec![AgentSkill {
            id: "greet".into(),
            name: "Greet".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    writes_as(
        &card,
        json!({
            "name": "Hello", "description": "Greets",
            "supportedInterfaces": [{"url": "https://h/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "version": "0.1.0",
            "capabilities": {"streaming": true},
            "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "securityRequirements": [{"schemes": {"bearer": {}}}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "greet", "name": "Greet", "description": "", "tags": []}]
        }),
    );
}

// ---------------------------------------------------------------- proptest

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-zA-Z0-9_+/=.:-]{0,12}".prop_map(Value::from),
        prop::sample::select(vec![
            "task",
            "message",
            "statusUpdate",
            "artifactUpdate",
            "text",
            "raw",
            "url",
            "data",
            "TASK_STATE_WORKING",
            "ROLE_USER",
            "2025-10-28T10:30:00Z",
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let keys = prop::sample::select(vec![
            "task",
            "message",
            "statusUpdate",
            "artifactUpdate",
            "id",
            "contextId",
            "status",
            "state",
            "parts",
            "text",
            "raw",
            "url",
            "data",
            "messageId",
            "role",
            "artifact",
            "timestamp",
            "historyLength",
            "pageSize",
            "metadata",
            "flows",
            "implicit",
            "scopes",
        ]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(keys, inner, 0..5).prop_map(|m| {
                Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

proptest! {
    #[test]
    fn raw_bytes_round_trip(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let part = Part::raw(bytes.clone());
        let json = serde_json::to_value(&part).expect("serializes");
        let back: Part = serde_json::from_value(json).expect("parses");
        prop_assert_eq!(back.as_raw(), Some(&bytes[..]));
    }

    #[test]
    fn int32_numbers_and_strings_agree(n in any::<i32>()) {
        let a: GetTaskRequest = serde_json::from_value(json!({"historyLength": n})).expect("number");
        let b: GetTaskRequest = serde_json::from_value(json!({"historyLength": n.to_string()})).expect("string");
        prop_assert_eq!(a.history_length, Some(n));
        prop_assert_eq!(b.history_length, Some(n));
    }

    #[test]
    fn timestamps_round_trip(millis in -62_135_596_800_000i64..253_402_300_799_999i64) {
        let dt = chrono::DateTime::<Utc>::from_timestamp_millis(millis).expect("in range");
        let stamp = Timestamp::from(dt);
        let text = serde_json::to_string(&stamp).expect("serializes");
        prop_assert_eq!(text.len(), 26, "{}", text);
        let back: Timestamp = serde_json::from_str(&text).expect("parses");
        prop_assert_eq!(back, stamp);
    }

    #[test]
    fn arbitrary_json_never_panics(value in arb_json()) {
        let text = value.to_string();
        let _ = serde_json::from_str::<StreamResponse>(&text);
        let _ = serde_json::from_str::<SendMessageResponse>(&text);
        let _ = serde_json::from_str::<SendMessageRequest>(&text);
        let _ = serde_json::from_str::<Task>(&text);
        let _ = serde_json::from_str::<Part>(&text);
        let _ = serde_json::from_str::<AgentCard>(&text);
        let _ = serde_json::from_str::<OAuthFlows>(&text);
        let _ = serde_json::from_str::<ListTasksRequest>(&text);
        // Whatever parses must write and re-read to the same typed value.
        if let Ok(event) = serde_json::from_str::<StreamResponse>(&text) {
            let again: StreamResponse =
                serde_json::from_value(serde_json::to_value(&event).expect("serializes")).expect("re-reads");
            prop_assert_eq!(again, event);
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,64}") {
        let _ = serde_json::from_str::<StreamResponse>(&text);
        let _ = serde_json::from_str::<Part>(&text);
        let _ = text.parse::<Timestamp>();
        let _ = text.parse::<TaskState>();
        let _ = serde_json::from_str::<Part>(&json!({ "raw": text }).to_string());
        let _ = serde_json::from_str::<Timestamp>(&json!(text).to_string());
    }
}
