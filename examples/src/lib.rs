//! Runnable a2a-kit example agents. Each binary (`cargo run --bin hello`) is a thin `main`
//! over a module here, so tests can build the same agent and serve it on a random port.
//!
//! Every example accepts `--bind HOST:PORT` (default 127.0.0.1:3000; the `worker` the
//! `planner` delegates to: 127.0.0.1:3001), `--print-card` (print
//! the agent card JSON and exit), `--public-url URL` and
//! `--store memory|sqlite:PATH|postgres://USER@HOST:PORT/DB` (or `A2A_STORE`), and
//! authentication: `--api-key KEY` (repeatable) and bearer JWTs, `--jwt-secret SECRET` (or
//! `A2A_JWT_SECRET`) or `--jwt-jwks URL`, with `--jwt-issuer ISS` and `--jwt-audience AUD`;
//! API keys and JWTs together are accepted either way. The first log line says which
//! authentication is on, or that the agent is open. With the `grpc` feature (on by default)
//! every example also serves gRPC on `--bind`; `--grpc-bind HOST:PORT` adds a listener for
//! it (named in the card), `--no-grpc` turns it off. Every example serves A2A 0.3 clients
//! too, on the same URLs; `--no-v03` serves 1.0 only. `--metrics` serves Prometheus text at
//! `/metrics`; `--otel` exports spans and metrics over OTLP as the `OTEL_*` variables say;
//! `--console` serves a console for the agent in the browser at `/_console/`.

#![forbid(unsafe_code)]

pub mod conformance;
pub mod hello;
#[cfg(feature = "llm")]
pub mod llm_agent;
#[cfg(feature = "llm")]
pub mod llm_orchestrator;
pub mod planner;
pub mod push_worker;
pub mod streaming;
pub mod travel;
pub mod worker;
pub mod workshop;

use std::net::SocketAddr;

use a2a_kit::server::{AgentService, AgentServiceBuilder};
use clap::{CommandFactory, FromArgMatches};

/// The options every example shares. Each binary names itself in `--help` (the doc comment of
/// its own parser, or [`Example::about`]): this comment is not clap's `about`.
#[derive(Debug, Clone, clap::Parser)]
#[command(about = None, long_about = None)]
pub struct Cli {
    /// Address to listen on.
    #[arg(long, default_value = DEFAULT_BIND)]
    pub bind: SocketAddr,
    /// Print the agent card JSON and exit.
    #[arg(long)]
    pub print_card: bool,
    /// The URL clients use to reach the agent (default: the URL each request came in on).
    #[arg(long)]
    pub public_url: Option<String>,
    /// Task store: `memory` (default), `sqlite:PATH`, or `postgres://USER@HOST:PORT/DB`
    /// (several replicas may share one database).
    #[arg(long, env = "A2A_STORE", default_value = "memory")]
    pub store: StoreSpec,
    /// With a PostgreSQL store: how long a task outlives a replica that stopped answering
    /// (it renews its lease on its tasks; when a lease runs out, another replica ends them).
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub lease: u64,
    /// Purge finished tasks older than this many seconds (checked every minute, off the
    /// request path). Unset: the store's own policy (in memory: bounded, one-hour TTL).
    #[arg(long, value_name = "SECONDS")]
    pub retention: Option<u64>,
    /// Requests a second one client address may send (bursts of twice as many); over it,
    /// 429 with `Retry-After`. Unset: no limit (behind a proxy, limit there).
    #[arg(long, value_name = "PER_SECOND", value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit: Option<u32>,
    /// Accept this API key in the `X-API-Key` header (repeatable: each key is one caller,
    /// `key-1`, `key-2`, ...). Without any, the agent is open to whoever reaches it.
    #[arg(long = "api-key", value_name = "KEY")]
    pub api_keys: Vec<String>,
    /// Accept bearer JWTs signed with a key of the JWKS at this URL (an identity provider's
    /// `jwks_uri`: fetched on first use, cached, fetched again for a new key id).
    #[arg(long, value_name = "URL")]
    pub jwt_jwks: Option<String>,
    /// Accept bearer JWTs signed (HS256/384/512) with this shared secret of at least 32
    /// bytes. Prefer the environment variable: a command line is visible to other users.
    #[arg(
        long,
        env = "A2A_JWT_SECRET",
        value_name = "SECRET",
        hide_env_values = true
    )]
    pub jwt_secret: Option<Secret>,
    /// Accept only JWTs issued by this issuer (`iss`); needs --jwt-secret or --jwt-jwks.
    #[arg(long, value_name = "ISS")]
    pub jwt_issuer: Option<String>,
    /// Accept only JWTs for this audience (`aud`); needs --jwt-secret or --jwt-jwks.
    /// Without it, `aud` is not checked.
    #[arg(long, value_name = "AUD")]
    pub jwt_audience: Option<String>,
    /// Also listen here, for gRPC clients that want a port of their own (the card's `GRPC`
    /// interface names it; every binding is served on both). Without it gRPC is served on
    /// `--bind` with the others.
    #[cfg(feature = "grpc")]
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "no_grpc")]
    pub grpc_bind: Option<SocketAddr>,
    /// Do not serve gRPC (the card lists JSON-RPC and HTTP+JSON only).
    #[cfg(feature = "grpc")]
    #[arg(long)]
    pub no_grpc: bool,
    /// Serve A2A 1.0 only (by default 0.3 clients are served too, on the same URLs).
    #[arg(long)]
    pub no_v03: bool,
    /// Deliver push notifications to webhooks on `loopback` (127.0.0.0/8, ::1: a caller on
    /// this machine) or on `private` networks too; development only. Without it, the agent
    /// offers no push notifications (push_worker has them always).
    #[arg(long, value_name = "NETWORKS", value_parser = ["loopback", "private"])]
    pub push_webhooks: Option<String>,
    /// Serve a console for the agent at `/_console/`: its card, a form per skill, a chat,
    /// live tasks and the raw calls (open http://HOST:PORT/_console/ in a browser).
    #[arg(long)]
    pub console: bool,
    /// Metrics and traces.
    #[command(flatten)]
    pub observe: ObserveArgs,
}

/// What an operator sees of an example: `--metrics` and `--otel`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ObserveArgs {
    /// Serve the agent's metrics as Prometheus text at `/metrics`.
    #[arg(long)]
    pub metrics: bool,
    /// Export spans and metrics over OTLP as the standard variables say:
    /// OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318), OTEL_EXPORTER_OTLP_PROTOCOL
    /// (http/protobuf or grpc), OTEL_SERVICE_NAME (default: the example's name), ...
    #[arg(long)]
    pub otel: bool,
}

/// What [`observe`] set up, for the server (the `/metrics` route) and the end of the process
/// (the last export).
struct Observed {
    prometheus: Option<a2a_kit::observe::prometheus::PrometheusHandle>,
    otel: Option<a2a_kit::observe::otel::Otel>,
}

static OBSERVED: std::sync::OnceLock<Observed> = std::sync::OnceLock::new();

/// Log to stderr (see [`init_tracing`]) and, as `args` ask, record metrics for `/metrics`
/// and export spans and metrics over OTLP. Call it before the agent is built (its store's
/// timings are recorded from then on), inside the Tokio runtime; once per process.
pub fn observe(args: &ObserveArgs) -> Result<(), Error> {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    if OBSERVED.get().is_some() {
        return Ok(());
    }
    let otel = if args.otel {
        let name = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "a2a-agent".into());
        Some(
            a2a_kit::observe::otel::Otel::from_env_or_named(&name)
                .map_err(|e| Error::from(e.to_string()))?,
        )
    } else {
        None
    };
    let fmt = log_layer();
    let _ = tracing_subscriber::registry()
        .with(fmt)
        .with(otel.as_ref().map(|o| o.tracing_layer().boxed()))
        .try_init();
    let mut recorders: Vec<Box<dyn metrics::Recorder + Send + Sync>> = Vec::new();
    let prometheus = args.metrics.then(|| {
        let (recorder, handle) = a2a_kit::observe::prometheus::recorder();
        recorders.push(Box::new(recorder));
        handle
    });
    if let Some(otel) = &otel {
        recorders.push(Box::new(otel.metrics_recorder()));
    }
    if !recorders.is_empty() {
        a2a_kit::observe::metrics::install(recorders)
            .map_err(|e| Error::from(format!("could not install the metrics recorder: {e}")))?;
    }
    let _ = OBSERVED.set(Observed { prometheus, otel });
    Ok(())
}

/// The host's routes beside the agent's: `/metrics` with `--metrics`.
pub fn observed_routes() -> axum::Router {
    match OBSERVED.get().and_then(|o| o.prometheus.clone()) {
        Some(handle) => axum::Router::new().route("/metrics", a2a_kit_axum::metrics_route(handle)),
        None => axum::Router::new(),
    }
}

/// Export what is pending over OTLP (at the end of the process).
pub fn flush_telemetry() {
    if let Some(otel) = OBSERVED.get().and_then(|o| o.otel.as_ref()) {
        otel.shutdown();
    }
}

/// The address an example listens on unless told otherwise.
pub const DEFAULT_BIND: &str = "127.0.0.1:3000";

/// What sets one example's command line apart from the others': what `--help` says it is,
/// and the address it listens on by default (two examples meant to run side by side, such
/// as `worker` and `planner`, need different ones).
#[derive(Debug, Clone, Copy)]
pub struct Example {
    /// The first line of `--help`: what this example is, in one line.
    pub about: &'static str,
    /// The `--bind` default.
    pub bind: &'static str,
}

impl Example {
    /// An example described by `about`, listening on [`DEFAULT_BIND`] by default.
    pub const fn new(about: &'static str) -> Self {
        Example {
            about,
            bind: DEFAULT_BIND,
        }
    }

    /// The same example with another `--bind` default.
    pub const fn bind(self, bind: &'static str) -> Self {
        Example { bind, ..self }
    }

    /// Its command line: the shared options, with its description and default address.
    pub fn command(&self) -> clap::Command {
        Cli::command()
            .about(self.about)
            .mut_arg("bind", |arg| arg.default_value(self.bind))
    }

    /// Parse the process's arguments; `--help`, `--version` and a bad argument end the
    /// process the way clap does.
    pub fn parse(&self) -> Cli {
        let matches = self.command().get_matches();
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }
}

/// A secret from the command line or environment, never shown by `Debug` (a parsed [`Cli`]
/// may end up in a log).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The secret itself.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Secret(s.to_string()))
    }
}

/// Where tasks are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// In memory (lost on restart).
    Memory,
    /// A SQLite file.
    Sqlite(String),
    /// A PostgreSQL database (a `postgres://` or `postgresql://` URL).
    Postgres(String),
}

impl std::str::FromStr for StoreSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "memory" {
            return Ok(StoreSpec::Memory);
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return Ok(StoreSpec::Postgres(s.to_string()));
        }
        match s.strip_prefix("sqlite:") {
            Some(path) if !path.is_empty() => Ok(StoreSpec::Sqlite(path.to_string())),
            _ => Err(format!(
                "`{s}` is not a store: use `memory`, `sqlite:PATH` or `postgres://USER@HOST:PORT/DB`"
            )),
        }
    }
}

impl Cli {
    /// The public URL (explicit, else from the bind address): what `--print-card` shows.
    pub fn url(&self) -> String {
        self.public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.bind))
    }

    /// Apply the store and URL options to an agent's configuration.
    pub async fn configure(
        &self,
        a2a: AgentServiceBuilder,
    ) -> Result<AgentServiceBuilder, Box<dyn std::error::Error>> {
        let a2a = match &self.public_url {
            Some(url) => a2a.public_url(url),
            None => a2a,
        };
        let a2a = match self.authentication()? {
            Some((auth, _)) => a2a.authenticate(auth),
            None => a2a,
        };
        let a2a = a2a.v03(!self.no_v03);
        let a2a = match self.push_webhooks.as_deref() {
            Some(networks) => a2a.push_delivery(push_worker::push_config(networks == "private")),
            None => a2a,
        };
        #[cfg(feature = "grpc")]
        let a2a = match (self.no_grpc, self.grpc_address()?) {
            (true, _) => a2a.grpc(false),
            (false, Some(address)) => a2a.grpc_address(address),
            (false, None) => a2a,
        };
        match &self.store {
            // Printing the card needs no tasks: no database is opened for it.
            _ if self.print_card => Ok(a2a),
            StoreSpec::Memory => Ok(a2a),
            StoreSpec::Sqlite(path) => open_sqlite(a2a, path).await,
            StoreSpec::Postgres(url) => open_postgres(a2a, url, self.lease).await,
        }
    }
}

impl Cli {
    /// The `host:port` the card names for `--grpc-bind`: the public URL's host (else the
    /// bound address, `localhost` for an unspecified one) and that port.
    #[cfg(feature = "grpc")]
    pub fn grpc_address(&self) -> Result<Option<String>, Box<dyn std::error::Error>> {
        let Some(bind) = self.grpc_bind else {
            return Ok(None);
        };
        if bind.port() == 0 {
            return Err("--grpc-bind needs a fixed port: the card names it".into());
        }
        let host = match &self.public_url {
            Some(url) => {
                let authority = a2a_kit::server::authority_of(url);
                let host = authority.rsplit_once(':').map(|(h, _)| h.to_string());
                host.unwrap_or(authority)
            }
            None if bind.ip().is_unspecified() => "localhost".to_string(),
            None => match bind.ip() {
                std::net::IpAddr::V6(ip) => format!("[{ip}]"),
                ip => ip.to_string(),
            },
        };
        Ok(Some(format!("{host}:{}", bind.port())))
    }

    /// The authenticator the options ask for (API keys, a JWT key source, or both, any one
    /// accepted) and a description of it for the log; `None` for an open agent. An error
    /// names a bad combination or a key that cannot be used.
    pub fn authentication(
        &self,
    ) -> Result<Option<(a2a_kit::auth::AnyOf, String)>, Box<dyn std::error::Error>> {
        use a2a_kit::auth::{AnyOf, ApiKeys, Jwt};
        if self.api_keys.iter().any(|k| k.trim().is_empty()) {
            return Err("--api-key needs a non-empty key".into());
        }
        let mut auth = AnyOf::default();
        let mut described = Vec::new();
        if !self.api_keys.is_empty() {
            let keys = self
                .api_keys
                .iter()
                .enumerate()
                .fold(ApiKeys::header("X-API-Key"), |keys, (i, key)| {
                    keys.key(key, format!("key-{}", i + 1))
                });
            described.push(format!(
                "API keys in X-API-Key ({} key{})",
                keys.len(),
                if keys.len() == 1 { "" } else { "s" }
            ));
            auth = auth.or(keys);
        }
        let jwt = match (&self.jwt_secret, &self.jwt_jwks) {
            (Some(_), Some(_)) => {
                return Err(
                    "--jwt-secret and --jwt-jwks are two sources of JWT keys: pick one".into(),
                );
            }
            (Some(secret), None) => Some(
                Jwt::hmac(secret.expose())
                    .map_err(|e| format!("--jwt-secret (or A2A_JWT_SECRET): {e}"))?,
            ),
            (None, Some(url)) => Some(Jwt::jwks_url(url).map_err(|e| format!("--jwt-jwks: {e}"))?),
            (None, None) => {
                if self.jwt_issuer.is_some() || self.jwt_audience.is_some() {
                    return Err("--jwt-issuer and --jwt-audience need a key to verify tokens with: --jwt-secret SECRET (or A2A_JWT_SECRET) or --jwt-jwks URL".into());
                }
                None
            }
        };
        if let Some(mut jwt) = jwt {
            if let Some(iss) = &self.jwt_issuer {
                jwt = jwt.issuer(iss);
            }
            if let Some(aud) = &self.jwt_audience {
                jwt = jwt.audience(aud);
            }
            described.push(jwt.describe());
            auth = auth.or(jwt);
        }
        Ok((!auth.is_empty()).then(|| (auth, described.join(" or "))))
    }
}

#[cfg(feature = "sqlite")]
async fn open_sqlite(
    a2a: AgentServiceBuilder,
    path: &str,
) -> Result<AgentServiceBuilder, Box<dyn std::error::Error>> {
    let store = a2a_kit::store::SqliteTaskManager::open(path)
        .await
        .map_err(|error| StoreOpenError {
            store: StoreSpec::Sqlite(path.to_string()),
            error,
        })?;
    Ok(a2a.task_manager(store))
}

#[cfg(not(feature = "sqlite"))]
async fn open_sqlite(
    _a2a: AgentServiceBuilder,
    _path: &str,
) -> Result<AgentServiceBuilder, Box<dyn std::error::Error>> {
    Err("this binary was built without the `sqlite` feature".into())
}

#[cfg(feature = "postgres")]
async fn open_postgres(
    a2a: AgentServiceBuilder,
    url: &str,
    lease_secs: u64,
) -> Result<AgentServiceBuilder, Box<dyn std::error::Error>> {
    use a2a_kit::store::{PostgresOptions, PostgresTaskManager};
    let options =
        PostgresOptions::default().lease(std::time::Duration::from_secs(lease_secs.max(1)));
    let store = PostgresTaskManager::connect_with(url, options)
        .await
        .map_err(|error| StoreOpenError {
            store: StoreSpec::Postgres(url.to_string()),
            error,
        })?;
    Ok(a2a.task_manager(store))
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(
    _a2a: AgentServiceBuilder,
    _url: &str,
    _lease_secs: u64,
) -> Result<AgentServiceBuilder, Box<dyn std::error::Error>> {
    Err("this binary was built without the `postgres` feature".into())
}

/// An example's error, as `main` shows it: its message and, where one helps, a hint; never a
/// `Debug` structure such as `Os { code: 98, .. }`.
pub struct Error(Box<dyn std::error::Error>);

impl<E: Into<Box<dyn std::error::Error>>> From<E> for Error {
    fn from(e: E) -> Self {
        Error(e.into())
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// `main` prints an error through `Debug`: this one is the message and a hint.
impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        if let Some(hint) = self.hint() {
            write!(f, "\nhint: {hint}")?;
        }
        Ok(())
    }
}

impl Error {
    /// What to do about it, for the errors a user can fix from the command line.
    pub fn hint(&self) -> Option<String> {
        if let Some(store) = self.0.downcast_ref::<StoreOpenError>() {
            return store.hint();
        }
        let io = self.0.downcast_ref::<std::io::Error>()?;
        Some(
            match io.kind() {
                std::io::ErrorKind::AddrInUse => {
                    "another process is listening on that address: stop it, or pick another with --bind HOST:PORT (port 0 picks a free one)"
                }
                std::io::ErrorKind::AddrNotAvailable => {
                    "that address is not one of this machine's: use --bind 127.0.0.1:PORT or 0.0.0.0:PORT"
                }
                std::io::ErrorKind::PermissionDenied => {
                    "ports below 1024 need privileges: pick a higher port with --bind HOST:PORT"
                }
                _ => return None,
            }
            .to_string(),
        )
    }
}

/// A store that `--store` names and that could not be opened: the store's error, with the
/// option it came from, so the hint fits that store.
#[derive(Debug)]
pub struct StoreOpenError {
    /// What `--store` asked for.
    pub store: StoreSpec,
    /// Why it could not be opened.
    pub error: a2a_kit::store::StoreError,
}

impl std::fmt::Display for StoreOpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for StoreOpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl StoreOpenError {
    /// What to do about it, for this kind of store.
    pub fn hint(&self) -> Option<String> {
        match &self.store {
            StoreSpec::Memory => None,
            StoreSpec::Sqlite(_) if self.error.is_sqlite_in_use() => Some(
                "another process has this SQLite file open, and one file serves one process: \
                 stop that process, or give this one a file of its own (--store sqlite:OTHER.db); \
                 for several processes on one database, use --store postgres://USER@HOST:PORT/DB"
                    .into(),
            ),
            StoreSpec::Sqlite(_) => Some(
                "--store sqlite:PATH needs a file this process may create and write, in a \
                 directory that exists"
                    .into(),
            ),
            StoreSpec::Postgres(url) if self.error.is_missing_database() => {
                Some(create_database_hint(url))
            }
            StoreSpec::Postgres(_) => Some(
                "is PostgreSQL running there, and may that user connect? \
                 --store postgres://USER:PASSWORD@HOST:PORT/DB"
                    .into(),
            ),
        }
    }
}

/// How to create the database a `postgres://` URL names: the `createdb` command for its
/// host, port and user, or the SQL.
fn create_database_hint(url: &str) -> String {
    let target = PgTarget::parse(url);
    let mut createdb = String::from("createdb");
    for (flag, value) in [
        ("-h", &target.host),
        ("-p", &target.port),
        ("-U", &target.user),
    ] {
        if let Some(value) = value {
            createdb.push_str(&format!(" {flag} {value}"));
        }
    }
    let db = target.database.as_deref().unwrap_or("DB");
    format!(
        "create the database first: `{createdb} {db}` (or, in psql, `CREATE DATABASE \"{db}\";`), \
         or name one that exists in --store postgres://USER@HOST:PORT/DB"
    )
}

/// The parts of a `postgres://USER:PASSWORD@HOST:PORT/DB?...` URL a hint names (never the
/// password).
#[derive(Debug, Default, PartialEq, Eq)]
struct PgTarget {
    host: Option<String>,
    port: Option<String>,
    user: Option<String>,
    database: Option<String>,
}

impl PgTarget {
    fn parse(url: &str) -> PgTarget {
        let rest = url
            .strip_prefix("postgres://")
            .or_else(|| url.strip_prefix("postgresql://"))
            .unwrap_or(url);
        let rest = rest.split(['?', '#']).next().unwrap_or_default();
        let (authority, database) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((userinfo, hostport)) => (Some(userinfo), hostport),
            None => (None, authority),
        };
        let user = userinfo.map(|u| u.split(':').next().unwrap_or_default());
        // `[::1]:5432`: the port follows the bracket.
        let (host, port) = match hostport.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => (host, Some(port)),
            _ => (hostport, None),
        };
        let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
        PgTarget {
            host: some(host),
            port: port.and_then(some),
            user: user.and_then(some),
            database: some(database),
        }
    }
}

/// Listen on `addr`; an error names the address and keeps its kind (for [`Error::hint`]).
pub async fn listen(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| std::io::Error::new(e.kind(), format!("could not listen on {addr}: {e}")))
}

/// Run an example: parse the command line, print the card or serve until Ctrl-C.
pub async fn run(
    example: Example,
    make: impl FnOnce(&Cli) -> AgentServiceBuilder,
) -> Result<(), Error> {
    let cli = example.parse();
    let a2a = make(&cli);
    run_with(cli, a2a).await
}

/// Run an agent with an already parsed command line.
pub async fn run_with(cli: Cli, a2a: AgentServiceBuilder) -> Result<(), Error> {
    observe(&cli.observe)?;
    let service = cli.configure(a2a).await?.build()?;
    print_card_or_serve(&cli, service).await
}

/// What every example does with its built service: print the card (`--print-card`) or serve
/// it on `--bind` until Ctrl-C, logging its URL once bound (so `--bind 127.0.0.1:0` logs the
/// port it got).
pub async fn print_card_or_serve(cli: &Cli, service: AgentService) -> Result<(), Error> {
    if cli.print_card {
        // A closed pipe (`--print-card | head`) is not an error worth a panic.
        use std::io::Write;
        let _ = writeln!(
            std::io::stdout().lock(),
            "{}",
            serde_json::to_string_pretty(&service.card_for_url(&cli.url()))?
        );
        return Ok(());
    }
    if let Some(secs) = cli.retention {
        let ttl = std::time::Duration::from_secs(secs);
        let every = ttl.clamp(
            std::time::Duration::from_secs(1),
            std::time::Duration::from_secs(60),
        );
        a2a_kit::store::retention::spawn_retention(service.task_manager().clone(), ttl, every);
    }
    match (service.authenticator(), cli.authentication().ok().flatten()) {
        (None, _) => tracing::warn!(
            "no authentication: anyone who reaches this agent can use it and read its tasks (--api-key KEY, --jwt-secret SECRET, --jwt-jwks URL)"
        ),
        (Some(_), Some((_, described))) => tracing::info!("authentication: {described}"),
        (Some(_), None) => tracing::info!("authentication: configured by the agent"),
    }
    let listener = listen(cli.bind).await?;
    // SIGTERM is a graceful stop from here on, before anyone hears the agent is up.
    let shutdown = a2a_kit_axum::shutdown_signal();
    let local = format!("http://{}", listener.local_addr()?);
    let url = cli
        .public_url
        .as_deref()
        .unwrap_or(&local)
        .trim_end_matches('/');
    tracing::info!(
        "{} listening on {local} (card: {url}/.well-known/agent-card.json)",
        service.card().name
    );
    let limits = a2a_kit_axum::ServerLimits {
        rate_limit_per_ip: cli.rate_limit.map(a2a_kit_axum::RateLimit::per_second),
        ..Default::default()
    };
    #[cfg(feature = "grpc")]
    if let Some(bind) = cli.grpc_bind {
        let grpc = listen(bind).await?;
        tracing::info!("gRPC also on {} (h2c)", grpc.local_addr()?);
        let (service, limits) = (service.clone(), limits.clone());
        tokio::spawn(async move {
            let served = a2a_kit_axum::serve_service_with(
                service,
                grpc,
                a2a_kit_axum::shutdown_signal(),
                limits,
            );
            if let Err(e) = served.await {
                tracing::error!("the --grpc-bind listener stopped: {e}");
            }
        });
    }
    if cli.observe.metrics {
        tracing::info!("metrics: {url}/metrics");
    }
    let mut routes = observed_routes();
    if cli.console {
        tracing::info!("console: {url}/_console/");
        routes = routes.merge(a2a_kit_axum::console::Console::new(&service).router());
    }
    let served =
        a2a_kit_axum::serve_service_with_routes(service, routes, listener, shutdown, limits).await;
    flush_telemetry();
    served?;
    Ok(())
}

/// Log to stderr through `tracing`: `RUST_LOG` when set (e.g. `RUST_LOG=debug`,
/// `RUST_LOG=a2a_kit=debug,info`), else `info`: the URL at start-up, recovered tasks, refused
/// push URLs, failed deliveries and failed tasks with their reason. Installing it twice does
/// nothing the second time. Coloured only on a terminal, and never with `NO_COLOR` set: a
/// log file or a pipe gets plain text.
pub fn init_tracing() {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let _ = tracing_subscriber::registry().with(log_layer()).try_init();
}

/// The stderr log: `RUST_LOG` (else `info`), coloured only on a terminal without `NO_COLOR`.
fn log_layer<S>() -> impl tracing_subscriber::Layer<S> + Send + Sync + 'static
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use tracing_subscriber::Layer as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(colour_on(
            std::io::IsTerminal::is_terminal(&std::io::stderr()),
            std::env::var_os("NO_COLOR").as_deref(),
        ))
        .with_filter(filter)
}

/// Whether to colour a stream: only a terminal, and only without a non-empty `NO_COLOR`
/// (no-color.org).
fn colour_on(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_postgres_url_names_its_target_without_the_password() {
        let t = PgTarget::parse("postgres://app:s3cret@db.internal:6543/agents?sslmode=require");
        assert_eq!(
            t,
            PgTarget {
                host: Some("db.internal".into()),
                port: Some("6543".into()),
                user: Some("app".into()),
                database: Some("agents".into()),
            }
        );
        let t = PgTarget::parse("postgresql://[::1]/tasks");
        assert_eq!(t.host.as_deref(), Some("[::1]"));
        assert_eq!(t.port, None);
        assert_eq!(t.user, None);
        let hint = create_database_hint("postgres://app:s3cret@db.internal:6543/agents");
        assert!(
            hint.contains("`createdb -h db.internal -p 6543 -U app agents`")
                && hint.contains("CREATE DATABASE \"agents\"")
                && !hint.contains("s3cret"),
            "{hint}"
        );
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        use std::ffi::OsStr;
        assert!(colour_on(true, None));
        assert!(colour_on(true, Some(OsStr::new(""))));
        assert!(!colour_on(true, Some(OsStr::new("1"))));
        assert!(!colour_on(false, None));
    }
}
