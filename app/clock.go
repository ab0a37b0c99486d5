package app

import (
	"sync/atomic"
	"time"
)

// The clock. Everything that depends on the time of day (expiry, windows,
// retries, leases) and the timestamps xr stores read the App's clock, never a
// package variable: a test moves time for its own App only (SetClock), so
// tests run in parallel.

// clock is the App's time source; the zero value is the wall clock.
type clock struct {
	fn atomic.Pointer[func() time.Time]
}

// Now is the current time in UTC by the App's clock.
func (a *App) Now() time.Time {
	if f := a.clock.fn.Load(); f != nil {
		return (*f)().UTC()
	}
	return time.Now().UTC()
}

// NowText is Now in the wire/database format.
func (a *App) NowText() string { return FormatTime(a.Now()) }

// SetClock replaces the App's clock (tests); nil restores the wall clock.
func (a *App) SetClock(fn func() time.Time) {
	if fn == nil {
		a.clock.fn.Store(nil)
		return
	}
	a.clock.fn.Store(&fn)
}

// Now is the current time by the tenant's App clock.
func (t *Tenant) Now() time.Time { return t.App.Now() }

// NowText is Now in the wire/database format.
func (t *Tenant) NowText() string { return t.App.NowText() }

// stampNow is the wall clock for the creation stamps that kernel helpers
// working on a bare transaction write (events, idempotency records, jobs,
// provisioning). No decision reads these stamps against a test's clock.
func stampNow() string { return FormatTime(time.Now().UTC()) }

// StampNow is the wall clock for the "written at" stamps of store functions
// that work on a bare transaction (updated_at, created_at). Decisions
// (expiry, due times) take the tenant's clock instead (Tenant.Now).
func StampNow() string { return stampNow() }
