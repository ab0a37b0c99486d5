-- Staff console cookie sessions (scs). The data holds the API session the
-- console signed in with, so lifetime and revocation are the API's.
CREATE TABLE console_sessions(
  token TEXT PRIMARY KEY,
  data BLOB NOT NULL,
  expiry INTEGER NOT NULL -- unix nanoseconds
);
CREATE INDEX console_sessions_expiry ON console_sessions(expiry);
