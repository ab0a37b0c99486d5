package replica

import (
	"context"
	"errors"
	"time"

	"github.com/superfly/ltx"
)

// The holder's heartbeat: while a primary replicates it writes a small
// object under its generation (g<N>/heartbeat/) at each look at the
// stamp, named by its clock in milliseconds, and deletes the one before.
// A replica with no new transaction is otherwise silent whether the
// primary is idle or dead; the heartbeat tells them apart. A standby's
// follower notes when it last saw it change (its own clock: the boxes'
// clocks need not agree), and xr serve --standby-of --promote-after
// promotes the standby once it has been silent that long (Status.Silent).

const heartbeatRel = "heartbeat"

// beat is what a heartbeat holds (for an operator reading the replica).
type beat struct {
	Holder string    `json:"holder"`
	At     time.Time `json:"at"`
}

// heartbeat writes the next beat and deletes the previous one (a failed
// delete leaves an old beat that the next one outnumbers).
func (r *Replicator) heartbeat(ctx context.Context) error {
	now := time.Now().UTC()
	id := ltx.TXID(now.UnixMilli())
	if id <= r.lastBeat {
		id = r.lastBeat + 1 // the clock stepped back: the beat still grows
	}
	buf, err := encodeObject(id, now, beat{Holder: r.holder, At: now})
	if err != nil {
		return err
	}
	c := r.target.client(heartbeatRel)
	if r.lastBeat == 0 {
		if err := c.Init(ctx); err != nil {
			return err
		}
	}
	if _, err := c.WriteLTXFile(ctx, 0, id, id, buf); err != nil {
		return err
	}
	prev := r.lastBeat
	r.lastBeat = id
	if prev == 0 {
		return nil
	}
	return c.DeleteLTXFiles(ctx, []*ltx.FileInfo{{Level: 0, MinTXID: prev, MaxTXID: prev}})
}

// lastBeat is the newest heartbeat of the target's generation (0: none).
func lastBeat(ctx context.Context, target Target) (uint64, error) {
	itr, err := target.client(heartbeatRel).LTXFiles(ctx, 0, 0, false)
	if err != nil {
		return 0, err
	}
	var last ltx.TXID
	for itr.Next() {
		last = max(last, itr.Item().MaxTXID)
	}
	return uint64(last), errors.Join(itr.Err(), itr.Close())
}

// Silent is how long the primary has been silent as this standby's
// follower saw it at now: since the heartbeat last changed (or the
// follower began). ok is false when the follower cannot tell: it has not
// read the replica in its last polls (stopped, or the replica is out of
// its reach), so silence of the primary cannot be told from its own.
func (st Status) Silent(now time.Time) (d time.Duration, ok bool) {
	if st.BeatSeen.IsZero() || st.ReplicaErr != "" || now.Sub(st.Checked) > 3*time.Second {
		return 0, false
	}
	return max(0, now.Sub(st.BeatSeen)), true
}
