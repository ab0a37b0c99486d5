-- The fingerprint of the first request's canonical input (SHA-256 of its
-- JSON without request_id): a key reused with another body is a 409
-- request_id_conflict, not a replay. Empty on keys stored before it existed
-- (those replay on subject alone).
ALTER TABLE idempotency ADD COLUMN fingerprint TEXT NOT NULL DEFAULT '';

-- A session's delegated IPv6 prefix (RADIUS Framed-IPv6-Prefix, "2001:db8::/56"),
-- recorded like framed_ip from a Start, an Interim-Update or a Stop.
ALTER TABLE radius_sessions ADD COLUMN framed_ipv6_prefix TEXT NOT NULL DEFAULT '';
