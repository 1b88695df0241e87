//! Checks of the cluster capability ([`ClusterStore`](a2a_kit::store::ClusterStore)) that one
//! process can make: what a store answers when no other process holds a task. (Two processes
//! sharing a store are the business of the store's own tests.)

use a2a_kit::protocol::{Role, TaskState};
use a2a_kit::store::{ReplyRoute, StoreError};

use crate::fixtures::*;
use crate::*;

/// A reply to a task no other process holds continues here and writes nothing; letting go of
/// a task (held or not) succeeds; a reply to a missing task is TaskNotFound.
pub async fn cluster_replies_without_another_holder(s: Store) {
    let cluster = cluster_of(&s);
    let b = base();
    create(&s, &new_task("asked", "c", TaskState::Working, b)).await;
    append(
        &s,
        "asked",
        status_ev("asked", "c", TaskState::InputRequired, b + 1, None),
    )
    .await;
    let before = full(&s, "asked").await;
    let reply = msg(Role::User, "reply-1", "yes");
    assert_eq!(
        cluster.route_reply("asked", &reply).await,
        Ok(ReplyRoute::Here),
        "nobody else holds the task: the reply continues here"
    );
    assert_eq!(
        full(&s, "asked").await,
        before,
        "a reply continued here is not written by route_reply"
    );
    assert_eq!(cluster.release("asked").await, Ok(()));
    assert_eq!(
        cluster.route_reply("asked", &reply).await,
        Ok(ReplyRoute::Here),
        "a released task is anybody's, this process's too"
    );
    assert_eq!(
        cluster.release("never-held").await,
        Ok(()),
        "letting go of a task not held does nothing"
    );
    assert_eq!(
        cluster.route_reply("missing", &reply).await,
        Err(StoreError::TaskNotFound("missing".into()))
    );
}
