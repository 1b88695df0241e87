//! ListTasks pages: the opaque keyset cursor the kit's stores share (status timestamp, task
//! id) and the page built from a keyset query.

use super::StoreError;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use crate::protocol::{ListTasksResponse, Task};

/// One ListTasks page from what a keyset query read: at most one task more than a page, newest
/// first, each with its status timestamp (the extra one only says another page follows).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn keyset_page(
    rows: Vec<(i64, Task)>,
    page_size: usize,
    total: usize,
) -> ListTasksResponse {
    let has_more = rows.len() > page_size;
    let mut tasks = Vec::with_capacity(rows.len().min(page_size));
    let mut last_key = None;
    for (ts, task) in rows.into_iter().take(page_size) {
        last_key = Some((ts, task.id.clone()));
        tasks.push(task);
    }
    let next_page_token = match (has_more, last_key) {
        (true, Some((ts, id))) => encode_cursor(ts, &id),
        _ => String::new(),
    };
    ListTasksResponse {
        tasks,
        next_page_token,
        page_size: page_size as i32,
        total_size: total as i32,
    }
}

/// Build the opaque keyset cursor shared by the kit's stores: (status timestamp, task id).
pub(crate) fn encode_cursor(ts_millis: i64, task_id: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{ts_millis}:{task_id}"))
}

/// Parse a cursor made by [`encode_cursor`].
pub(crate) fn decode_cursor(token: &str) -> Result<(i64, String), StoreError> {
    use base64::Engine;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| StoreError::InvalidPageToken)?;
    let s = String::from_utf8(raw).map_err(|_| StoreError::InvalidPageToken)?;
    let (ts, id) = s.split_once(':').ok_or(StoreError::InvalidPageToken)?;
    let ts = ts.parse().map_err(|_| StoreError::InvalidPageToken)?;
    Ok((ts, id.to_string()))
}
