//! Receiving push notifications from remote agents.
//!
//! An app that delegates work to a remote agent with `returnImmediately` and a push config
//! learns of the task's progress here:
//!
//! 1. [`PushTokens::issue_config`] makes a push config for your webhook URL with a fresh random
//!    token (as the config's `token`, and as its `authentication`, `Bearer <token>`), and
//!    remembers the token.
//! 2. Send the message with that config; when the remote agent acknowledges with a Task,
//!    [`bind`](PushTokens::bind) the token to the task id (and, optionally, keep the task in a
//!    [`RemoteTasks`] store).
//! 3. Mount [`WebhookReceiver::router`] (or use the [`VerifiedNotification`] extractor in your
//!    own handler). Each POST is checked and answered:
//!    - **413** when the body is larger than the [body
//!      limit](WebhookReceiver::body_limit) (2 MiB by default, twice the largest task an
//!      a2a-kit agent pushes by default), before it is read;
//!    - **401** when neither `Authorization: Bearer <token>` nor `X-A2A-Notification-Token`
//!      carries the task's token (compared in constant time; the answer names both headers),
//!      when the task's token has expired ([`PushTokens::token_ttl`]), or, with [`verify_signatures`](WebhookReceiver::verify_signatures), when the
//!      `X-A2A-Signature` is missing, does not verify, is stale or replayed;
//!    - **400** when the body is not a `StreamResponse` (a bare `Task`, as older senders post, is
//!      accepted too);
//!    - **404** when the task is not one of yours;
//!    - **204** otherwise. A duplicate delivery (the same event again) is answered 204 and
//!      changes nothing.
//!
//!    Verified updates update the [`RemoteTasks`] store and reach your code through a callback
//!    ([`on_notification`](WebhookReceiver::on_notification)) or a channel
//!    ([`channel`](WebhookReceiver::channel)).
//!
//! **Which header carries the token.** Senders differ: a2a-kit's (and v0.3's) put the config's
//! `token` in `X-A2A-Notification-Token` and its `authentication` in `Authorization`; many
//! others send the token as `Authorization: Bearer`. Either header carrying the task's token
//! admits the delivery, whatever the other one holds (a config's `authentication` may be the
//! credentials of a gateway in front of you, not the task's token); when neither does, it is
//! 401, or 404 for a task that is not yours.
//!
//! **What an a2a-kit agent sends**, all accepted: for a terminal or interrupted state, the task
//! itself (`{"task": ...}`, with its artifacts, so [`RemoteTasks`] has the answer); status and
//! artifact updates (with its per-event bodies, or every event pushed), as
//! `application/a2a+json` (the content type is not checked); signed, with `PushConfig::sign`. A
//! task larger than the sender's `PushConfig::max_task_body` (1 MiB by default) arrives
//! without its history and largest artifacts, marked: [`Notification::trimmed`] (or
//! [`a2a_kit::push::TrimmedSnapshot::of`] on the stored task) says what is missing, which
//! GetTask has. Raise [`body_limit`](WebhookReceiver::body_limit) along with a sender's
//! `max_task_body`.
//!
//! **Across restarts and replicas.** [`PushTokens::open`] and [`RemoteTasks::open`] keep the
//! tokens (as their SHA-256) and the remote tasks in a store of the kit's (SQLite or
//! PostgreSQL; [`new`](RemoteTasks::new) keeps them in memory): a webhook posted after your
//! app restarted, or to another replica on the same database, is checked and applied the
//! same way. A store error answers **503**, so the sender retries; nothing is lost.
//!
//! **When no webhook comes.** Track a task with a deadline ([`RemoteTasks::track`]) and run
//! [`RemoteTasks::watch`]: past the deadline it asks the agent (GetTask, [`PollPolicy`]), and
//! if the agent still says nothing conclusive the task is marked timed out, with a reason
//! ([`a2a_kit::store::RemoteTaskRecord::timed_out`]), for your app to show, [retry](RemoteTasks::retry)
//! or [cancel](RemoteTasks::cancel).
//!
//! A notification can arrive before your app has seen the acknowledgement (the remote task may
//! finish at once). A token issued but not bound yet is therefore accepted for a task id the
//! app does not know, once, and bound to it then; the later [`bind`](PushTokens::bind) agrees.
//!
//! ```no_run
//! use a2a_kit_axum::webhook::{PushTokens, RemoteTasks, WebhookReceiver};
//! # async fn demo() -> Result<(), a2a_kit::store::StoreError> {
//! let tokens = PushTokens::new();
//! let tasks = RemoteTasks::new();
//! let (receiver, mut updates) = WebhookReceiver::new(tokens.clone()).store(tasks.clone()).channel(64);
//! let app: axum::Router = axum::Router::new().merge(receiver.router("/a2a/webhook"));
//! let config = tokens.issue_config("https://me.example.com/a2a/webhook").await?;
//! // ... send a message with `configuration.taskPushNotificationConfig = config`, get the Task:
//! # let task_id = "t-1";
//! tokens.bind(task_id, config.token.as_deref().unwrap()).await?;
//! while let Some(n) = updates.recv().await {
//!     println!("{} is now {:?}", n.task_id, n.event.state());
//! }
//! # Ok(()) }
//! ```

mod log;
mod receiver;
mod tasks;
mod tokens;

pub use log::{DeliveryLog, DeliveryRecord};
pub use receiver::{
    DEFAULT_REPLAY_WINDOW, Notification, VerifiedNotification, WebhookReceiver, WebhookRejection,
};
pub use tasks::{Applied, DeadlineWatch, PollPolicy, RemoteTaskError, RemoteTasks, WebhookInbox};
pub use tokens::{PushTokens, TokenCheck, random_token};

use std::sync::{Mutex, MutexGuard};

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderMap, HeaderValue, header};
    use receiver::bearer_token;
    use std::time::Duration;

    #[test]
    fn tokens_are_random_and_long() {
        let a = random_token();
        let b = random_token();
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
    }

    #[tokio::test]
    async fn pending_tokens_bind_once() {
        let tokens = PushTokens::new();
        let t = tokens.issue().await.unwrap();
        let check = |task: &'static str, token: String| {
            let tokens = tokens.clone();
            async move { tokens.check(task, &token).await.unwrap() }
        };
        assert_eq!(
            check("task-1", "nope".into()).await,
            TokenCheck::UnknownTask
        );
        assert_eq!(check("task-1", t.clone()).await, TokenCheck::Valid);
        assert!(tokens.knows("task-1").await.unwrap());
        // The token is now task-1's: it does not open another task.
        assert_eq!(check("task-2", t.clone()).await, TokenCheck::UnknownTask);
        assert_eq!(check("task-1", "nope".into()).await, TokenCheck::Mismatch);
        tokens.bind("task-1", &t).await.unwrap();
        assert_eq!(check("task-1", t).await, TokenCheck::Valid);
    }

    #[tokio::test]
    async fn pending_tokens_expire() {
        let tokens = PushTokens::new().pending_ttl(Duration::ZERO);
        let t = tokens.issue().await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(
            tokens.check("task-1", &t).await.unwrap(),
            TokenCheck::UnknownTask
        );
    }

    #[tokio::test]
    async fn bound_tokens_expire_after_their_ttl() {
        let tokens = PushTokens::new().token_ttl(Duration::from_millis(30));
        let t = tokens.issue().await.unwrap();
        tokens.bind("task-1", &t).await.unwrap();
        assert_eq!(tokens.check("task-1", &t).await.unwrap(), TokenCheck::Valid);
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert_eq!(
            tokens.check("task-1", &t).await.unwrap(),
            TokenCheck::Expired
        );
        assert!(!tokens.knows("task-1").await.unwrap());
    }

    #[test]
    fn tokens_are_read_from_both_headers() {
        use receiver::presented_tokens;
        let mut h = HeaderMap::new();
        assert!(presented_tokens(&h).is_empty());
        h.insert(
            "x-a2a-notification-token",
            HeaderValue::from_static(" tok "),
        );
        assert_eq!(presented_tokens(&h), ["tok"]);
        // Another scheme in Authorization is not a token; the other header still is.
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(presented_tokens(&h), ["tok"]);
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer tok"),
        );
        assert_eq!(presented_tokens(&h), ["tok"], "the same token once");
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer gw"));
        assert_eq!(presented_tokens(&h), ["gw", "tok"]);
        h.insert("x-a2a-notification-token", HeaderValue::from_static(""));
        assert_eq!(presented_tokens(&h), ["gw"]);
    }

    #[test]
    fn bearer_parsing() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer_token(&h), None);
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer  abc "),
        );
        assert_eq!(bearer_token(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer_token(&h), None);
    }
}
