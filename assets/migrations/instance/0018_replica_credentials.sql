-- The credentials of remote replica targets (xr serve --replicate-to
-- sftp://... or s3://...), by the target's URL, sealed with the instance
-- key (a JSON object: password or key file, access keys, the SFTP host key
-- pinned at the first connect): a restart needs no secret again.
CREATE TABLE replica_credentials(
    url TEXT PRIMARY KEY,
    credentials_sealed BLOB NOT NULL,
    updated_at TEXT NOT NULL
);
