-- Outbound messages (app/outbox): one row per message to one recipient,
-- email through the instance's SMTP relay, SMS through the tenant's HTTP
-- gateway, or the subscriber portal inbox. A row is written in the
-- transaction of its cause and sent by the job runner (job kind
-- outbox.send) after commit.
--
-- state: queued → sending → sent, or → failed (retried at next_at) → dead
-- after max_attempts or on a permanent error. While sending, next_at is the
-- end of the claim: a claim that lapsed (its process died) is sent again.
-- Inbox messages are delivered when written (state sent).
CREATE TABLE outbox_messages(
  id INTEGER PRIMARY KEY,
  channel TEXT NOT NULL CHECK (channel IN ('email','sms','inbox')),
  recipient TEXT NOT NULL DEFAULT '',
  user_id INTEGER,
  dedupe TEXT NOT NULL,                 -- recipient, or 'user:<id>' for the inbox
  template TEXT NOT NULL DEFAULT '',
  subject TEXT NOT NULL DEFAULT '',
  body TEXT NOT NULL,
  cause TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued','sending','sent','failed','dead')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL DEFAULT 6,
  next_at TEXT NOT NULL,
  last_attempt_at TEXT,
  last_error TEXT NOT NULL DEFAULT '',  -- a reason (smtp_not_configured, smtp_rejected, ...)
  last_detail TEXT NOT NULL DEFAULT '', -- what the relay or gateway said
  created_at TEXT NOT NULL,
  sent_at TEXT,
  read_at TEXT
);
-- (cause, channel, recipient) is unique: enqueueing the same again is a no-op.
CREATE UNIQUE INDEX outbox_messages_cause ON outbox_messages(cause, channel, dedupe) WHERE cause <> '';
CREATE INDEX outbox_messages_due ON outbox_messages(next_at) WHERE state IN ('queued','sending','failed');
CREATE INDEX outbox_messages_attempts ON outbox_messages(last_attempt_at) WHERE last_attempt_at IS NOT NULL;
CREATE INDEX outbox_messages_inbox ON outbox_messages(user_id, id) WHERE channel = 'inbox';
CREATE INDEX outbox_messages_state ON outbox_messages(state, channel, id);

-- The tenant's SMS gateway (one row): url and body are templates with {to}
-- and {text}; the auth header's value is sealed with the instance key.
CREATE TABLE outbox_sms_gateway(
  id INTEGER PRIMARY KEY CHECK (id = 1),
  url TEXT NOT NULL,
  method TEXT NOT NULL DEFAULT 'POST' CHECK (method IN ('GET','POST')),
  body TEXT NOT NULL DEFAULT '',
  content_type TEXT NOT NULL DEFAULT 'application/x-www-form-urlencoded',
  auth_header TEXT NOT NULL DEFAULT 'Authorization',
  auth_value_sealed BLOB,
  updated_at TEXT NOT NULL
);
