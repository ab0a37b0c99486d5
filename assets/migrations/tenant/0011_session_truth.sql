-- Session truth: why a session ended, the interval its NAS really reports
-- at, and the flags the sweeper keeps on live sessions.
--
-- stop_cause: why the session ended, normalized: the NAS's
-- Acct-Terminate-Cause in snake case (User-Request → user_request,
-- Admin-Reset → admin_disconnect, NAS-Reboot and Admin-Reboot →
-- nas_reboot, none → unknown), or stale / nas_reboot when xr closed it.
ALTER TABLE radius_sessions ADD COLUMN stop_cause TEXT NOT NULL DEFAULT '';
-- interim_interval: the longest gap of 60 s or more between two accounting
-- updates of the session (seconds); 0 until one was seen.
ALTER TABLE radius_sessions ADD COLUMN interim_interval INTEGER NOT NULL DEFAULT 0;
-- zombie: the NAS still reports the session of a subscriber who should not
-- be connected (disabled, deleted, expired, over quota without FUP).
ALTER TABLE radius_sessions ADD COLUMN zombie INTEGER NOT NULL DEFAULT 0;
-- over_limit: one of the subscriber's open sessions beyond the plan's
-- simultaneous use (the ones heard from least recently).
ALTER TABLE radius_sessions ADD COLUMN over_limit INTEGER NOT NULL DEFAULT 0;
-- disconnect_kind: what the last Disconnect/CoA asked: disconnect or rate.
ALTER TABLE radius_sessions ADD COLUMN disconnect_kind TEXT NOT NULL DEFAULT '';
-- disconnect_unconfirmed: an ACKed Disconnect that no Accounting-Stop
-- followed within two interim intervals.
ALTER TABLE radius_sessions ADD COLUMN disconnect_unconfirmed INTEGER NOT NULL DEFAULT 0;

UPDATE radius_sessions SET stop_cause = CASE
    WHEN close_reason IN ('stale', 'nas_reboot') THEN close_reason
    WHEN terminate_cause = '' THEN 'unknown'
    WHEN terminate_cause = 'Admin-Reset' THEN 'admin_disconnect'
    WHEN terminate_cause IN ('Admin-Reboot', 'NAS-Reboot') THEN 'nas_reboot'
    ELSE lower(replace(terminate_cause, '-', '_')) END
  WHERE stop_time IS NOT NULL;
