-- Data import and legacy-system import (issue 20). One row per import: the
-- job of the jobs table does the work, this row keeps what must survive a
-- crash (the stored file, the mapping and options, the checkpoint) and the
-- outcome. A chunk's rows, its checkpoint and its line results commit in
-- one transaction, so a resumed job goes on from the last committed chunk.
CREATE TABLE import_runs(
  id INTEGER PRIMARY KEY,
  family TEXT NOT NULL CHECK (family IN ('data','legacy')),
  kind TEXT NOT NULL,                      -- data: subscribers, nas; legacy: freeradius, mikrotik
  state TEXT NOT NULL CHECK (state IN ('analysing','analysed','queued','running','done','failed','cancelled')),
  file_id INTEGER REFERENCES files(id) ON DELETE SET NULL,
  file_name TEXT NOT NULL DEFAULT '',
  format TEXT NOT NULL DEFAULT '',         -- csv, xlsx, sql, mikrotik
  spec TEXT NOT NULL DEFAULT '{}',         -- mapping and options (JSON)
  analysis TEXT NOT NULL DEFAULT '{}',     -- legacy: what was found (JSON)
  job_id INTEGER,                          -- the running or last job
  manager_id INTEGER NOT NULL,             -- the caller: the import runs in its subtree
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  rows_total INTEGER NOT NULL DEFAULT 0,
  rows_done INTEGER NOT NULL DEFAULT 0,    -- checkpoint: rows settled by committed chunks
  created INTEGER NOT NULL DEFAULT 0,
  updated INTEGER NOT NULL DEFAULT 0,
  skipped INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT '',          -- a reason when the whole run failed
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX import_runs_family ON import_runs(family, id);
CREATE INDEX import_runs_manager ON import_runs(manager_id);

-- The result of every line that was not simply created: refused (with the
-- column and reason), skipped or updated.
CREATE TABLE import_lines(
  run_id INTEGER NOT NULL REFERENCES import_runs(id) ON DELETE CASCADE,
  line INTEGER NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('failed','skipped','updated')),
  field TEXT NOT NULL DEFAULT '',
  col TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL DEFAULT '',
  key TEXT NOT NULL DEFAULT ''             -- the row's username (or name)
);
CREATE INDEX import_lines_run ON import_lines(run_id, line);
