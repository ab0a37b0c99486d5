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
	// PrimarySilent is how long the primary's heartbeat in the replica
	// has not changed (SilenceKnown false: the follower cannot tell, it
	// does not reach the replica); PromoteAfter is the silence after
	// which this standby promotes itself (0: never).
	PrimarySilent time.Duration
	SilenceKnown  bool
	PromoteAfter  time.Duration
	Err           error // the follower's status could not be read
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

// Fencing is why a primary refuses every write: another box holds its
// replica (a standby was promoted; app/replica).
type Fencing struct {
	Holder     string    // the box that holds the replica now
	Generation uint64    // its generation
	Since      time.Time // when this box found out
}

// Fence makes every later write of every file refuse with db.ErrFenced (503
// ERR_MAINTENANCE fenced),
// for as long as the process runs: a fenced box is re-joined as a
// standby (docs/ha.md), never unfenced in place.
func (a *App) Fence(f Fencing) {
	if a.fencing.CompareAndSwap(nil, &f) {
		a.fence.Raise()
		a.Log.Error("fenced: another box holds the replica; every write is refused until this box is re-joined as a standby",
			"holder", f.Holder, "generation", f.Generation)
	}
}

// Fenced reports a fenced box and why.
func (a *App) Fenced() (Fencing, bool) {
	if f := a.fencing.Load(); f != nil {
		return *f, true
	}
	return Fencing{}, false
}
