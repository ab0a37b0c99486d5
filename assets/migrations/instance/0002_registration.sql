-- Self-service sign-up of new ISPs (xr serve --allow-signup).
CREATE TABLE registrations(
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL,
  code_hash BLOB NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  sends INTEGER NOT NULL DEFAULT 1,
  verified_at TEXT,
  completed_at TEXT,
  tenant_id INTEGER,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
-- Outgoing mail: kept here and logged when no SMTP relay is configured.
CREATE TABLE mail_outbox(
  id INTEGER PRIMARY KEY,
  to_addr TEXT NOT NULL,
  subject TEXT NOT NULL,
  body TEXT NOT NULL,
  sent_at TEXT,
  error TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL
);
