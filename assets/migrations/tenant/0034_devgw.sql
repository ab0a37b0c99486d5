-- The device gateway (issue 21): SSH to a NAS or a monitored device relayed
-- over a WebSocket. A target is (kind, target_id): kind 'nas' names nas.id,
-- kind 'device' names mon_devices.id (kind 'device').

-- SSH credentials of a target. Password and private key are sealed at rest
-- and never returned; host_key is the SHA256 fingerprint trusted on first
-- use, host_key_pending a different one the device offered and that was
-- refused until staff accept it.
CREATE TABLE devgw_credentials(
  kind TEXT NOT NULL CHECK (kind IN ('nas','device')),
  target_id INTEGER NOT NULL,
  port INTEGER NOT NULL DEFAULT 22,
  username TEXT NOT NULL DEFAULT '',
  password_sealed BLOB,
  key_sealed BLOB,                        -- sealed: PEM private key
  host_key TEXT NOT NULL DEFAULT '',
  host_key_pending TEXT NOT NULL DEFAULT '',
  updated_at TEXT NOT NULL,
  PRIMARY KEY (kind, target_id)
);

-- A target's credentials go with it (a reused id must not inherit them).
CREATE TRIGGER devgw_nas_deleted AFTER DELETE ON nas BEGIN
  DELETE FROM devgw_credentials WHERE kind = 'nas' AND target_id = OLD.id;
END;
CREATE TRIGGER devgw_device_deleted AFTER DELETE ON mon_devices WHEN OLD.kind = 'device' BEGIN
  DELETE FROM devgw_credentials WHERE kind = 'device' AND target_id = OLD.id;
END;

-- Single-use tickets of the WebSocket row: only the SHA-256 of the ticket
-- is stored; bound to the manager who minted it and to the target.
CREATE TABLE devgw_tickets(
  hash TEXT PRIMARY KEY,
  manager_id INTEGER NOT NULL REFERENCES managers(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  target_id INTEGER NOT NULL,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX devgw_tickets_expiry ON devgw_tickets(expires_at);

-- One row per console: who, which target, from where, when, bytes each way
-- (in = keystrokes to the device, out = its output), why it ended, and the
-- recording (asciicast v2 in the tenant file store).
CREATE TABLE devgw_sessions(
  id INTEGER PRIMARY KEY,
  manager_id INTEGER REFERENCES managers(id) ON DELETE SET NULL,
  manager_name TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL CHECK (kind IN ('nas','device')),
  target_id INTEGER NOT NULL,
  target_name TEXT NOT NULL DEFAULT '',
  target_address TEXT NOT NULL DEFAULT '',
  remote_addr TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT 'live' CHECK (state IN ('live','ended')),
  started_at TEXT NOT NULL,
  ended_at TEXT,
  bytes_in INTEGER NOT NULL DEFAULT 0,
  bytes_out INTEGER NOT NULL DEFAULT 0,
  end_reason TEXT NOT NULL DEFAULT '',
  cols INTEGER NOT NULL DEFAULT 80,
  rows INTEGER NOT NULL DEFAULT 24,
  recording_file_id INTEGER REFERENCES files(id) ON DELETE SET NULL
);
CREATE INDEX devgw_sessions_started ON devgw_sessions(started_at);
CREATE INDEX devgw_sessions_state ON devgw_sessions(state);
CREATE INDEX devgw_sessions_manager ON devgw_sessions(manager_id);
