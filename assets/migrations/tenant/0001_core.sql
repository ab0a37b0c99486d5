-- Platform tables of one tenant: marker, settings, idempotency, jobs, event outbox.
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta(key, value) VALUES ('file_kind', 'xr-tenant');

-- Tenant settings, JSON values by key (currency, timezone, default_language, ...).
CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);

-- request_id → the subject it was first used on and the outcome it produced.
CREATE TABLE idempotency(
  key TEXT PRIMARY KEY,
  subject TEXT NOT NULL,
  outcome TEXT NOT NULL,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX idempotency_created ON idempotency(created_at);

CREATE TABLE jobs(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL DEFAULT '{}',
  state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued','running','done','failed','cancelled')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL DEFAULT 3,
  run_at TEXT NOT NULL,
  progress INTEGER NOT NULL DEFAULT 0,
  progress_total INTEGER NOT NULL DEFAULT 0,
  result TEXT NOT NULL DEFAULT '{}',
  error TEXT NOT NULL DEFAULT '',
  lease_until TEXT,
  created_by INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX jobs_due ON jobs(state, run_at);

-- The event outbox: written in the transaction of the effect that emits it.
CREATE TABLE events(
  id INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at TEXT NOT NULL,
  dispatched INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX events_pending ON events(id) WHERE dispatched = 0;
