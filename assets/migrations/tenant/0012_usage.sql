-- Usage rollups: what each subscriber used, per UTC hour and per UTC day,
-- written by the accounting path in the same transaction that charges the
-- subscriber's counters (growth is dated by the accounting record that
-- reported it). Months are summed from the daily rows. Rollups are never
-- pruned: the session archive drops raw sessions, not these.
--   grain:    'h' (bucket = the hour's start) or 'd' (the day's start)
--   bucket:   unix seconds, UTC
--   sessions: sessions that started in the bucket
-- Prepaid-card (voucher) and unknown sessions have no subscriber and are
-- not rolled up.
--
-- The hour in progress is accumulated on the subscriber's row, which the
-- accounting path updates anyway (a row write per record would cost more
-- than the 10 % the accounting path may lose): usage_hour (unix seconds
-- of the hour) and its usage_* sums. The update that moves to another hour
-- hands the finished hour back in usage_prev_* (RETURNING), and accounting
-- adds it to usage_rollups in the same transaction. Readers add the row's
-- hour in progress to the rollups.
CREATE TABLE usage_rollups(
  user_id INTEGER NOT NULL,
  grain TEXT NOT NULL,
  bucket INTEGER NOT NULL,
  input_octets INTEGER NOT NULL DEFAULT 0,
  output_octets INTEGER NOT NULL DEFAULT 0,
  seconds INTEGER NOT NULL DEFAULT 0,
  sessions INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(user_id, grain, bucket)
) WITHOUT ROWID;

ALTER TABLE users ADD COLUMN usage_hour INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN usage_in INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN usage_out INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN usage_secs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN usage_sessions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN usage_prev_hour INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN usage_prev_in INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN usage_prev_out INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN usage_prev_secs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN usage_prev_sessions INTEGER NOT NULL DEFAULT 0;

-- A subscriber's closed sessions newest first (GET /users/{id}/sessions):
-- the count and the keyset page read this index only.
CREATE INDEX radius_sessions_user_closed ON radius_sessions(user_id, id) WHERE stop_time IS NOT NULL;
