-- Version 7: each live replica is listed and holds a session advisory lock
-- (hashtextextended('a2a-kit replica ' || instance, 0)) on a connection of its own, so a
-- survivor knows at once that a replica died (PostgreSQL ends the session, and the lock, when
-- the process goes) instead of waiting for its leases to run out. A reply handed to the replica
-- whose skill waits for it is marked (`reply_after`: the task's last_seq then) until that replica
-- takes it; a survivor continues a marked reply its asker never took.

CREATE TABLE replicas (
    instance text COLLATE "C" PRIMARY KEY,
    since    bigint NOT NULL
);

ALTER TABLE tasks ADD COLUMN reply_after bigint;

CREATE INDEX tasks_by_holder ON tasks (owner) WHERE owner IS NOT NULL;
