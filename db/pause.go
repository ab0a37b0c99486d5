package db

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A restore replaces a file's whole content. Every write acknowledged
// before it must be in the safety backup taken first, and none may land
// between that backup and the swap, so the restorer pauses the file:
// Pause waits for the write in flight and refuses every later one with a
// *PausedError (ERR_MAINTENANCE, retry after a while) until Resume; the
// restorer's own writes pass with the context Pause.Bind gives. A request
// that began before the swap must not write its stale view into the
// restored content either: Bind marks a context with the content a file
// has now, and a write with it after a restore replaced that content is
// refused with ErrReplaced (the client retries, authenticated against
// the restored data).

// PausedError refuses a write while the file is paused.
type PausedError struct {
	Reason     string        // what is being done: restore_in_progress, reset_in_progress
	RetryAfter time.Duration // a hint for the client
}

func (e *PausedError) Error() string {
	return fmt.Sprintf("writes are paused (%s); retry in %s", e.Reason, e.RetryAfter)
}

// ErrReplaced refuses a write bound (Bind) to content a restore replaced.
var ErrReplaced = errors.New("the file's content was replaced by a restore after this request began")

// Pause holds a file's writes; see DB.Pause.
type Pause struct {
	d   *DB
	err *PausedError
}

type pauseKey struct{}

type boundKey struct{}

type bound struct {
	d   *DB
	gen uint64
}

// Pause refuses new writes of d with a *PausedError of reason and waits
// for the write in flight to commit (or ctx to end). Only one pause holds
// a file at a time: a second one is refused with the first's error.
func (d *DB) Pause(ctx context.Context, reason string, retryAfter time.Duration) (*Pause, error) {
	p := &Pause{d: d, err: &PausedError{Reason: reason, RetryAfter: retryAfter}}
	if !d.paused.CompareAndSwap(nil, p) {
		if cur := d.paused.Load(); cur != nil {
			return nil, cur.err
		}
		return nil, p.err
	}
	locked := make(chan struct{})
	go func() { d.gate.Lock(); close(locked) }()
	select {
	case <-locked:
		return p, nil
	case <-ctx.Done():
		go func() { <-locked; d.paused.Store(nil); d.gate.Unlock() }()
		return nil, ctx.Err()
	}
}

// Bind is ctx carrying the pause: the holder's own writes pass.
func (p *Pause) Bind(ctx context.Context) context.Context {
	return context.WithValue(ctx, pauseKey{}, p)
}

// Replaced marks the content replaced by the holder's writes (a factory
// reset): contexts bound before now see ErrReplaced. A restore through
// RestoreInto marks it itself.
func (p *Pause) Replaced() { p.d.gen.Add(1) }

// Resume lets writes through again.
func (p *Pause) Resume() {
	if p.d.paused.CompareAndSwap(p, nil) {
		p.d.gate.Unlock()
	}
}

// Bind is ctx marked with the content d has now (see ErrReplaced).
func (d *DB) Bind(ctx context.Context) context.Context {
	return context.WithValue(ctx, boundKey{}, bound{d: d, gen: d.gen.Load()})
}

// admit lets a write of ctx in: release must be called after it. The
// holder of the pause passes; anyone else waits for no pause and the
// content its context was bound to.
func (d *DB) admit(ctx context.Context) (release func(), err error) {
	if d.followed {
		return nil, ErrStandbyReadOnly
	}
	if d.Fence.Raised() {
		return nil, ErrFenced
	}
	if p, ok := ctx.Value(pauseKey{}).(*Pause); ok && p.d == d && d.paused.Load() == p {
		return func() {}, nil
	}
	if p := d.paused.Load(); p != nil {
		return nil, p.err
	}
	d.gate.RLock()
	if p := d.paused.Load(); p != nil { // paused between the check and the lock
		d.gate.RUnlock()
		return nil, p.err
	}
	if b, ok := ctx.Value(boundKey{}).(bound); ok && b.d == d && b.gen != d.gen.Load() {
		d.gate.RUnlock()
		return nil, ErrReplaced
	}
	return d.gate.RUnlock, nil
}

// IsPaused reports a write refused by a pause, and the pause.
func IsPaused(err error) (*PausedError, bool) {
	var pe *PausedError
	ok := errors.As(err, &pe)
	return pe, ok
}
