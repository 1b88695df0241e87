-- a2a-kit's PostgreSQL store, version 1: tasks, their event logs and push configs.
-- Wire objects are kept as their JSON text (exact, as serde wrote it); every column a query
-- filters or orders by is a real, indexed column.

CREATE TABLE tasks (
    id          text COLLATE "C" PRIMARY KEY,
    context_id  text NOT NULL,
    state       text NOT NULL,
    -- the status timestamp, in Unix milliseconds (ListTasks orders by it)
    status_ts   bigint NOT NULL,
    -- status_ts once the task is terminal (retention purges by it)
    terminal_at bigint,
    skill_id    text,
    last_seq    bigint NOT NULL,
    task        text NOT NULL
);

CREATE INDEX tasks_by_time ON tasks (status_ts DESC, id DESC);
CREATE INDEX tasks_by_context ON tasks (context_id, status_ts DESC, id DESC);
CREATE INDEX tasks_by_state ON tasks (state, status_ts DESC, id DESC);
CREATE INDEX tasks_by_terminal_at ON tasks (terminal_at) WHERE terminal_at IS NOT NULL;

CREATE TABLE events (
    task_id text COLLATE "C" NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq     bigint NOT NULL,
    event   text NOT NULL,
    PRIMARY KEY (task_id, seq)
);

CREATE TABLE push_configs (
    task_id   text COLLATE "C" NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    pos       bigserial,
    config_id text,
    config    text NOT NULL,
    PRIMARY KEY (task_id, pos)
);

CREATE INDEX push_configs_by_id ON push_configs (task_id, config_id);
