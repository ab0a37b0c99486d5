-- Operator tools (app/tools): announcements and bulk changes.

-- An announcement to subscribers: its text (with {username}, {expiration},
-- {balance}, {plan}), its channels, the target as asked, and the fan-out's
-- cursor. The recipients are fixed when it is created
-- (announcement_recipients); the fan-out job walks them by user_id past
-- cursor, one chunk per transaction, enqueueing into the outbox (cause
-- 'announcement:<id>', idempotent per recipient).
CREATE TABLE announcements(
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  channels TEXT NOT NULL,                -- JSON array of email, sms, inbox
  target TEXT NOT NULL DEFAULT '{}',     -- JSON: the selection as asked
  state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued','sending','done')),
  recipients INTEGER NOT NULL DEFAULT 0,
  processed INTEGER NOT NULL DEFAULT 0,
  skipped INTEGER NOT NULL DEFAULT 0,    -- (recipient, channel) pairs without an address
  cursor INTEGER NOT NULL DEFAULT 0,     -- last user_id fanned out
  expires_at TEXT,
  job_id INTEGER,
  created_by INTEGER,
  created_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX announcements_created_by ON announcements(created_by, id);

CREATE TABLE announcement_recipients(
  announcement_id INTEGER NOT NULL REFERENCES announcements(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL,
  PRIMARY KEY (announcement_id, user_id)
) WITHOUT ROWID;

-- A bulk change: the selection, the operations, and one row per selected
-- subscriber (fixed at apply) with its outcome, before and after.
CREATE TABLE bulk_changes(
  id INTEGER PRIMARY KEY,
  selection TEXT NOT NULL DEFAULT '{}',
  operations TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued','running','done')),
  total INTEGER NOT NULL DEFAULT 0,
  done INTEGER NOT NULL DEFAULT 0,
  ok INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  job_id INTEGER,
  created_by INTEGER,
  created_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX bulk_changes_created_by ON bulk_changes(created_by, id);

CREATE TABLE bulk_change_rows(
  bulk_id INTEGER NOT NULL REFERENCES bulk_changes(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','ok','failed')),
  reason TEXT NOT NULL DEFAULT '',
  before TEXT,
  after TEXT,
  PRIMARY KEY (bulk_id, user_id)
) WITHOUT ROWID;
CREATE INDEX bulk_change_rows_pending ON bulk_change_rows(bulk_id, user_id) WHERE status = 'pending';
