-- The tenant file store (app/files): one row per stored file. The bytes
-- live under DATA/files/<slug>/<path>; a row and its file go together
-- (the file is removed after the transaction deleting the row commits).
-- area names the owner (tickets, backups, ...); sha256 is hex.
CREATE TABLE files(
  id INTEGER PRIMARY KEY,
  area TEXT NOT NULL,
  name TEXT NOT NULL,
  content_type TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  path TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);
CREATE INDEX files_area ON files(area);
