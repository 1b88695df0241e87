//! The HTTP+JSON binding's paths (the same in 1.0 and 0.3, which puts them under `/v1/`) and
//! how a body is read: what `rest` and `rest_v03` share.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::dispatch::A2aMethod;
use super::{content_type, is_json_content_type};
use crate::error::A2aError;
use crate::protocol::unique_json::UniqueValue;

/// A path of the binding, with the ids it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Route {
    Send,
    Stream,
    List,
    Get(String),
    Cancel(String),
    Subscribe(String),
    PushCollection(String),
    PushItem(String, String),
    ExtendedCard,
}

impl Route {
    /// The operation a verb asks of this path, if the path takes that verb.
    pub(super) fn method(&self, verb: &http::Method) -> Option<A2aMethod> {
        use http::Method as M;
        Some(match (self, verb) {
            (Route::Send, &M::POST) => A2aMethod::SendMessage,
            (Route::Stream, &M::POST) => A2aMethod::SendStreamingMessage,
            (Route::List, &M::GET) => A2aMethod::ListTasks,
            (Route::Get(_), &M::GET) => A2aMethod::GetTask,
            (Route::Cancel(_), &M::POST) => A2aMethod::CancelTask,
            (Route::Subscribe(_), &M::GET | &M::POST) => A2aMethod::SubscribeToTask,
            (Route::PushCollection(_), &M::POST) => A2aMethod::CreateTaskPushNotificationConfig,
            (Route::PushCollection(_), &M::GET) => A2aMethod::ListTaskPushNotificationConfigs,
            (Route::PushItem(..), &M::GET) => A2aMethod::GetTaskPushNotificationConfig,
            (Route::PushItem(..), &M::DELETE) => A2aMethod::DeleteTaskPushNotificationConfig,
            (Route::ExtendedCard, &M::GET) => A2aMethod::GetExtendedAgentCard,
            _ => return None,
        })
    }

    pub(super) fn allowed(&self) -> &'static [http::Method] {
        use http::Method;
        match self {
            Route::Send | Route::Stream | Route::Cancel(_) => &[Method::POST],
            Route::List | Route::Get(_) | Route::ExtendedCard => &[Method::GET],
            Route::Subscribe(_) => &[Method::GET, Method::POST],
            Route::PushCollection(_) => &[Method::GET, Method::POST],
            Route::PushItem(..) => &[Method::GET, Method::DELETE],
        }
    }
}

/// The binding's paths. `/tasks/{id}` also carries the custom methods `{id}:cancel` and
/// `{id}:subscribe` (AIP-136), told apart after the match.
#[derive(Debug, Clone, Copy)]
enum Path {
    Send,
    Stream,
    Tasks,
    Task,
    PushConfigs,
    PushConfig,
    ExtendedCard,
}

fn router() -> &'static matchit::Router<Path> {
    static ROUTER: OnceLock<matchit::Router<Path>> = OnceLock::new();
    ROUTER.get_or_init(|| {
        let mut r = matchit::Router::new();
        for (path, value) in [
            ("/message:send", Path::Send),
            ("/message:stream", Path::Stream),
            ("/tasks", Path::Tasks),
            ("/tasks/{id}", Path::Task),
            ("/tasks/{id}/pushNotificationConfigs", Path::PushConfigs),
            (
                "/tasks/{id}/pushNotificationConfigs/{config}",
                Path::PushConfig,
            ),
            ("/extendedAgentCard", Path::ExtendedCard),
        ] {
            r.insert(path, value)
                .expect("the binding's routes do not conflict");
        }
        r
    })
}

/// The route of a path made of decoded `segments`.
pub(super) fn match_route(segments: &[String]) -> Option<Route> {
    // Each segment as matchit reads it: `/` and `%` inside a decoded segment escaped again.
    let path: String = segments
        .iter()
        .map(|s| format!("/{}", s.replace('%', "%25").replace('/', "%2F")))
        .collect();
    let matched = router().at(&path).ok()?;
    let param = |name: &str| {
        matched
            .params
            .get(name)
            .map(|v| v.replace("%2F", "/").replace("%25", "%"))
    };
    Some(match matched.value {
        Path::Send => Route::Send,
        Path::Stream => Route::Stream,
        Path::Tasks => Route::List,
        Path::ExtendedCard => Route::ExtendedCard,
        Path::PushConfigs => Route::PushCollection(param("id")?),
        Path::PushConfig => Route::PushItem(param("id")?, param("config")?),
        Path::Task => {
            let last = param("id")?;
            match last.rsplit_once(':') {
                Some((id, "cancel")) if !id.is_empty() => Route::Cancel(id.to_string()),
                Some((id, "subscribe")) if !id.is_empty() => Route::Subscribe(id.to_string()),
                Some(_) => return None,
                None if !last.is_empty() => Route::Get(last),
                None => return None,
            }
        }
    })
}

pub(super) fn percent_decode(s: &str) -> String {
    form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| s.to_string())
}

/// The body as JSON, each object naming each key once (a `Value` would keep the last of two
/// silently): a repeated key is InvalidParams naming where, as over JSON-RPC, whose typed
/// parse reads free-form objects the same way (`protocol::unique_json`).
fn body_value(body: &[u8]) -> Result<Value, A2aError> {
    match serde_json::from_slice::<UniqueValue>(body) {
        Ok(UniqueValue(value)) => Ok(value),
        Err(e) if e.is_data() => {
            // Read again only to name the object holding the repeat.
            let mut de = serde_json::Deserializer::from_slice(body);
            match serde_path_to_error::deserialize::<_, UniqueValue>(&mut de) {
                Err(e) => Err(A2aError::from_serde("", &e.path().to_string(), e.inner())),
                Ok(_) => Err(A2aError::from_serde("", ".", &e)),
            }
        }
        Err(e) => Err(A2aError::JsonParse(format!(
            "request body is not valid JSON: {e}"
        ))),
    }
}

/// The request body as a JSON object (`{}` when empty), with `extra` fields merged in.
pub(super) fn body_object(
    headers: &http::HeaderMap,
    body: &[u8],
    extra: Map<String, Value>,
) -> Result<Value, A2aError> {
    let mut value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Object(Map::new())
    } else {
        if !is_json_content_type(headers) {
            let got = content_type(headers);
            return Err(A2aError::ContentTypeNotSupported(format!(
                "request bodies must be application/json or application/a2a+json, not `{got}`"
            )));
        }
        body_value(body)?
    };
    let Value::Object(obj) = &mut value else {
        return Err(A2aError::invalid_params(
            "the request body must be a JSON object",
        ));
    };
    obj.extend(extra);
    Ok(value)
}
