-- Bandwidth control (app/bandwidth) and dashboards (app/dashboards).
--
-- bandwidth_rules: a rate in force for a target set. kind 'override' (POST
-- /admin/tools/bandwidth/apply) is in force from starts_at to ends_at (NULL =
-- until reverted) unless reverted_at is set; kind 'window' (a schedule) is
-- in force on the weekdays of its mask from start_minute to end_minute in
-- the tenant time zone (end <= start crosses midnight). target_kind is
-- plan, group, nas or users; target_ids a JSON array of ids. The RADIUS
-- index (app/aaa/bandwidth.go) holds the rules in memory and applies the
-- one in force at Access-Accept; every change reaches it through the
-- change log (profile_id -1 = "reload the bandwidth rules").
CREATE TABLE bandwidth_rules(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('override','window')),
  name TEXT NOT NULL DEFAULT '',
  target_kind TEXT NOT NULL CHECK (target_kind IN ('plan','group','nas','users')),
  target_ids TEXT NOT NULL DEFAULT '[]',
  rate_down_kbps INTEGER NOT NULL,
  rate_up_kbps INTEGER NOT NULL,
  starts_at TEXT,
  ends_at TEXT,
  reverted_at TEXT,
  weekdays INTEGER NOT NULL DEFAULT 0,
  start_minute INTEGER NOT NULL DEFAULT 0 CHECK (start_minute BETWEEN 0 AND 1439),
  end_minute INTEGER NOT NULL DEFAULT 0 CHECK (end_minute BETWEEN 0 AND 1439),
  enabled INTEGER NOT NULL DEFAULT 1,
  created_by INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX bandwidth_rules_kind ON bandwidth_rules(kind, reverted_at);
CREATE TRIGGER bandwidth_rules_authz_ai AFTER INSERT ON bandwidth_rules BEGIN INSERT INTO authz_changes(profile_id) VALUES (-1); END;
CREATE TRIGGER bandwidth_rules_authz_au AFTER UPDATE ON bandwidth_rules BEGIN INSERT INTO authz_changes(profile_id) VALUES (-1); END;
CREATE TRIGGER bandwidth_rules_authz_ad AFTER DELETE ON bandwidth_rules BEGIN INSERT INTO authz_changes(profile_id) VALUES (-1); END;
-- A rule may target a group: the index needs a subscriber's group.
CREATE TRIGGER users_authz_group AFTER UPDATE OF group_id ON users WHEN NEW.group_id IS NOT OLD.group_id
BEGIN INSERT INTO authz_changes(user_id) VALUES (NEW.id); END;

-- One CoA per online session per rate change: action apply, revert,
-- window_start, window_end, expire; outcome ack, nak, timeout, error.
CREATE TABLE bandwidth_coa(
  id INTEGER PRIMARY KEY,
  rule_id INTEGER,
  action TEXT NOT NULL,
  session_id INTEGER,
  user_id INTEGER,
  parent_id INTEGER,
  username TEXT NOT NULL DEFAULT '',
  nas_id INTEGER,
  nas_type TEXT NOT NULL DEFAULT '',
  rate_down_kbps INTEGER NOT NULL,
  rate_up_kbps INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX bandwidth_coa_rule ON bandwidth_coa(rule_id, id);

-- Dashboards: tenant-wide definitions (roles: JSON array of role names
-- that see it, [] = everyone; tiles: JSON array) and each manager's own
-- layout and appearance.
CREATE TABLE dashboards(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  roles TEXT NOT NULL DEFAULT '[]',
  tiles TEXT NOT NULL DEFAULT '[]',
  builtin TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX dashboards_builtin ON dashboards(builtin) WHERE builtin IS NOT NULL;
CREATE TABLE dashboard_prefs(
  manager_id INTEGER PRIMARY KEY,
  tiles TEXT,
  theme TEXT NOT NULL DEFAULT 'system',
  density TEXT NOT NULL DEFAULT 'comfortable',
  updated_at TEXT NOT NULL
);

-- Daily money rollup for the dashboard (never a scan of the ledger):
-- per UTC day and subscriber parent, the credits (amount > 0) and debits
-- (amount < 0) of the subscriber ledger, and card redemptions' face value.
CREATE TABLE dashboard_daily(
  day TEXT NOT NULL,
  manager_id INTEGER NOT NULL,
  metric TEXT NOT NULL,
  value INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(day, manager_id, metric)
) WITHOUT ROWID;
CREATE TRIGGER dashboard_daily_ledger AFTER INSERT ON user_ledger BEGIN
  INSERT INTO dashboard_daily(day, manager_id, metric, value)
  VALUES (substr(NEW.created_at, 1, 10), COALESCE((SELECT parent_id FROM users WHERE id = NEW.user_id), 0),
          CASE WHEN NEW.amount >= 0 THEN 'credits' ELSE 'debits' END, abs(NEW.amount))
  ON CONFLICT(day, manager_id, metric) DO UPDATE SET value = value + excluded.value;
END;
CREATE TRIGGER dashboard_daily_cards AFTER INSERT ON card_redemptions BEGIN
  INSERT INTO dashboard_daily(day, manager_id, metric, value)
  VALUES (substr(NEW.created_at, 1, 10), COALESCE(NEW.reseller_id, (SELECT parent_id FROM users WHERE id = NEW.user_id), NEW.manager_id, 0),
          'card_sales', NEW.face_value)
  ON CONFLICT(day, manager_id, metric) DO UPDATE SET value = value + excluded.value;
END;

-- Subscriber counters for the dashboard, per parent manager (not deleted;
-- enabled among them), kept by triggers: a subtree's totals are a sum over
-- its managers, never a count of the users table. Expired ones are counted
-- through the expiration indexes (they depend on the clock).
CREATE TABLE dashboard_user_counts(
  manager_id INTEGER PRIMARY KEY,
  total INTEGER NOT NULL DEFAULT 0,
  enabled INTEGER NOT NULL DEFAULT 0
);
INSERT INTO dashboard_user_counts(manager_id, total, enabled)
  SELECT parent_id, COUNT(*), SUM(enabled != 0) FROM users WHERE deleted_at IS NULL GROUP BY parent_id;
CREATE TRIGGER dashboard_users_ai AFTER INSERT ON users WHEN NEW.deleted_at IS NULL BEGIN
  INSERT INTO dashboard_user_counts(manager_id, total, enabled) VALUES (NEW.parent_id, 1, NEW.enabled != 0)
  ON CONFLICT(manager_id) DO UPDATE SET total = total + 1, enabled = enabled + excluded.enabled;
END;
CREATE TRIGGER dashboard_users_ad AFTER DELETE ON users WHEN OLD.deleted_at IS NULL BEGIN
  UPDATE dashboard_user_counts SET total = total - 1, enabled = enabled - (OLD.enabled != 0) WHERE manager_id = OLD.parent_id;
END;
CREATE TRIGGER dashboard_users_au AFTER UPDATE OF parent_id, enabled, deleted_at ON users BEGIN
  UPDATE dashboard_user_counts SET total = total - 1, enabled = enabled - (OLD.enabled != 0)
    WHERE manager_id = OLD.parent_id AND OLD.deleted_at IS NULL;
  INSERT INTO dashboard_user_counts(manager_id, total, enabled) SELECT NEW.parent_id, 1, NEW.enabled != 0 WHERE NEW.deleted_at IS NULL
  ON CONFLICT(manager_id) DO UPDATE SET total = total + 1, enabled = enabled + excluded.enabled;
END;
