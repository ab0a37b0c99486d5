-- Network monitoring and the map (issue 18). A monitored device is a row of
-- mon_devices: kind 'device' (added by staff) or kind 'nas' (one row per NAS,
-- made by the poller or on first read: every NAS is monitored).
CREATE TABLE mon_devices(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL DEFAULT 'device' CHECK (kind IN ('device','nas')),
  nas_id INTEGER UNIQUE REFERENCES nas(id) ON DELETE CASCADE,
  name TEXT NOT NULL DEFAULT '',
  address TEXT NOT NULL DEFAULT '',
  device_type TEXT NOT NULL DEFAULT 'router',
  snmp_version TEXT NOT NULL DEFAULT '',      -- '', 'v2c' or 'v3'
  snmp_sealed BLOB,                            -- sealed JSON of the community or v3 credentials
  ping_interval INTEGER NOT NULL DEFAULT 30,   -- seconds
  snmp_interval INTEGER NOT NULL DEFAULT 60,   -- seconds
  probe_port INTEGER NOT NULL DEFAULT 0,       -- >0: echo by TCP connect to this port
  manager_id INTEGER REFERENCES managers(id) ON DELETE SET NULL,
  status TEXT NOT NULL DEFAULT 'unknown' CHECK (status IN ('up','down','unknown')),
  fails INTEGER NOT NULL DEFAULT 0,            -- consecutive failed probes
  last_seen TEXT,
  last_probe TEXT,
  next_probe TEXT,
  next_snmp TEXT,
  latency_ms REAL,
  loss_pct REAL,
  method TEXT NOT NULL DEFAULT '',
  sys_uptime INTEGER,                          -- last sysUpTime, hundredths of a second
  if_in_octets INTEGER,                        -- last counters of the watched interface (rules.if_index)
  if_out_octets INTEGER,
  if_polled_at TEXT,
  if_over_since TEXT,                          -- utilisation over the threshold since
  status_since TEXT,
  lat REAL,
  lon REAL,
  icon TEXT NOT NULL DEFAULT '',
  notify TEXT NOT NULL DEFAULT '{}',           -- JSON of NotifySettings
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((kind = 'nas') = (nas_id IS NOT NULL))
);
CREATE INDEX mon_devices_next ON mon_devices(next_probe);
CREATE INDEX mon_devices_address ON mon_devices(address);

-- Every NAS is monitored without being added: its row follows the nas table.
INSERT INTO mon_devices(kind, nas_id, name, address, created_at, updated_at)
  SELECT 'nas', id, name, ip, strftime('%Y-%m-%d %H:%M:%S', 'now'), strftime('%Y-%m-%d %H:%M:%S', 'now') FROM nas;
CREATE TRIGGER mon_nas_added AFTER INSERT ON nas BEGIN
  INSERT INTO mon_devices(kind, nas_id, name, address, created_at, updated_at)
  VALUES ('nas', NEW.id, NEW.name, NEW.ip, strftime('%Y-%m-%d %H:%M:%S', 'now'), strftime('%Y-%m-%d %H:%M:%S', 'now'));
END;
CREATE TRIGGER mon_nas_changed AFTER UPDATE OF name, ip ON nas BEGIN
  UPDATE mon_devices SET name = NEW.name, address = NEW.ip WHERE nas_id = NEW.id;
END;

CREATE TABLE mon_owners(
  device_id INTEGER NOT NULL REFERENCES mon_devices(id) ON DELETE CASCADE,
  manager_id INTEGER NOT NULL REFERENCES managers(id) ON DELETE CASCADE,
  PRIMARY KEY(device_id, manager_id)
) WITHOUT ROWID;
CREATE INDEX mon_owners_manager ON mon_owners(manager_id);

-- Raw probe results, kept a short time (monitoring.RawKeep); mon_hourly
-- keeps the hourly rollup for the stability windows.
CREATE TABLE mon_samples(
  device_id INTEGER NOT NULL REFERENCES mon_devices(id) ON DELETE CASCADE,
  at TEXT NOT NULL,
  ok INTEGER NOT NULL,
  rtt_ms REAL,
  method TEXT NOT NULL DEFAULT ''
);
CREATE INDEX mon_samples_device ON mon_samples(device_id, at);
CREATE INDEX mon_samples_at ON mon_samples(at);

CREATE TABLE mon_hourly(
  device_id INTEGER NOT NULL REFERENCES mon_devices(id) ON DELETE CASCADE,
  hour TEXT NOT NULL,                          -- 'YYYY-MM-DD HH' (UTC)
  probes INTEGER NOT NULL DEFAULT 0,
  ok INTEGER NOT NULL DEFAULT 0,
  rtt_sum REAL NOT NULL DEFAULT 0,
  rtt_max REAL NOT NULL DEFAULT 0,
  PRIMARY KEY(device_id, hour)
) WITHOUT ROWID;

CREATE TABLE mon_outages(
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES mon_devices(id) ON DELETE CASCADE,
  started_at TEXT NOT NULL,
  ended_at TEXT
);
CREATE INDEX mon_outages_device ON mon_outages(device_id, started_at);

CREATE TABLE mon_alerts(
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES mon_devices(id) ON DELETE CASCADE,
  rule TEXT NOT NULL,                          -- down, up, latency, loss, reboot
  severity TEXT NOT NULL,                      -- critical, warning, info
  state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open','resolved')),
  message TEXT NOT NULL DEFAULT '',
  value REAL,
  created_at TEXT NOT NULL,
  resolved_at TEXT,
  acked_at TEXT,
  acked_by INTEGER REFERENCES managers(id) ON DELETE SET NULL
);
CREATE INDEX mon_alerts_device ON mon_alerts(device_id, rule, state);
CREATE INDEX mon_alerts_unacked ON mon_alerts(acked_at);

-- Links between devices: from is the uplink side (towards the core), to
-- the downstream side.
CREATE TABLE mon_links(
  id INTEGER PRIMARY KEY,
  from_id INTEGER NOT NULL REFERENCES mon_devices(id) ON DELETE CASCADE,
  to_id INTEGER NOT NULL REFERENCES mon_devices(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  UNIQUE(from_id, to_id),
  CHECK (from_id <> to_id)
);
CREATE INDEX mon_links_to ON mon_links(to_id);

-- Subscribers attached to a device explicitly (others derive from the NAS
-- of their live session).
CREATE TABLE mon_attached(
  device_id INTEGER NOT NULL REFERENCES mon_devices(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  PRIMARY KEY(device_id, user_id)
) WITHOUT ROWID;
CREATE INDEX mon_attached_user ON mon_attached(user_id);

-- Subscribers' coordinates for the map (set by POST /geo/import, kind user).
CREATE TABLE mon_user_geo(
  user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  lat REAL NOT NULL,
  lon REAL NOT NULL,
  updated_at TEXT NOT NULL
);
