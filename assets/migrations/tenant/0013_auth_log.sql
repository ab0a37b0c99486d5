-- The RADIUS auth log: one row per Access-Request decision, written in
-- batches off the authentication path (app/aaa/authlog.go) and pruned by
-- the hourly housekeeping after radius_auth_log_days (default 14).
-- user_id is the subscriber the decision was about (NULL for unknown
-- usernames and prepaid cards): it scopes the list to a manager's subtree.
-- result: accept, reject, dropped; reason: "" on accept, else the refusal
-- (disabled, expired, ..., unknown_user, bad_password, unsupported_auth,
-- bad_request, backend_error).
CREATE TABLE auth_log(
  id INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  username TEXT NOT NULL,
  user_id INTEGER,
  nas_id INTEGER,
  calling_station_id TEXT NOT NULL DEFAULT '',
  result TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  latency_us INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX auth_log_at ON auth_log(at);
CREATE INDEX auth_log_username ON auth_log(username COLLATE NOCASE, at);
CREATE INDEX auth_log_user ON auth_log(user_id, at);
CREATE INDEX auth_log_nas ON auth_log(nas_id, at);
-- A reason implies its result: the list filters reason through this index.
CREATE INDEX auth_log_result ON auth_log(result, reason, at);
