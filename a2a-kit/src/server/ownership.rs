//! Whose tasks a request may touch (the spec's authorization scoping): every task is
//! stored with its [`Owner`], the request's tenant and its caller's owner key; every task
//! operation of anyone else answers TaskNotFound, exactly as for an id that never existed,
//! and ListTasks lists the caller's own tasks only.

use std::sync::Arc;

use super::AgentService;
use crate::auth::Caller;
use crate::error::A2aError;
use crate::request::RequestContext;
use crate::store::{Owner, TaskRecord, TaskView};

/// How a caller's owner key is made: who shares tasks with whom. Tenants (the `tenant` of a
/// request: its REST path prefix or its `tenant` field) always isolate, whatever the key.
///
/// ```
/// use a2a_kit::server::TaskOwnership;
/// use a2a_kit::auth::Caller;
/// // Callers of one organization (the authenticator's tenant) share their tasks.
/// let by_org = TaskOwnership::custom(|c: &Caller| c.tenant.clone().unwrap_or_else(|| c.subject.clone()));
/// # let _ = by_org;
/// ```
#[derive(Clone, Default)]
pub enum TaskOwnership {
    /// Each caller owns the tasks it creates, known by its subject (the default).
    #[default]
    Subject,
    /// By the tenant the authenticator gave the caller and its subject: one subject in two
    /// organizations has two sets of tasks.
    TenantAndSubject,
    /// Every caller sees every task (of the request's tenant): for trusted internal agents,
    /// where authentication only keeps strangers out.
    Shared,
    /// The key a function makes of the caller (see [`TaskOwnership::custom`]).
    Custom(Arc<dyn Fn(&Caller) -> String + Send + Sync>),
}

impl TaskOwnership {
    /// Tasks owned by whatever key `f` makes of the caller; callers with equal keys share.
    pub fn custom(f: impl Fn(&Caller) -> String + Send + Sync + 'static) -> Self {
        TaskOwnership::Custom(Arc::new(f))
    }

    /// The owner of the tasks `caller` creates and sees under `tenant`.
    pub(crate) fn owner(&self, caller: Option<&Caller>, tenant: Option<&str>) -> Option<Owner> {
        let key = match (self, caller) {
            (_, None) | (TaskOwnership::Shared, _) => None,
            (TaskOwnership::Subject, Some(c)) => Some(c.subject.clone()),
            (TaskOwnership::TenantAndSubject, Some(c)) => Some(
                Owner::new(c.tenant.as_deref(), Some(&c.subject))
                    .map(|o| o.as_str().to_string())
                    .unwrap_or_default(),
            ),
            (TaskOwnership::Custom(f), Some(c)) => Some(f(c)),
        };
        Owner::new(tenant, key.as_deref())
    }
}

impl std::fmt::Debug for TaskOwnership {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TaskOwnership::Subject => "Subject",
            TaskOwnership::TenantAndSubject => "TenantAndSubject",
            TaskOwnership::Shared => "Shared",
            TaskOwnership::Custom(_) => "Custom(..)",
        })
    }
}

impl AgentService {
    /// The owner of what the context's caller does under its tenant, or under `named` (the
    /// request's own `tenant` field), which must not contradict it.
    pub(super) fn owner(
        &self,
        cx: &RequestContext,
        named: Option<&str>,
    ) -> Result<Option<Owner>, A2aError> {
        let tenant = cx.tenant_for(named)?;
        Ok(self
            .inner
            .ownership
            .owner(cx.caller().map(|c| &**c), tenant))
    }

    /// The task, if it is `owner`'s; another owner's task is not found, like one that never
    /// existed (so nobody learns which ids exist).
    pub(super) async fn owned_task(
        &self,
        task_id: &str,
        view: TaskView,
        owner: &Option<Owner>,
    ) -> Result<TaskRecord, A2aError> {
        match self.rt().store.get_task(task_id, view).await? {
            Some(rec) if rec.owner == *owner => Ok(rec),
            _ => Err(A2aError::task_not_found(task_id)),
        }
    }
}
