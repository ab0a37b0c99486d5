-- Portal self-service (app/selfservice; prorating rules in docs/selfservice.md).
--
-- What staff offer per plan: ss_plan_policies (extensions: days, price, a
-- monthly cap, 0 = the tenant setting), ss_plan_targets (the plans a
-- subscriber on profile_id may change to) and ss_boost_options (speed
-- boosts: rate, duration, price).
CREATE TABLE ss_plan_policies(
  profile_id INTEGER PRIMARY KEY REFERENCES profiles(id) ON DELETE CASCADE,
  extension_days INTEGER NOT NULL DEFAULT 0 CHECK (extension_days >= 0),
  extension_price INTEGER NOT NULL DEFAULT 0 CHECK (extension_price >= 0),
  extension_max_per_month INTEGER NOT NULL DEFAULT 0 CHECK (extension_max_per_month >= 0),
  updated_at TEXT NOT NULL
);
CREATE TABLE ss_plan_targets(
  profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  target_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  PRIMARY KEY (profile_id, target_id)
);
CREATE TABLE ss_boost_options(
  id INTEGER PRIMARY KEY,
  profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  name TEXT NOT NULL DEFAULT '',
  rate_down_kbps INTEGER NOT NULL,
  rate_up_kbps INTEGER NOT NULL,
  duration_minutes INTEGER NOT NULL,
  price INTEGER NOT NULL,
  position INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX ss_boost_options_profile ON ss_boost_options(profile_id, position);

-- A priced intent (POST /portal/quote): the body it priced, the total,
-- the basis it depended on; executed once (used_at) before expires_at.
CREATE TABLE ss_quotes(
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  intent TEXT NOT NULL,
  body TEXT NOT NULL,
  total INTEGER NOT NULL,
  detail TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX ss_quotes_user ON ss_quotes(user_id, id);

-- Extensions on credit: days added to the expiration, their price.
CREATE TABLE ss_extensions(
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  profile_id INTEGER,
  days INTEGER NOT NULL,
  price INTEGER NOT NULL,
  ledger_id INTEGER,
  old_expiration TEXT,
  new_expiration TEXT NOT NULL,
  request_id TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX ss_extensions_user ON ss_extensions(user_id, created_at);

-- A plan change at the next renewal: bound at the expiration by a job.
CREATE TABLE ss_pending_changes(
  user_id INTEGER PRIMARY KEY REFERENCES users(id),
  profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  effective_at TEXT NOT NULL,
  job_id INTEGER,
  created_at TEXT NOT NULL
);

-- Automatic renewal from the wallet at expiry: the switch, the queued job,
-- and each run's outcome (one row per expiration and outcome).
CREATE TABLE ss_auto_renew(
  user_id INTEGER PRIMARY KEY REFERENCES users(id),
  enabled INTEGER NOT NULL,
  job_id INTEGER,
  updated_at TEXT NOT NULL
);
CREATE TABLE ss_auto_renew_runs(
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  expiration TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('renewed','failed')),
  reason TEXT NOT NULL DEFAULT '',
  activation_id INTEGER,
  created_at TEXT NOT NULL,
  UNIQUE (user_id, expiration, outcome)
);

-- Quota buckets: the order a subscriber consumes them in, and what each
-- bucket used in the period that started with activation period_id.
CREATE TABLE ss_bucket_orders(
  user_id INTEGER PRIMARY KEY REFERENCES users(id),
  buckets TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE ss_bucket_usage(
  user_id INTEGER PRIMARY KEY REFERENCES users(id),
  period_id INTEGER NOT NULL,
  plan_used INTEGER NOT NULL DEFAULT 0,
  addon_used INTEGER NOT NULL DEFAULT 0,
  bonus_used INTEGER NOT NULL DEFAULT 0
);

-- Speed boosts: a bandwidth override (bandwidth_rules, target the
-- subscriber) from starts_at to ends_at, paid from the wallet; reverted at
-- its end by a job (or cancelled). CoA outcomes: ack, nak, timeout, error,
-- none (no live session).
CREATE TABLE ss_boosts(
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  option_id INTEGER,
  rule_id INTEGER,
  rate_down_kbps INTEGER NOT NULL,
  rate_up_kbps INTEGER NOT NULL,
  price INTEGER NOT NULL,
  ledger_id INTEGER,
  starts_at TEXT NOT NULL,
  ends_at TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('active','ended','cancelled')),
  apply_coa TEXT NOT NULL DEFAULT '',
  revert_coa TEXT NOT NULL DEFAULT '',
  job_id INTEGER,
  ended_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX ss_boosts_user ON ss_boosts(user_id, state);
