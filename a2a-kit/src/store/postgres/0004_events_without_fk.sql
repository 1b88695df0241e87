-- Version 4: the event log without a foreign key. Every event row went through a
-- referential check (a query per row, a fifth of the database's work per task); events are
-- only ever written by the store for a task whose row it holds (inserted or locked in the same
-- transaction), and retention deletes a task's events with it explicitly.

ALTER TABLE events DROP CONSTRAINT IF EXISTS events_task_id_fkey;
