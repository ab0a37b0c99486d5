-- Prepaid cards: card series (batches), their cards, redemptions and their
-- reversals, per-reseller prices, transfers, and the event rows the card
-- timeline reads. Money in thousandths. Stock counters of a series are
-- maintained in the transaction of every state change (never derived by
-- subtraction); app/cards keeps them and its tests recount them.

CREATE TABLE card_batches(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL DEFAULT '',
  card_mode TEXT NOT NULL CHECK (card_mode IN ('voucher_account','refill_balance')),
  plan_id INTEGER REFERENCES profiles(id),
  quantity INTEGER NOT NULL CHECK (quantity > 0),
  face_value INTEGER NOT NULL CHECK (face_value >= 0),
  code_length INTEGER NOT NULL,            -- effective (raised above the request when the pool needs it)
  requested_code_length INTEGER NOT NULL DEFAULT 0,
  code_charset TEXT NOT NULL CHECK (code_charset IN ('numeric','alpha','alnum','alnum_no_ambig')),
  expiration TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'generating' CHECK (status IN ('generating','ready','failed')),
  failure_reason TEXT NOT NULL DEFAULT '',
  suspended INTEGER NOT NULL DEFAULT 0,
  sell_online INTEGER NOT NULL DEFAULT 0,
  auto_activate INTEGER NOT NULL DEFAULT 0,
  note TEXT NOT NULL DEFAULT '',           -- distribution note
  template_id INTEGER,
  owner_manager_id INTEGER NOT NULL REFERENCES managers(id),
  created_by INTEGER NOT NULL REFERENCES managers(id),
  request_id TEXT NOT NULL DEFAULT '',
  job_id INTEGER,
  -- stock counters
  processed INTEGER NOT NULL DEFAULT 0,    -- cards minted so far
  unused INTEGER NOT NULL DEFAULT 0,       -- state unused
  used INTEGER NOT NULL DEFAULT 0,         -- state consumed, active or exhausted
  revoked INTEGER NOT NULL DEFAULT 0,      -- state revoked
  available INTEGER NOT NULL DEFAULT 0,    -- unused and disposition available: sellable stock
  held INTEGER NOT NULL DEFAULT 0,         -- disposition held (an open till sale)
  stuck_sale INTEGER NOT NULL DEFAULT 0,   -- disposition stuck (a till sale that never completed)
  sold_online INTEGER NOT NULL DEFAULT 0,  -- cumulative sales by channel
  sold_counter INTEGER NOT NULL DEFAULT 0,
  transferred INTEGER NOT NULL DEFAULT 0,  -- cumulative cards moved to another owner
  redeemed INTEGER NOT NULL DEFAULT 0,     -- cumulative redemptions
  in_circulation INTEGER NOT NULL DEFAULT 0, -- 1 once any card was redeemed, used, transferred or sold: delete refused
  charged INTEGER NOT NULL DEFAULT 0,      -- what the owner paid at generation
  print_count INTEGER NOT NULL DEFAULT 0,
  printed_at TEXT,
  content_version INTEGER NOT NULL DEFAULT 1, -- bumped when what a sheet prints changes
  pdf_version INTEGER NOT NULL DEFAULT 0,     -- content_version the stored PDF shows (pdf_ready when equal)
  pdf_file TEXT NOT NULL DEFAULT '',
  pdf_job_id INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX card_batches_owner ON card_batches(owner_manager_id);
CREATE INDEX card_batches_created_by ON card_batches(created_by);
CREATE INDEX card_batches_status ON card_batches(status);

CREATE TABLE cards(
  id INTEGER PRIMARY KEY,
  batch_id INTEGER NOT NULL REFERENCES card_batches(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  serial TEXT NOT NULL,
  code TEXT NOT NULL,
  username TEXT COLLATE NOCASE,            -- prepaid series: RADIUS login
  password TEXT,
  state TEXT NOT NULL DEFAULT 'unused' CHECK (state IN ('unused','consumed','active','exhausted','revoked')),
  revoked_reason TEXT NOT NULL DEFAULT '',  -- suspension (released by release), manual, generation_failed, reversal
  disposition TEXT NOT NULL DEFAULT 'available',
  owner_manager_id INTEGER NOT NULL REFERENCES managers(id),
  expires_at TEXT NOT NULL,
  first_use_at TEXT,
  valid_until TEXT,                          -- prepaid login: end of the validity started by first use
  used_bytes INTEGER NOT NULL DEFAULT 0,
  used_seconds INTEGER NOT NULL DEFAULT 0,
  used_by_user_id INTEGER REFERENCES users(id),
  used_by_manager_id INTEGER REFERENCES managers(id),
  used_channel TEXT NOT NULL DEFAULT '',
  used_at TEXT,
  revoked_at TEXT,
  sold_at TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (batch_id, seq)
);
-- Codes are unique tenant-wide: a code names one card.
CREATE UNIQUE INDEX cards_code ON cards(code);
CREATE UNIQUE INDEX cards_serial ON cards(serial);
CREATE UNIQUE INDEX cards_username ON cards(username) WHERE username IS NOT NULL;
CREATE INDEX cards_owner ON cards(owner_manager_id);
CREATE INDEX cards_batch_state ON cards(batch_id, state, disposition);
CREATE INDEX cards_used_by_user ON cards(used_by_user_id) WHERE used_by_user_id IS NOT NULL;

-- Timeline events: per card (card_id set) and series-wide (card_id NULL:
-- created, ready, printed, suspended, released, expiry_changed,
-- regenerated, failed). One table, so that id orders them all. Minted
-- comes from the card row.
CREATE TABLE card_events(
  id INTEGER PRIMARY KEY,
  batch_id INTEGER NOT NULL REFERENCES card_batches(id) ON DELETE CASCADE,
  card_id INTEGER REFERENCES cards(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  actor_id INTEGER,
  detail TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL
);
CREATE INDEX card_events_card ON card_events(card_id, id) WHERE card_id IS NOT NULL;
CREATE INDEX card_events_batch ON card_events(batch_id, id) WHERE card_id IS NULL;

-- A series' price per reseller: what that manager pays per card (at
-- generation when it owns the series, on transfer when it receives cards).
CREATE TABLE card_batch_prices(
  batch_id INTEGER NOT NULL REFERENCES card_batches(id) ON DELETE CASCADE,
  manager_id INTEGER NOT NULL REFERENCES managers(id),
  unit_price INTEGER NOT NULL CHECK (unit_price >= 0),
  updated_by INTEGER,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (batch_id, manager_id)
) WITHOUT ROWID;

CREATE TABLE card_redemptions(
  id INTEGER PRIMARY KEY,
  card_id INTEGER NOT NULL REFERENCES cards(id),
  batch_id INTEGER NOT NULL,
  card_mode TEXT NOT NULL,
  channel TEXT NOT NULL,                 -- staff, counter, self_signup, wallet, customer_portal
  user_id INTEGER REFERENCES users(id),
  manager_id INTEGER REFERENCES managers(id), -- wallet credited (redeem-to-wallet)
  actor_id INTEGER,
  reseller_id INTEGER,                   -- over the counter: the acting manager
  face_value INTEGER NOT NULL,
  paid_amount INTEGER,                   -- over the counter: what the customer paid
  charged_amount INTEGER,                -- over the counter: what the reseller paid for the card
  effect_type TEXT NOT NULL,             -- balance, activation, balance_activation, wallet
  effect_amount INTEGER NOT NULL,
  ledger_id INTEGER,
  journal_id INTEGER,
  activation_id INTEGER,
  created_user INTEGER NOT NULL DEFAULT 0,
  prev_disposition TEXT NOT NULL DEFAULT '',
  request_id TEXT NOT NULL,
  reversed_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX card_redemptions_card ON card_redemptions(card_id, id);
CREATE INDEX card_redemptions_user ON card_redemptions(user_id) WHERE user_id IS NOT NULL;

CREATE TABLE card_reversals(
  id INTEGER PRIMARY KEY,
  redemption_id INTEGER NOT NULL UNIQUE REFERENCES card_redemptions(id),
  card_id INTEGER NOT NULL REFERENCES cards(id),
  actor_id INTEGER,
  card_state TEXT NOT NULL,              -- unused (back in stock) or revoked
  amount INTEGER NOT NULL,               -- money taken back
  ledger_id INTEGER,
  journal_id INTEGER,
  activation_id INTEGER,
  note TEXT NOT NULL DEFAULT '',
  request_id TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE card_transfers(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,                    -- cards, series, revert
  batch_id INTEGER REFERENCES card_batches(id) ON DELETE SET NULL,
  from_manager_id INTEGER NOT NULL REFERENCES managers(id),
  to_manager_id INTEGER NOT NULL REFERENCES managers(id),
  card_count INTEGER NOT NULL,
  unit_price INTEGER NOT NULL DEFAULT 0,
  amount INTEGER NOT NULL DEFAULT 0,
  reverts_id INTEGER REFERENCES card_transfers(id),
  actor_id INTEGER,
  request_id TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE card_transfer_items(
  transfer_id INTEGER NOT NULL REFERENCES card_transfers(id) ON DELETE CASCADE,
  card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
  batch_id INTEGER NOT NULL,
  PRIMARY KEY (transfer_id, card_id)
) WITHOUT ROWID;
CREATE INDEX card_transfer_items_card ON card_transfer_items(card_id);

-- Voucher sessions carry no subscriber id; the card login reads its usage
-- and live sessions by username.
CREATE INDEX radius_sessions_voucher ON radius_sessions(username, stop_time) WHERE user_id IS NULL;
