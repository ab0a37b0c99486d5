-- A promoted standby applies its accounting journal (app/aaa/journal_apply.go)
-- through the primary's accounting path; each batch commits with how far
-- it got, so a retry after a crash applies nothing twice.
CREATE TABLE journal_applied (
    journal    TEXT PRIMARY KEY,        -- the journal's name (the generation the box took over)
    last_id    INTEGER NOT NULL,        -- the journal's last record applied to this tenant
    applied_at TEXT NOT NULL
);
