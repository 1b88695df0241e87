-- Version 8: the calling side's remote tasks (RemoteTaskStore): each record as JSON with a
-- revision for conditional saves, and the webhook tokens issued for them, kept as their
-- SHA-256 only.

CREATE TABLE remote_tasks (
    task_id  text COLLATE "C" PRIMARY KEY,
    record   text    NOT NULL,
    revision bigint  NOT NULL,
    settled  boolean NOT NULL,
    -- when first saved terminal (Unix millis), else NULL: what a purge of old ones reads
    finished_ms bigint
);

CREATE INDEX remote_tasks_finished ON remote_tasks (finished_ms) WHERE finished_ms IS NOT NULL;

CREATE INDEX remote_tasks_unsettled ON remote_tasks (task_id) WHERE NOT settled;

CREATE TABLE remote_tokens (
    hash       bytea PRIMARY KEY,
    task_id    text COLLATE "C" UNIQUE,
    expires_ms bigint
);
