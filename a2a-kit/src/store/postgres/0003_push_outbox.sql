-- Version 3: the push outbox. One lane per push config records which events it has had;
-- one claim per task says which replica delivers its events now (renewed like a lease).

CREATE TABLE push_lanes (
    task_id              text COLLATE "C" NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    -- '' for a config stored without an id
    config_id            text COLLATE "C" NOT NULL,
    -- events up to here were handled for this config
    cursor               bigint NOT NULL,
    delivered            bigint NOT NULL DEFAULT 0,
    failed               bigint NOT NULL DEFAULT 0,
    consecutive_failures integer NOT NULL DEFAULT 0,
    suspended            boolean NOT NULL DEFAULT false,
    last_error           text,
    PRIMARY KEY (task_id, config_id)
);

CREATE TABLE push_claims (
    task_id     text COLLATE "C" PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    -- the replica delivering the task's events; NULL once it let go
    claimed_by  text,
    -- until when its claim holds (Unix ms), or when it let go
    claim_until bigint NOT NULL
);

CREATE INDEX push_claims_by_holder ON push_claims (claimed_by) WHERE claimed_by IS NOT NULL;

-- Lanes of configs stored before this version start at their task's last event.
INSERT INTO push_lanes (task_id, config_id, cursor)
SELECT p.task_id, coalesce(p.config_id, ''), t.last_seq
FROM push_configs p JOIN tasks t ON t.id = p.task_id
ON CONFLICT DO NOTHING;
