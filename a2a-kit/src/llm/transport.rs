//! rig's HTTP client over this crate's reqwest: one HTTP stack (and one TLS stack) for the
//! agent, its client and its model calls. Dropping a model stream drops the response, which
//! closes the connection: that is how a cancel stops the model.

use bytes::Bytes;
use futures::StreamExt;
use rig_core::http_client::{
    BoxedStream, Error, HttpClientExt, LazyBody, MultipartForm, Request, Response, Result,
    StreamingResponse,
};
use rig_core::wasm_compat::WasmCompatSend;

/// A reqwest client lent to rig.
#[derive(Clone, Debug)]
pub(super) struct Reqwest(pub(super) reqwest::Client);

impl Reqwest {
    /// A client that gives up connecting after 10 s and waits as long as a stream lasts (the
    /// run's idle timeout bounds the silence between chunks).
    pub(super) fn new() -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(10))
            .build()
            .unwrap_or_default();
        Reqwest(client)
    }

    fn builder<T: Into<Bytes>>(&self, req: Request<T>) -> reqwest::RequestBuilder {
        let (parts, body) = req.into_parts();
        let mut body = body.into();
        if parts.uri.path().ends_with("/chat/completions") {
            body = assistant_content(body);
        }
        self.0
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body)
    }
}

/// A Chat Completions assistant message that only calls tools gets `"content": ""`: rig leaves
/// the key out (OpenAI allows it), and llama.cpp's Python server renders its template with
/// `message.content` read strictly (answering 200 with an empty body) while its schema refuses
/// `null`. Every server takes the empty string.
fn assistant_content(body: Bytes) -> Bytes {
    let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return body;
    };
    let Some(messages) = v.get_mut("messages").and_then(|m| m.as_array_mut()) else {
        return body;
    };
    let mut changed = false;
    for m in messages.iter_mut() {
        if m.get("role").and_then(|r| r.as_str()) == Some("assistant") && m.get("content").is_none()
        {
            m["content"] = serde_json::Value::String(String::new());
            changed = true;
        }
    }
    match changed {
        true => serde_json::to_vec(&v).map(Bytes::from).unwrap_or(body),
        false => body,
    }
}

/// Send; a non-2xx reply is an error with its status, headers (`Retry-After`) and body.
async fn send_ok(builder: reqwest::RequestBuilder) -> Result<reqwest::Response> {
    let response = builder.send().await.map_err(Error::instance)?;
    if response.status().is_success() {
        return Ok(response);
    }
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.text().await.unwrap_or_default();
    Err(Error::non_success_with_details(status, headers, body))
}

fn head(response: &reqwest::Response) -> http::response::Builder {
    let mut head = Response::builder().status(response.status());
    if let Some(headers) = head.headers_mut() {
        *headers = response.headers().clone();
    }
    head
}

// rig's transport error is its own type, as large as it is.
#[allow(clippy::result_large_err)]
impl HttpClientExt for Reqwest {
    fn send<T, U>(
        &self,
        req: Request<T>,
    ) -> impl Future<Output = Result<Response<LazyBody<U>>>> + WasmCompatSend + 'static
    where
        T: Into<Bytes> + WasmCompatSend,
        U: From<Bytes> + WasmCompatSend + 'static,
    {
        let builder = self.builder(req);
        async move {
            let response = send_ok(builder).await?;
            let head = head(&response);
            let body: LazyBody<U> = Box::pin(async move {
                let bytes = response.bytes().await.map_err(Error::instance)?;
                Ok(U::from(bytes))
            });
            head.body(body).map_err(Error::Protocol)
        }
    }

    fn send_multipart<U>(
        &self,
        _req: Request<MultipartForm>,
    ) -> impl Future<Output = Result<Response<LazyBody<U>>>> + WasmCompatSend + 'static
    where
        U: From<Bytes> + WasmCompatSend + 'static,
    {
        std::future::ready(Err(Error::instance(std::io::Error::other(
            "multipart requests are not used by a2a-kit's model calls",
        ))))
    }

    fn send_streaming<T>(
        &self,
        req: Request<T>,
    ) -> impl Future<Output = Result<StreamingResponse>> + WasmCompatSend
    where
        T: Into<Bytes> + WasmCompatSend,
    {
        let builder = self.builder(req);
        async move {
            let response = send_ok(builder).await?;
            let head = head(&response);
            let stream = response
                .bytes_stream()
                .map(|chunk| chunk.map_err(Error::instance));
            head.body(Box::pin(stream) as BoxedStream)
                .map_err(Error::Protocol)
        }
    }
}
