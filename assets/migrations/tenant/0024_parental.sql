-- Parental control and guest access (app/parental).
--
-- parental_controls: one row per subscriber that set any of it. windows is
-- the JSON list of blocked weekly windows in the tenant time zone
-- ([{"m": weekday mask, bit 0 = sunday, "s": start minute, "e": end minute}],
-- e <= s crosses midnight); paused_until a pause in force; unlocked_until
-- the end of the block a right PIN lifted (the current block only);
-- pin_hash the argon2id hash of the PIN ('' = none); pin_failures the wrong
-- PINs since the last right one (a captcha is asked after a few);
-- edge_job_id the queued parental.edge job (the Disconnect at the next
-- block start).
CREATE TABLE parental_controls(
  user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  windows TEXT NOT NULL DEFAULT '[]',
  paused_until TEXT,
  unlocked_until TEXT,
  pin_hash TEXT NOT NULL DEFAULT '',
  pin_failures INTEGER NOT NULL DEFAULT 0,
  edge_job_id INTEGER,
  updated_at TEXT NOT NULL
);
-- The RADIUS index reloads a subscriber whose blocking state changed.
CREATE TRIGGER parental_authz_ai AFTER INSERT ON parental_controls BEGIN INSERT INTO authz_changes(user_id) VALUES (NEW.user_id); END;
CREATE TRIGGER parental_authz_au AFTER UPDATE OF windows, paused_until, unlocked_until ON parental_controls
BEGIN INSERT INTO authz_changes(user_id) VALUES (NEW.user_id); END;
CREATE TRIGGER parental_authz_ad AFTER DELETE ON parental_controls BEGIN INSERT INTO authz_changes(user_id) VALUES (OLD.user_id); END;

-- What a plan lets its subscribers give guests: how many guest accesses may
-- be active at once and for how long each (minutes). No row, or
-- max_active 0, = the plan offers no guest access.
CREATE TABLE guest_limits(
  profile_id INTEGER PRIMARY KEY REFERENCES profiles(id) ON DELETE CASCADE,
  max_active INTEGER NOT NULL DEFAULT 0 CHECK (max_active >= 0),
  max_minutes INTEGER NOT NULL DEFAULT 0 CHECK (max_minutes >= 0),
  updated_at TEXT NOT NULL
);

-- A guest access: a voucher-like RADIUS login on a subscriber's account,
-- valid from starts_at until ends_at.
CREATE TABLE guest_accesses(
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL DEFAULT '',
  username TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_sealed BLOB NOT NULL,
  starts_at TEXT NOT NULL,
  ends_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX guest_accesses_user ON guest_accesses(user_id, ends_at);
