-- Payments: gateways a tenant enables, payments as state machines, and the
-- append-only log of every state change and provider notice.

CREATE TABLE payment_gateways (
  code TEXT PRIMARY KEY,                      -- a provider's code: manual, stripe
  enabled INTEGER NOT NULL DEFAULT 0,
  display_name TEXT NOT NULL DEFAULT '',
  currency TEXT NOT NULL DEFAULT '',          -- ISO code; empty = the tenant's currency
  min_amount INTEGER NOT NULL DEFAULT 0 CHECK (min_amount >= 0),   -- thousandths
  fee_fixed INTEGER NOT NULL DEFAULT 0 CHECK (fee_fixed >= 0),     -- thousandths
  fee_percent_bp INTEGER NOT NULL DEFAULT 0 CHECK (fee_percent_bp BETWEEN 0 AND 10000), -- basis points
  instructions TEXT NOT NULL DEFAULT '',      -- shown to the payer (manual: bank details)
  secrets_sealed BLOB,                        -- sealed JSON of the provider's secrets
  updated_at TEXT NOT NULL DEFAULT ''
);

CREATE TABLE payments (
  id INTEGER PRIMARY KEY,
  reference TEXT NOT NULL UNIQUE,
  gateway TEXT NOT NULL,
  purpose TEXT NOT NULL,
  purpose_ref INTEGER NOT NULL DEFAULT 0,
  quantity INTEGER NOT NULL DEFAULT 1 CHECK (quantity > 0),
  user_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  manager_id INTEGER REFERENCES managers(id) ON DELETE SET NULL, -- the subscriber's manager when paid (report scope)
  amount INTEGER NOT NULL CHECK (amount > 0),
  fee INTEGER NOT NULL DEFAULT 0 CHECK (fee >= 0),
  total INTEGER NOT NULL CHECK (total > 0),
  currency TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('initiated','pending','succeeded','failed','expired','review')),
  reason TEXT NOT NULL DEFAULT '',
  redirect_url TEXT NOT NULL DEFAULT '',
  provider_ref TEXT NOT NULL DEFAULT '',
  payer_key TEXT NOT NULL,
  request_id TEXT NOT NULL,
  fingerprint TEXT NOT NULL DEFAULT '',
  received_total INTEGER,
  received_currency TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  settled_at TEXT,
  settled_by INTEGER REFERENCES managers(id) ON DELETE SET NULL,
  UNIQUE (payer_key, request_id)
);
CREATE UNIQUE INDEX payments_provider_ref ON payments(gateway, provider_ref) WHERE provider_ref <> '';
CREATE INDEX payments_user ON payments(user_id, id);
CREATE INDEX payments_open ON payments(expires_at) WHERE state IN ('initiated','pending');
CREATE INDEX payments_created ON payments(created_at);

CREATE TABLE payment_events (
  id INTEGER PRIMARY KEY,
  payment_id INTEGER NOT NULL REFERENCES payments(id) ON DELETE CASCADE,
  source TEXT NOT NULL,                  -- provider code, staff or system
  event_id TEXT NOT NULL DEFAULT '',     -- the provider's event id: a repeated notice is recorded once
  kind TEXT NOT NULL,
  from_state TEXT NOT NULL,
  to_state TEXT NOT NULL,
  actor_id INTEGER,
  detail TEXT NOT NULL DEFAULT '',
  at TEXT NOT NULL
);
CREATE UNIQUE INDEX payment_events_once ON payment_events(source, event_id) WHERE event_id <> '';
CREATE INDEX payment_events_payment ON payment_events(payment_id, id);
