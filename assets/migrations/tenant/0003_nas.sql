-- NAS devices (RADIUS clients). The IP is also in the instance NAS index,
-- which keeps it unique across tenants and dispatches packets.
CREATE TABLE nas(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  ip TEXT NOT NULL UNIQUE,
  secret_sealed BLOB NOT NULL,
  type TEXT NOT NULL DEFAULT 'mikrotik',
  coa_port INTEGER NOT NULL DEFAULT 3799,
  require_message_authenticator INTEGER NOT NULL DEFAULT 1,
  description TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
