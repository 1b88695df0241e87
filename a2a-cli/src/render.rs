//! Output: human-readable (with a live view of streams) or JSON.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};

use a2a_kit::client::{A2aClient, ClientError, status_text};
use a2a_kit::protocol::{
    AgentCard, ListTaskPushNotificationConfigsResponse, ListTasksResponse, Message, Part,
    PartContent, SecurityScheme, SendMessageResponse, StreamResponse, Task,
    TaskPushNotificationConfig, TaskState,
};
use a2a_kit::skill::SKILL_SCHEMA_EXTENSION;
use serde::Serialize;
use serde_json::{Value, json};

/// Where and how to print.
pub struct Out {
    json: bool,
    /// Colour what goes to stdout.
    color: bool,
    /// Colour what goes to stderr (errors, hints): decided on its own, so a log file of
    /// errors stays plain while the output is on a terminal, and the other way round.
    err_color: bool,
}

/// State of the live view of a stream.
#[derive(Debug, Default)]
pub struct LiveView {
    /// The cursor is not at the start of a line (an artifact's text is flowing).
    mid_line: bool,
    /// The artifact whose chunks are being printed.
    current: Option<String>,
    /// Artifact ids seen, with their display names.
    names: HashMap<String, String>,
    last_state: Option<TaskState>,
    /// The text of the artifacts printed so far: a final status message that repeats it (an
    /// agent that puts its answer in both) is not printed again.
    answer: String,
}

/// Print every line of `text` after `indent`, keeping the lines' own indentation (a
/// multi-line JSON stays readable under its heading).
fn lines(text: &str, indent: &str) {
    for line in text.lines() {
        if line.is_empty() {
            outln!("");
        } else {
            outln!("{indent}{line}");
        }
    }
}

/// JSON for people: indented, one member a line.
fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// `s` in the colour of SGR `code` when `on`.
fn painted(on: bool, code: &str, s: &str) -> String {
    if on {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

fn state_word(s: TaskState) -> String {
    s.as_str()
        .trim_start_matches("TASK_STATE_")
        .replace('_', "-")
        .to_ascii_lowercase()
}

impl Out {
    pub fn new(json: bool, no_color: bool) -> Self {
        // no-color.org: a NO_COLOR that is set and not empty.
        let allowed = !no_color && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        Out {
            json,
            color: allowed && std::io::stdout().is_terminal(),
            err_color: allowed && std::io::stderr().is_terminal(),
        }
    }

    fn paint(&self, code: &str, s: &str) -> String {
        painted(self.color, code, s)
    }
    /// [`Self::paint`] for stderr.
    fn paint_err(&self, code: &str, s: &str) -> String {
        painted(self.err_color, code, s)
    }
    fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }

    fn state(&self, s: TaskState) -> String {
        let word = state_word(s).to_ascii_uppercase();
        let code = match s {
            TaskState::Completed => "32",
            TaskState::Failed | TaskState::Rejected => "31",
            TaskState::Canceled => "33",
            TaskState::InputRequired | TaskState::AuthRequired => "35",
            _ => "36",
        };
        self.paint(&format!("1;{code}"), &word)
    }

    fn print_json<T: Serialize + ?Sized>(&self, v: &T) {
        match serde_json::to_string_pretty(v) {
            Ok(s) => outln!("{s}"),
            Err(e) => eprintln!("error: could not render JSON: {e}"),
        }
    }

    fn print_line_json<T: Serialize + ?Sized>(&self, v: &T) {
        if let Ok(s) = serde_json::to_string(v) {
            outln!("{s}");
        }
    }

    // ----- card -----

    pub fn card(&self, card: &AgentCard, client: &A2aClient) {
        if self.json {
            return self.print_json(card);
        }
        outln!(
            "{}  {}",
            self.bold(&card.name),
            self.dim(&format!("v{}", card.version))
        );
        if !card.description.is_empty() {
            outln!("{}", card.description);
        }
        if let Some(p) = &card.provider {
            outln!("{} {} ({})", self.dim("provider:"), p.organization, p.url);
        }
        if let Some(d) = &card.documentation_url {
            outln!("{} {d}", self.dim("docs:"));
        }
        outln!("\n{}", self.bold("Interfaces"));
        let chosen = client.interface();
        // A hybrid card's 0.3 interface, chosen from its 0.3 fields, is listed too.
        let extra = (!card.supported_interfaces.contains(&chosen)).then_some(&chosen);
        for i in card.supported_interfaces.iter().chain(extra) {
            let mark = if *i == chosen {
                self.paint("32", "*")
            } else {
                " ".into()
            };
            let tenant = i
                .tenant
                .as_deref()
                .map(|t| format!(" tenant={t}"))
                .unwrap_or_default();
            let version = if i.protocol_version.is_empty() {
                "?"
            } else {
                &i.protocol_version
            };
            outln!(
                " {mark} {:<10} {:<5} {}{tenant}",
                i.protocol_binding,
                version,
                i.url
            );
        }
        let c = &card.capabilities;
        let yes = |b: Option<bool>| if b.unwrap_or(false) { "yes" } else { "no" };
        outln!(
            "\n{} streaming: {}  push notifications: {}  extended card: {}",
            self.bold("Capabilities"),
            yes(c.streaming),
            yes(c.push_notifications),
            yes(c.extended_agent_card)
        );
        for e in &c.extensions {
            let req = if e.required { " (required)" } else { "" };
            outln!("  extension {}{req}", e.uri.as_deref().unwrap_or("?"));
        }
        outln!(
            "{} in: {}  out: {}",
            self.bold("Modes"),
            card.default_input_modes.join(", "),
            card.default_output_modes.join(", ")
        );
        if !card.security_schemes.is_empty() {
            outln!("\n{}", self.bold("Security"));
            for (name, s) in &card.security_schemes {
                let what = match s {
                    SecurityScheme::ApiKeySecurityScheme(k) => {
                        format!("API key in {} `{}` (use --api-key)", k.location, k.name)
                    }
                    SecurityScheme::HttpAuthSecurityScheme(h) => {
                        format!("HTTP {} (use --token for Bearer)", h.scheme)
                    }
                    SecurityScheme::Oauth2SecurityScheme(_) => {
                        "OAuth 2.0 (pass the access token with --token)".into()
                    }
                    SecurityScheme::OpenIdConnectSecurityScheme(o) => {
                        format!("OpenID Connect {} (--token)", o.open_id_connect_url)
                    }
                    SecurityScheme::MtlsSecurityScheme(_) => "mutual TLS".into(),
                };
                outln!("  {name}: {what}");
            }
        }
        outln!("\n{} ({})", self.bold("Skills"), card.skills.len());
        let schemas = c
            .extensions
            .iter()
            .find(|e| e.uri.as_deref() == Some(SKILL_SCHEMA_EXTENSION))
            .and_then(|e| e.params.as_ref())
            .and_then(|p| p.get("skills"));
        for s in &card.skills {
            outln!("  {}  {}", self.bold(&s.id), self.dim(&s.name));
            if !s.description.is_empty() {
                outln!("      {}", s.description);
            }
            if !s.tags.is_empty() {
                outln!("      {} {}", self.dim("tags:"), s.tags.join(", "));
            }
            if !s.input_modes.is_empty() || !s.output_modes.is_empty() {
                let or_default = |modes: &[String]| {
                    if modes.is_empty() {
                        "(the agent's)".to_string()
                    } else {
                        modes.join(", ")
                    }
                };
                outln!(
                    "      {} in: {}  out: {}",
                    self.dim("modes:"),
                    or_default(&s.input_modes),
                    or_default(&s.output_modes)
                );
            }
            if !s.examples.is_empty() {
                outln!("      {} {}", self.dim("e.g."), s.examples.join(" | "));
            }
            if let Some(input) = schemas.and_then(|all| all.get(&s.id)?.get("input")) {
                outln!("      {}", self.dim("input (a data part), JSON Schema:"));
                // `$schema` names the dialect: noise here.
                let mut input = input.clone();
                if let Some(o) = input.as_object_mut() {
                    o.retain(|k, _| k != "$schema");
                }
                lines(&pretty(&input), "        ");
            }
        }
    }

    // ----- tasks and messages -----

    /// Each part under its heading: every line of a text or of a data part's JSON indented
    /// by `indent`, the JSON's own indentation kept.
    fn parts(&self, parts: &[Part], indent: &str) {
        for p in parts {
            match &p.content {
                PartContent::Text(t) => lines(t, indent),
                other => lines(&self.part_summary(other, p), indent),
            }
        }
    }

    fn part_summary(&self, content: &PartContent, p: &Part) -> String {
        let media = p
            .media_type
            .as_deref()
            .map(|m| format!(", {m}"))
            .unwrap_or_default();
        let name = p.filename.as_deref().unwrap_or("file");
        match content {
            PartContent::Text(t) => t.clone(),
            PartContent::Data(v) => pretty(v),
            PartContent::Raw(b) => self.dim(&format!("[{name}{media}, {} bytes]", b.len())),
            PartContent::Url(u) => self.dim(&format!("[{name}{media}: {u}]")),
        }
    }

    fn message_body(&self, m: &Message, indent: &str) {
        match status_text(m) {
            Some(t)
                if m.parts.iter().all(|p| {
                    p.as_text().is_some() || p.as_data().is_some_and(|d| d.get("text").is_some())
                }) =>
            {
                lines(&t, indent)
            }
            _ => self.parts(&m.parts, indent),
        }
    }

    pub fn task(&self, t: &Task) {
        if self.json {
            return self.print_json(t);
        }
        outln!(
            "{} {}  {}",
            self.bold("task"),
            t.id,
            self.state(t.status.state)
        );
        if !t.context_id.is_empty() {
            outln!("  {} {}", self.dim("context:"), t.context_id);
        }
        if let Some(ts) = &t.status.timestamp {
            outln!(
                "  {} {}",
                self.dim("updated:"),
                serde_json::to_value(ts)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            );
        }
        // An agent that repeats its answer in the final status message: shown once, below.
        let answer = artifacts_text(t);
        if let Some(m) = t
            .status
            .message
            .as_ref()
            .filter(|m| answer.is_empty() || m.text() != answer)
        {
            outln!("  {}", self.dim("status message:"));
            self.message_body(m, "    ");
        }
        for a in &t.artifacts {
            let name = a.name.as_deref().unwrap_or(&a.artifact_id);
            outln!("  {} {}", self.dim("artifact"), self.bold(name));
            self.parts(&a.parts, "    ");
        }
        if !t.history.is_empty() {
            let n = counted(t.history.len(), "message");
            outln!("  {} ({n})", self.dim("history"));
            for m in &t.history {
                let who = format!("{:?}", m.role).to_ascii_lowercase();
                let text = if !answer.is_empty() && m.text() == answer {
                    // The final status message that repeats the artifact.
                    "(the answer, above)".to_string()
                } else {
                    status_text(m)
                        .unwrap_or_else(|| format!("[{}]", counted(m.parts.len(), "part")))
                };
                outln!(
                    "    {} {}",
                    self.dim(&format!("{who}:")),
                    text.lines().next().unwrap_or("")
                );
            }
        }
    }

    pub fn send_response(&self, r: &SendMessageResponse, url: &str) {
        if self.json {
            return self.print_json(r);
        }
        match r {
            SendMessageResponse::Message(m) => self.message_body(m, ""),
            SendMessageResponse::Task(t) => {
                self.task(t);
                self.hint(t.status.state, &t.id, url);
            }
        }
    }

    fn hint(&self, state: TaskState, id: &str, url: &str) {
        let h = match state {
            TaskState::InputRequired => format!("reply with: a2a send {url} --task {id} \"...\""),
            TaskState::AuthRequired => {
                format!("the agent needs authorization; then: a2a send {url} --task {id} \"...\"")
            }
            TaskState::Submitted | TaskState::Working => {
                format!("follow it with: a2a subscribe {url} {id}")
            }
            _ => return,
        };
        eprintln!("{}", self.paint_err("2", &h));
    }

    // ----- the live view -----

    pub fn end_line(&self, v: &mut LiveView) {
        if v.mid_line {
            outln!("");
            v.mid_line = false;
        }
        let _ = std::io::stdout().flush();
    }

    pub fn event(&self, v: &mut LiveView, ev: &StreamResponse) {
        if self.json {
            return self.print_line_json(ev);
        }
        match ev {
            StreamResponse::Message(m) => {
                self.end_line(v);
                self.message_body(m, "");
            }
            StreamResponse::Task(t) => {
                self.end_line(v);
                if v.last_state.is_none() {
                    outln!(
                        "{} {}  {}",
                        self.bold("task"),
                        t.id,
                        self.state(t.status.state)
                    );
                } else if v.last_state != Some(t.status.state) {
                    outln!("{} {}", self.dim("▸"), self.state(t.status.state));
                }
                v.last_state = Some(t.status.state);
                if let Some(m) = &t.status.message {
                    self.message_body(m, "  ");
                }
                for a in &t.artifacts {
                    if !v.names.contains_key(&a.artifact_id) {
                        let name = a.name.clone().unwrap_or_else(|| a.artifact_id.clone());
                        outln!("{}", self.dim(&format!("── {name} ──")));
                        self.parts(&a.parts, "");
                        v.names.insert(a.artifact_id.clone(), name);
                    }
                }
            }
            StreamResponse::StatusUpdate(u) => {
                let s = u.status.state;
                let text = u.status.message.as_ref().and_then(status_text);
                if s == TaskState::Working && v.last_state == Some(TaskState::Working) {
                    if let Some(t) = text {
                        self.end_line(v);
                        outln!("  {} {}", self.dim("…"), self.dim(&t));
                    }
                    return;
                }
                self.end_line(v);
                match text {
                    Some(t) if s == TaskState::Working => {
                        outln!("{} {}  {}", self.dim("▸"), self.state(s), self.dim(&t))
                    }
                    // The answer again (the agent repeats it in the final status): once is enough.
                    Some(t) if s.is_terminal() && !v.answer.is_empty() && t == v.answer => {
                        outln!("{} {}", self.dim("▸"), self.state(s))
                    }
                    Some(t) => {
                        outln!("{} {}", self.dim("▸"), self.state(s));
                        for line in t.lines() {
                            outln!("  {line}");
                        }
                    }
                    None => outln!("{} {}", self.dim("▸"), self.state(s)),
                }
                v.last_state = Some(s);
            }
            StreamResponse::ArtifactUpdate(u) => {
                let a = &u.artifact;
                let new = !v.names.contains_key(&a.artifact_id);
                if new || (v.current.as_deref() != Some(&a.artifact_id)) || !u.append {
                    self.end_line(v);
                    let name = a
                        .name
                        .clone()
                        .or_else(|| v.names.get(&a.artifact_id).cloned())
                        .unwrap_or_else(|| a.artifact_id.clone());
                    outln!("{}", self.dim(&format!("── {name} ──")));
                    v.names.insert(a.artifact_id.clone(), name);
                    v.current = Some(a.artifact_id.clone());
                }
                for p in &a.parts {
                    match &p.content {
                        PartContent::Text(t) => {
                            out!("{t}");
                            v.answer.push_str(t);
                            v.mid_line = !t.ends_with('\n') && (v.mid_line || !t.is_empty());
                        }
                        other => {
                            self.end_line(v);
                            lines(&self.part_summary(other, p), "");
                        }
                    }
                }
                let _ = std::io::stdout().flush();
                if u.last_chunk {
                    self.end_line(v);
                    v.current = None;
                }
            }
        }
    }

    pub fn stream_end(&self, state: TaskState, id: &str, url: &str) {
        if !self.json {
            self.hint(state, id, url);
        }
    }

    // ----- lists -----

    pub fn task_list(&self, tasks: &[Task], next: Option<&str>, total: i64) {
        if self.json {
            let mut v = json!({"tasks": tasks, "totalSize": total});
            if let Some(n) = next {
                v["nextPageToken"] = Value::String(n.to_string());
            }
            return self.print_json(&v);
        }
        if tasks.is_empty() {
            outln!("{}", self.dim("no tasks"));
        }
        for t in tasks {
            let when = t
                .status
                .timestamp
                .as_ref()
                .and_then(|ts| serde_json::to_value(ts).ok())
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            let summary = t
                .status
                .message
                .as_ref()
                .and_then(status_text)
                .unwrap_or_default();
            let summary: String = summary
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(60)
                .collect();
            outln!(
                "{}  {:<24} {}  {}",
                t.id,
                self.state(t.status.state),
                self.dim(&when),
                summary
            );
        }
        let more = next
            .filter(|n| !n.is_empty())
            .map(|n| format!("; next page: --page-token {n}"))
            .unwrap_or_default();
        outln!(
            "{}",
            self.dim(&format!("{} of {total} task(s){more}", tasks.len()))
        );
    }

    pub fn list_page(&self, page: &ListTasksResponse) {
        if self.json {
            return self.print_json(page);
        }
        self.task_list(
            &page.tasks,
            Some(&page.next_page_token),
            i64::from(page.total_size),
        );
    }

    // ----- push configs -----

    pub fn push_config(&self, c: &TaskPushNotificationConfig) {
        if self.json {
            return self.print_json(c);
        }
        outln!(
            "{} {}  task {}  → {}",
            self.bold("push config"),
            c.id.as_deref().unwrap_or("?"),
            c.task_id.as_deref().unwrap_or("?"),
            c.url
        );
        if let Some(a) = &c.authentication {
            outln!("  {} {}", self.dim("authentication:"), a.scheme);
        }
        if c.token.is_some() {
            outln!("  {} set", self.dim("token:"));
        }
    }

    pub fn push_list(&self, l: &ListTaskPushNotificationConfigsResponse) {
        if self.json {
            return self.print_json(l);
        }
        if l.configs.is_empty() {
            outln!("{}", self.dim("no push configs"));
        }
        for c in &l.configs {
            self.push_config(c);
        }
    }

    pub fn deleted(&self, task_id: &str, id: &str) {
        if self.json {
            return self.print_json(&json!({}));
        }
        outln!("deleted push config {id} of task {task_id}");
    }

    // ----- errors -----

    pub fn error_usage(&self, msg: &str) {
        if self.json {
            self.print_json(&json!({"error": {"message": msg, "kind": "usage"}}));
        } else {
            eprintln!("{} {msg}", self.paint_err("1;31", "error:"));
        }
    }

    /// Report `e`, from a command given the agent URL `target`.
    pub fn error(&self, e: &ClientError, target: &str) {
        if self.json {
            let mut err = json!({"message": e.to_string(), "kind": kind(e)});
            if let Some(a) = e.agent_error() {
                err["code"] = json!(a.code);
                err["reason"] = json!(a.reason);
                err["name"] = json!(a.name());
                err["message"] = json!(a.message);
                if let Some(s) = a.http_status {
                    err["httpStatus"] = json!(s);
                }
            }
            if let ClientError::Http { status, .. } = e {
                err["httpStatus"] = json!(status);
            }
            return self.print_json(&json!({"error": err}));
        }
        let head = self.paint_err("1;31", "error:");
        match e {
            ClientError::Agent(a) => {
                let name = a.name().unwrap_or("A2A error");
                let reason = a
                    .reason
                    .as_deref()
                    .map(|r| format!(", {r}"))
                    .unwrap_or_default();
                eprintln!("{head} {name} ({}{reason}): {}", a.code, a.message);
            }
            // Not the agent's answer: nothing A2A is at that URL.
            ClientError::Http {
                status: 404, url, ..
            } => {
                eprintln!("{head} HTTP 404 (not found) from {url}: no agent answers there");
            }
            other => eprintln!("{head} {other}"),
        }
        let hint = match e {
            ClientError::Http { status: 404, .. } => Some(not_found_hint(target)),
            _ => hint(e).map(str::to_string),
        };
        if let Some(h) = hint {
            eprintln!("{}", self.paint_err("2", &format!("hint: {h}")));
        }
    }
}

/// What a 404 without an A2A error body means: the client called the URL the agent card names
/// for its interface, and no agent is there.
fn not_found_hint(target: &str) -> String {
    format!(
        "the agent card read from {target} likely names a URL where no agent is (`a2a card \
         {target}` shows it): an agent mounted under a path, whose card is also served at the \
         host's root, must set its public URL to that path"
    )
}

fn kind(e: &ClientError) -> &'static str {
    match e {
        ClientError::Unreachable { .. } => "unreachable",
        ClientError::Timeout { .. } => "timeout",
        ClientError::NotAnAgent { .. } => "not-an-agent",
        ClientError::UnsupportedVersion { .. } => "unsupported-version",
        ClientError::NoSupportedInterface { .. } => "no-supported-interface",
        ClientError::Agent(_) => "agent-error",
        ClientError::Http { .. } => "http",
        ClientError::InvalidResponse(_) => "invalid-response",
        ClientError::Connection(_) => "connection-lost",
        ClientError::InvalidUrl(_) => "invalid-url",
        ClientError::Interceptor(_) => "request",
        _ => "other",
    }
}

fn hint(e: &ClientError) -> Option<&'static str> {
    Some(match e {
        ClientError::Unreachable { reason, .. } if reason.contains("certificate") => {
            "the agent's TLS certificate is not trusted: trust it or its CA with --ca-cert FILE (PEM)"
        }
        ClientError::Unreachable { .. } => "is the agent running, and is the host and port right?",
        ClientError::Timeout { .. } => {
            "the agent did not answer in time; raise --timeout, or use --stream / --no-wait for long tasks"
        }
        ClientError::NotAnAgent { .. } => {
            "an A2A agent serves its card at /.well-known/agent-card.json; check the URL"
        }
        ClientError::UnsupportedVersion { .. } => {
            "this client speaks A2A 1.0, and 0.3 over JSONRPC and HTTP+JSON; the agent must offer one (the one --protocol-version names, if given)"
        }
        ClientError::NoSupportedInterface { .. } => {
            "this client speaks JSONRPC, HTTP+JSON and GRPC (plain HTTP/2); drop --binding to let it choose"
        }
        ClientError::Http { status: 401, .. } => {
            "the agent wants credentials: --token or --api-key"
        }
        ClientError::Http { status: 403, .. } => "the credentials are not allowed to do this",
        ClientError::Agent(a) => match a.code {
            -32001 => "no such task here; `a2a list URL` shows the tasks you can see",
            -32002 => "the task has already finished, so it cannot be canceled",
            -32003 => "this agent does not support push notifications (see `a2a card URL`)",
            -32004 => {
                "the agent does not support this (e.g. streaming, or following a task that has finished: use `a2a get`)"
            }
            -32005 => {
                "the agent does not accept this content; `a2a card URL` lists its input modes"
            }
            -32006 => "the agent produced a response it considers invalid",
            -32007 => "the agent declares an extended card but has none configured",
            -32008 => "activate the extension the agent requires with --extension URI",
            -32009 => "the agent does not accept A2A version 1.0",
            -32602 => "the request was rejected as invalid; check the arguments (and --skill)",
            -32601 => "the agent does not know this operation; it may not speak A2A 1.0",
            -32700 | -32600 => "the agent could not read the request",
            _ => return None,
        },
        _ => return None,
    })
}

/// The text of a task's artifacts, in order.
fn artifacts_text(t: &Task) -> String {
    t.artifacts
        .iter()
        .flat_map(|a| a.parts.iter().filter_map(|p| p.as_text()))
        .collect()
}

/// `n` things, in English: "1 message", "2 messages".
fn counted(n: usize, thing: &str) -> String {
    match n {
        1 => format!("1 {thing}"),
        n => format!("{n} {thing}s"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_read_as_english() {
        assert_eq!(super::counted(1, "message"), "1 message");
        assert_eq!(super::counted(0, "part"), "0 parts");
        assert_eq!(super::counted(2, "part"), "2 parts");
    }
}
