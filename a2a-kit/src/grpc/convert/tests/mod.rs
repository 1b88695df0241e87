//! Rich fixtures of every converted type, and their round trips: kit → pb → kit, and
//! kit → pb → bytes → pb → kit.

use std::fmt::Debug;

use serde_json::json;

use super::{FromProto, ToProto};
use crate::protocol::*;

mod errors;
mod oracle;
mod props;

// ----- Fixtures -----

/// Metadata with every JSON kind, nested, and unicode keys and values.
pub(super) fn meta() -> Metadata {
    let value = json!({
        "s": "héllo wörld 🌍 — ünïcødé",
        "n": 3,
        "neg": -7,
        "f": 2.5,
        "tiny": -0.000_125,
        "huge": 1e300,
        "b": true,
        "off": false,
        "nil": null,
        "arr": [1, "x", {"deep": [false, null, -1.5]}, []],
        "obj": {"k": {"k2": "v", "日本": 9_007_199_254_740_992_i64}},
        "empty": {},
        "": "empty key"
    });
    match value {
        serde_json::Value::Object(map) => Metadata::from(map),
        _ => Metadata::new(),
    }
}

fn small_meta(tag: &str) -> Metadata {
    [("tag".to_owned(), json!(tag))].into_iter().collect()
}

pub(super) fn ts(millis: i64) -> Timestamp {
    Timestamp(chrono::DateTime::from_timestamp_millis(millis).unwrap_or_default())
}

/// Every kind of part, with and without the optional fields.
pub(super) fn parts() -> Vec<Part> {
    vec![
        Part::text("plain"),
        Part::text("ünïcødé ✓ 日本語 \u{0}\n\"quoted\"")
            .with_media_type("text/plain; charset=utf-8")
            .with_filename("notes 📝.txt")
            .with_metadata(meta()),
        Part::text(""),
        Part::raw(vec![0u8, 1, 2, 0xfe, 0xff, b'\n'])
            .with_media_type("application/octet-stream")
            .with_filename("blob.bin"),
        Part::raw(Vec::new()),
        Part::url("https://example.com/ファイル.pdf?x=1&y=2").with_media_type("application/pdf"),
        Part::data(json!({"answer": 42, "list": [1.5, "two", null], "nested": {"ok": true}}))
            .with_metadata(small_meta("data")),
        Part::data(json!(null)),
        Part::data(json!([1, 2, 3])),
        Part::data(json!("just a string")),
        Part::data(json!(-12.75)),
    ]
}

pub(super) fn message(role: Role) -> Message {
    Message {
        message_id: "msg-1 ✉".into(),
        context_id: Some("ctx-1".into()),
        task_id: Some("task-1".into()),
        role,
        parts: parts(),
        metadata: Some(meta()),
        extensions: vec!["https://ext.example/a".into(), "urn:ext:b".into()],
        reference_task_ids: vec!["task-0".into(), "tâche-ß".into()],
    }
}

fn minimal_message(id: &str, role: Role) -> Message {
    Message {
        message_id: id.into(),
        role,
        parts: vec![Part::text(format!("text of {id}"))],
        ..Message::default()
    }
}

pub(super) fn artifact() -> Artifact {
    Artifact {
        artifact_id: "art-1".into(),
        name: Some("Résumé".into()),
        description: Some("the result, in full".into()),
        parts: parts(),
        metadata: Some(small_meta("artifact")),
        extensions: vec!["urn:ext:b".into()],
    }
}

pub(super) fn status(state: TaskState) -> TaskStatus {
    TaskStatus {
        state,
        message: Some(minimal_message("status-msg", Role::Agent)),
        timestamp: Some(ts(1_761_647_400_123)),
    }
}

pub(super) fn task() -> Task {
    Task {
        id: "task-1".into(),
        context_id: "ctx-1".into(),
        status: status(TaskState::InputRequired),
        artifacts: vec![
            artifact(),
            Artifact {
                artifact_id: "art-2".into(),
                parts: vec![Part::text("second")],
                ..Artifact::default()
            },
        ],
        history: vec![message(Role::User), minimal_message("m-2", Role::Agent)],
        metadata: Some(meta()),
    }
}

/// A task with only what the spec requires.
pub(super) fn bare_task() -> Task {
    Task {
        id: "task-2".into(),
        context_id: String::new(),
        status: TaskStatus {
            state: TaskState::Submitted,
            message: None,
            timestamp: None,
        },
        artifacts: vec![],
        history: vec![],
        metadata: None,
    }
}

pub(super) fn status_update() -> TaskStatusUpdateEvent {
    TaskStatusUpdateEvent {
        task_id: "task-1".into(),
        context_id: "ctx-1".into(),
        status: status(TaskState::Working),
        metadata: Some(small_meta("status")),
    }
}

pub(super) fn artifact_update() -> TaskArtifactUpdateEvent {
    TaskArtifactUpdateEvent {
        task_id: "task-1".into(),
        context_id: "ctx-1".into(),
        artifact: artifact(),
        append: true,
        last_chunk: true,
        metadata: Some(small_meta("chunk")),
    }
}

pub(super) fn push_config() -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: Some("tenant-a".into()),
        id: Some("cfg-1".into()),
        task_id: Some("task-1".into()),
        url: "https://hooks.example.com/a2a?k=v".into(),
        token: Some("opaque-token".into()),
        authentication: Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: Some("s3cr3t".into()),
        }),
        ..Default::default()
    }
}

fn scopes(pairs: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Every security scheme and every OAuth flow, by name.
pub(super) fn security_schemes() -> std::collections::BTreeMap<String, SecurityScheme> {
    let oauth = |flows: OAuthFlows| {
        SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme {
            description: Some("OAuth 2.0".into()),
            flows,
            oauth2_metadata_url: Some(
                "https://auth.example.com/.well-known/oauth-authorization-server".into(),
            ),
        })
    };
    let read_write = scopes(&[("read", "Read things"), ("write", "Write things — all")]);
    [
        (
            "apiKey",
            SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
                description: Some("a key".into()),
                location: "header".into(),
                name: "X-API-Key".into(),
            }),
        ),
        (
            "bearer",
            SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                description: Some("JWT bearer".into()),
                scheme: "Bearer".into(),
                bearer_format: Some("JWT".into()),
            }),
        ),
        (
            "basic",
            SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                description: None,
                scheme: "Basic".into(),
                bearer_format: None,
            }),
        ),
        (
            "oauthCode",
            oauth(OAuthFlows::AuthorizationCode(AuthorizationCodeOAuthFlow {
                authorization_url: "https://auth.example.com/authorize".into(),
                token_url: "https://auth.example.com/token".into(),
                refresh_url: Some("https://auth.example.com/refresh".into()),
                scopes: read_write.clone(),
                pkce_required: true,
            })),
        ),
        (
            "oauthClient",
            oauth(OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
                token_url: "https://auth.example.com/token".into(),
                refresh_url: None,
                scopes: scopes(&[("agent", "Call the agent")]),
            })),
        ),
        (
            "oauthImplicit",
            oauth(OAuthFlows::Implicit(ImplicitOAuthFlow {
                authorization_url: Some("https://auth.example.com/authorize".into()),
                refresh_url: Some("https://auth.example.com/refresh".into()),
                scopes: read_write.clone(),
            })),
        ),
        (
            "oauthPassword",
            oauth(OAuthFlows::Password(PasswordOAuthFlow {
                token_url: Some("https://auth.example.com/token".into()),
                refresh_url: Some("https://auth.example.com/refresh".into()),
                scopes: read_write,
            })),
        ),
        (
            "oauthDevice",
            oauth(OAuthFlows::DeviceCode(DeviceCodeOAuthFlow {
                device_authorization_url: "https://auth.example.com/device".into(),
                token_url: "https://auth.example.com/token".into(),
                refresh_url: Some("https://auth.example.com/refresh".into()),
                scopes: scopes(&[("tv", "Watch")]),
            })),
        ),
        (
            "oidc",
            SecurityScheme::OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme {
                description: Some("OpenID Connect".into()),
                open_id_connect_url: "https://auth.example.com/.well-known/openid-configuration"
                    .into(),
            }),
        ),
        (
            "mtls",
            SecurityScheme::MtlsSecurityScheme(MutualTlsSecurityScheme {
                description: Some("client certificate".into()),
            }),
        ),
        (
            "mtlsBare",
            SecurityScheme::MtlsSecurityScheme(MutualTlsSecurityScheme { description: None }),
        ),
    ]
    .into_iter()
    .map(|(name, scheme)| (name.to_owned(), scheme))
    .collect()
}

fn requirement(pairs: &[(&str, &[&str])]) -> SecurityRequirement {
    SecurityRequirement {
        schemes: pairs
            .iter()
            .map(|(name, list)| {
                let list = list.iter().map(|s| (*s).to_owned()).collect();
                ((*name).to_owned(), StringList { list })
            })
            .collect(),
    }
}

pub(super) fn card() -> AgentCard {
    AgentCard {
        name: "Wéather agent ☀".into(),
        description: "Forecasts, in every language".into(),
        supported_interfaces: vec![
            AgentInterface::new("https://agent.example.com/a2a", AgentInterface::JSONRPC),
            AgentInterface::new("agent.example.com:443", AgentInterface::GRPC)
                .with_tenant("tenant-a"),
        ],
        provider: Some(AgentProvider {
            url: "https://example.com".into(),
            organization: "Example Org".into(),
        }),
        version: "1.2.3".into(),
        documentation_url: Some("https://example.com/docs".into()),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            extensions: vec![
                AgentExtension {
                    uri: Some("https://ext.example/a".into()),
                    description: Some("does a".into()),
                    required: true,
                    params: Some(meta()),
                },
                AgentExtension::default(),
            ],
            extended_agent_card: Some(true),
        },
        security_schemes: security_schemes(),
        security_requirements: vec![
            requirement(&[("oauthCode", &["read", "write"]), ("apiKey", &[])]),
            requirement(&[("mtls", &[])]),
            SecurityRequirement::default(),
        ],
        default_input_modes: vec!["text/plain".into(), "application/json".into()],
        default_output_modes: vec!["text/plain".into()],
        skills: vec![
            AgentSkill {
                id: "forecast".into(),
                name: "Forecast".into(),
                description: "Weather for a city".into(),
                tags: vec!["weather".into(), "météo".into()],
                examples: vec!["Weather in Paris?".into()],
                input_modes: vec!["text/plain".into()],
                output_modes: vec!["application/json".into()],
                security_requirements: vec![requirement(&[("bearer", &["forecast:read"])])],
            },
            AgentSkill {
                id: "bare".into(),
                name: "Bare".into(),
                description: "Only what is required".into(),
                ..AgentSkill::default()
            },
        ],
        signatures: vec![AgentCardSignature {
            protected: "eyJhbGciOiJFUzI1NiJ9".into(),
            signature: "c2lnbmF0dXJl".into(),
            header: Some(small_meta("kid-1")),
        }],
        icon_url: Some("https://example.com/icon.png".into()),
    }
}

pub(super) fn send_request() -> SendMessageRequest {
    SendMessageRequest {
        tenant: Some("tenant-a".into()),
        message: message(Role::User),
        configuration: Some(SendMessageConfiguration {
            accepted_output_modes: vec!["text/plain".into(), "image/png".into()],
            task_push_notification_config: Some(push_config()),
            history_length: Some(0),
            return_immediately: true,
        }),
        metadata: Some(meta()),
    }
}

pub(super) fn list_tasks_request() -> ListTasksRequest {
    ListTasksRequest {
        tenant: Some("tenant-a".into()),
        context_id: Some("ctx-1".into()),
        status: Some(TaskState::Working),
        page_size: Some(0),
        page_token: Some("page-2".into()),
        history_length: Some(5),
        status_timestamp_after: Some(ts(1_700_000_000_999)),
        include_artifacts: Some(false),
    }
}

pub(super) fn list_tasks_response() -> ListTasksResponse {
    ListTasksResponse {
        tasks: vec![task(), bare_task()],
        next_page_token: "next ➡".into(),
        page_size: 2,
        total_size: 17,
    }
}

pub(super) fn list_push_configs_response() -> ListTaskPushNotificationConfigsResponse {
    ListTaskPushNotificationConfigsResponse {
        configs: vec![
            push_config(),
            TaskPushNotificationConfig {
                url: "https://hooks.example.com/b".into(),
                ..TaskPushNotificationConfig::default()
            },
        ],
        next_page_token: Some("2".into()),
    }
}

// ----- Round trips -----

/// `value` to its message and back, directly and through the wire bytes.
fn round_trip<T, P>(value: T)
where
    T: ToProto<Proto = P> + FromProto<Proto = P> + Clone + PartialEq + Debug,
    P: prost::Message + Default,
{
    let proto = value.clone().to_proto();
    let bytes = proto.encode_to_vec();
    assert_eq!(T::from_proto(proto).unwrap(), value, "kit → pb → kit");
    let decoded = P::decode(bytes.as_slice()).unwrap();
    assert_eq!(T::from_proto(decoded).unwrap(), value, "kit → bytes → kit");
}

#[test]
fn messages_parts_and_artifacts_round_trip() {
    for part in parts() {
        round_trip(part);
    }
    round_trip(message(Role::User));
    round_trip(message(Role::Agent));
    round_trip(minimal_message("m", Role::User));
    round_trip(artifact());
    round_trip(Artifact {
        artifact_id: "empty".into(),
        ..Artifact::default()
    });
}

#[test]
fn tasks_and_events_round_trip() {
    for state in TaskState::ALL.into_iter().skip(1) {
        round_trip(status(state));
    }
    round_trip(task());
    round_trip(bare_task());
    round_trip(status_update());
    round_trip(artifact_update());
    round_trip(StreamResponse::Task(task()));
    round_trip(StreamResponse::Message(message(Role::Agent)));
    round_trip(StreamResponse::StatusUpdate(status_update()));
    round_trip(StreamResponse::ArtifactUpdate(artifact_update()));
    round_trip(SendMessageResponse::Task(task()));
    round_trip(SendMessageResponse::Message(message(Role::Agent)));
}

#[test]
fn requests_and_answers_round_trip() {
    round_trip(send_request());
    round_trip(SendMessageRequest {
        tenant: None,
        message: minimal_message("m", Role::User),
        configuration: Some(SendMessageConfiguration::default()),
        metadata: None,
    });
    round_trip(GetTaskRequest {
        tenant: Some("t".into()),
        id: "task-1".into(),
        history_length: Some(3),
    });
    round_trip(GetTaskRequest {
        tenant: None,
        id: "task-1".into(),
        history_length: None,
    });
    round_trip(list_tasks_request());
    round_trip(ListTasksRequest::default());
    round_trip(list_tasks_response());
    round_trip(ListTasksResponse::default());
    round_trip(CancelTaskRequest {
        tenant: Some("t".into()),
        id: "task-1".into(),
        metadata: Some(meta()),
    });
    round_trip(SubscribeToTaskRequest {
        tenant: Some("t".into()),
        id: "task-1".into(),
    });
    round_trip(push_config());
    round_trip(AuthenticationInfo {
        scheme: "Basic".into(),
        credentials: None,
    });
    round_trip(GetTaskPushNotificationConfigRequest {
        tenant: Some("t".into()),
        task_id: "task-1".into(),
        id: "cfg-1".into(),
    });
    round_trip(DeleteTaskPushNotificationConfigRequest {
        tenant: Some("t".into()),
        task_id: "task-1".into(),
        id: "cfg-1".into(),
    });
    round_trip(ListTaskPushNotificationConfigsRequest {
        tenant: Some("t".into()),
        task_id: "task-1".into(),
        page_size: Some(10),
        page_token: Some("5".into()),
    });
    round_trip(list_push_configs_response());
    round_trip(ListTaskPushNotificationConfigsResponse::default());
    round_trip(GetExtendedAgentCardRequest {
        tenant: Some("t".into()),
    });
    round_trip(GetExtendedAgentCardRequest::default());
}

#[test]
fn the_agent_card_round_trips() {
    round_trip(card());
    round_trip(AgentCard {
        name: "n".into(),
        description: "d".into(),
        version: "1".into(),
        // `optional` strings keep an explicit "".
        documentation_url: Some(String::new()),
        icon_url: Some(String::new()),
        ..AgentCard::default()
    });
    for (_, scheme) in security_schemes() {
        round_trip(scheme);
    }
}

#[test]
fn metadata_and_timestamps_round_trip() {
    round_trip(meta());
    round_trip(Metadata::new());
    for millis in [
        0,
        1,
        -1,
        1_761_647_400_123,
        -62_135_596_800_000,
        253_402_300_799_999,
    ] {
        round_trip(ts(millis));
    }
}

// ----- What the conversion decides (beyond the round trips) -----

fn value_of(kind: prost_types::value::Kind) -> prost_types::Value {
    prost_types::Value { kind: Some(kind) }
}

fn data_part(value: prost_types::Value) -> super::super::pb::Part {
    super::super::pb::Part {
        content: Some(super::super::pb::part::Content::Data(value)),
        ..Default::default()
    }
}

#[test]
fn integral_numbers_read_as_integers_others_as_doubles() {
    use prost_types::value::Kind;
    let cases = [
        (3.0, json!(3)),
        (-7.0, json!(-7)),
        (-0.0, json!(0)),
        (2.5, json!(2.5)),
        (9_007_199_254_740_992.0, json!(9_007_199_254_740_992_i64)),
        (-9_223_372_036_854_775_808.0, json!(i64::MIN)),
        // 2^63 is integral but not an i64: it stays a double.
        (
            9_223_372_036_854_775_808.0,
            json!(9_223_372_036_854_775_808.0),
        ),
        (1e300, json!(1e300)),
    ];
    for (n, expected) in cases {
        let part = Part::from_proto(data_part(value_of(Kind::NumberValue(n)))).unwrap();
        let got = part.as_data().unwrap();
        assert_eq!(got, &expected, "{n}");
        assert_eq!(got.is_i64(), expected.is_i64(), "{n}");
    }
}

#[test]
fn a_value_without_a_kind_reads_as_null_as_its_json_does() {
    let part = Part::from_proto(data_part(prost_types::Value { kind: None })).unwrap();
    assert_eq!(part.as_data(), Some(&serde_json::Value::Null));
}

#[test]
fn empty_strings_are_unset_and_zero_means_no_filter() {
    let pb = super::super::pb::ListTasksRequest::default();
    assert_eq!(
        ListTasksRequest::from_proto(pb).unwrap(),
        ListTasksRequest::default()
    );
    let pb = super::super::pb::ListTaskPushNotificationConfigsRequest {
        task_id: "t".into(),
        page_size: 0,
        ..Default::default()
    };
    let req = ListTaskPushNotificationConfigsRequest::from_proto(pb).unwrap();
    assert_eq!(
        (req.page_size, req.page_token, req.tenant),
        (None, None, None)
    );
}

#[test]
fn negative_sizes_stay_negative_for_the_server_to_name() {
    let pb = super::super::pb::ListTaskPushNotificationConfigsRequest {
        task_id: "t".into(),
        page_size: -5,
        ..Default::default()
    };
    let req = ListTaskPushNotificationConfigsRequest::from_proto(pb).unwrap();
    assert_eq!(req.page_size, Some(-5));
    let pb = super::super::pb::GetTaskRequest {
        id: "t".into(),
        history_length: Some(-1),
        ..Default::default()
    };
    assert_eq!(
        GetTaskRequest::from_proto(pb).unwrap().history_length,
        Some(-1)
    );
    let pb = super::super::pb::ListTasksRequest {
        page_size: Some(-3),
        history_length: Some(-2),
        ..Default::default()
    };
    let req = ListTasksRequest::from_proto(pb).unwrap();
    assert_eq!((req.page_size, req.history_length), (Some(-3), Some(-2)));
}

#[test]
fn timestamps_keep_milliseconds_and_leap_seconds_stay_in_range() {
    let pb = prost_types::Timestamp {
        seconds: 1_761_647_400,
        nanos: 123_456_789,
    };
    assert_eq!(Timestamp::from_proto(pb).unwrap(), ts(1_761_647_400_123));
    // 2016-12-31T23:59:60.500Z, as chrono holds a leap second.
    let leap = chrono::NaiveDate::from_ymd_opt(2016, 12, 31)
        .and_then(|d| d.and_hms_milli_opt(23, 59, 59, 1_500))
        .unwrap()
        .and_utc();
    let pb = Timestamp(leap).to_proto();
    assert_eq!((pb.seconds, pb.nanos), (1_483_228_799, 999_999_999));
    assert!(Timestamp::from_proto(pb).is_ok());
}
