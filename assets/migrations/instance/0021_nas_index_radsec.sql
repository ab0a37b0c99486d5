-- The NAS directory carries the fingerprint of each NAS's current RadSec
-- client certificate (the tenant's nas.radsec_fingerprint), so a RadSec
-- connection is bound to its NAS without opening the tenant's file. Rows
-- written before are filled from the tenant file once, at the next start
-- (a NULL secret marks them).
ALTER TABLE nas_index ADD COLUMN radsec_fingerprint TEXT NOT NULL DEFAULT '';
UPDATE nas_index SET secret_sealed = NULL;
