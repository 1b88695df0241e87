//! Receiving push notifications from remote agents.
//!
//! An app that delegates work to a remote agent with `returnImmediately` and a push config
//! learns of the task's progress here:
//!
//! 1. [`PushTokens::issue_config`] makes a push config for your webhook URL with a fresh random
//!    token (sent back as `Authorization: Bearer <token>`), and remembers the token.
//! 2. Send the message with that config; when the remote agent acknowledges with a Task,
//!    [`bind`](PushTokens::bind) the token to the task id (and, optionally, keep the task in a
//!    [`RemoteTasks`] store).
//! 3. Mount [`WebhookReceiver::router`] (or use the [`VerifiedNotification`] extractor in your
//!    own handler). Each POST is checked and answered:
//!    - **401** when `Authorization: Bearer <token>` is missing or is not the task's token
//!      (compared in constant time), or, with [`verify_signatures`](WebhookReceiver::verify_signatures),
//!      when the `X-A2A-Signature` is missing, does not verify, is stale or replayed;
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

mod receiver;
mod tasks;
mod tokens;

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
