-- Version 6: whose task it is (`store::Owner`: the tenant and the creator's owner key); NULL
-- for a task created without one. ListTasks lists one owner's tasks, newest first.
-- (`owner`, from version 2, is the replica holding the task's lease.)

ALTER TABLE tasks ADD COLUMN owned_by text;

CREATE INDEX tasks_by_owned_by ON tasks (owned_by, status_ts DESC, id DESC);
