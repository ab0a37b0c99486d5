-- RadSec (RADIUS over TLS, RFC 6614) and EAP (issue 37): the instance's own
-- certificate authority, the server certificates it issued for the
-- instance itself, and the client certificates of NAS. They live in the
-- instance database (like nas_index): a RadSec connection is dispatched to
-- its tenant by the certificate it presents, before any tenant is known.

-- The CA: one row. Its private key is sealed with the instance key.
CREATE TABLE radsec_ca(
  id INTEGER PRIMARY KEY CHECK (id = 1),
  cert_pem TEXT NOT NULL,
  key_sealed BLOB NOT NULL,
  created_at TEXT NOT NULL
);

-- Server certificates the CA issued for this instance: purpose radsec (the
-- RadSec listener) or eap (the PEAP/TTLS server). names is what they were
-- issued for (sorted, comma-separated); another set of names, or expiry
-- within 30 days, issues a new one.
CREATE TABLE radsec_server_certs(
  purpose TEXT PRIMARY KEY,
  cert_pem TEXT NOT NULL,
  key_sealed BLOB NOT NULL,
  names TEXT NOT NULL,
  not_after TEXT NOT NULL,
  created_at TEXT NOT NULL
);

-- NAS client certificates, each bound to one NAS of one tenant (the NAS row
-- also names the fingerprint of its current certificate, so a restored or
-- reset tenant file cannot bind a certificate to another NAS). key_sealed
-- holds the private key until its one download, then NULL. A certificate
-- is current until revoked (by hand, by a re-issue, or with its NAS).
CREATE TABLE radsec_certs(
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  nas_id INTEGER NOT NULL,
  serial TEXT NOT NULL UNIQUE,           -- hex
  fingerprint TEXT NOT NULL UNIQUE,      -- SHA-256 of the DER, hex
  cert_pem TEXT NOT NULL,
  key_sealed BLOB,
  not_before TEXT NOT NULL,
  not_after TEXT NOT NULL,
  issued_at TEXT NOT NULL,
  downloaded_at TEXT,
  revoked_at TEXT
);
CREATE INDEX radsec_certs_nas ON radsec_certs(tenant_id, nas_id, revoked_at);
-- At most one current certificate per NAS.
CREATE UNIQUE INDEX radsec_certs_current ON radsec_certs(tenant_id, nas_id) WHERE revoked_at IS NULL;

-- A running server reloads its RADIUS directory when certificates change.
CREATE TRIGGER radsec_certs_gen_i AFTER INSERT ON radsec_certs BEGIN UPDATE meta SET value = value + 1 WHERE key = 'generation'; END;
CREATE TRIGGER radsec_certs_gen_u AFTER UPDATE ON radsec_certs BEGIN UPDATE meta SET value = value + 1 WHERE key = 'generation'; END;
CREATE TRIGGER radsec_certs_gen_d AFTER DELETE ON radsec_certs BEGIN UPDATE meta SET value = value + 1 WHERE key = 'generation'; END;
