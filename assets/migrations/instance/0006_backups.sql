-- Backups of tenants (app/backups): the records and their download tickets
-- live here, keyed by tenant id, so a restore or a factory reset of the
-- tenant file keeps them; the files are under DATA/backups/<slug>/.
CREATE TABLE backups(
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,                      -- manual | scheduled | uploaded | safety
  file TEXT NOT NULL,                      -- name under DATA/backups/<slug>/
  size INTEGER NOT NULL DEFAULT 0,
  sha256 TEXT NOT NULL DEFAULT '',         -- of the stored (compressed) file
  manifest TEXT NOT NULL DEFAULT '{}',
  verification TEXT NOT NULL DEFAULT 'pending', -- pending | ok | failed
  verification_error TEXT NOT NULL DEFAULT '',
  verified_at TEXT,
  run_key TEXT,                            -- the job run that wrote it (a retry finds it)
  created_by INTEGER,
  created_at TEXT NOT NULL,
  UNIQUE(tenant_id, run_key)
);
CREATE INDEX backups_tenant ON backups(tenant_id, created_at);

-- Single-use, short-lived download tokens (stored hashed).
CREATE TABLE backup_tickets(
  token_hash BLOB PRIMARY KEY,
  tenant_id INTEGER NOT NULL,
  backup_id INTEGER NOT NULL REFERENCES backups(id) ON DELETE CASCADE,
  manager_id INTEGER NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT,
  created_at TEXT NOT NULL
);

-- request_id of restores and factory resets: kept outside the tenant file,
-- which these operations replace or empty.
CREATE TABLE backup_ops(
  tenant_id INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  outcome TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY(tenant_id, request_id)
);
