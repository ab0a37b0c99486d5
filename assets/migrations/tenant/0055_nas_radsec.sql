-- RadSec (issue 37): the SHA-256 fingerprint (hex) of the NAS's current
-- client certificate, '' when it has none. The instance's radsec_certs
-- holds the certificate; a connection is accepted only when both agree, so
-- a tenant file restored or reset cannot lend a certificate to another NAS.
ALTER TABLE nas ADD COLUMN radsec_fingerprint TEXT NOT NULL DEFAULT '';
