-- Recurring schedules of a tenant (app/schedule.go): each one enqueues a job
-- of its kind with its payload at a time of day in the tenant's time zone,
-- daily or on chosen weekdays. job_id is the queued job of the next run:
-- the runner runs it when due (a run missed while the server was down runs
-- at start, once), and that run queues the one after.
CREATE TABLE schedules(
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,            -- the owner's name for it ("backup")
  kind TEXT NOT NULL,                  -- job kind enqueued
  payload TEXT NOT NULL DEFAULT '{}',
  frequency TEXT NOT NULL CHECK (frequency IN ('daily','weekly')),
  weekdays INTEGER NOT NULL DEFAULT 0, -- weekly: bit d set = time.Weekday d (Sunday = 0)
  minute_of_day INTEGER NOT NULL CHECK (minute_of_day BETWEEN 0 AND 1439),
  enabled INTEGER NOT NULL DEFAULT 1,
  next_run_at TEXT,                    -- UTC; NULL when disabled
  last_run_at TEXT,
  job_id INTEGER,                      -- the queued job of next_run_at
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
