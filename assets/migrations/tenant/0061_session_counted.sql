-- A subscriber's session is counted in the usage rollups (sessions of the
-- hour of its start) at its first charge, on the subscriber's row the
-- charge updates anyway, or when it ends without one (issue 38: the Start
-- no longer writes the subscriber's row). usage_counted says it was; the
-- sessions of earlier releases were counted at their Start.
ALTER TABLE radius_sessions ADD COLUMN usage_counted INTEGER NOT NULL DEFAULT 1;
