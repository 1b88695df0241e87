//! `a2a`: talk to any A2A (Agent2Agent) v1.0 agent from the command line.
//!
//! ```text
//! a2a card http://127.0.0.1:3000 [--verify KEY.pem|JWK|JWKS|https://host/.well-known/jwks.json]
//! a2a send http://127.0.0.1:3000 "Hello" --stream
//! a2a send http://127.0.0.1:3000 --skill book --data '{"from":"LIS","to":"AMS"}'
//! a2a get|cancel|subscribe http://127.0.0.1:3000 TASK_ID
//! a2a list http://127.0.0.1:3000 --status working --all
//! a2a push create|get|list|delete http://127.0.0.1:3000 TASK_ID ...
//! a2a console http://127.0.0.1:3000 [--bind 127.0.0.1:8080]
//! ```
//!
//! Output is for people by default (a live view while streaming); `--json` prints JSON for
//! scripts (one object per line for streams). Exit status: 0 success, 1 the agent answered
//! with an error, 2 usage error, 3 the agent could not be reached or is not a usable A2A 1.0
//! agent, 4 the task ended FAILED, REJECTED or CANCELED (`send`, `subscribe`).
//!
//! Install with `cargo install --path a2a-cli`. https:// agents work out of the box (rustls,
//! the web's roots); `--ca-cert FILE` trusts a private CA or a self-signed agent too.

#![forbid(unsafe_code)]

/// `println!` for a command whose output may go to a pipe that closes early
/// (`a2a list .. | head`): a closed pipe ends the command quietly, with success, instead of
/// the panic `println!` gives; any other write error is reported once and exits 1.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` with [`outln!`]'s handling of a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::write_stdout(format_args!($($arg)*))
    };
}

/// Write to stdout; see [`outln!`].
fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: could not write the output: {e}");
        std::process::exit(1);
    }
}

mod console;
mod render;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use a2a_kit::client::{
    A2aClient, ApiKeyAuth, Binding, CardCache, ClientBuilder, ClientError, SendRequest,
    StaticHeaders,
};
use a2a_kit::protocol::{
    AuthenticationInfo, GetTaskRequest, ListTasksRequest, Message, Part, ProtocolVersion,
    SendMessageResponse, TaskPushNotificationConfig, TaskState,
};
use a2a_kit::signing::Verifier;
use clap::{Args, Parser, Subcommand};
use futures::{StreamExt, TryStreamExt};

use render::Out;

/// Talk to A2A (Agent2Agent) v1.0 and v0.3 agents.
#[derive(Debug, Parser)]
#[command(name = "a2a", version, about = "Talk to A2A (Agent2Agent) v1.0 and v0.3 agents from the command line", after_help = EXIT_CODES)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    cmd: Cmd,
}

const EXIT_CODES: &str = "Exit status: 0 success; 1 the agent answered with an error; 2 usage error; \
3 the agent could not be reached or is not a usable A2A 1.0 or 0.3 agent; 4 the task ended failed, rejected or canceled.";

#[derive(Debug, Args)]
struct Global {
    /// Print JSON (one object per line for streams) instead of human-readable output.
    #[arg(long, global = true)]
    json: bool,
    /// Use this binding instead of the agent's preferred one: jsonrpc, rest (HTTP+JSON) or
    /// grpc.
    #[arg(long, global = true, value_name = "BINDING")]
    binding: Option<Binding>,
    /// Speak this A2A version: 1.0 or 0.3 (by default 1.0 when the agent offers it, else 0.3).
    #[arg(long, global = true, value_name = "VERSION", value_parser = parse_protocol_version)]
    protocol_version: Option<ProtocolVersion>,
    /// Bearer token sent as `Authorization: Bearer TOKEN`.
    #[arg(long, global = true, env = "A2A_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// API key, placed where the card's apiKeySecurityScheme says (else header X-API-Key).
    #[arg(long, global = true, env = "A2A_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Extra request header, `Name: value` (repeatable).
    #[arg(short = 'H', long = "header", global = true, value_name = "HEADER")]
    headers: Vec<String>,
    /// Activate an extension (`A2A-Extensions`; repeatable).
    #[arg(long = "extension", global = true, value_name = "URI")]
    extensions: Vec<String>,
    /// Also trust the certificates in this PEM file (a private CA, a self-signed agent).
    #[arg(long, global = true, env = "A2A_CA_CERT", value_name = "FILE")]
    ca_cert: Option<PathBuf>,
    /// Time limit of each call in seconds (streams are not limited).
    #[arg(long, global = true, default_value_t = 300, value_name = "SECS")]
    timeout: u64,
    /// No colours (also when NO_COLOR is set or output is not a terminal).
    #[arg(long, global = true)]
    no_color: bool,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Show the agent card: name, interfaces, capabilities, skills, security.
    Card {
        /// The agent's base URL (or its card URL).
        url: String,
        /// Fetch the authenticated extended card (GetExtendedAgentCard).
        #[arg(long)]
        extended: bool,
        /// Require a valid card signature from a trusted key: a file (PEM public key, JWK or
        /// JWKS) or an http(s) URL of a JWKS. Exits 3 with the reason when it does not verify.
        #[arg(long, value_name = "KEY|JWKS")]
        verify: Option<String>,
    },
    /// Send a message (blocking by default; --stream for a live view).
    Send(SendArgs),
    /// Show a task.
    Get {
        /// The agent's base URL.
        url: String,
        /// The task id.
        task_id: String,
        /// At most this many history messages.
        #[arg(long, value_name = "N")]
        history: Option<i32>,
    },
    /// List tasks, newest first.
    List(ListArgs),
    /// Cancel a task.
    Cancel {
        /// The agent's base URL.
        url: String,
        /// The task id.
        task_id: String,
    },
    /// Follow a running task's events.
    Subscribe {
        /// The agent's base URL.
        url: String,
        /// The task id.
        task_id: String,
        /// Resume after this SSE event id (replays the events after it).
        #[arg(long, value_name = "ID")]
        last_event_id: Option<String>,
    },
    /// Manage a task's push-notification configs.
    #[command(subcommand)]
    Push(PushCmd),
    /// Open a console for the agent in the browser: its card, a form per skill, a chat, live
    /// tasks and every raw call. Served on --bind; its calls are forwarded to the agent.
    Console {
        /// The agent's base URL.
        url: String,
        /// Where to serve the console.
        #[arg(long, default_value = "127.0.0.1:8080", value_name = "HOST:PORT")]
        bind: std::net::SocketAddr,
    },
}

#[derive(Debug, Args)]
struct SendArgs {
    /// The agent's base URL.
    url: String,
    /// The message text.
    text: Option<String>,
    /// Route to this skill (sets message metadata `skillId`).
    #[arg(long, value_name = "ID")]
    skill: Option<String>,
    /// Add a data part holding this JSON.
    #[arg(long, value_name = "JSON")]
    data: Option<String>,
    /// Attach a file (repeatable).
    #[arg(long = "file", value_name = "PATH")]
    files: Vec<PathBuf>,
    /// Stream the task's events as they happen.
    #[arg(long)]
    stream: bool,
    /// Return as soon as the task exists (returnImmediately).
    #[arg(long, conflicts_with = "stream")]
    no_wait: bool,
    /// Continue this task (e.g. to answer a question).
    #[arg(long = "task", value_name = "TASK_ID")]
    task_id: Option<String>,
    /// Send within this context.
    #[arg(long = "context", value_name = "CONTEXT_ID")]
    context_id: Option<String>,
    /// At most this many history messages in the result.
    #[arg(long, value_name = "N")]
    history: Option<i32>,
}

#[derive(Debug, Args)]
struct ListArgs {
    /// The agent's base URL.
    url: String,
    /// Only tasks of this context.
    #[arg(long = "context", value_name = "CONTEXT_ID")]
    context_id: Option<String>,
    /// Only tasks in this state (working, completed, input-required, ...).
    #[arg(long, value_name = "STATE", value_parser = parse_state)]
    status: Option<TaskState>,
    /// Tasks per page (1-100).
    #[arg(long, value_name = "N")]
    page_size: Option<i32>,
    /// Continue from this page token.
    #[arg(long, value_name = "TOKEN")]
    page_token: Option<String>,
    /// Follow every page.
    #[arg(long)]
    all: bool,
    /// Include artifacts.
    #[arg(long)]
    artifacts: bool,
    /// At most this many history messages per task.
    #[arg(long, value_name = "N")]
    history: Option<i32>,
}

#[derive(Debug, Subcommand)]
enum PushCmd {
    /// Register a webhook for a task.
    Create {
        /// The agent's base URL.
        url: String,
        /// The task id.
        task_id: String,
        /// The webhook URL the agent will POST updates to.
        webhook: String,
        /// The config id (the agent assigns one when absent).
        #[arg(long)]
        id: Option<String>,
        /// An opaque token for the receiver to check.
        #[arg(long)]
        token: Option<String>,
        /// Authentication scheme the agent uses when calling the webhook (e.g. Bearer).
        #[arg(long, value_name = "SCHEME")]
        auth_scheme: Option<String>,
        /// Credentials for that scheme.
        #[arg(long, value_name = "CREDENTIALS", requires = "auth_scheme")]
        auth_credentials: Option<String>,
    },
    /// Show one config.
    Get {
        /// The agent's base URL.
        url: String,
        /// The task id.
        task_id: String,
        /// The config id.
        config_id: String,
    },
    /// List a task's configs.
    List {
        /// The agent's base URL.
        url: String,
        /// The task id.
        task_id: String,
    },
    /// Delete a config.
    Delete {
        /// The agent's base URL.
        url: String,
        /// The task id.
        task_id: String,
        /// The config id.
        config_id: String,
    },
}

impl Cmd {
    /// The agent URL the command was given.
    fn url(&self) -> &str {
        match self {
            Cmd::Card { url, .. }
            | Cmd::Get { url, .. }
            | Cmd::Cancel { url, .. }
            | Cmd::Subscribe { url, .. }
            | Cmd::Console { url, .. } => url,
            Cmd::Send(args) => &args.url,
            Cmd::List(args) => &args.url,
            Cmd::Push(
                PushCmd::Create { url, .. }
                | PushCmd::Get { url, .. }
                | PushCmd::List { url, .. }
                | PushCmd::Delete { url, .. },
            ) => url,
        }
    }
}

fn parse_protocol_version(s: &str) -> Result<ProtocolVersion, String> {
    match s.trim() {
        "1" | "1.0" => Ok(ProtocolVersion::V1_0),
        "0.3" | "0.3.0" => Ok(ProtocolVersion::V0_3),
        _ => Err(format!(
            "`{s}` is not a protocol version this client speaks; use 1.0 or 0.3"
        )),
    }
}

fn parse_state(s: &str) -> Result<TaskState, String> {
    let norm = s.trim().to_ascii_uppercase().replace('-', "_");
    let name = if norm.starts_with("TASK_STATE_") {
        norm
    } else {
        format!("TASK_STATE_{norm}")
    };
    match TaskState::from_proto_name(&name) {
        Some(TaskState::Unspecified) | None => Err(format!(
            "`{s}` is not a task state; use one of submitted, working, completed, failed, canceled, input-required, rejected, auth-required"
        )),
        Some(st) => Ok(st),
    }
}

/// Why the command failed, and its exit status.
enum Failure {
    Client(ClientError),
    Usage(String),
    TaskEnded,
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        Failure::Client(e)
    }
}

type Res<T = ()> = Result<T, Failure>;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let out = Out::new(cli.global.json, cli.global.no_color);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: could not start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match rt.block_on(run(&cli, &out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::TaskEnded) => ExitCode::from(4),
        Err(Failure::Usage(msg)) => {
            out.error_usage(&msg);
            ExitCode::from(2)
        }
        Err(Failure::Client(e)) => {
            out.error(&e, cli.cmd.url());
            ExitCode::from(match e {
                ClientError::Agent(_)
                | ClientError::Http { .. }
                | ClientError::InvalidResponse(_)
                | ClientError::Interceptor(_) => 1,
                _ => 3,
            })
        }
    }
}

async fn run(cli: &Cli, out: &Out) -> Res {
    let g = &cli.global;
    match &cli.cmd {
        Cmd::Card {
            url,
            extended,
            verify,
        } => {
            let verifier = match verify {
                Some(source) => Some(load_verifier(source).await?),
                None => None,
            };
            let client = connect_verified(g, url, verifier).await?;
            if *extended {
                let card = client.extended_card().await?;
                out.card(&card, &client);
            } else {
                out.card(&client.card(), &client);
            }
            if let Some(kid) = client.card_verified_by() {
                let kid = if kid.is_empty() { "none" } else { kid.as_str() };
                if g.json {
                    eprintln!("signature verified (kid {kid})");
                } else {
                    outln!("signature verified (kid {kid})");
                }
            }
            Ok(())
        }
        Cmd::Send(args) => send(g, out, args).await,
        Cmd::Console { url, bind } => console::serve(g, url, *bind).await,
        Cmd::Get {
            url,
            task_id,
            history,
        } => {
            let client = connect(g, url).await?;
            let task = client
                .get_task_with(GetTaskRequest {
                    id: task_id.clone(),
                    history_length: *history,
                    ..Default::default()
                })
                .await?;
            out.task(&task);
            Ok(())
        }
        Cmd::List(args) => list(g, out, args).await,
        Cmd::Cancel { url, task_id } => {
            let client = connect(g, url).await?;
            let task = client.cancel_task(task_id).await?;
            out.task(&task);
            Ok(())
        }
        Cmd::Subscribe {
            url,
            task_id,
            last_event_id,
        } => {
            let client = connect(g, url).await?;
            let stream = client
                .subscribe_from(task_id, last_event_id.as_deref())
                .await?;
            follow(out, url, stream).await
        }
        Cmd::Push(cmd) => push(g, out, cmd).await,
    }
}

/// The keys `--verify` names: a JWKS URL, or a file holding a PEM public key, a JWK or a
/// JWKS.
async fn load_verifier(source: &str) -> Res<Verifier> {
    let usage = |e: String| Failure::Usage(format!("--verify {source}: {e}"));
    if source.starts_with("https://") || source.starts_with("http://") {
        return Verifier::new()
            .fetch_jwks(source)
            .await
            .map_err(|e| usage(e.to_string()));
    }
    let bytes = std::fs::read(source).map_err(|e| usage(e.to_string()))?;
    Verifier::new()
        .trust(&bytes)
        .map_err(|e| usage(e.to_string()))
}

async fn connect(g: &Global, url: &str) -> Res<A2aClient> {
    connect_verified(g, url, None).await
}

/// Connect; with a verifier, the card must carry a signature it accepts.
async fn connect_verified(g: &Global, url: &str, verifier: Option<Verifier>) -> Res<A2aClient> {
    let cache = CardCache::new();
    let ca_cert = match &g.ca_cert {
        Some(path) => Some(
            std::fs::read(path)
                .map_err(|e| Failure::Usage(format!("--ca-cert {}: {e}", path.display())))?,
        ),
        None => None,
    };
    let base = |cache: &CardCache| -> Res<ClientBuilder> {
        let mut b = A2aClient::builder()
            .card_cache(cache.clone())
            .timeout(Some(Duration::from_secs(g.timeout)))
            .user_agent(format!("a2a-cli/{}", env!("CARGO_PKG_VERSION")))
            .extensions(g.extensions.clone());
        if let Some(binding) = g.binding {
            b = b.binding(binding);
        }
        if let Some(version) = g.protocol_version {
            b = b.protocol_version(version);
        }
        if let Some(v) = &verifier {
            b = b.verify_card(v.clone());
        }
        if let (Some(pem), Some(path)) = (&ca_cert, &g.ca_cert) {
            b = b
                .root_certificates_pem(pem)
                .map_err(|e| Failure::Usage(format!("--ca-cert {}: {e}", path.display())))?;
        }
        if let Some(token) = &g.token {
            b = b.bearer_token(token)?;
        }
        if !g.headers.is_empty() {
            let mut pairs = Vec::new();
            for h in &g.headers {
                let Some((k, v)) = h.split_once(':') else {
                    return Err(Failure::Usage(format!(
                        "header `{h}` must look like `Name: value`"
                    )));
                };
                pairs.push((k, v));
            }
            b = b.interceptor(StaticHeaders::from_pairs(pairs)?);
        }
        Ok(b)
    };
    let client = base(&cache)?.connect(url).await?;
    let Some(key) = &g.api_key else {
        return Ok(client);
    };
    // The card says where the key goes; the second connect reads the card from the cache.
    let auth = ApiKeyAuth::from_card(&client.card(), key.clone())
        .unwrap_or_else(|| ApiKeyAuth::header("X-API-Key", key.clone()));
    Ok(base(&cache)?.interceptor(auth).connect(url).await?)
}

fn media_type_for(path: &std::path::Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("txt") => "text/plain",
        Some("md") => "text/markdown",
        Some("json") => "application/json",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("wav") => "audio/wav",
        Some("mp3") => "audio/mpeg",
        _ => "application/octet-stream",
    }
}

fn message_parts(args: &SendArgs) -> Res<Vec<Part>> {
    let mut parts = Vec::new();
    if let Some(t) = &args.text {
        parts.push(Part::text(t.clone()));
    }
    if let Some(d) = &args.data {
        let v: serde_json::Value = serde_json::from_str(d)
            .map_err(|e| Failure::Usage(format!("--data is not valid JSON: {e}")))?;
        parts.push(Part::data(v).with_media_type("application/json"));
    }
    for f in &args.files {
        let bytes = std::fs::read(f)
            .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", f.display())))?;
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file".into());
        parts.push(
            Part::raw(bytes)
                .with_filename(name)
                .with_media_type(media_type_for(f)),
        );
    }
    if parts.is_empty() {
        return Err(Failure::Usage(
            "nothing to send: give TEXT, --data or --file".into(),
        ));
    }
    Ok(parts)
}

async fn send(g: &Global, out: &Out, args: &SendArgs) -> Res {
    let parts = message_parts(args)?;
    let client = connect(g, &args.url).await?;
    let mut req = SendRequest::new(Message::user(parts));
    if let Some(s) = &args.skill {
        req = req.skill(s.clone());
    }
    if let Some(t) = &args.task_id {
        req = req.task_id(t.clone());
    }
    if let Some(c) = &args.context_id {
        req = req.context_id(c.clone());
    }
    if let Some(n) = args.history {
        req = req.history_length(n);
    }
    if args.stream {
        let stream = client.send_streaming(req).await?;
        return follow(out, &args.url, stream).await;
    }
    let resp = client.send(req.return_immediately(args.no_wait)).await?;
    out.send_response(&resp, &args.url);
    match &resp {
        SendMessageResponse::Task(t) => ended(t.status.state),
        SendMessageResponse::Message(_) => Ok(()),
    }
}

fn ended(state: TaskState) -> Res {
    if matches!(
        state,
        TaskState::Failed | TaskState::Rejected | TaskState::Canceled
    ) {
        Err(Failure::TaskEnded)
    } else {
        Ok(())
    }
}

async fn follow(out: &Out, url: &str, mut stream: a2a_kit::client::TaskStream) -> Res {
    let mut view = render::LiveView::default();
    while let Some(ev) = stream.next().await {
        match ev {
            Ok(ev) => out.event(&mut view, &ev),
            Err(e) => {
                out.end_line(&mut view);
                return Err(e.into());
            }
        }
    }
    out.end_line(&mut view);
    match (stream.state(), stream.task_id()) {
        (Some(state), Some(id)) => {
            out.stream_end(state, &id, url);
            ended(state)
        }
        _ => Ok(()),
    }
}

async fn list(g: &Global, out: &Out, a: &ListArgs) -> Res {
    let client = connect(g, &a.url).await?;
    let req = ListTasksRequest {
        context_id: a.context_id.clone(),
        status: a.status,
        page_size: a.page_size,
        page_token: a.page_token.clone(),
        history_length: a.history,
        include_artifacts: a.artifacts.then_some(true),
        ..Default::default()
    };
    if a.all {
        let tasks: Vec<_> = client.list_all_tasks(req).try_collect().await?;
        out.task_list(&tasks, None, tasks.len() as i64);
    } else {
        let page = client.list_tasks(req).await?;
        out.list_page(&page);
    }
    Ok(())
}

async fn push(g: &Global, out: &Out, cmd: &PushCmd) -> Res {
    match cmd {
        PushCmd::Create {
            url,
            task_id,
            webhook,
            id,
            token,
            auth_scheme,
            auth_credentials,
        } => {
            let client = connect(g, url).await?;
            let cfg = TaskPushNotificationConfig {
                id: id.clone(),
                task_id: Some(task_id.clone()),
                url: webhook.clone(),
                token: token.clone(),
                authentication: auth_scheme.as_ref().map(|s| AuthenticationInfo {
                    scheme: s.clone(),
                    credentials: auth_credentials.clone(),
                }),
                tenant: None,
                ..Default::default()
            };
            let created = client.create_push_config(cfg).await?;
            out.push_config(&created);
        }
        PushCmd::Get {
            url,
            task_id,
            config_id,
        } => {
            let client = connect(g, url).await?;
            out.push_config(&client.get_push_config(task_id, config_id).await?);
        }
        PushCmd::List { url, task_id } => {
            let client = connect(g, url).await?;
            out.push_list(&client.list_push_configs(task_id).await?);
        }
        PushCmd::Delete {
            url,
            task_id,
            config_id,
        } => {
            let client = connect(g, url).await?;
            client.delete_push_config(task_id, config_id).await?;
            out.deleted(task_id, config_id);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_parse_loosely() {
        assert_eq!(parse_state("working"), Ok(TaskState::Working));
        assert_eq!(parse_state("input-required"), Ok(TaskState::InputRequired));
        assert_eq!(parse_state("TASK_STATE_CANCELED"), Ok(TaskState::Canceled));
        assert!(parse_state("nope").is_err());
        assert!(parse_state("unspecified").is_err());
    }

    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
