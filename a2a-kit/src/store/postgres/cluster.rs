//! PostgreSQL as a [`ClusterStore`]: the replicas on one database hear of one another's
//! events (`LISTEN/NOTIFY`, see [`changes`](super::changes)), hand replies to the replica whose
//! skill waits for them, and let go of tasks another replica may continue (see
//! [`lease`](super::lease)).

use async_trait::async_trait;
use futures::stream::BoxStream;
use tokio::sync::mpsc;

use super::{Inner, Lease, PostgresTaskManager, changes, db, lease, lock_row, update_task};
use crate::protocol::Message;
use crate::store::{ClusterStore, ReplyRoute, StoreChange, StoreError};

#[async_trait]
impl ClusterStore for PostgresTaskManager {
    async fn route_reply(
        &self,
        task_id: &str,
        message: &Message,
    ) -> Result<ReplyRoute, StoreError> {
        let me = &self.inner.cx.instance;
        let mut tx = self.begin().await?;
        let mut locked = lock_row(&mut tx, task_id)
            .await?
            .ok_or_else(|| StoreError::TaskNotFound(task_id.to_string()))?;
        let holder = locked.holder.clone().unwrap_or_default();
        // A holder whose lease still runs may have died: then this replica takes the
        // question over rather than handing the reply to nobody.
        if locked.held_by_other(me)
            && locked.task.status.state.is_interrupted()
            && !lease::is_dead(&self.inner, &mut tx, &holder).await?
        {
            locked.task.history.push(message.clone());
            update_task(&mut tx, &locked.task, locked.last_seq, Lease::Keep).await?;
            // Marked until the holder takes it: if it dies first, a survivor continues it.
            sqlx::query("UPDATE tasks SET reply_after = last_seq WHERE id = $1")
                .bind(task_id)
                .execute(&mut *tx)
                .await
                .map_err(db)?;
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(&self.inner.cx.channel)
                .bind(changes::reply_payload(&holder, task_id))
                .execute(&mut *tx)
                .await
                .map_err(db)?;
            tx.commit().await.map_err(db)?;
            return Ok(ReplyRoute::HandedOver);
        }
        sqlx::query(
            "UPDATE tasks SET owner = $2, lease_until = $3, reply_after = NULL WHERE id = $1",
        )
        .bind(task_id)
        .bind(me)
        .bind(self.inner.cx.lease_until())
        .execute(&mut *tx)
        .await
        .map_err(db)?;
        tx.commit().await.map_err(db)?;
        Ok(ReplyRoute::Here)
    }

    async fn release(&self, task_id: &str) -> Result<(), StoreError> {
        // A reply handed to this replica and not taken stays with it, its lease run out, for
        // a survivor to continue (`lease::reap`).
        sqlx::query(
            "UPDATE tasks SET \
             owner = CASE WHEN reply_after = last_seq THEN owner ELSE NULL END, \
             lease_until = CASE WHEN reply_after = last_seq THEN 0 ELSE NULL END \
             WHERE id = $1 AND owner = $2",
        )
        .bind(task_id)
        .bind(&self.inner.cx.instance)
        .execute(&self.inner.cx.pool)
        .await
        .map_err(db)?;
        Ok(())
    }

    fn changes(&self) -> BoxStream<'static, StoreChange> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        self.inner
            .followers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(tx);
        let heard = changes::listen(
            self.inner.cx.pool.clone(),
            self.inner.cx.channel.clone(),
            self.inner.cx.instance.clone(),
            self.inner.cx.lease_ms,
        );
        let local = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
        Box::pin(futures::stream::select(heard, local))
    }
}

impl Inner {
    /// Whether a runtime follows this store's changes (and so can continue a reply).
    pub(super) fn has_followers(&self) -> bool {
        let mut followers = self.followers.lock().unwrap_or_else(|e| e.into_inner());
        followers.retain(|f| !f.is_closed());
        !followers.is_empty()
    }

    /// Hand a change to the runtimes following this store, in this process.
    pub(super) fn tell_followers(&self, change: StoreChange) {
        let followers = self.followers.lock().unwrap_or_else(|e| e.into_inner());
        for f in followers.iter() {
            let _ = f.send(change.clone());
        }
    }
}
