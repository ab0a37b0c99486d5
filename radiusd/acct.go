package radiusd

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"time"

	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"
)

var errMissingAttr = errors.New("radius: required accounting attribute missing")

// acctItem is one accounting request waiting for its group commit; its
// Accounting-Response is encoded up front and sent only after the commit.
type acctItem struct {
	rec   AcctRecord
	reply []byte
	l     *listener
	dst   netip.AddrPort
	key   dedupKey
	dedup bool
	stats *nasStats
	// stream is the RadSec connection of the request (nil: UDP); the
	// item holds its in-flight slot until answered.
	stream *radsecConn
}

func (s *Server) handleAccountingRequest(ws *workerState, l *listener, pb *packetBuf) {
	p, nas, ix := pb.pkt, pb.nas, &pb.idx
	// RFC 2866: the Request Authenticator is an MD5 over the packet and the
	// secret; a mismatch means a wrong secret or a forged packet.
	if !requestAuthenticatorOK(ws.md5, p, nas.Secret) {
		s.dropPacket(pb, dropBadAuthenticator)
		return
	}
	if ix.ma >= 0 && !messageAuthenticatorOK(ws.mac(nas.Secret), p, ix.ma, true) {
		s.dropPacket(pb, dropBadAuthenticator)
		return
	}
	rec, err := decodeAcct(ix, p, nas, pb.recv)
	if err != nil {
		s.dropPacket(pb, dropMalformed)
		return
	}
	w := newPacket(ws.buf[:0], codeAccountingResponse, p[1], p[4:20], ix.ma >= 0)
	w.copyProxyState(ix, p)
	reply, err := w.finishResponse(ws.mac(nas.Secret), ws.md5, nas.Secret)
	reply = ownBytes(reply) // sent after the commit, from the batcher
	if err != nil {
		s.dropPacket(pb, dropMalformed)
		return
	}
	switch rec.Status {
	case AcctStart, AcctStop, AcctInterimUpdate, AcctAccountingOn, AcctAccountingOff:
	default:
		// Tunnel and Failed records (RFC 2867, 2866 value 15) carry nothing
		// xr keeps: acknowledge so the NAS stops retrying.
		s.Metrics.packet(codeAccountingRequest, resResponse)
		pb.stats.acct.Add(1)
		s.reply(l, pb, reply)
		return
	}
	it := acctItem{rec: rec, reply: reply, l: l, dst: pb.src, key: pb.key, dedup: pb.dedup, stats: pb.stats, stream: pb.stream}
	select {
	case s.batchIn <- it: // blocks when commits fall behind: back-pressure to the queue
		pb.handedOff = true
	case <-s.ctx.Done():
		s.dropPacket(pb, dropCommitFailed)
	}
}

// decodeAcct turns an Accounting-Request into a record. Integer attributes
// of the wrong size make the packet malformed rather than silently zero.
func decodeAcct(ix *attrIndex, p []byte, nas *NAS, recv time.Time) (AcctRecord, error) {
	rec := AcctRecord{NAS: nas}
	status, ok, err := ix.uint32(p, byte(rfc2866.AcctStatusType_Type))
	if err != nil {
		return rec, err
	}
	if !ok {
		return rec, errMissingAttr
	}
	rec.Status = AcctStatus(status)
	if v, ok := ix.get(p, byte(rfc2866.AcctSessionID_Type)); ok {
		rec.SessionID = string(v)
	}
	if v, ok := ix.get(p, attrUserName); ok {
		rec.Username = string(v)
	}
	if v, ok := ix.get(p, attrCallingStationID); ok {
		rec.CallingStationID = string(v)
	}
	if v, ok := ix.get(p, attrNASPortID); ok {
		rec.NASPortID = string(v)
	}
	if v, ok := ix.get(p, attrFramedIP); ok {
		if len(v) != 4 {
			return rec, errBadAttrFormat
		}
		rec.FramedIP = netip.AddrFrom4([4]byte(v))
	}
	if v, ok := ix.get(p, attrFramedIPv6Prefix); ok {
		pfx, err := parseIPv6Prefix(v)
		if err != nil {
			return rec, err
		}
		rec.FramedIPv6Prefix = pfx
	}
	var vals [10]uint32
	for i, t := range [10]byte{
		byte(rfc2866.AcctInputOctets_Type), byte(rfc2869.AcctInputGigawords_Type),
		byte(rfc2866.AcctOutputOctets_Type), byte(rfc2869.AcctOutputGigawords_Type),
		byte(rfc2866.AcctInputPackets_Type), byte(rfc2866.AcctOutputPackets_Type),
		byte(rfc2866.AcctSessionTime_Type), byte(rfc2866.AcctTerminateCause_Type),
		byte(rfc2866.AcctDelayTime_Type), 0,
	} {
		if t == 0 {
			break
		}
		v, _, err := ix.uint32(p, t)
		if err != nil {
			return rec, err
		}
		vals[i] = v
	}
	// RFC 2869 5.1/5.2: gigawords count how often the 32-bit octet counter
	// wrapped.
	rec.InputOctets = uint64(vals[1])<<32 | uint64(vals[0])
	rec.OutputOctets = uint64(vals[3])<<32 | uint64(vals[2])
	rec.InputPackets, rec.OutputPackets = uint64(vals[4]), uint64(vals[5])
	rec.SessionTime, rec.TerminateCause, rec.DelayTime = vals[6], vals[7], vals[8]
	rec.EventTime = recv.Add(-time.Duration(rec.DelayTime) * time.Second)
	switch rec.Status {
	case AcctStart, AcctStop, AcctInterimUpdate:
		if rec.SessionID == "" {
			return rec, errMissingAttr
		}
	}
	return rec, nil
}

// runBatcher groups accounting records into commits: it takes the first
// record, then everything already queued, then lingers for more while they
// keep coming (gaps under BatchIdle), at most BatchWait. Then it waits for
// a free committer and keeps collecting meanwhile: while the commits ahead
// run their transactions and fsyncs, what arrives joins the batch, so a
// batch is as large as the commit it follows took (group commit sized by
// the measured commit cost), at most BatchMax records.
func (s *Server) runBatcher() {
	defer close(s.batchDone)
	// Up to Committers batches are in flight: while one waits for its
	// durable commit (fsync), the next runs its transaction. The backend
	// tolerates batches applied out of order (stale records are dropped).
	inflight := make(chan struct{}, s.Committers)
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		it, ok := <-s.batchIn
		if !ok {
			return
		}
		b := s.batches.Get().(*acctBatch)
		b.items = append(b.items[:0], it)
		closed := false
		var deadline time.Time
		if s.BatchWait > 0 {
			deadline = time.Now().Add(s.BatchWait)
		}
	collect:
		for len(b.items) < s.BatchMax {
			select {
			case it, ok := <-s.batchIn:
				if !ok {
					closed = true
					break collect
				}
				b.items = append(b.items, it)
				continue
			default:
			}
			wait := time.Until(deadline)
			if deadline.IsZero() || wait <= 0 {
				break collect
			}
			// Stop lingering once arrivals pause: the burst is complete.
			wait = min(wait, s.BatchIdle)
			timer.Reset(wait)
			select {
			case it, ok := <-s.batchIn:
				timer.Stop()
				if !ok {
					closed = true
					break collect
				}
				b.items = append(b.items, it)
			case <-timer.C:
				break collect
			}
		}
	slot:
		for !closed && len(b.items) < s.BatchMax {
			s.forming.Store(int64(len(b.items)))
			select {
			case inflight <- struct{}{}:
				break slot
			case it, ok := <-s.batchIn:
				if !ok {
					closed = true
					break
				}
				b.items = append(b.items, it)
			}
		}
		if closed || len(b.items) >= s.BatchMax {
			s.forming.Store(int64(len(b.items)))
			inflight <- struct{}{}
		}
		s.forming.Store(0)
		b.recs = b.recs[:0]
		for i := range b.items {
			b.recs = append(b.recs, b.items[i].rec)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-inflight }()
			s.commit(b.items, b.recs)
			clear(b.items) // the batch holds no reply or connection while pooled
			clear(b.recs)
			s.batches.Put(b)
		}()
		if closed {
			return
		}
	}
}

// acctBatch is one group commit's records, reused across batches.
type acctBatch struct {
	items []acctItem
	recs  []AcctRecord
}

// commit applies one batch and answers it. On error nothing is sent and the
// reply-cache slots are released, so the NAS's retransmissions are processed
// again (the backend de-duplicates records).
func (s *Server) commit(batch []acctItem, recs []AcctRecord) {
	// Detached from shutdown: a commit in progress must finish, not be torn.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), s.CommitTimeout)
	t0 := time.Now()
	err := s.Accounter.RecordAccounting(ctx, recs)
	cancel()
	s.Metrics.batch(len(recs), time.Since(t0), err == nil)
	if err != nil {
		s.warn("accounting commit failed", "records", len(recs), "err", err)
		for i := range batch {
			if batch[i].dedup {
				s.dedup.abort(batch[i].key)
			}
			s.Metrics.drop(codeAccountingRequest, dropCommitFailed, batch[i].stats)
			if batch[i].stream != nil {
				batch[i].stream.release()
			}
		}
		return
	}
	now := time.Now().UnixNano()
	for i := range batch {
		it := &batch[i]
		if it.dedup {
			s.dedup.complete(it.key, it.reply, now)
		}
		s.write(it.l, it.stream, it.reply, it.dst)
		if it.stream != nil {
			it.stream.release()
		}
		s.Metrics.packet(codeAccountingRequest, resResponse)
		it.stats.acct.Add(1)
	}
}

// parseIPv6Prefix reads a Framed-IPv6-Prefix value (RFC 3162 section 2.3):
// a reserved octet, the prefix length (0..128), then as many prefix octets
// as the length needs (at most 16; bits past the length are ignored).
func parseIPv6Prefix(v []byte) (netip.Prefix, error) {
	if len(v) < 2 || len(v) > 18 || v[1] > 128 || len(v)-2 < (int(v[1])+7)/8 {
		return netip.Prefix{}, errBadAttrFormat
	}
	var a [16]byte
	copy(a[:], v[2:])
	return netip.AddrFrom16(a).Prefix(int(v[1]))
}
