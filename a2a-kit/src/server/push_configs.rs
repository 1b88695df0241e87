//! The four push-notification config operations, and what they share with SendMessage's
//! inline config: the webhook URL checks and the per-task limit.

use super::{AgentService, new_id, require_id};
use crate::error::A2aError;
use crate::protocol::{
    DeleteTaskPushNotificationConfigRequest, GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig,
};
use crate::request::RequestContext;
use crate::store::{PushConfigStore, StoreError, TaskView};

impl AgentService {
    pub(super) fn check_webhook(&self, field: &str, url: &str) -> Result<(), A2aError> {
        if url.is_empty() {
            return Err(A2aError::invalid_field(field, "is required"));
        }
        (self.inner.webhook_validator)(url).map_err(|why| {
            tracing::info!(url, reason = %why, "refused a push notification URL");
            A2aError::invalid_field(field, why)
        })
    }

    /// The webhook's host checked as it resolves now ([`WebhookHostCheck`]), when one is
    /// installed: after [`check_webhook`](Self::check_webhook), before anything is stored.
    ///
    /// [`WebhookHostCheck`]: super::WebhookHostCheck
    pub(super) async fn check_webhook_host(&self, field: &str, url: &str) -> Result<(), A2aError> {
        let Some(check) = &self.inner.webhook_host_check else {
            return Ok(());
        };
        check(url).await.map_err(|why| {
            tracing::info!(url, reason = %why, "refused a push notification URL's host");
            A2aError::invalid_field(field, why)
        })
    }

    // ----- Push notification configs -----

    /// The store's push configs, when the agent supports push notifications (`build` made
    /// sure a store without them means no push).
    fn push_store(&self) -> Result<&dyn PushConfigStore, A2aError> {
        match self.rt().store.push_configs() {
            Some(configs) if self.inner.push => Ok(configs),
            _ => Err(A2aError::PushNotificationNotSupported),
        }
    }

    /// Store a config whose URL was checked, within the task's limit; `field` is what a
    /// refusal for the limit names (the config in the request).
    pub(super) async fn store_push_config(
        &self,
        mut config: TaskPushNotificationConfig,
        field: &str,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        if config.id.as_deref().is_none_or(str::is_empty) {
            config.id = Some(new_id());
        }
        let limit = self.inner.push_configs_per_task;
        match self.push_store()?.put(config.clone(), limit).await {
            Ok(()) => Ok(config),
            Err(StoreError::PushConfigLimit(limit)) => Err(A2aError::invalid_field(
                field,
                format!(
                    "task {} already has {limit} push notification configs, the most this agent keeps per task: delete one, or replace one by giving its id",
                    config.task_id.as_deref().unwrap_or_default()
                ),
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// CreateTaskPushNotificationConfig for the caller: `taskId` is required (and must be the
    /// caller's task: another owner's is not found); `id` is generated when absent. The URL
    /// is checked (its host as it resolves now, with push delivery on), and a task that has
    /// as many configs as the agent allows
    /// ([`push_configs_per_task`](super::AgentServiceBuilder::push_configs_per_task)) takes
    /// no new one: InvalidParams naming `taskId` and the limit (replacing one by its `id`
    /// still works).
    pub async fn create_push_config(
        &self,
        cx: &RequestContext,
        mut config: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        self.push_store()?;
        config.protocol_version = cx.protocol_version();
        let task_id = config.task_id.clone().unwrap_or_default();
        require_id("taskId", &task_id)?;
        self.check_task(&task_id, cx, config.tenant.as_deref())
            .await?;
        self.check_webhook("url", &config.url)?;
        self.check_webhook_host("url", &config.url).await?;
        let mut created = self.store_push_config(config, "taskId").await?;
        // The version is the agent's to keep, never an answer's.
        created.protocol_version = Default::default();
        Ok(created)
    }

    /// GetTaskPushNotificationConfig for the caller: a missing config, or a task that is not
    /// the caller's, is TaskNotFoundError (the spec has no dedicated code; not-found is what
    /// it means). Credentials are write-only: the answer has no `token` and no
    /// `authentication.credentials`, which only its creator saw.
    pub async fn get_push_config(
        &self,
        cx: &RequestContext,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        let configs = self.push_store()?;
        require_id("taskId", &req.task_id)?;
        require_id("id", &req.id)?;
        self.check_task(&req.task_id, cx, req.tenant.as_deref())
            .await?;
        configs
            .get(&req.task_id, &req.id)
            .await?
            .map(redacted)
            .ok_or_else(|| A2aError::TaskNotFound {
                task_id: req.task_id.clone(),
            })
    }

    /// ListTaskPushNotificationConfigs for the caller (another owner's task is not found;
    /// offset pagination; `pageSize` 0 means all), credentials left out as in
    /// [`get_push_config`](Self::get_push_config).
    pub async fn list_push_configs(
        &self,
        cx: &RequestContext,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2aError> {
        let configs = self.push_store()?;
        require_id("taskId", &req.task_id)?;
        let start = match req.page_token.as_deref().filter(|t| !t.is_empty()) {
            None => 0,
            Some(t) => t.parse::<usize>().map_err(|_| {
                A2aError::invalid_field("pageToken", "not a token this server issued")
            })?,
        };
        let size = match req.page_size {
            None | Some(0) => usize::MAX,
            Some(n) if n < 0 => {
                return Err(A2aError::invalid_field("pageSize", "must not be negative"));
            }
            Some(n) => n as usize,
        };
        self.check_task(&req.task_id, cx, req.tenant.as_deref())
            .await?;
        let all = configs.list(&req.task_id).await?;
        let end = start.saturating_add(size).min(all.len());
        let configs = all
            .get(start.min(all.len())..end)
            .unwrap_or_default()
            .iter()
            .cloned()
            .map(redacted)
            .collect();
        let next_page_token = (end < all.len()).then(|| end.to_string());
        Ok(ListTaskPushNotificationConfigsResponse {
            configs,
            next_page_token,
        })
    }

    /// DeleteTaskPushNotificationConfig for the caller: idempotent (deleting a missing config
    /// of the caller's task succeeds); a task that is not the caller's is not found.
    pub async fn delete_push_config(
        &self,
        cx: &RequestContext,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), A2aError> {
        let configs = self.push_store()?;
        require_id("taskId", &req.task_id)?;
        require_id("id", &req.id)?;
        self.check_task(&req.task_id, cx, req.tenant.as_deref())
            .await?;
        configs.delete(&req.task_id, &req.id).await?;
        Ok(())
    }

    /// TaskNotFound unless `task_id` is a task of the caller under the tenant (the context's
    /// or the request's `tenant`).
    async fn check_task(
        &self,
        task_id: &str,
        cx: &RequestContext,
        tenant: Option<&str>,
    ) -> Result<(), A2aError> {
        let owner = self.owner(cx, tenant)?;
        let view = TaskView {
            history_length: Some(0),
            include_artifacts: false,
        };
        self.owned_task(task_id, view, &owner).await.map(drop)
    }
}

/// A push config as Get and List answer it: without its `token` and
/// `authentication.credentials`. They are the webhook's secrets: whoever reads them back could
/// post forged notifications to it. The creator sent them (Create answers with what it stored);
/// nobody reads them back, as with a password.
pub(crate) fn redacted(mut config: TaskPushNotificationConfig) -> TaskPushNotificationConfig {
    config.token = None;
    config.protocol_version = Default::default();
    if let Some(auth) = config.authentication.as_mut() {
        auth.credentials = None;
    }
    config
}
