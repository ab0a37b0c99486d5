-- The instance registry: tenants, instance keys, the NAS IP index.
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta(key, value) VALUES ('file_kind', 'xr-instance'), ('generation', '0');

CREATE TABLE tenants(
  id INTEGER PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  max_users INTEGER,                -- NULL = unlimited, 0 = blocked
  license_expires_at TEXT,          -- NULL = never
  tier TEXT NOT NULL DEFAULT '',    -- '' = derived from max_users; else pinned
  blocked INTEGER NOT NULL DEFAULT 0,
  blocked_reason TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE instance_keys(name TEXT PRIMARY KEY, key BLOB NOT NULL, created_at TEXT NOT NULL);

-- Dispatches a RADIUS packet to its tenant by source IP; unique instance-wide.
CREATE TABLE nas_index(
  ip TEXT PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  nas_id INTEGER NOT NULL
);

-- Every change of the registry bumps the generation a running server polls.
CREATE TRIGGER tenants_gen_i AFTER INSERT ON tenants BEGIN UPDATE meta SET value = value + 1 WHERE key = 'generation'; END;
CREATE TRIGGER tenants_gen_u AFTER UPDATE ON tenants BEGIN UPDATE meta SET value = value + 1 WHERE key = 'generation'; END;
CREATE TRIGGER tenants_gen_d AFTER DELETE ON tenants BEGIN UPDATE meta SET value = value + 1 WHERE key = 'generation'; END;
CREATE TRIGGER nas_gen_i AFTER INSERT ON nas_index BEGIN UPDATE meta SET value = value + 1 WHERE key = 'generation'; END;
CREATE TRIGGER nas_gen_u AFTER UPDATE ON nas_index BEGIN UPDATE meta SET value = value + 1 WHERE key = 'generation'; END;
CREATE TRIGGER nas_gen_d AFTER DELETE ON nas_index BEGIN UPDATE meta SET value = value + 1 WHERE key = 'generation'; END;
