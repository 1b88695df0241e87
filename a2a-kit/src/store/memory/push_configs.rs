//! The in-memory store's push configs ([`PushConfigStore`]): kept on each task's entry, in
//! creation order, so they go with the task when it is evicted or purged.

use async_trait::async_trait;

use super::{InMemoryTaskManager, not_found};
use crate::protocol::TaskPushNotificationConfig;
use crate::store::{PushConfigStore, StoreError, config_task_id};

#[async_trait]
impl PushConfigStore for InMemoryTaskManager {
    async fn put(
        &self,
        config: TaskPushNotificationConfig,
        limit: usize,
    ) -> Result<(), StoreError> {
        let task_id = config_task_id(&config)?;
        let mut inner = self.lock();
        let entry = inner
            .tasks
            .get_mut(task_id.as_str())
            .ok_or(StoreError::TaskNotFound(task_id))?;
        // Counted and added under the store's lock: concurrent puts cannot both fit.
        let count = entry.push.len();
        match entry.push.iter_mut().find(|c| c.id == config.id) {
            Some(existing) => *existing = config,
            None if count >= limit => return Err(StoreError::PushConfigLimit(limit)),
            None => entry.push.push(config),
        }
        Ok(())
    }

    async fn get(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<Option<TaskPushNotificationConfig>, StoreError> {
        let inner = self.lock();
        let entry = inner.tasks.get(task_id).ok_or_else(|| not_found(task_id))?;
        Ok(entry
            .push
            .iter()
            .find(|c| c.id.as_deref() == Some(id))
            .cloned())
    }

    async fn list(&self, task_id: &str) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        let inner = self.lock();
        let entry = inner.tasks.get(task_id).ok_or_else(|| not_found(task_id))?;
        Ok(entry.push.clone())
    }

    async fn delete(&self, task_id: &str, id: &str) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        let entry = inner
            .tasks
            .get_mut(task_id)
            .ok_or_else(|| not_found(task_id))?;
        let before = entry.push.len();
        entry.push.retain(|c| c.id.as_deref() != Some(id));
        Ok(entry.push.len() != before)
    }
}
