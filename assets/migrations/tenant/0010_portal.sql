-- The subscriber portal: its sessions (one row per signed "portal" token,
-- revocable, with an optional single-use refresh token) and the push
-- tokens of the subscribers' devices.
CREATE TABLE portal_sessions(
  jti TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  ip TEXT NOT NULL DEFAULT '',
  user_agent TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  revoked_at TEXT,
  refresh_hash BLOB UNIQUE,        -- SHA-256 of the refresh token; NULL once used
  refresh_expires_at TEXT,
  borrowed_by INTEGER               -- the manager who opened it through POST /users/{id}/login-as
) WITHOUT ROWID;
CREATE INDEX portal_sessions_user ON portal_sessions(user_id);

CREATE TABLE portal_push_tokens(
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token TEXT NOT NULL,
  platform TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  PRIMARY KEY (user_id, token)
) WITHOUT ROWID;
