//! Other replicas' events, as a stream of [`StoreChange`]s: `LISTEN` on the schema's channel,
//! used as a doorbell (a notification carries ids, never events: the log stays the truth).

use std::time::Duration;

use futures::stream::BoxStream;
use sqlx::PgPool;
use sqlx::postgres::PgListener;

use crate::protocol::TaskState;
use crate::store::{Seq, StoreChange};

/// The payload of an append's notification: `INSTANCE SEQ STATE|- TASK_ID`.
pub(super) fn payload(instance: &str, task_id: &str, seq: Seq, state: Option<TaskState>) -> String {
    format!(
        "{instance} {seq} {} {task_id}",
        state.map_or("-", TaskState::as_str)
    )
}

/// The payload of a reply handed to `holder`: `HOLDER reply - TASK_ID`.
pub(super) fn reply_payload(holder: &str, task_id: &str) -> String {
    format!("{holder} reply - {task_id}")
}

/// The change a payload announces to `instance` (this store): another store's append, or a
/// reply handed to this one.
fn parse(payload: &str, instance: &str) -> Option<StoreChange> {
    let mut fields = payload.splitn(4, ' ');
    let (from, seq, state, task_id) = (
        fields.next()?,
        fields.next()?,
        fields.next()?,
        fields.next()?,
    );
    if seq == "reply" {
        return (from == instance).then(|| StoreChange::Reply {
            task_id: task_id.to_string(),
        });
    }
    if from == instance {
        return None;
    }
    Some(StoreChange::Appended {
        task_id: task_id.to_string(),
        seq: seq.parse().ok()?,
        state: match state {
            "-" => None,
            s => Some(s.parse().ok()?),
        },
    })
}

/// Connect a listener to `channel`, retrying with backoff until it works.
async fn connect(pool: &PgPool, channel: &str) -> PgListener {
    let mut backoff = Duration::from_millis(100);
    loop {
        let attempt = async {
            let mut listener = PgListener::connect_with(pool).await?;
            listener.listen(channel).await?;
            Ok::<_, sqlx::Error>(listener)
        };
        match attempt.await {
            Ok(listener) => return listener,
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for other replicas' events; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// Take a reply handed to this replica (`instance`), unless it is no longer ours: a survivor
/// that took this replica for dead may have continued it (`lease::reap`). Under the row's
/// lock, so exactly one replica continues a reply.
async fn accept_reply(
    pool: &PgPool,
    instance: &str,
    lease_ms: i64,
    task_id: &str,
) -> Result<bool, sqlx::Error> {
    let taken = sqlx::query(
        "UPDATE tasks SET reply_after = NULL, lease_until = $3 \
         WHERE id = $1 AND owner = $2 AND reply_after IS NOT NULL",
    )
    .bind(task_id)
    .bind(instance)
    .bind(super::now_millis() + lease_ms)
    .execute(pool)
    .await?;
    Ok(taken.rows_affected() == 1)
}

/// Other processes' changes on `channel`. After the listening connection drops, the stream
/// says [`StoreChange::Resync`] once it listens again, since changes in between were missed.
/// A reply handed to this replica is taken (`accept_reply`) before it is announced.
pub(super) fn listen(
    pool: PgPool,
    channel: String,
    instance: String,
    lease_ms: i64,
) -> BoxStream<'static, StoreChange> {
    Box::pin(async_stream::stream! {
        let mut listener = connect(&pool, &channel).await;
        loop {
            match listener.try_recv().await {
                Ok(Some(n)) => {
                    match parse(n.payload(), &instance) {
                        Some(StoreChange::Reply { task_id }) => {
                            match accept_reply(&pool, &instance, lease_ms, &task_id).await {
                                Ok(true) => yield StoreChange::Reply { task_id },
                                Ok(false) => tracing::info!(
                                    task_id,
                                    "a reply handed to this replica was continued by another"
                                ),
                                Err(e) => tracing::warn!(
                                    task_id,
                                    error = %e,
                                    "could not take a reply handed to this replica; a survivor \
                                     continues it once this replica's lease runs out"
                                ),
                            }
                        }
                        Some(change) => yield change,
                        None => {}
                    }
                }
                Ok(None) | Err(_) => {
                    tracing::warn!("lost the connection that hears other replicas' events; reconnecting");
                    listener = connect(&pool, &channel).await;
                    tracing::info!("hearing other replicas' events again");
                    yield StoreChange::Resync;
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_and_skip_our_own() {
        let p = payload("me", "task with spaces", 7, Some(TaskState::Canceled));
        assert_eq!(parse(&p, "me"), None);
        assert_eq!(
            parse(&p, "other"),
            Some(StoreChange::Appended {
                task_id: "task with spaces".into(),
                seq: 7,
                state: Some(TaskState::Canceled),
            })
        );
        let p = payload("a", "t", 3, None);
        assert_eq!(
            parse(&p, "b"),
            Some(StoreChange::Appended {
                task_id: "t".into(),
                seq: 3,
                state: None
            })
        );
        assert_eq!(parse("garbage", "b"), None);
        let p = reply_payload("holder", "t 1");
        assert_eq!(parse(&p, "other"), None);
        assert_eq!(
            parse(&p, "holder"),
            Some(StoreChange::Reply {
                task_id: "t 1".into()
            })
        );
        assert_eq!(parse("a x - t", "b"), None);
    }
}
