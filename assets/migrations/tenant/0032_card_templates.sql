-- Card templates: a design (a studio design of kind card_sheet; NULL is the
-- default design) plus a generation spec with the fields of POST
-- /card-batches (JSON, validated by the same rules). A template belongs to
-- the manager who created it: a reseller sees the templates of its subtree.
-- A series keeps the template it came from (card_batches.template_id,
-- already there) and the design it prints with (design_id, new).

CREATE TABLE card_templates(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  design_id INTEGER,                       -- studio design; NULL: the default card_sheet design
  spec TEXT NOT NULL,                      -- generation spec (JSON: type, quantity, face_value, expiration rule, plan, code, owner...)
  manager_id INTEGER NOT NULL REFERENCES managers(id), -- who owns the template (scope)
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX card_templates_manager ON card_templates(manager_id);

ALTER TABLE card_batches ADD COLUMN design_id INTEGER;
-- The design key ("id:version" of the studio design printed; '' for the
-- built-in one) the stored PDF sheet shows: a changed design makes it stale.
ALTER TABLE card_batches ADD COLUMN pdf_design TEXT NOT NULL DEFAULT '';
CREATE INDEX card_batches_template ON card_batches(template_id);
