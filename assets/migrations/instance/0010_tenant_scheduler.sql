-- The instance scheduler (app/scheduler.go): when each tenant's periodic
-- work is due next, so a tenant with nothing due is never opened. Exact for
-- tenants whose files are closed; the row task = 'kernel.dirty' says the
-- serving process holds newer due times in memory (the tenant is
-- reconciled at start when it is still there).
CREATE TABLE tenant_due(
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  task TEXT NOT NULL,
  due_at TEXT NOT NULL,
  PRIMARY KEY(tenant_id, task)
) WITHOUT ROWID;
CREATE INDEX tenant_due_at ON tenant_due(due_at);

-- Another process (the command line) wrote to a tenant: the serving
-- process reconciles it (runs its tasks once) and removes the request.
CREATE TABLE tenant_wake(
  tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL DEFAULT 1
);
-- Tenants from before the scheduler: reconciled once at the next start.
INSERT INTO tenant_wake(tenant_id) SELECT id FROM tenants;
