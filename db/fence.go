package db

import (
	"sync/atomic"
	"time"
)

// ErrFenced refuses every write of a primary whose replica another box
// now holds (app/replica: a standby was promoted): ERR_MAINTENANCE fenced.
// Nothing is written until the box is re-joined as a standby.
var ErrFenced = &PausedError{Reason: "fenced", RetryAfter: time.Minute}

// Fence, once raised, refuses every write of the files it is set on
// (DB.Fence; Pool.Fence sets it on each file the pool opens).
type Fence struct{ raised atomic.Bool }

// Raise refuses every later write.
func (f *Fence) Raise() { f.raised.Store(true) }

// Raised reports a raised fence.
func (f *Fence) Raised() bool { return f != nil && f.raised.Load() }
