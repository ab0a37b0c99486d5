-- Session history of a legacy import (issue 20, app/dataimport/history.go):
-- the radacct rows of a FreeRADIUS upload become closed sessions
-- (radius_sessions, close_reason 'imported') with their traffic in
-- usage_rollups, in chunks after the subscribers. The run keeps the phase's
-- checkpoint and counts so a resumed job goes on from its last chunk.
--   history_state: '' (not begun), running, done, off (not asked)
--   history_rows:  checkpoint: radacct rows of the file stored as sessions
--   history_rollup_rows: the rows whose traffic is in usage_rollups (summed
--                  across chunks; a resumed job sums the rows between again)
ALTER TABLE import_runs ADD COLUMN history_state TEXT NOT NULL DEFAULT '';
ALTER TABLE import_runs ADD COLUMN history_rows INTEGER NOT NULL DEFAULT 0;
ALTER TABLE import_runs ADD COLUMN history_rollup_rows INTEGER NOT NULL DEFAULT 0;
ALTER TABLE import_runs ADD COLUMN history_imported INTEGER NOT NULL DEFAULT 0;
ALTER TABLE import_runs ADD COLUMN history_skipped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE import_runs ADD COLUMN history_input_octets INTEGER NOT NULL DEFAULT 0;
ALTER TABLE import_runs ADD COLUMN history_output_octets INTEGER NOT NULL DEFAULT 0;

-- The subscribers whose history a run imports, fixed when the phase
-- begins: the imported usernames that exist in the caller's subtree and
-- have no imported history yet (a re-run does not import it twice).
-- Emptied when the phase ends.
CREATE TABLE import_history_users(
  run_id INTEGER NOT NULL REFERENCES import_runs(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL,
  PRIMARY KEY(run_id, user_id)
) WITHOUT ROWID;
