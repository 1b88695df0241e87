-- Version 2: the replica running a task holds a lease on it, renewed while it lives; a
-- survivor ends the tasks of a replica whose lease ran out.

ALTER TABLE tasks ADD COLUMN owner text;
ALTER TABLE tasks ADD COLUMN lease_until bigint;

CREATE INDEX tasks_by_lease ON tasks (lease_until) WHERE owner IS NOT NULL;
