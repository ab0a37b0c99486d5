package aaa

import (
	"context"
	"net/netip"
)

// Coalescing: the records of one session in one batch (a NAS replaying
// its queue after an outage, Interims overtaking their answers) write the
// session's row once, with the final state, and charge its subscriber
// once per hour, with the summed growth. applyOne still decides record by
// record on the batch's own view of the session (batch.pending): what is
// a duplicate, stale or closed is decided exactly as before; only the
// statements wait for the end of the batch (or for a statement that reads
// the rows: closeNAS).

// sessWrite is a session row's pending update.
type sessWrite struct {
	counters bool // an Interim or Stop: counters and update_time; else the addresses alone
	stop     bool
	in, out  int64
	inPk     int64
	outPk    int64
	secs     int64
	now      string // the last record's time (update_time, stop_time)
	// firstInterim is the first Interim's time ('' when none), whose gap
	// from the stored update_time the statement measures; gap is the
	// longest of 60 s or more between the batch's later records and the
	// record before each; lastAt the last record's time, unix seconds.
	firstInterim string
	gap, lastAt  int64
	addB, addS   int64 // charged_bytes, charged_seconds growth
	fip, fpfx    string
	cause        string
	counted      bool
}

// write is the pending update of a session row, created on first use.
func (b *batch) write(rowID int64) *sessWrite {
	if w := b.writes[rowID]; w != nil {
		return w
	}
	if b.writes == nil {
		b.writes = map[int64]*sessWrite{}
	}
	w := &sessWrite{}
	b.writes[rowID] = w
	b.order = append(b.order, rowID)
	return w
}

// framed keeps the addresses a record carries (the last one given wins, as
// record after record would have written).
func (w *sessWrite) framed(fip, fpfx string) {
	if fip != "" {
		w.fip = fip
	}
	if fpfx != "" {
		w.fpfx = fpfx
	}
}

// record adds an Interim or Stop that grows (or closes) the session.
func (w *sessWrite) record(ev *AcctEvent, now string, addB, addS int64, counted bool) {
	at := ev.EventTime.Unix()
	if ev.Status != StatusStop {
		switch {
		case !w.counters:
			w.firstInterim = now
		case at-w.lastAt >= 60:
			w.gap = max(w.gap, at-w.lastAt)
		}
	}
	w.counters, w.lastAt, w.now = true, at, now
	w.in, w.out, w.inPk, w.outPk, w.secs = int64(ev.InputOctets), int64(ev.OutputOctets), int64(ev.InputPackets), int64(ev.OutputPackets), int64(ev.SessionTime)
	w.addB, w.addS = w.addB+addB, w.addS+addS
	w.counted = counted
	w.framed(addrText(ev.FramedIP), prefixText(ev.FramedIPv6Prefix))
	if ev.Status == StatusStop {
		w.stop, w.cause = true, ev.TerminateCause
	}
}

// sessCharge is a session's pending charge of its subscriber for one hour.
type sessCharge struct {
	row                        sessState // as after the batch's last record of it
	plan                       *plan
	hour                       int64
	dIn, dOut, dSecs, sessions int64
	closing                    bool
	nas                        *NAS
	username, sid              string
	ip                         netip.Addr // the last address a record gave
}

// addCharge adds a record's growth to its session's pending charge. A
// record of another hour than the pending one charges that one first: an
// hour's usage stays in its hour.
func (b *batch) addCharge(ctx context.Context, ev *AcctEvent, row sessState, p *plan, dIn, dOut, dSecs, sessions int64, closing bool) error {
	if row.userID == 0 || (dIn+dOut == 0 && dSecs == 0) {
		return nil
	}
	hour := hourOf(ev.EventTime)
	c := b.charges[row.rowID]
	if c != nil && c.hour != hour {
		if err := b.chargeNow(ctx, c); err != nil {
			return err
		}
		c = nil
	}
	if c == nil {
		if b.charges == nil {
			b.charges = map[int64]*sessCharge{}
		}
		c = &sessCharge{hour: hour}
		b.charges[row.rowID] = c
		if b.writes[row.rowID] == nil {
			b.order = append(b.order, row.rowID)
		}
	}
	c.row, c.plan, c.closing, c.nas, c.username, c.sid = row, p, closing, ev.NAS, ev.Username, ev.SessionID
	if ev.FramedIP.IsValid() {
		c.ip = ev.FramedIP
	}
	c.dIn, c.dOut, c.dSecs, c.sessions = c.dIn+dIn, c.dOut+dOut, c.dSecs+dSecs, c.sessions+sessions
	return nil
}

// chargeNow runs a pending charge; a Disconnect it calls for joins the
// batch's effects.
func (b *batch) chargeNow(ctx context.Context, c *sessCharge) error {
	coa, err := b.charge(ctx, c)
	if err != nil {
		return err
	}
	delete(b.charges, c.row.rowID)
	if coa != nil {
		b.effects = append(b.effects, effect{user: c.row.userID, disconnect: coa})
	}
	return nil
}

// flush writes the pending session rows and charges, in the order the
// batch first touched each session.
func (b *batch) flush(ctx context.Context) error {
	for _, id := range b.order {
		if w := b.writes[id]; w != nil {
			if err := b.writeRow(ctx, id, w); err != nil {
				return err
			}
		}
		if c := b.charges[id]; c != nil {
			if err := b.chargeNow(ctx, c); err != nil {
				return err
			}
		}
	}
	clear(b.writes)
	clear(b.charges)
	b.order = b.order[:0]
	return nil
}

func (b *batch) writeRow(ctx context.Context, id int64, w *sessWrite) error {
	var err error
	switch {
	case !w.counters:
		_, err = b.exec(ctx, sqlFramedOnly, w.fip, w.fip, w.fpfx, w.fpfx, id)
	case w.stop:
		_, err = b.exec(ctx, sqlStop, w.in, w.out, w.inPk, w.outPk, w.secs, w.now, w.addB, w.addS,
			w.gap, w.firstInterim, w.firstInterim, w.firstInterim,
			w.now, w.cause, stopCause(w.cause), w.fip, w.fip, w.fpfx, w.fpfx, w.counted, id)
	default:
		_, err = b.exec(ctx, sqlInterim, w.in, w.out, w.inPk, w.outPk, w.secs, w.now, w.addB, w.addS,
			w.gap, w.firstInterim, w.firstInterim, w.firstInterim,
			w.fip, w.fip, w.fpfx, w.fpfx, w.counted, id)
	}
	return err
}
