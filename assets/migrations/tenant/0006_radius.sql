-- RADIUS accounting beyond the minimal live-session table of 0004, and the
-- change log that keeps the in-memory authorization index coherent.
ALTER TABLE radius_sessions ADD COLUMN nas_port_id TEXT NOT NULL DEFAULT '';
ALTER TABLE radius_sessions ADD COLUMN input_packets INTEGER NOT NULL DEFAULT 0;
ALTER TABLE radius_sessions ADD COLUMN output_packets INTEGER NOT NULL DEFAULT 0;
ALTER TABLE radius_sessions ADD COLUMN profile_name TEXT NOT NULL DEFAULT '';
-- What closed the session: the NAS (its Terminate-Cause in terminate_cause),
-- nas_reboot (Accounting-On/Off), stale (no update within the idle window).
ALTER TABLE radius_sessions ADD COLUMN close_reason TEXT NOT NULL DEFAULT '';
-- Outcome of the last Disconnect-Request/CoA for this session: ok, nak,
-- unreachable; confirmed by the Accounting-Stop that follows.
ALTER TABLE radius_sessions ADD COLUMN disconnect_outcome TEXT NOT NULL DEFAULT '';
ALTER TABLE radius_sessions ADD COLUMN disconnect_at TEXT;
-- Usage already charged to the subscriber's quota from this session.
ALTER TABLE radius_sessions ADD COLUMN charged_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE radius_sessions ADD COLUMN charged_seconds INTEGER NOT NULL DEFAULT 0;

CREATE INDEX radius_sessions_nas_sid ON radius_sessions(nas_id, acct_session_id, id);
CREATE INDEX radius_sessions_live_nas ON radius_sessions(nas_id) WHERE stop_time IS NULL;
CREATE INDEX radius_sessions_user ON radius_sessions(user_id, id);

-- Every change that can alter an authorization decision appends here; the
-- RADIUS index polls it and reloads just those subscribers (or plans).
-- Usage growth written by accounting itself is excluded: the index applies
-- it directly.
CREATE TABLE authz_changes(
  seq INTEGER PRIMARY KEY,
  user_id INTEGER,
  profile_id INTEGER
);
CREATE TRIGGER users_authz_ai AFTER INSERT ON users BEGIN INSERT INTO authz_changes(user_id) VALUES (NEW.id); END;
CREATE TRIGGER users_authz_ad AFTER DELETE ON users BEGIN INSERT INTO authz_changes(user_id) VALUES (OLD.id); END;
CREATE TRIGGER users_authz_au AFTER UPDATE ON users WHEN
  NEW.username IS NOT OLD.username OR NEW.password_sealed IS NOT OLD.password_sealed OR NEW.enabled IS NOT OLD.enabled
  OR NEW.deleted_at IS NOT OLD.deleted_at OR NEW.expiration IS NOT OLD.expiration OR NEW.profile_id IS NOT OLD.profile_id
  OR NEW.bytes_limit IS NOT OLD.bytes_limit OR NEW.seconds_limit IS NOT OLD.seconds_limit
  OR NEW.used_bytes < OLD.used_bytes OR NEW.used_seconds < OLD.used_seconds
  OR NEW.mac_lock_enabled IS NOT OLD.mac_lock_enabled OR NEW.mac_locked_addrs IS NOT OLD.mac_locked_addrs
  OR NEW.static_ip IS NOT OLD.static_ip
BEGIN INSERT INTO authz_changes(user_id) VALUES (NEW.id); END;
CREATE TRIGGER profiles_authz_au AFTER UPDATE ON profiles BEGIN INSERT INTO authz_changes(profile_id) VALUES (NEW.id); END;
CREATE TRIGGER profiles_authz_ad AFTER DELETE ON profiles BEGIN INSERT INTO authz_changes(profile_id) VALUES (OLD.id); END;
