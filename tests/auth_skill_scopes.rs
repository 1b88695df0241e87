//! Per-skill requirements (issue #19 item 2 and 5): `#[skill(scopes = [...])]` is checked
//! before a task exists (403 in both bindings, nothing stored); `#[skill(extended_only)]`
//! skills are listed on the authenticated extended card only, which a hook may build per
//! caller and tenant; the card's skill `securityRequirements` name the scopes.

use a2a_kit::auth::{ApiKeys, Caller};
use a2a_kit::prelude::*;
use a2a_kit::server::{AgentService, BuildError};
use a2a_tests::{client, send_message, serve, to_skill};
use serde_json::{Value, json};

struct Travel;

/// Books trips.
#[a2a_agent]
impl Travel {
    /// Search for trips.
    #[skill(default)]
    async fn search(&self, Text(to): Text) -> String {
        format!("3 trips to {to}")
    }

    /// Book a trip.
    #[skill(scopes = ["travel:book"])]
    async fn book(&self, Text(to): Text, caller: Caller) -> String {
        format!("Booked {to} for {}", caller.subject)
    }

    /// Refund any booking (operators).
    #[skill(extended_only, scopes = ["travel:admin"])]
    async fn refund(&self, Text(reference): Text) -> String {
        format!("Refunded {reference}")
    }
}

fn keys() -> ApiKeys {
    let with = |subject: &str, scopes: &[&str]| {
        let mut c = Caller::new(subject);
        c.scopes = scopes.iter().map(|s| s.to_string()).collect();
        c
    };
    ApiKeys::header("X-API-Key")
        .key_for("alice-key", with("alice", &["travel:book"]))
        .key_for("bob-key", with("bob", &[]))
        .key_for("olga-key", with("olga", &["travel:book", "travel:admin"]))
}

/// POST of a JSON `body` to `url`, with `key` in `X-API-Key` if given: (status, body).
async fn post_with_api_key(url: String, key: Option<&str>, body: Value) -> (u16, Value) {
    let mut req = client().post(url).header("A2A-Version", "1.0").json(&body);
    if let Some(key) = key {
        req = req.header("X-API-Key", key);
    }
    let resp = req.send().await.expect("answered");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// SendMessage of "Lisbon" to `skill` over one binding, as the caller of API key `key`:
/// (status, body).
async fn send_as_caller_to_skill(base: &str, rest: bool, key: &str, skill: &str) -> (u16, Value) {
    let resp = send_message(
        base,
        rest,
        to_skill(skill, "Lisbon"),
        Some(("X-API-Key", key)),
    )
    .await;
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

async fn list_total(base: &str, key: &str) -> i64 {
    let resp = client()
        .get(format!("{base}/tasks"))
        .header("A2A-Version", "1.0")
        .header("X-API-Key", key)
        .send()
        .await
        .unwrap();
    let v: Value = resp.json().await.unwrap();
    v["totalSize"].as_i64().unwrap_or(-1)
}

#[tokio::test]
async fn scopes_are_checked_before_a_task_exists() {
    let s = serve(AgentService::builder(Travel).authenticate(keys())).await;
    for rest in [false, true] {
        let (status, body) = send_as_caller_to_skill(&s.base, rest, "bob-key", "book").await;
        assert_eq!(status, 403, "rest={rest}: {body}");
        assert_eq!(body["error"]["status"], "PERMISSION_DENIED", "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("travel:book"),
            "{body}"
        );
        let (status, body) = send_as_caller_to_skill(&s.base, rest, "alice-key", "book").await;
        assert_eq!(status, 200, "{body}");
        assert!(
            body.to_string().contains("Booked Lisbon for alice"),
            "{body}"
        );
        // The skill without scopes is anyone's.
        let (status, _) = send_as_caller_to_skill(&s.base, rest, "bob-key", "search").await;
        assert_eq!(status, 200);
        // An extended-only skill is callable, with its scopes.
        let (status, _) = send_as_caller_to_skill(&s.base, rest, "alice-key", "refund").await;
        assert_eq!(status, 403);
        let (status, _) = send_as_caller_to_skill(&s.base, rest, "olga-key", "refund").await;
        assert_eq!(status, 200);
    }
    assert_eq!(
        list_total(&s.base, "bob-key").await,
        2,
        "Bob's refusals stored nothing"
    );
}

#[tokio::test]
async fn extended_only_skills_are_on_the_extended_card_only() {
    let s = serve(
        AgentService::builder(Travel)
            .authenticate(keys())
            .extended_card_for(|caller, tenant, card| {
                let who = caller.map_or("nobody", |c| c.subject.as_str());
                card.description = format!("for {who} in {}", tenant.unwrap_or("-"));
                if !caller.is_some_and(|c| c.scopes.iter().any(|s| s == "travel:admin")) {
                    card.skills.retain(|s| s.id != "refund");
                }
            }),
    )
    .await;
    let card: Value = a2a_tests::public_card(&s.base).await;
    let ids: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["search", "book"], "{card}");
    assert_eq!(card["capabilities"]["extendedAgentCard"], true);
    assert_eq!(
        card["skills"][1]["securityRequirements"],
        json!([{"schemes": {"apiKey": {"list": ["travel:book"]}}}]),
        "{card}"
    );
    assert!(
        card["skills"][0].get("securityRequirements").is_none(),
        "{card}"
    );

    // Without credentials: 401 in both bindings.
    let (status, _) = post_with_api_key(
        s.base.clone(),
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard"}),
    )
    .await;
    assert_eq!(status, 401);
    let resp = client()
        .get(format!("{}/extendedAgentCard", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);

    // Per caller and tenant.
    let (_, body) = post_with_api_key(
        s.base.clone(),
        Some("olga-key"),
        json!({"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard",
            "params": {"tenant": "acme"}}),
    )
    .await;
    let ext = &body["result"];
    assert_eq!(ext["description"], "for olga in acme", "{body}");
    let ids: Vec<&str> = ext["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["search", "book", "refund"]);
    assert_eq!(ext["supportedInterfaces"][0]["url"], s.base, "{ext}");
    let resp = client()
        .get(format!("{}/extendedAgentCard", s.base))
        .header("A2A-Version", "1.0")
        .header("X-API-Key", "alice-key")
        .send()
        .await
        .unwrap();
    let ext: Value = resp.json().await.unwrap();
    assert_eq!(ext["description"], "for alice in -", "{ext}");
    assert!(!ext.to_string().contains("\"refund\""), "{ext}");
}

#[test]
fn requirements_need_an_authenticator() {
    let err = AgentService::builder(Travel).build().unwrap_err();
    assert!(
        matches!(err, BuildError::ScopesWithoutAuthenticator(ref s) if s == "book"),
        "{err}"
    );
    struct Open;
    /// Open.
    #[a2a_agent]
    impl Open {
        /// Hidden.
        #[skill(extended_only)]
        async fn hidden(&self, Text(t): Text) -> String {
            t
        }
    }
    let err = AgentService::builder(Open).build().unwrap_err();
    assert_eq!(err, BuildError::ExtendedCardWithoutAuthenticator, "{err}");
    assert!(
        AgentService::builder(Open)
            .extended_card_authenticated_upstream()
            .build()
            .is_ok()
    );
}
