-- A tenant's figures for /metrics (subscribers, online sessions, jobs,
-- webhook deliveries, messages) as read when its files last closed, so a
-- scrape reports every tenant without opening the closed ones.
CREATE TABLE tenant_stats(
  tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  gauges TEXT NOT NULL,   -- JSON, see app.TenantGauges
  read_at TEXT NOT NULL
);
