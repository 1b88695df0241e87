-- Version 5: a push lane's retry in progress: attempts made for its next event, and when
-- the next one is due (Unix ms), so the replica that takes the lane over keeps the schedule.

ALTER TABLE push_lanes ADD COLUMN attempts integer NOT NULL DEFAULT 0;
ALTER TABLE push_lanes ADD COLUMN next_attempt_at bigint;
