-- Webhooks: endpoints a tenant's events are sent to, and the delivery log.

-- The signing secret is sealed with the instance key (shown once at create
-- and at rotation). During a rotation's grace window the previous secret
-- still signs (a second v1= signature), so receivers can roll over.
CREATE TABLE webhook_endpoints(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL DEFAULT '[]',          -- JSON array of catalogue keys
  all_events INTEGER NOT NULL DEFAULT 0,      -- also keys of later releases
  enabled INTEGER NOT NULL DEFAULT 1,
  secret BLOB NOT NULL,
  prev_secret BLOB,
  prev_secret_until TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- One row per (event, endpoint); the event's payload is copied so the log
-- does not depend on the outbox row. endpoint_id has no foreign key: the
-- log outlives a deleted endpoint. Each delivery is driven by one job
-- (job_id); gen is bumped by replay and delete so a superseded job or an
-- attempt in flight cannot overwrite the newer state.
CREATE TABLE webhook_deliveries(
  id INTEGER PRIMARY KEY,
  endpoint_id INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  event_created_at TEXT NOT NULL,
  data TEXT NOT NULL,
  synthetic INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued','sending','sent','failed','dead')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL DEFAULT 8,
  response_code INTEGER,
  response_ms INTEGER,
  last_error TEXT NOT NULL DEFAULT '',
  url TEXT NOT NULL,
  queued_at TEXT NOT NULL,
  sent_at TEXT,
  next_attempt_at TEXT,
  job_id INTEGER,
  gen INTEGER NOT NULL DEFAULT 1
);
-- The dispatcher creates at most one delivery per endpoint for an event.
CREATE UNIQUE INDEX webhook_deliveries_event ON webhook_deliveries(event_id, endpoint_id) WHERE synthetic = 0;
CREATE INDEX webhook_deliveries_queued ON webhook_deliveries(queued_at, id);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, queued_at);
CREATE INDEX webhook_deliveries_state ON webhook_deliveries(state, queued_at);
