//! The gRPC limit: a bare tonic handler of a2a-kit's proto with no A2A logic, served by
//! tonic's own `transport::Server` (hyper-util's HTTP/2 connection builder, TCP_NODELAY, one
//! tokio worker under `taskset`, as every bench server), `lf.a2a.v1.A2AService` being the
//! generated `A2aServiceServer` around [`Limit`].
//!
//! tonic decodes each request into its prost message (the JSON limit's parse) and encodes
//! each answer, a clone of a message a2a-kit sent (captured by the driver):
//! * `SendMessage`: the `SendMessageResponse` of `--unary FILE` (a2a-kit's answer to the same
//!   request);
//! * `SendStreamingMessage` to the skill `count` (the message's `metadata.skillId`) with text
//!   N: the messages of `--stream FILE` (three length-delimited `StreamResponse`s captured from
//!   a2a-kit's stream: the first event, one artifact chunk, the last event) as a2a-kit sends
//!   them: the first, N chunks, the last.
//!
//! Every other method (and any other skill) is UNIMPLEMENTED: the benchmark calls none.
//!
//! `bench-grpc-limit [--bind HOST:PORT] --unary FILE --stream FILE`

#![forbid(unsafe_code)]

a2a_bench::server_allocator!();

use a2a_kit::grpc::pb;
use a2a_kit::grpc::pb::a2a_service_server::{A2aService, A2aServiceServer};
use clap::Parser;
use futures::StreamExt;
use futures::stream::BoxStream;
use prost::Message as _;
use tonic::{Request, Response, Status};

#[derive(Parser)]
struct Cli {
    #[arg(long, default_value = "127.0.0.1:3000")]
    bind: std::net::SocketAddr,
    /// The SendMessage response, one protobuf message.
    #[arg(long)]
    unary: std::path::PathBuf,
    /// The first, one chunk and the last `StreamResponse` of a `count` stream, each
    /// length-delimited.
    #[arg(long)]
    stream: std::path::PathBuf,
}

/// The canned answers.
struct Limit {
    unary: pb::SendMessageResponse,
    first: pb::StreamResponse,
    chunk: pb::StreamResponse,
    last: pb::StreamResponse,
}

fn unimplemented<T>() -> Result<T, Status> {
    Err(Status::unimplemented(
        "the gRPC limit answers SendMessage and SendStreamingMessage (skill `count`) only",
    ))
}

type Events = BoxStream<'static, Result<pb::StreamResponse, Status>>;

#[tonic::async_trait]
impl A2aService for Limit {
    async fn send_message(
        &self,
        _: Request<pb::SendMessageRequest>,
    ) -> Result<Response<pb::SendMessageResponse>, Status> {
        Ok(Response::new(self.unary.clone()))
    }

    type SendStreamingMessageStream = Events;

    async fn send_streaming_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Result<Response<Events>, Status> {
        let message = request.into_inner().message.unwrap_or_default();
        let skill = message
            .metadata
            .as_ref()
            .and_then(|m| m.fields.get("skillId"))
            .and_then(|v| match &v.kind {
                Some(prost_types::value::Kind::StringValue(s)) => Some(s.as_str()),
                _ => None,
            });
        if skill.is_some_and(|s| s != "count") {
            return unimplemented();
        }
        let n: usize = match message.parts.first().and_then(|p| p.content.as_ref()) {
            Some(pb::part::Content::Text(t)) => t.trim().parse().unwrap_or(5),
            _ => 5,
        };
        let (first, chunk, last) = (self.first.clone(), self.chunk.clone(), self.last.clone());
        let events = futures::stream::iter(
            std::iter::once(first)
                .chain(std::iter::repeat_n(chunk, n))
                .chain(std::iter::once(last))
                .map(Ok),
        );
        Ok(Response::new(events.boxed()))
    }

    async fn get_task(&self, _: Request<pb::GetTaskRequest>) -> Result<Response<pb::Task>, Status> {
        unimplemented()
    }

    async fn list_tasks(
        &self,
        _: Request<pb::ListTasksRequest>,
    ) -> Result<Response<pb::ListTasksResponse>, Status> {
        unimplemented()
    }

    async fn cancel_task(
        &self,
        _: Request<pb::CancelTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        unimplemented()
    }

    type SubscribeToTaskStream = Events;

    async fn subscribe_to_task(
        &self,
        _: Request<pb::SubscribeToTaskRequest>,
    ) -> Result<Response<Events>, Status> {
        unimplemented()
    }

    async fn create_task_push_notification_config(
        &self,
        _: Request<pb::TaskPushNotificationConfig>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        unimplemented()
    }

    async fn get_task_push_notification_config(
        &self,
        _: Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        unimplemented()
    }

    async fn list_task_push_notification_configs(
        &self,
        _: Request<pb::ListTaskPushNotificationConfigsRequest>,
    ) -> Result<Response<pb::ListTaskPushNotificationConfigsResponse>, Status> {
        unimplemented()
    }

    async fn get_extended_agent_card(
        &self,
        _: Request<pb::GetExtendedAgentCardRequest>,
    ) -> Result<Response<pb::AgentCard>, Status> {
        unimplemented()
    }

    async fn delete_task_push_notification_config(
        &self,
        _: Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<Response<()>, Status> {
        unimplemented()
    }
}

/// The three length-delimited stream messages of `path`.
fn read_stream(path: &std::path::Path) -> Result<[pb::StreamResponse; 3], String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buf = &bytes[..];
    let mut out = Vec::new();
    while !buf.is_empty() {
        let m = pb::StreamResponse::decode_length_delimited(&mut buf)
            .map_err(|e| format!("{}: message {}: {e}", path.display(), out.len() + 1))?;
        out.push(m);
    }
    <[pb::StreamResponse; 3]>::try_from(out).map_err(|out| {
        format!(
            "{}: expected 3 messages (first, chunk, last), got {}",
            path.display(),
            out.len()
        )
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let unary = std::fs::read(&cli.unary).map_err(|e| format!("{}: {e}", cli.unary.display()))?;
    let unary = pb::SendMessageResponse::decode(&unary[..])
        .map_err(|e| format!("{}: {e}", cli.unary.display()))?;
    let [first, chunk, last] = read_stream(&cli.stream)?;
    let limit = Limit {
        unary,
        first,
        chunk,
        last,
    };
    let listener = tokio::net::TcpListener::bind(cli.bind).await?;
    eprintln!("listening on http://{} (gRPC)", listener.local_addr()?);
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    tonic::transport::Server::builder()
        .serve_with_incoming(A2aServiceServer::new(limit), incoming)
        .await?;
    Ok(())
}
