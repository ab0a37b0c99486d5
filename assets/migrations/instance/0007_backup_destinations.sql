-- Backup destinations (issue 13): where a tenant's backups are copied, and
-- the state of each copy. They live in the instance database, keyed by
-- tenant id, so a restore or a factory reset of the tenant file keeps them
-- (deleting the tenant deletes them).
CREATE TABLE backup_destinations(
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,                       -- s3 | sftp | local
  config TEXT NOT NULL DEFAULT '{}',        -- JSON of the kind's plain fields
  secrets_sealed BLOB,                      -- JSON of the kind's secret fields
  host_key TEXT NOT NULL DEFAULT '',        -- sftp: pinned host key (authorized_keys form)
  enabled INTEGER NOT NULL DEFAULT 1,
  fail_streak INTEGER NOT NULL DEFAULT 0,   -- copy runs failed in a row
  last_error TEXT NOT NULL DEFAULT '',
  last_ok_at TEXT,
  connected_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE(tenant_id, name)
);

-- One row per backup (instance table backups, no foreign key: a backup row
-- may be pruned while its copies' history stays) and destination.
CREATE TABLE backup_copies(
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  backup_id INTEGER NOT NULL,
  destination_id INTEGER NOT NULL REFERENCES backup_destinations(id) ON DELETE CASCADE,
  state TEXT NOT NULL DEFAULT 'queued',     -- queued | copying | done | failed
  attempts INTEGER NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT '',
  remote_name TEXT NOT NULL DEFAULT '',
  updated_at TEXT NOT NULL,
  PRIMARY KEY(backup_id, destination_id)
);
CREATE INDEX backup_copies_tenant ON backup_copies(tenant_id, backup_id);

-- The optional per-tenant passphrase that encrypts copies (age, scrypt).
CREATE TABLE backup_encryption(
  tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  passphrase_sealed BLOB NOT NULL,
  updated_at TEXT NOT NULL
);
