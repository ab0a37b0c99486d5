-- Subscribers and their plans: plans (profiles) and who may assign them,
-- subscriber groups, subscribers, their append-only ledger, activations,
-- add-ons, custom form fields, and the live-session table the list's
-- "online" status reads (the RADIUS area extends it in 0006).

-- Plans. Money in thousandths; bytes_limit/seconds_limit 0 = unlimited.
CREATE TABLE profiles(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL COLLATE NOCASE UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  price INTEGER NOT NULL DEFAULT 0 CHECK (price >= 0),
  duration_days INTEGER NOT NULL DEFAULT 30 CHECK (duration_days >= 0),
  bytes_limit INTEGER NOT NULL DEFAULT 0 CHECK (bytes_limit >= 0),
  seconds_limit INTEGER NOT NULL DEFAULT 0 CHECK (seconds_limit >= 0),
  rate_down_kbps INTEGER NOT NULL DEFAULT 0,
  rate_up_kbps INTEGER NOT NULL DEFAULT 0,
  simultaneous_use INTEGER NOT NULL DEFAULT 1 CHECK (simultaneous_use >= 0),
  fup_rate_down_kbps INTEGER NOT NULL DEFAULT 0,
  fup_rate_up_kbps INTEGER NOT NULL DEFAULT 0,
  expired_pool TEXT NOT NULL DEFAULT '',
  enabled INTEGER NOT NULL DEFAULT 1,
  -- 1: every manager who may create subscribers may assign the plan;
  -- 0: only the managers listed in profile_managers (and their subtrees).
  all_managers INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE profile_managers(
  profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  manager_id INTEGER NOT NULL REFERENCES managers(id) ON DELETE CASCADE,
  PRIMARY KEY (profile_id, manager_id)
) WITHOUT ROWID;
CREATE INDEX profile_managers_manager ON profile_managers(manager_id);

CREATE TABLE user_groups(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL COLLATE NOCASE UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- Subscribers. balance in thousandths; debt_limit NULL = unlimited credit,
-- 0 = none. bytes_limit/seconds_limit are the quota of the current period
-- (0 = unlimited), reset by activation. expiration NULL = never activated
-- (counts as expired).
CREATE TABLE users(
  id INTEGER PRIMARY KEY,
  username TEXT NOT NULL COLLATE NOCASE UNIQUE,
  password_sealed BLOB NOT NULL,
  portal_password_hash TEXT NOT NULL DEFAULT '',
  parent_id INTEGER NOT NULL REFERENCES managers(id),
  profile_id INTEGER REFERENCES profiles(id),
  group_id INTEGER REFERENCES user_groups(id) ON DELETE SET NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  deleted_at TEXT,
  expiration TEXT,
  balance INTEGER NOT NULL DEFAULT 0,
  debt_limit INTEGER,
  bytes_limit INTEGER NOT NULL DEFAULT 0,
  used_bytes INTEGER NOT NULL DEFAULT 0,
  seconds_limit INTEGER NOT NULL DEFAULT 0,
  used_seconds INTEGER NOT NULL DEFAULT 0,
  mac_lock_enabled INTEGER NOT NULL DEFAULT 0,
  mac_locked_addrs TEXT NOT NULL DEFAULT '[]',
  static_ip TEXT NOT NULL DEFAULT '',
  email TEXT NOT NULL DEFAULT '',
  firstname TEXT NOT NULL DEFAULT '',
  lastname TEXT NOT NULL DEFAULT '',
  phone TEXT NOT NULL DEFAULT '',
  contract_id TEXT NOT NULL DEFAULT '',
  national_id TEXT NOT NULL DEFAULT '',
  address TEXT NOT NULL DEFAULT '',
  notes TEXT NOT NULL DEFAULT '',
  lookup_token TEXT NOT NULL UNIQUE,
  custom_fields TEXT NOT NULL DEFAULT '{}',
  points_balance INTEGER NOT NULL DEFAULT 0,
  created_by INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
-- Scope + the common filters, covering (deleted_at included so the planner
-- sees it covered): counts and page ids of a subtree or of the whole tenant
-- read this narrow index only.
CREATE INDEX users_live_cover ON users(parent_id, enabled, expiration, profile_id, group_id, created_at, deleted_at) WHERE deleted_at IS NULL;
-- The same columns keyed by id: a search checks its matches' filters here,
-- in a narrow b-tree, instead of in the wide rows (see subs.pageSQL).
CREATE INDEX users_live_ids ON users(id, parent_id, enabled, expiration, profile_id, group_id, created_at, deleted_at) WHERE deleted_at IS NULL;
CREATE INDEX users_live_expiration ON users(expiration, enabled, deleted_at) WHERE deleted_at IS NULL;
CREATE INDEX users_live_created ON users(created_at, deleted_at) WHERE deleted_at IS NULL;
CREATE INDEX users_profile ON users(profile_id, deleted_at);
CREATE INDEX users_group ON users(group_id, deleted_at);
CREATE UNIQUE INDEX users_static_ip ON users(static_ip) WHERE static_ip <> '' AND deleted_at IS NULL;

-- users_count in meta: the number of non-deleted subscribers, exact, kept
-- by these triggers (the licence lock reads it with one key lookup).
INSERT INTO meta(key, value) VALUES ('users_count', '0')
  ON CONFLICT(key) DO UPDATE SET value = '0';
CREATE TRIGGER users_count_ins AFTER INSERT ON users WHEN NEW.deleted_at IS NULL BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'users_count';
END;
CREATE TRIGGER users_count_del AFTER DELETE ON users WHEN OLD.deleted_at IS NULL BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) - 1 WHERE key = 'users_count';
END;
CREATE TRIGGER users_count_upd AFTER UPDATE OF deleted_at ON users
  WHEN (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL) BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) + (CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE -1 END) WHERE key = 'users_count';
END;

-- Substring search of GET /users q: a trigram index over the searched
-- columns, kept in step with users by triggers (external content). A bulk
-- import sets meta users_fts_deferred inside its transaction and indexes
-- its rows in one statement before commit (FTS5 flushes its pending terms
-- at every statement savepoint, which row-by-row inserts make costly).
CREATE VIRTUAL TABLE users_fts USING fts5(
  username, email, firstname, lastname, phone, contract_id, national_id, static_ip,
  content='users', content_rowid='id', tokenize='trigram');
CREATE TRIGGER users_fts_ai AFTER INSERT ON users
  WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'users_fts_deferred') BEGIN
  INSERT INTO users_fts(rowid, username, email, firstname, lastname, phone, contract_id, national_id, static_ip)
  VALUES (NEW.id, NEW.username, NEW.email, NEW.firstname, NEW.lastname, NEW.phone, NEW.contract_id, NEW.national_id, NEW.static_ip);
END;
CREATE TRIGGER users_fts_ad AFTER DELETE ON users BEGIN
  INSERT INTO users_fts(users_fts, rowid, username, email, firstname, lastname, phone, contract_id, national_id, static_ip)
  VALUES ('delete', OLD.id, OLD.username, OLD.email, OLD.firstname, OLD.lastname, OLD.phone, OLD.contract_id, OLD.national_id, OLD.static_ip);
END;
CREATE TRIGGER users_fts_au AFTER UPDATE OF username, email, firstname, lastname, phone, contract_id, national_id, static_ip ON users BEGIN
  INSERT INTO users_fts(users_fts, rowid, username, email, firstname, lastname, phone, contract_id, national_id, static_ip)
  VALUES ('delete', OLD.id, OLD.username, OLD.email, OLD.firstname, OLD.lastname, OLD.phone, OLD.contract_id, OLD.national_id, OLD.static_ip);
  INSERT INTO users_fts(rowid, username, email, firstname, lastname, phone, contract_id, national_id, static_ip)
  VALUES (NEW.id, NEW.username, NEW.email, NEW.firstname, NEW.lastname, NEW.phone, NEW.contract_id, NEW.national_id, NEW.static_ip);
END;

-- The subscriber ledger: every movement of users.balance, append-only,
-- with the running balance, written in the same transaction as the balance.
CREATE TABLE user_ledger(
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  kind TEXT NOT NULL,
  amount INTEGER NOT NULL,
  balance_after INTEGER NOT NULL,
  actor_id INTEGER,
  ref_type TEXT NOT NULL DEFAULT '',
  ref_id INTEGER,
  request_id TEXT,
  invoice_no TEXT NOT NULL DEFAULT '',
  note TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL
);
CREATE INDEX user_ledger_user ON user_ledger(user_id, id);
CREATE TRIGGER user_ledger_no_update BEFORE UPDATE ON user_ledger BEGIN SELECT RAISE(ABORT, 'user_ledger is append-only'); END;
CREATE TRIGGER user_ledger_no_delete BEFORE DELETE ON user_ledger BEGIN SELECT RAISE(ABORT, 'user_ledger is append-only'); END;

-- Invoices issued on subscriber deposits (only when asked: issue_invoice).
CREATE TABLE user_invoices(
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  number TEXT NOT NULL UNIQUE,
  amount INTEGER NOT NULL,
  ledger_id INTEGER REFERENCES user_ledger(id),
  actor_id INTEGER,
  created_at TEXT NOT NULL
);
CREATE INDEX user_invoices_user ON user_invoices(user_id, id);

-- Reward points of subscribers: append-only with running total.
CREATE TABLE user_points(
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  delta INTEGER NOT NULL,
  balance_after INTEGER NOT NULL,
  kind TEXT NOT NULL,
  actor_id INTEGER,
  ledger_id INTEGER REFERENCES user_ledger(id),
  created_at TEXT NOT NULL
);
CREATE INDEX user_points_user ON user_points(user_id, id);
CREATE TRIGGER user_points_no_update BEFORE UPDATE ON user_points BEGIN SELECT RAISE(ABORT, 'user_points is append-only'); END;
CREATE TRIGGER user_points_no_delete BEFORE DELETE ON user_points BEGIN SELECT RAISE(ABORT, 'user_points is append-only'); END;

-- Activations: what each one charged and changed, so the last one can be
-- refunded (money and time). refunded_at is the only column ever updated.
CREATE TABLE user_activations(
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  profile_id INTEGER REFERENCES profiles(id),
  price INTEGER NOT NULL,
  payer TEXT NOT NULL CHECK (payer IN ('subscriber','reseller','none')),
  payer_manager_id INTEGER,
  ledger_id INTEGER REFERENCES user_ledger(id),
  journal_id INTEGER,
  added_seconds INTEGER NOT NULL,
  old_expiration TEXT,
  new_expiration TEXT NOT NULL,
  old_profile_id INTEGER,
  old_bytes_limit INTEGER NOT NULL,
  old_seconds_limit INTEGER NOT NULL,
  old_used_bytes INTEGER NOT NULL,
  old_used_seconds INTEGER NOT NULL,
  actor_id INTEGER,
  ref_type TEXT NOT NULL DEFAULT '',
  ref_id INTEGER,
  refunded_at TEXT,
  refunded_by INTEGER,
  created_at TEXT NOT NULL
);
CREATE INDEX user_activations_user ON user_activations(user_id, id);

-- Add-ons: extra data, days or time bought on top of a plan.
CREATE TABLE addons(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL COLLATE NOCASE UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL CHECK (kind IN ('data','days','time')),
  amount INTEGER NOT NULL CHECK (amount > 0),  -- bytes, days or seconds by kind
  price INTEGER NOT NULL DEFAULT 0 CHECK (price >= 0),
  enabled INTEGER NOT NULL DEFAULT 1,
  all_profiles INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE addon_profiles(
  addon_id INTEGER NOT NULL REFERENCES addons(id) ON DELETE CASCADE,
  profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  PRIMARY KEY (addon_id, profile_id)
) WITHOUT ROWID;
CREATE TABLE user_addons(
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  addon_id INTEGER NOT NULL REFERENCES addons(id),
  quantity INTEGER NOT NULL,
  price INTEGER NOT NULL,
  payer TEXT NOT NULL,
  ledger_id INTEGER REFERENCES user_ledger(id),
  journal_id INTEGER,
  actor_id INTEGER,
  created_at TEXT NOT NULL
);
CREATE INDEX user_addons_user ON user_addons(user_id, id);

-- Custom form fields of the subscriber ("user") and manager forms.
CREATE TABLE form_fields(
  id INTEGER PRIMARY KEY,
  form_name TEXT NOT NULL CHECK (form_name IN ('user','manager')),
  name TEXT NOT NULL,
  label TEXT NOT NULL DEFAULT '',
  type TEXT NOT NULL CHECK (type IN ('text','number','date','select','checkbox')),
  required INTEGER NOT NULL DEFAULT 0,
  regex TEXT NOT NULL DEFAULT '',
  options TEXT NOT NULL DEFAULT '[]',
  placeholder TEXT NOT NULL DEFAULT '',
  help TEXT NOT NULL DEFAULT '',
  max_length INTEGER NOT NULL DEFAULT 0,
  position INTEGER NOT NULL DEFAULT 0,
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (form_name, name)
);

-- Live and past RADIUS sessions. A row with stop_time NULL is a live
-- session; the RADIUS area (0006) extends this table.
CREATE TABLE radius_sessions(
  id INTEGER PRIMARY KEY,
  acct_session_id TEXT NOT NULL,
  user_id INTEGER,
  username TEXT NOT NULL DEFAULT '',
  nas_id INTEGER,
  nas_ip TEXT NOT NULL DEFAULT '',
  framed_ip TEXT NOT NULL DEFAULT '',
  calling_station_id TEXT NOT NULL DEFAULT '',
  start_time TEXT,
  update_time TEXT,
  stop_time TEXT,
  session_time INTEGER NOT NULL DEFAULT 0,
  input_octets INTEGER NOT NULL DEFAULT 0,
  output_octets INTEGER NOT NULL DEFAULT 0,
  terminate_cause TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL DEFAULT 'subscriber'
);
CREATE INDEX radius_sessions_live_user ON radius_sessions(user_id) WHERE stop_time IS NULL;
