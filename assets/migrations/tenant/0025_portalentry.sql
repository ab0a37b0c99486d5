-- Portal entry: the captcha, one-time codes (invites, exchange codes,
-- messenger link codes), pending self sign-ups, linked messenger accounts
-- and the per-tenant messenger signing secret.

CREATE TABLE portal_captchas (
  id TEXT PRIMARY KEY,
  answer_hash BLOB NOT NULL,            -- SHA-256 of id ":" digits
  client_ip TEXT NOT NULL,              -- the client it was shown to
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT                          -- any verification attempt uses it
);
CREATE INDEX portal_captchas_expires ON portal_captchas(expires_at);

-- One-time codes, kept by hash only. kind: invite (staff → /join),
-- exchange (/exchange → a session), messenger_link (/messenger-exchange).
CREATE TABLE portal_codes (
  code_hash BLOB PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('invite','exchange','messenger_link')),
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  source TEXT NOT NULL DEFAULT '',      -- exchange: staff, tunnel, messenger
  created_by INTEGER REFERENCES managers(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT
);
CREATE INDEX portal_codes_user ON portal_codes(user_id, kind);
CREATE INDEX portal_codes_expires ON portal_codes(expires_at);

-- A sign-up waiting for its verification code (deleted once verified).
CREATE TABLE portal_signups (
  id TEXT PRIMARY KEY,                  -- random, handed to the client
  username TEXT NOT NULL,
  email TEXT NOT NULL DEFAULT '',
  phone TEXT NOT NULL DEFAULT '',
  channel TEXT NOT NULL CHECK (channel IN ('email','sms')),
  code_hash BLOB NOT NULL,
  payload_sealed BLOB NOT NULL,         -- sealed JSON of the request (passwords)
  attempts INTEGER NOT NULL DEFAULT 0,
  client_ip TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX portal_signups_expires ON portal_signups(expires_at);

-- A messaging account linked to a subscriber (one subscriber per account).
CREATE TABLE messenger_accounts (
  account TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  linked_at TEXT NOT NULL
);
CREATE INDEX messenger_accounts_user ON messenger_accounts(user_id);

-- The tenant's messenger signing secret (one row, id 1).
CREATE TABLE messenger_secret (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  secret_sealed BLOB NOT NULL,
  rotated_at TEXT NOT NULL
);
CREATE INDEX radius_sessions_live_framed ON radius_sessions(framed_ip) WHERE stop_time IS NULL;
