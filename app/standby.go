package app

import "time"

// Replication is how far a standby's copies are behind the primary.
type Replication struct {
	Of string // the replica followed (xr serve --standby-of)
	// Lag: the age of the oldest transaction the replica holds that the
	// standby has not applied yet (0: caught up with the replica).
	Lag time.Duration
	// LastCommit is the primary's newest commit the standby has applied
	// (zero when unknown).
	LastCommit time.Time
	Err        error // the follower's status could not be read
}

// IsStandby reports a standby (Config.Standby).
func (a *App) IsStandby() bool { return a.Cfg.Standby != nil }

// Replication is the standby's state; ok is false on a primary.
func (a *App) Replication() (r Replication, ok bool) {
	if a.Cfg.Standby == nil {
		return r, false
	}
	return a.Cfg.Standby(), true
}
