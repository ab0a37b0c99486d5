-- The design studio (app/studio): a tenant's designs and their images.
-- A design is a versioned JSON document (app/studio/render.Design); every
-- write bumps version, and PATCH/DELETE carry the version the client read.
-- Designs are tenant-wide (no manager scope): the studio permissions decide.
CREATE TABLE designs(
  id INTEGER PRIMARY KEY AUTOINCREMENT,   -- never reused: thumbnails are cached by id
  name TEXT NOT NULL,
  kind TEXT NOT NULL,                      -- card_sheet | receipt | invoice | hotspot_page
  doc TEXT NOT NULL,                       -- render.Design as JSON
  version INTEGER NOT NULL DEFAULT 1,
  is_default INTEGER NOT NULL DEFAULT 0,   -- the tenant's default design of its kind
  created_by INTEGER,                      -- manager id (NULL: the system)
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX designs_kind ON designs(kind, name);
CREATE UNIQUE INDEX designs_one_default ON designs(kind) WHERE is_default = 1;

-- Images a design's image elements refer to (by id, as text). The bytes
-- are a file of the tenant file store (files, area "studio").
CREATE TABLE design_images(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL UNIQUE REFERENCES files(id),
  name TEXT NOT NULL,
  content_type TEXT NOT NULL,              -- image/png | image/jpeg
  width INTEGER NOT NULL,
  height INTEGER NOT NULL,
  size INTEGER NOT NULL,
  created_by INTEGER,
  created_at TEXT NOT NULL
);
