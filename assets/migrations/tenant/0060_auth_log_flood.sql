-- Under a flood the auth log stops costing every request (issue 38): past
-- a budget of rows per second and tenant, the decisions of that second are
-- kept as one row per (NAS, method, result, reason) that counts them:
-- decisions > 1, username and calling_station_id empty, user_id NULL,
-- latency_us their mean. Every other row stands for one decision.
ALTER TABLE auth_log ADD COLUMN decisions INTEGER NOT NULL DEFAULT 1;
