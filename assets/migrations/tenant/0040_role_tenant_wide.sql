-- A role may grant tenant-wide visibility (issue 34): its holders see every
-- record of the tenant, not only their own manager subtree. The
-- administrator role and the tenant owner are tenant-wide regardless.
ALTER TABLE roles ADD COLUMN tenant_wide INTEGER NOT NULL DEFAULT 0;
