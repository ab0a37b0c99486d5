-- The NAS directory RADIUS dispatches by: the whole of each NAS row the
-- wire needs (secret sealed with the instance key), so a packet finds its
-- NAS without opening the tenant's file. Kept in step with the tenant's
-- nas table by the NAS functions of app/aaa; rows from before have a NULL
-- secret and are filled from the tenant file once, at the next start.
ALTER TABLE nas_index ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE nas_index ADD COLUMN secret_sealed BLOB;
ALTER TABLE nas_index ADD COLUMN type TEXT NOT NULL DEFAULT 'mikrotik';
ALTER TABLE nas_index ADD COLUMN coa_port INTEGER NOT NULL DEFAULT 3799;
ALTER TABLE nas_index ADD COLUMN require_message_authenticator INTEGER NOT NULL DEFAULT 1;
