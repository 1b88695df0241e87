//! Rows: how tasks, messages, artifacts and events map to the schema's tables, and the SQL
//! that reads and writes them inside a transaction.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::super::{ListQuery, Owner, Seq, StoreError, TaskView, apply_event};
use super::connection::Db;
use crate::protocol::{
    Artifact, Message, StreamResponse, Task, TaskArtifactUpdateEvent, TaskStatus, Timestamp,
};

// ----- row helpers -------------------------------------------------------------------------

pub(super) fn to_json<T: Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value)
        .map_err(|e| StoreError::Backend(format!("could not encode a row: {e}")))
}

pub(super) fn from_json<T: DeserializeOwned>(s: &str) -> Result<T, StoreError> {
    serde_json::from_str(s).map_err(|e| StoreError::Backend(format!("corrupt row: {e}")))
}

pub(super) fn millis(ts: Option<Timestamp>) -> i64 {
    ts.unwrap_or_else(Timestamp::now).0.timestamp_millis()
}

pub(super) fn now_millis() -> i64 {
    Timestamp::now().0.timestamp_millis()
}

pub(super) fn clamp(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub(super) fn message_kind(m: &Message) -> Option<&str> {
    m.metadata
        .as_ref()?
        .get(crate::protocol::STATUS_MESSAGE_KIND_KEY)?
        .as_str()
}

pub(super) fn event_kind(ev: &StreamResponse) -> &'static str {
    match ev {
        StreamResponse::Task(_) => "task",
        StreamResponse::Message(_) => "message",
        StreamResponse::StatusUpdate(_) => "statusUpdate",
        StreamResponse::ArtifactUpdate(_) => "artifactUpdate",
    }
}

pub(super) fn insert_message(
    tx: &Connection,
    task_id: &str,
    pos: i64,
    m: &Message,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO messages (task_id, pos, message_id, role, kind, created_at, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .db()?
    .execute(params![task_id, pos, m.message_id, m.role.as_str(), message_kind(m), now_millis(), to_json(m)?])
    .db()?;
    Ok(())
}

pub(super) fn insert_artifact(
    tx: &Connection,
    task_id: &str,
    pos: i64,
    a: &Artifact,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO artifacts (task_id, pos, artifact_id, body) VALUES (?1, ?2, ?3, ?4)",
    )
    .db()?
    .execute(params![task_id, pos, a.artifact_id, to_json(a)?])
    .db()?;
    Ok(())
}

pub(super) fn insert_event(
    tx: &Connection,
    task_id: &str,
    seq: i64,
    ev: &StreamResponse,
) -> Result<(), StoreError> {
    tx.prepare_cached("INSERT INTO events (task_id, seq, kind, state, created_at, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        .db()?
        .execute(params![task_id, seq, event_kind(ev), ev.state().map(|s| s.as_str()), now_millis(), to_json(ev)?])
        .db()?;
    Ok(())
}

pub(super) fn task_exists(conn: &Connection, task_id: &str) -> Result<bool, StoreError> {
    conn.prepare_cached("SELECT 1 FROM tasks WHERE id = ?1")
        .db()?
        .query_row([task_id], |_| Ok(()))
        .optional()
        .db()
        .map(|r| r.is_some())
}

/// The JSON of a task stored compact; `None` for any other task, or none.
pub(super) fn compact_body(conn: &Connection, task_id: &str) -> Result<Option<String>, StoreError> {
    conn.prepare_cached("SELECT body FROM tasks WHERE id = ?1")
        .db()?
        .query_row([task_id], |r| r.get::<_, Option<String>>(0))
        .optional()
        .db()
        .map(Option::flatten)
}

pub(super) fn require_task(conn: &Connection, task_id: &str) -> Result<(), StoreError> {
    if task_exists(conn, task_id)? {
        Ok(())
    } else {
        Err(StoreError::TaskNotFound(task_id.to_string()))
    }
}

/// The task columns [`raw_row`] reads, in this order.
pub(super) const TASK_COLUMNS: &str = "id, context_id, status, metadata, skill_id, last_seq, status_ts, n_messages, n_artifacts, body, owned_by";

/// A `tasks` row as read.
pub(super) struct RawRow {
    id: String,
    context_id: String,
    status: String,
    metadata: Option<String>,
    skill_id: Option<String>,
    last_seq: i64,
    status_ts: i64,
    n_messages: i64,
    n_artifacts: i64,
    /// The task's JSON, if it is stored compact.
    pub(super) body: Option<String>,
    owner: Option<String>,
}

pub(super) fn raw_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        id: r.get(0)?,
        context_id: r.get(1)?,
        status: r.get(2)?,
        metadata: r.get(3)?,
        skill_id: r.get(4)?,
        last_seq: r.get(5)?,
        status_ts: r.get(6)?,
        n_messages: r.get(7)?,
        n_artifacts: r.get(8)?,
        body: r.get(9)?,
        owner: r.get(10)?,
    })
}

/// A task without history and artifacts (whole, if it is stored compact), with the row's
/// bookkeeping.
pub(super) struct TaskRow {
    pub(super) task: Task,
    /// Stored compact (one row holding the whole task): `task` is complete.
    pub(super) compact: bool,
    pub(super) skill_id: Option<String>,
    pub(super) owner: Option<Owner>,
    pub(super) last_seq: i64,
    pub(super) status_ts: i64,
    pub(super) n_messages: i64,
    pub(super) n_artifacts: i64,
}

pub(super) fn decode_row(raw: RawRow) -> Result<TaskRow, StoreError> {
    if let Some(body) = &raw.body {
        return Ok(TaskRow {
            task: from_json(body)?,
            compact: true,
            skill_id: raw.skill_id,
            owner: raw.owner.map(Owner::from_stored),
            last_seq: raw.last_seq,
            status_ts: raw.status_ts,
            n_messages: raw.n_messages,
            n_artifacts: raw.n_artifacts,
        });
    }
    let status: TaskStatus = from_json(&raw.status)?;
    let metadata = raw.metadata.as_deref().map(from_json).transpose()?;
    Ok(TaskRow {
        compact: false,
        task: Task {
            id: raw.id,
            context_id: raw.context_id,
            status,
            artifacts: Vec::new(),
            history: Vec::new(),
            metadata,
        },
        skill_id: raw.skill_id,
        owner: raw.owner.map(Owner::from_stored),
        last_seq: raw.last_seq,
        status_ts: raw.status_ts,
        n_messages: raw.n_messages,
        n_artifacts: raw.n_artifacts,
    })
}

/// Fill in the history and artifacts `view` asks for (trim them, for a task stored compact).
pub(super) fn load_view(
    conn: &Connection,
    task: &mut Task,
    compact: bool,
    view: TaskView,
) -> Result<(), StoreError> {
    if compact {
        view.apply(task);
        return Ok(());
    }
    load_history(conn, task, view.history_length)?;
    if view.include_artifacts {
        load_artifacts(conn, task)?;
    }
    Ok(())
}

/// The task's history: its last `length` messages (all: `None`), oldest first.
fn load_history(
    conn: &Connection,
    task: &mut Task,
    length: Option<usize>,
) -> Result<(), StoreError> {
    match length {
        Some(0) => {}
        None => {
            let mut stmt = conn
                .prepare_cached("SELECT body FROM messages WHERE task_id = ?1 ORDER BY pos")
                .db()?;
            let rows = stmt.query_map([&task.id], |r| r.get::<_, String>(0)).db()?;
            for body in rows {
                task.history.push(from_json(&body.db()?)?);
            }
        }
        Some(n) => {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT body FROM messages WHERE task_id = ?1 ORDER BY pos DESC LIMIT ?2",
                )
                .db()?;
            let rows = stmt
                .query_map(params![task.id, clamp(n)], |r| r.get::<_, String>(0))
                .db()?;
            for body in rows {
                task.history.push(from_json(&body.db()?)?);
            }
            task.history.reverse();
        }
    }
    Ok(())
}

/// The task's artifacts, each with the chunks streamed into it.
fn load_artifacts(conn: &Connection, task: &mut Task) -> Result<(), StoreError> {
    let mut stmt = conn
        .prepare_cached("SELECT pos, body FROM artifacts WHERE task_id = ?1 ORDER BY pos")
        .db()?;
    let rows = stmt
        .query_map([&task.id], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })
        .db()?;
    let mut positions = Vec::new();
    for row in rows {
        let (pos, body) = row.db()?;
        positions.push(pos);
        task.artifacts.push(from_json(&body)?);
    }
    if positions.is_empty() {
        return Ok(());
    }
    // The streamed chunks, in the order they were appended (apply_event's append).
    let mut stmt = conn
        .prepare_cached(
            "SELECT pos, parts, metadata FROM artifact_chunks WHERE task_id = ?1 ORDER BY pos, seq",
        )
        .db()?;
    let rows = stmt
        .query_map([&task.id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })
        .db()?;
    for row in rows {
        let (pos, parts, metadata) = row.db()?;
        let Ok(i) = positions.binary_search(&pos) else {
            continue;
        };
        let a = &mut task.artifacts[i];
        a.parts
            .extend(from_json::<Vec<crate::protocol::Part>>(&parts)?);
        if let Some(m) = metadata {
            a.metadata = Some(from_json(&m)?);
        }
    }
    Ok(())
}

pub(super) fn get_row(conn: &Connection, task_id: &str) -> Result<Option<TaskRow>, StoreError> {
    get_raw_row(conn, task_id)?.map(decode_row).transpose()
}

pub(super) fn get_raw_row(conn: &Connection, task_id: &str) -> Result<Option<RawRow>, StoreError> {
    conn.prepare_cached(&format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"))
        .db()?
        .query_row([task_id], raw_row)
        .optional()
        .db()
}

/// ListTasks' two statements for `q` after `cursor`, each with its parameters: the count of
/// the owner's matching tasks, and the page (one row more than a page says another follows).
pub(super) fn list_statements(
    q: &ListQuery,
    cursor: Option<&(i64, String)>,
) -> [(String, Vec<rusqlite::types::Value>); 2] {
    use rusqlite::types::Value;
    let (filter, count_args) = list_filter(q);
    let count = format!("SELECT COUNT(*) FROM tasks WHERE {filter}");
    let mut args = count_args.clone();
    let mut page = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE {filter}");
    if let Some((ts, id)) = cursor {
        args.push(Value::Integer(*ts));
        args.push(Value::Text(id.clone()));
        page.push_str(&format!(
            " AND (status_ts, id) < (?{}, ?{})",
            args.len() - 1,
            args.len()
        ));
    }
    args.push(Value::Integer(clamp(q.page_size).saturating_add(1)));
    page.push_str(&format!(
        " ORDER BY status_ts DESC, id DESC LIMIT ?{}",
        args.len()
    ));
    [(count, count_args), (page, args)]
}

/// Parameters as SQL literals (for the tests, which EXPLAIN ListTasks' statements).
pub(super) fn literals(args: &[rusqlite::types::Value]) -> Vec<String> {
    use rusqlite::types::Value;
    args.iter()
        .map(|arg| match arg {
            Value::Null => String::from("NULL"),
            Value::Integer(n) => n.to_string(),
            Value::Real(x) => x.to_string(),
            Value::Text(t) => format!("'{}'", t.replace('\'', "''")),
            Value::Blob(b) => format!(
                "X'{}'",
                b.iter().map(|x| format!("{x:02X}")).collect::<String>()
            ),
        })
        .collect()
}

/// The WHERE clause and parameters of a ListTasks query (without the cursor).
fn list_filter(q: &ListQuery) -> (String, Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value;
    // Always one owner's tasks (`IS`: NULL for tasks without one).
    let mut args = vec![match &q.owner {
        Some(o) => Value::Text(o.as_str().to_string()),
        None => Value::Null,
    }];
    let mut clauses = vec![String::from("owned_by IS ?1")];
    if let Some(c) = &q.context_id {
        args.push(Value::Text(c.clone()));
        clauses.push(format!("context_id = ?{}", args.len()));
    }
    if let Some(s) = q.status {
        args.push(Value::Text(s.as_str().to_string()));
        clauses.push(format!("state = ?{}", args.len()));
    }
    if let Some(t) = q.status_timestamp_after {
        args.push(Value::Integer(t.0.timestamp_millis()));
        clauses.push(format!("status_ts >= ?{}", args.len()));
    }
    (clauses.join(" AND "), args)
}

/// Insert a new task and its creation event (event 1), inside the caller's transaction.
pub(super) fn create_in(
    tx: &Connection,
    task: Task,
    skill_id: Option<String>,
    owner: Option<Owner>,
) -> Result<Seq, StoreError> {
    create_with_events_in(tx, task, None, skill_id, owner, &[])
}

/// Store a new task as `first` and `events` leave it (`last`, checked by the caller with
/// `task_after`): the final row, history and artifacts written once, then the log (`first`'s
/// snapshot and each event), inside the caller's transaction.
pub(super) fn create_with_events_in(
    tx: &Connection,
    first: Task,
    last: Option<&Task>,
    skill_id: Option<String>,
    owner: Option<Owner>,
    events: &[StreamResponse],
) -> Result<Seq, StoreError> {
    let row = last.unwrap_or(&first);
    if task_exists(tx, &row.id)? {
        return Err(StoreError::TaskExists(row.id.clone()));
    }
    let last_seq = 1 + events.len() as Seq;
    let status_ts = millis(row.status.timestamp);
    let terminal_at = row.status.state.is_terminal().then_some(status_ts);
    tx.prepare_cached(
        "INSERT INTO tasks (id, context_id, state, status_ts, terminal_at, skill_id, status, metadata, \
         last_seq, n_messages, n_artifacts, created_at, owned_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )
    .db()?
    .execute(params![
        row.id,
        row.context_id,
        row.status.state.as_str(),
        status_ts,
        terminal_at,
        skill_id,
        to_json(&row.status)?,
        row.metadata.as_ref().map(to_json).transpose()?,
        last_seq as i64,
        clamp(row.history.len()),
        clamp(row.artifacts.len()),
        now_millis(),
        owner.as_ref().map(Owner::as_str),
    ])
    .db()?;
    for (i, m) in row.history.iter().enumerate() {
        insert_message(tx, &row.id, clamp(i), m)?;
    }
    for (i, a) in row.artifacts.iter().enumerate() {
        insert_artifact(tx, &row.id, clamp(i), a)?;
    }
    let id = first.id.clone();
    insert_event(tx, &id, 1, &StreamResponse::Task(first))?;
    for (i, event) in events.iter().enumerate() {
        insert_event(tx, &id, 2 + i as i64, event)?;
    }
    Ok(last_seq)
}

/// Store `task`, created finished, in its compact form: one row whose `body` is `json` (the
/// task's JSON) and whose log is that final snapshot under `last_seq`, with one statement.
pub(super) fn create_compact_in(
    tx: &Connection,
    task: &Task,
    json: &str,
    skill_id: Option<String>,
    owner: Option<Owner>,
    last_seq: Seq,
) -> Result<Seq, StoreError> {
    let status_ts = millis(task.status.timestamp);
    // One statement (the caller runs it without a savepoint): a duplicate id is the key's
    // refusal, which changes nothing.
    tx.prepare_cached(
        "INSERT INTO tasks (id, context_id, state, status_ts, terminal_at, skill_id, status, metadata, \
         last_seq, n_messages, n_artifacts, created_at, body, owned_by) VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )
    .db()?
    .execute(params![
        task.id,
        task.context_id,
        task.status.state.as_str(),
        status_ts,
        skill_id,
        to_json(&task.status)?,
        task.metadata.as_ref().map(to_json).transpose()?,
        last_seq as i64,
        clamp(task.history.len()),
        clamp(task.artifacts.len()),
        now_millis(),
        json,
        owner.as_ref().map(Owner::as_str),
    ])
    .map_err(|e| match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
        {
            StoreError::TaskExists(task.id.clone())
        }
        e => StoreError::Backend(e.to_string()),
    })?;
    Ok(last_seq)
}

/// For an update of an artifact the task has, an empty stand-in for it in `task` (an append
/// needs only to know that the artifact exists; its chunk is stored as a row of its own,
/// `artifact_chunks`) and the artifact's position.
fn stand_in_artifact(
    tx: &Connection,
    task_id: &str,
    task: &mut Task,
    event: &StreamResponse,
) -> Result<Option<i64>, StoreError> {
    let StreamResponse::ArtifactUpdate(u) = event else {
        return Ok(None);
    };
    let found = tx
        .prepare_cached(
            "SELECT pos FROM artifacts WHERE task_id = ?1 AND artifact_id = ?2 ORDER BY pos LIMIT 1",
        )
        .db()?
        .query_row(params![task_id, u.artifact.artifact_id], |r| r.get::<_, i64>(0))
        .optional()
        .db()?;
    if found.is_some() {
        task.artifacts.push(Artifact {
            artifact_id: u.artifact.artifact_id.clone(),
            ..Artifact::default()
        });
    }
    Ok(found)
}

/// Store an artifact update as apply_event left the artifact (`a`): a chunk appended to the
/// artifact at `pos` (a row of its own), a replacement of it, or a new artifact.
fn write_artifact(
    tx: &Connection,
    task_id: &str,
    u: &TaskArtifactUpdateEvent,
    a: &Artifact,
    pos: Option<i64>,
    seq: i64,
    n_artifacts: &mut i64,
) -> Result<(), StoreError> {
    match pos {
        Some(pos) if u.append => {
            let metadata = u.artifact.metadata.as_ref().map(to_json).transpose()?;
            tx.prepare_cached(
                "INSERT INTO artifact_chunks (task_id, pos, seq, parts, metadata) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .db()?
            .execute(params![task_id, pos, seq, to_json(&a.parts)?, metadata])
            .db()?;
        }
        Some(pos) => {
            // A replacement: the new artifact, without the old one's chunks.
            tx.prepare_cached(
                "UPDATE artifacts SET artifact_id = ?3, body = ?4 WHERE task_id = ?1 AND pos = ?2",
            )
            .db()?
            .execute(params![task_id, pos, a.artifact_id, to_json(a)?])
            .db()?;
            tx.prepare_cached("DELETE FROM artifact_chunks WHERE task_id = ?1 AND pos = ?2")
                .db()?
                .execute(params![task_id, pos])
                .db()?;
        }
        None => {
            insert_artifact(tx, task_id, *n_artifacts, a)?;
            *n_artifacts += 1;
        }
    }
    Ok(())
}

/// The task's metadata, saved if `event` is a status update with metadata (apply_event merged
/// it into the task's).
fn save_merged_metadata(
    tx: &Connection,
    task_id: &str,
    task: &Task,
    event: &StreamResponse,
) -> Result<(), StoreError> {
    let StreamResponse::StatusUpdate(u) = event else {
        return Ok(());
    };
    if u.metadata.as_ref().is_some_and(|m| !m.is_empty()) {
        tx.prepare_cached("UPDATE tasks SET metadata = ?2 WHERE id = ?1")
            .db()?
            .execute(params![
                task_id,
                task.metadata.as_ref().map(to_json).transpose()?
            ])
            .db()?;
    }
    Ok(())
}

/// Apply `event` to the stored task and log it, inside the caller's transaction.
pub(super) fn append_in(
    tx: &Connection,
    task_id: &str,
    event: StreamResponse,
) -> Result<Seq, StoreError> {
    let Some(TaskRow {
        mut task,
        compact,
        last_seq,
        mut n_messages,
        mut n_artifacts,
        ..
    }) = get_row(tx, task_id)?
    else {
        return Err(StoreError::TaskNotFound(task_id.to_string()));
    };
    if compact {
        // Only a finished task is stored compact, and a finished task takes no event: this
        // is the refusal any store gives.
        apply_event(&mut task, &event)?;
        return Err(StoreError::Backend(format!(
            "task {task_id} is stored finished and cannot change"
        )));
    }
    let was_terminal = task.status.state.is_terminal();
    // Load exactly what apply_event reads: the status (always) and, for an artifact
    // update, the first stored artifact with that id.
    let artifact_pos = stand_in_artifact(tx, task_id, &mut task, &event)?;
    apply_event(&mut task, &event)?;
    let seq = last_seq + 1;

    match &event {
        StreamResponse::StatusUpdate(_) => {
            if let Some(m) = task.history.pop() {
                insert_message(tx, task_id, n_messages, &m)?;
                n_messages += 1;
            }
        }
        StreamResponse::ArtifactUpdate(u) => {
            let a = task.artifacts.first().ok_or_else(|| {
                StoreError::Backend("apply_event left no artifact for an artifact update".into())
            })?;
            write_artifact(tx, task_id, u, a, artifact_pos, seq, &mut n_artifacts)?;
        }
        // apply_event rejects the other kinds.
        StreamResponse::Task(_) | StreamResponse::Message(_) => {}
    }
    let status_ts = millis(task.status.timestamp);
    let became_terminal = task.status.state.is_terminal() && !was_terminal;
    save_merged_metadata(tx, task_id, &task, &event)?;
    tx.prepare_cached(
        "UPDATE tasks SET state = ?2, status_ts = ?3, terminal_at = CASE WHEN ?4 THEN ?3 ELSE terminal_at END, \
         status = ?5, last_seq = ?6, n_messages = ?7, n_artifacts = ?8 WHERE id = ?1",
    )
    .db()?
    .execute(params![
        task_id,
        task.status.state.as_str(),
        status_ts,
        became_terminal,
        to_json(&task.status)?,
        seq,
        n_messages,
        n_artifacts,
    ])
    .db()?;
    insert_event(tx, task_id, seq, &event)?;
    Ok(seq as Seq)
}
