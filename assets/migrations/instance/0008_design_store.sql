-- The design store (app/studio): an instance-wide gallery of design
-- snapshots. tenant_id records the publisher internally (only to allow
-- unpublishing, and to mark a caller's own stars, reviews and comments);
-- no answer shows it: the publisher is shown by the display name it gave.
-- Images are copies re-encoded at publish (no metadata of the originals),
-- kept here as blobs under the ids the snapshot's doc uses.
CREATE TABLE store_items(
  id INTEGER PRIMARY KEY AUTOINCREMENT,   -- never reused: thumbnails are cached by id
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  publisher TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL,
  doc TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX store_items_tenant ON store_items(tenant_id);

CREATE TABLE store_images(
  item_id INTEGER NOT NULL REFERENCES store_items(id) ON DELETE CASCADE,
  image_id TEXT NOT NULL,
  content_type TEXT NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY(item_id, image_id)
);

CREATE TABLE store_stars(
  item_id INTEGER NOT NULL REFERENCES store_items(id) ON DELETE CASCADE,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  PRIMARY KEY(item_id, tenant_id)
);

-- One review per tenant and item; posting again edits it.
CREATE TABLE store_reviews(
  id INTEGER PRIMARY KEY,
  item_id INTEGER NOT NULL REFERENCES store_items(id) ON DELETE CASCADE,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  author TEXT NOT NULL DEFAULT '',
  stars INTEGER NOT NULL CHECK (stars BETWEEN 1 AND 5),
  text TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE(item_id, tenant_id)
);

CREATE TABLE store_comments(
  id INTEGER PRIMARY KEY,
  item_id INTEGER NOT NULL REFERENCES store_items(id) ON DELETE CASCADE,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  author TEXT NOT NULL DEFAULT '',
  text TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX store_comments_item ON store_comments(item_id, id);

-- Items a tenant hid from its own view of the store.
CREATE TABLE store_hidden(
  item_id INTEGER NOT NULL REFERENCES store_items(id) ON DELETE CASCADE,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  PRIMARY KEY(item_id, tenant_id)
);
