package radiusd

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"
)

type acctFields struct {
	status                  rfc2866.AcctStatusType
	session, user           string
	in, out, inGW, outGW    uint32
	delay, sessTime, reason uint32
}

func acctRequest(t *testing.T, secret string, f acctFields) []byte {
	t.Helper()
	p := radius.New(radius.CodeAccountingRequest, []byte(secret))
	rfc2866.AcctStatusType_Set(p, f.status)
	if f.session != "" {
		rfc2866.AcctSessionID_SetString(p, f.session)
	}
	if f.user != "" {
		rfc2865.UserName_SetString(p, f.user)
	}
	rfc2865.FramedIPAddress_Set(p, net.IPv4(100, 64, 0, 9))
	rfc2865.CallingStationID_SetString(p, "AA:BB:CC:00:11:22")
	rfc2869.NASPortID_SetString(p, "pppoe-alice")
	rfc2866.AcctInputOctets_Set(p, rfc2866.AcctInputOctets(f.in))
	rfc2866.AcctOutputOctets_Set(p, rfc2866.AcctOutputOctets(f.out))
	rfc2869.AcctInputGigawords_Set(p, rfc2869.AcctInputGigawords(f.inGW))
	rfc2869.AcctOutputGigawords_Set(p, rfc2869.AcctOutputGigawords(f.outGW))
	rfc2866.AcctInputPackets_Set(p, 1000)
	rfc2866.AcctOutputPackets_Set(p, 2000)
	rfc2866.AcctDelayTime_Set(p, rfc2866.AcctDelayTime(f.delay))
	rfc2866.AcctSessionTime_Set(p, rfc2866.AcctSessionTime(f.sessTime))
	if f.reason != 0 {
		rfc2866.AcctTerminateCause_Set(p, rfc2866.AcctTerminateCause(f.reason))
	}
	return encodeAcct(t, p)
}

func TestAccountingSequence(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	seq := []acctFields{
		{status: rfc2866.AcctStatusType_Value_Start, session: "8100001", user: "alice"},
		{status: rfc2866.AcctStatusType_Value_InterimUpdate, session: "8100001", user: "alice", in: 5, inGW: 1, out: 4294967295, sessTime: 300},
		// Out of order: an interim of another session without its Start.
		{status: rfc2866.AcctStatusType_Value_InterimUpdate, session: "8100002", user: "bob", in: 10, sessTime: 60, delay: 30},
		{status: rfc2866.AcctStatusType_Value_Stop, session: "8100001", user: "alice", in: 7, inGW: 2, out: 1, outGW: 3, sessTime: 600, reason: 1},
	}
	for _, f := range seq {
		req := acctRequest(t, testSecret, f)
		p := checkResponse(t, exchange(t, e.acctAddr, req, answerWait), req)
		if p.Code != radius.CodeAccountingResponse {
			t.Fatalf("got %v", p.Code)
		}
	}
	recs := e.acct.records()
	if len(recs) != 4 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[1]
	if r.Status != AcctInterimUpdate || r.SessionID != "8100001" || r.Username != "alice" ||
		r.InputOctets != 1<<32+5 || r.OutputOctets != 4294967295 || r.SessionTime != 300 ||
		r.InputPackets != 1000 || r.OutputPackets != 2000 || r.NAS != e.nas ||
		r.FramedIP != netip.MustParseAddr("100.64.0.9") || r.CallingStationID != "AA:BB:CC:00:11:22" || r.NASPortID != "pppoe-alice" {
		t.Errorf("interim record %+v", r)
	}
	if r := recs[3]; r.Status != AcctStop || r.InputOctets != 2<<32+7 || r.OutputOctets != 3<<32+1 || r.TerminateCause != 1 {
		t.Errorf("stop record %+v", r)
	}
	if r := recs[2]; r.DelayTime != 30 || time.Since(r.EventTime) < 29*time.Second || time.Since(r.EventTime) > 35*time.Second {
		t.Errorf("Acct-Delay-Time not applied: %+v", r)
	}
	if r := recs[0]; time.Since(r.EventTime) > 5*time.Second {
		t.Errorf("start EventTime %v", r.EventTime)
	}
}

func TestAccountingOnOffAndUnknownStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	for _, st := range []rfc2866.AcctStatusType{rfc2866.AcctStatusType_Value_AccountingOn, rfc2866.AcctStatusType_Value_AccountingOff, 15} {
		req := acctRequest(t, testSecret, acctFields{status: st})
		checkResponse(t, exchange(t, e.acctAddr, req, answerWait), req)
	}
	recs := e.acct.records()
	if len(recs) != 2 || recs[0].Status != AcctAccountingOn || recs[1].Status != AcctAccountingOff || recs[0].NAS != e.nas {
		t.Fatalf("records %+v", recs)
	}
	// Start without Acct-Session-Id is malformed.
	if resp := exchange(t, e.acctAddr, acctRequest(t, testSecret, acctFields{status: 1}), silentWait); resp != nil {
		t.Fatal("Start without session id answered")
	}
}

func TestAccountingBadAuthenticator(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	req := acctRequest(t, "wrong-secret", acctFields{status: 1, session: "1"})
	if resp := exchange(t, e.acctAddr, req, silentWait); resp != nil {
		t.Fatal("answered a request signed with another secret")
	}
	waitFor(t, "bad_authenticator", func() bool { return e.srv.Metrics.Drops("bad_authenticator") == 1 })
	if e.acct.calls.Load() != 0 {
		t.Fatal("forged record reached the Accounter")
	}
}

func TestAccountingResponseOnlyAfterCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	gate := make(chan struct{})
	e.acct.setGate(gate)
	c, _ := net.Dial("udp", e.acctAddr)
	defer c.Close()
	req := acctRequest(t, testSecret, acctFields{status: 3, session: "s1", in: 1})
	if resp := exchangeOn(t, c, req, 200*time.Millisecond); resp != nil {
		t.Fatal("answered before the commit")
	}
	// A retransmission while the commit is pending is an in-flight duplicate.
	c.Write(req)
	waitFor(t, "duplicate", func() bool { return e.srv.Metrics.Drops("duplicate") == 1 })
	close(gate)
	checkResponse(t, readAnswer(c, answerWait), req)

	// A failing commit sends nothing and releases the request, so the NAS's
	// retransmission is recorded afresh.
	e.acct.setGate(nil)
	e.acct.fail.Store(true)
	req2 := acctRequest(t, testSecret, acctFields{status: 3, session: "s2", in: 2})
	if resp := exchangeOn(t, c, req2, 200*time.Millisecond); resp != nil {
		t.Fatal("answered a failed commit")
	}
	waitFor(t, "commit_failed", func() bool { return e.srv.Metrics.Drops("commit_failed") == 1 })
	e.acct.fail.Store(false)
	checkResponse(t, exchangeOn(t, c, req2, answerWait), req2)
	if recs := e.acct.records(); len(recs) != 2 || recs[1].SessionID != "s2" {
		t.Fatalf("records %+v", recs)
	}
	// After the answer, a retransmission gets the cached reply, not a commit.
	calls := e.acct.calls.Load()
	if resp := exchangeOn(t, c, req2, answerWait); resp == nil {
		t.Fatal("retransmission not answered")
	}
	if e.acct.calls.Load() != calls {
		t.Fatal("retransmission committed again")
	}
}

func TestAccountingBatching(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, func(s *Server) { s.BatchWait = 50 * time.Millisecond; s.BatchMax = 16 })
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := acctRequest(t, testSecret, acctFields{status: 3, session: string(rune('a' + i%26)), in: uint32(i)})
			if exchange(t, e.acctAddr, req, 3*time.Second) == nil {
				t.Error("no answer")
			}
		}()
	}
	wg.Wait()
	e.acct.mu.Lock()
	defer e.acct.mu.Unlock()
	if len(e.acct.recs) != n {
		t.Fatalf("%d records", len(e.acct.recs))
	}
	for _, b := range e.acct.batches {
		if b > 16 {
			t.Fatalf("batch of %d exceeds BatchMax", b)
		}
	}
	if len(e.acct.batches) >= n/2 {
		t.Fatalf("%d commits for %d records: not batched", len(e.acct.batches), n)
	}
	var buf bytes.Buffer
	e.srv.Metrics.WritePrometheus(&buf)
	if !bytes.Contains(buf.Bytes(), []byte("radius_acct_batch_size_count ")) {
		t.Fatal("batch histogram missing")
	}
}

// Records that arrive while every committer is busy join the next batch,
// however short the linger: the batch grows for as long as the commit
// ahead of it takes (up to BatchMax), so one slow commit is followed by
// one large one, not by one commit per record.
func TestAccountingBatchGrowsWhileCommitting(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, func(s *Server) { s.BatchWait, s.Committers, s.BatchMax = -1, 1, 64 })
	gate := make(chan struct{})
	e.acct.setGate(gate)
	c, _ := net.Dial("udp", e.acctAddr)
	defer c.Close()
	c.Write(acctRequest(t, testSecret, acctFields{status: 3, session: "first", in: 1}))
	waitFor(t, "first commit running", func() bool { return e.acct.calls.Load() == 1 })
	const n = 30
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := acctRequest(t, testSecret, acctFields{status: 3, session: fmt.Sprintf("s%02d", i), in: uint32(i)})
			if exchange(t, e.acctAddr, req, 5*time.Second) == nil {
				t.Error("no answer")
			}
		}()
	}
	// The first commit finishes once every other record waits in the
	// next batch.
	waitFor(t, "a batch of every record behind the commit", func() bool { return e.srv.forming.Load() == n })
	close(gate)
	wg.Wait()
	e.acct.mu.Lock()
	defer e.acct.mu.Unlock()
	if len(e.acct.recs) != n+1 || len(e.acct.batches) != 2 || e.acct.batches[1] != n {
		t.Fatalf("batches %v for %d records", e.acct.batches, len(e.acct.recs))
	}
}

// Shutdown must flush the pending batch and send its responses.
func TestShutdownFlushesBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, func(s *Server) { s.BatchWait = 10 * time.Second })
	c, _ := net.Dial("udp", e.acctAddr)
	defer c.Close()
	req := acctRequest(t, testSecret, acctFields{status: 1, session: "flush"})
	c.Write(req)
	waitFor(t, "queued", func() bool { return e.srv.dedup.len() == 1 })
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	checkResponse(t, readAnswer(c, answerWait), req)
	if recs := e.acct.records(); len(recs) != 1 {
		t.Fatalf("%d records after shutdown", len(recs))
	}
}

// An Accounting-Request may carry a Message-Authenticator, computed with
// the authenticator field zeroed (RFC 5176 3.3 style); it is verified and
// the answer carries one too.
func TestAccountingWithMessageAuthenticator(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	build := func(secretForMA string) []byte {
		p := radius.New(radius.CodeAccountingRequest, []byte(testSecret))
		p.Authenticator = [16]byte{}
		rfc2866.AcctStatusType_Set(p, rfc2866.AcctStatusType_Value_Start)
		rfc2866.AcctSessionID_SetString(p, "ma-1")
		rfc2869.MessageAuthenticator_Set(p, make([]byte, 16))
		raw, _ := p.MarshalBinary()
		m := hmac.New(md5.New, []byte(secretForMA))
		m.Write(raw)
		rfc2869.MessageAuthenticator_Set(p, m.Sum(nil))
		return encodeAcct(t, p)
	}
	if resp := exchange(t, e.acctAddr, build("wrong"), silentWait); resp != nil {
		t.Fatal("wrong Message-Authenticator accepted")
	}
	req := build(testSecret)
	p := checkResponse(t, exchange(t, e.acctAddr, req, answerWait), req)
	if ma := rfc2869.MessageAuthenticator_Get(p); len(ma) != 16 {
		t.Fatal("Accounting-Response without Message-Authenticator")
	}
	if n := len(e.acct.records()); n != 1 {
		t.Fatalf("%d records", n)
	}
}
