//! A2A 0.3, served beside 1.0 on the same URLs and spoken by the client to 0.3 agents: its
//! JSON-RPC shapes ([`wire`]) and HTTP+JSON shapes ([`rest`], ProtoJSON of its proto), their
//! translation to and from this crate's 1.0 types
//! ([`convert`]: the one place the versions meet), its error codes, and the card fields a 0.3
//! client reads.
//!
//! Nothing below the edge knows 0.3: a 0.3 request is translated into a 1.0 operation
//! (`binding`), answered by the same [`AgentService`](crate::server::AgentService), and its
//! answer translated back; a push config registered in 0.3 remembers it
//! ([`TaskPushNotificationConfig::protocol_version`](crate::protocol::TaskPushNotificationConfig::protocol_version))
//! so its webhook gets 0.3 bodies.
//!
//! ```
//! use a2a_kit::protocol::{Message, Part, Role};
//! use a2a_kit::v03;
//!
//! let params: v03::wire::MessageSendParams = serde_json::from_str(r#"{
//!     "message": {"kind": "message", "messageId": "m-1", "role": "user",
//!                 "parts": [{"kind": "text", "text": "hi"}]},
//!     "configuration": {"blocking": false}
//! }"#)?;
//! let request = v03::convert::send_from_v03(params)?;
//! assert_eq!(request.message.role, Role::User);
//! assert_eq!(request.message.parts[0].as_text(), Some("hi"));
//! assert!(request.configuration.unwrap().return_immediately);
//!
//! let out = v03::wire::Message::from(Message::agent(vec![Part::text("hello")]));
//! let json = serde_json::to_value(&out)?;
//! assert_eq!(json["kind"], "message");
//! assert_eq!(json["role"], "agent");
//! assert_eq!(json["parts"][0], serde_json::json!({"kind": "text", "text": "hello"}));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod card;
pub mod convert;
mod error;
pub mod rest;
pub mod wire;

pub use card::{CARD_PROTOCOL_VERSION, hybrid_card, without_v03_members};
pub use error::{error_code, jsonrpc_error};

/// The 0.3 JSON-RPC method names, each with the 1.0 operation it is.
pub const METHODS: [&str; 10] = [
    "message/send",
    "message/stream",
    "tasks/get",
    "tasks/cancel",
    "tasks/resubscribe",
    "tasks/pushNotificationConfig/set",
    "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/list",
    "tasks/pushNotificationConfig/delete",
    "agent/getAuthenticatedExtendedCard",
];
