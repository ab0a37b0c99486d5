package webhooks

import (
	"context"
	"crypto/hmac"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"xr/app"
	"xr/internal/xrtest"
)

// env is one instance with tenant "acme" and its system actor.
type env struct {
	t   *testing.T
	dir string
	A   *app.App
	T   *app.Tenant
	Act *app.Actor
	rel func()
}

// otherAreasEvents declares the events of other areas these tests emit
// (their packages import this one, so the tests cannot install them).
var otherAreasEvents = app.Module{Name: "webhooks-test-events", Events: []app.EventType{
	{Key: "user.created", Category: "lifecycle"}, {Key: "user.updated", Category: "lifecycle"},
	{Key: "user.deleted", Category: "lifecycle"}, {Key: "manager.suspended", Category: "lifecycle"},
	{Key: "payment.deposit", Category: "billing"}, {Key: "card.redeemed", Category: "billing"},
	{Key: "session.started", Category: "usage"}, {Key: "ticket.created", Category: "support"},
}}

// openApp opens the instance on dir, seeded with tenant acme when dir
// holds none yet.
func openApp(t *testing.T, dir string) *app.App {
	t.Helper()
	return xrtest.Seeded(t, app.Config{DataDir: dir, AllowPrivateEgress: true}, "acme", otherAreasEvents, Module)
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir()}
	e.A = openApp(t, e.dir)
	e.acquire()
	t.Cleanup(e.close)
	return e
}

func (e *env) acquire() {
	var err error
	e.T, e.rel, err = e.A.Acquire("acme")
	if err != nil {
		e.t.Fatal(err)
	}
	e.Act = xrtest.System(e.t, e.T)
}

func (e *env) close() {
	if e.A == nil {
		return
	}
	e.rel()
	e.A.Close()
	e.A = nil
}

// reopen closes the instance and opens the same data directory again, as
// a restart would.
func (e *env) reopen() {
	e.close()
	e.A = openApp(e.t, e.dir)
	e.acquire()
}

// run starts what xr serve starts for webhooks: job recovery, the runner,
// the dispatcher and the tenant tasks (the unpark at start, the sweep). The returned stop waits for them to end.
func (e *env) run() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	if err := e.A.Jobs.Recover(ctx); err != nil {
		e.t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); e.A.Jobs.Run(ctx) }()
	go func() { defer wg.Done(); Start(ctx, e.A) }()
	go func() { defer wg.Done(); e.A.RunTenantTasks(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	e.t.Cleanup(stop)
	return stop
}

func (e *env) emit(typ string, data any) {
	e.t.Helper()
	err := e.T.Write(context.Background(), func(tx *sql.Tx) error { return app.Emit(context.Background(), tx, typ, data) })
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) endpoint(name, url string, events []string, all bool) *EndpointCreated {
	e.t.Helper()
	in := EndpointInput{Name: app.Opt[string]{Set: true, V: name}, URL: app.Opt[string]{Set: true, V: url},
		Events: app.Opt[[]string]{Set: events != nil, V: events}, AllEvents: app.Opt[bool]{Set: true, V: all}}
	out, err := CreateEndpoint(context.Background(), e.Act, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) deliveries(endpointID int64) []Delivery {
	e.t.Helper()
	v := map[string][]string{"page_size": {"200"}, "order": {"asc"}}
	if endpointID > 0 {
		v["endpoint_id"] = []string{itoa(endpointID)}
	}
	p, err := ListDeliveries(context.Background(), e.Act, v)
	if err != nil {
		e.t.Fatal(err)
	}
	return p.Rows
}

// hit is one request a receiver got.
type hit struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// receiver is a local HTTP server answering with reply(n) for its n-th
// request (1-based).
type receiver struct {
	*httptest.Server
	mu    sync.Mutex
	hits  []hit
	reply func(n int, w http.ResponseWriter, r *http.Request)
}

func newReceiver(t *testing.T, reply func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{reply: reply}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.hits = append(rc.hits, hit{Header: r.Header.Clone(), Body: b, At: time.Now()})
		n := len(rc.hits)
		rc.mu.Unlock()
		if rc.reply != nil {
			rc.reply(n, w, r)
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) Hits() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit(nil), rc.hits...)
}

// fastRetries shortens the env's retry schedule (its App's, only).
func fastRetries(e *env, d time.Duration) { SetRetryBase(e.A, d) }

func TestSignedBodyAndHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t, nil)
	ep := e.endpoint("crm", rc.URL+"/hook", []string{"user.created"}, false)
	if !strings.HasPrefix(ep.Secret, SecretPrefix) {
		t.Fatalf("secret %q", ep.Secret)
	}
	e.run()
	e.emit("user.created", map[string]any{"id": 7, "username": "ali"})
	xrtest.Eventually(t, "delivery", func() bool { return len(rc.Hits()) == 1 })

	h := rc.Hits()[0]
	ts, sig := h.Header.Get("X-Xr-Timestamp"), h.Header.Get("X-Xr-Signature")
	if want := Sign(ep.Secret, ts, h.Body); !hmac.Equal([]byte(sig), []byte(want)) {
		t.Fatalf("signature %q, want %q", sig, want)
	}
	if h.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("content type %q", h.Header.Get("Content-Type"))
	}
	var b Body
	if err := json.Unmarshal(h.Body, &b); err != nil {
		t.Fatal(err)
	}
	if b.Type != "user.created" || b.Tenant != "acme" || b.ID == "" || b.CreatedAt.IsZero() || string(b.Data) != `{"id":7,"username":"ali"}` {
		t.Fatalf("body %s", h.Body)
	}
	if h.Header.Get("X-Xr-Event-Id") != b.ID || h.Header.Get("X-Xr-Event-Type") != "user.created" {
		t.Fatalf("headers %v", h.Header)
	}
	xrtest.Eventually(t, "sent state", func() bool { return e.deliveries(ep.ID)[0].State == StateSent })
	d := e.deliveries(ep.ID)[0]
	if d.EventID != b.ID || d.Attempts != 1 || d.ResponseCode == nil || *d.ResponseCode != 200 || d.ResponseMs == nil || d.SentAt.IsZero() {
		t.Fatalf("delivery %+v", d)
	}
	// The outbox row is dispatched exactly once.
	var pending int
	e.T.DB.R.QueryRow(`SELECT COUNT(*) FROM events WHERE dispatched = 0`).Scan(&pending)
	if pending != 0 {
		t.Fatalf("%d events still pending", pending)
	}
}

func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fastRetries(e, 0)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			w.WriteHeader(500)
		case 2:
			http.Redirect(w, r, "/elsewhere", http.StatusFound) // a 3xx is a failure
		}
	})
	ep := e.endpoint("crm", rc.URL, nil, true)
	e.run()
	e.emit("payment.deposit", map[string]any{"user_id": 1})
	xrtest.Eventually(t, "sent", func() bool {
		d := e.deliveries(ep.ID)
		return len(d) == 1 && d[0].State == StateSent
	})
	hits := rc.Hits()
	if len(hits) != 3 {
		t.Fatalf("%d hits (a redirect must not be followed)", len(hits))
	}
	for _, h := range hits {
		if h.Header.Get("X-Xr-Event-Id") != hits[0].Header.Get("X-Xr-Event-Id") {
			t.Fatal("event id changed across retries")
		}
	}
	if d := e.deliveries(ep.ID)[0]; d.Attempts != 3 || d.LastError != "" || *d.ResponseCode != 200 {
		t.Fatalf("delivery %+v", d)
	}
}

func TestRetryUntilDeadThenReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fastRetries(e, 0)
	var mu sync.Mutex
	healthy := false
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if !healthy {
			w.WriteHeader(503)
		}
	})
	ep := e.endpoint("crm", rc.URL, []string{"user.deleted"}, false)
	e.run()
	e.emit("user.deleted", map[string]any{"id": 3})
	xrtest.Eventually(t, "dead", func() bool {
		d := e.deliveries(ep.ID)
		return len(d) == 1 && d[0].State == StateDead
	})
	d := e.deliveries(ep.ID)[0]
	if d.Attempts != DefaultMaxAttempts || d.MaxAttempts != DefaultMaxAttempts || d.LastError != "HTTP 503" || *d.ResponseCode != 503 {
		t.Fatalf("dead delivery %+v", d)
	}
	if n := len(rc.Hits()); n != DefaultMaxAttempts {
		t.Fatalf("%d hits, want %d", n, DefaultMaxAttempts)
	}
	firstID := rc.Hits()[0].Header.Get("X-Xr-Event-Id")

	mu.Lock()
	healthy = true
	mu.Unlock()
	r, err := ReplayDelivery(context.Background(), e.Act, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != StateQueued || r.Attempts != 0 {
		t.Fatalf("replayed %+v", r)
	}
	xrtest.Eventually(t, "sent after replay", func() bool { return e.deliveries(ep.ID)[0].State == StateSent })
	hits := rc.Hits()
	if last := hits[len(hits)-1]; last.Header.Get("X-Xr-Event-Id") != firstID {
		t.Fatalf("replay changed the event id")
	}
}

func TestDisabledEndpointGetsNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	on := newReceiver(t, nil)
	off := newReceiver(t, nil)
	epOn := e.endpoint("on", on.URL, []string{"user.created"}, false)
	epOff := e.endpoint("off", off.URL, nil, true)
	if _, err := UpdateEndpoint(context.Background(), e.Act, epOff.ID, EndpointInput{Enabled: app.Opt[bool]{Set: true, V: false}}); err != nil {
		t.Fatal(err)
	}
	e.run()
	e.emit("user.created", map[string]any{"id": 1})
	xrtest.Eventually(t, "enabled endpoint", func() bool { return len(on.Hits()) == 1 })
	// The enabled endpoint's delivery was queued in the transaction that
	// fanned the event out to every endpoint (DispatchTenant): had the
	// disabled one been chosen, its delivery row would exist by now, and a
	// hit needs one.
	if len(off.Hits()) != 0 || len(e.deliveries(epOff.ID)) != 0 {
		t.Fatal("disabled endpoint got a delivery")
	}
	if _, err := TestEndpoint(context.Background(), e.Act, epOff.ID); app.AsError(err) == nil || app.AsError(err).Reason != "endpoint_disabled" {
		t.Fatalf("test on a disabled endpoint: %v", err)
	}
	_ = epOn
}

func TestRestartMidRetryResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fastRetries(e, 1500*time.Millisecond)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.WriteHeader(502)
		}
	})
	ep := e.endpoint("crm", rc.URL, []string{"card.redeemed"}, false)
	stop := e.run()
	e.emit("card.redeemed", map[string]any{"card_id": 9})
	xrtest.Eventually(t, "first failure", func() bool {
		d := e.deliveries(ep.ID)
		return len(d) == 1 && d[0].State == StateFailed
	})
	stop()
	if d := e.deliveries(ep.ID)[0]; d.Attempts != 1 || d.NextAttemptAt.IsZero() {
		t.Fatalf("before restart %+v", d)
	}

	e.reopen()
	e.run()
	xrtest.Eventually(t, "sent after restart", func() bool { return e.deliveries(ep.ID)[0].State == StateSent })
	hits := rc.Hits()
	if len(hits) != 2 || hits[0].Header.Get("X-Xr-Event-Id") != hits[1].Header.Get("X-Xr-Event-Id") {
		t.Fatalf("%d hits", len(hits))
	}
	if d := e.deliveries(ep.ID)[0]; d.Attempts != 2 {
		t.Fatalf("after restart %+v", d)
	}
}

// A receiver that hangs holds one worker at most: another endpoint's
// deliveries go out while it hangs, even with more events queued for the
// hung endpoint than the runner has workers.
func TestSlowReceiverDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	// The hung receiver is held for the whole wait, and its attempts never
	// time out within it: if a hung endpoint could hold the runner's
	// workers, the fast endpoint would never get its deliveries.
	e := newEnv(t)
	SetAttemptTimeout(e.A, time.Minute)
	release := make(chan struct{})
	slow := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	var released sync.Once
	t.Cleanup(func() { released.Do(func() { close(release) }) })
	fast := newReceiver(t, nil)
	epSlow := e.endpoint("slow", slow.URL, nil, true)
	e.endpoint("fast", fast.URL, nil, true)
	e.run()
	const events = 6 // more than the runner's 4 workers
	for i := range events {
		e.emit("user.updated", map[string]any{"id": i})
	}
	xrtest.Eventually(t, "fast endpoint", func() bool { return len(fast.Hits()) == events })
	if n := len(slow.Hits()); n != 1 {
		t.Fatalf("hung endpoint has %d attempts in flight, want 1", n)
	}
	released.Do(func() { close(release) })
	xrtest.Eventually(t, "slow endpoint drained", func() bool {
		n := 0
		for _, d := range e.deliveries(epSlow.ID) {
			if d.State == StateSent {
				n++
			}
		}
		return n == events
	})
}

func TestAttemptTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	SetAttemptTimeout(e.A, 300*time.Millisecond)
	fastRetries(e, time.Hour)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	})
	ep := e.endpoint("crm", rc.URL, nil, true)
	stop := e.run()
	e.emit("session.started", map[string]any{"id": 1})
	xrtest.Eventually(t, "failed attempt", func() bool {
		d := e.deliveries(ep.ID)
		return len(d) == 1 && d[0].State == StateFailed
	})
	stop()
	SetAttemptTimeout(e.A, AttemptTimeout)
	d := e.deliveries(ep.ID)[0]
	if !strings.HasPrefix(d.LastError, "timeout") || d.ResponseCode != nil || d.NextAttemptAt.IsZero() {
		t.Fatalf("delivery %+v", d)
	}
}

func TestDeleteStopsQueuedDeliveries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fastRetries(e, time.Hour)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	ep := e.endpoint("crm", rc.URL, nil, true)
	stop := e.run()
	e.emit("ticket.created", map[string]any{"id": 1})
	xrtest.Eventually(t, "failed", func() bool {
		d := e.deliveries(ep.ID)
		return len(d) == 1 && d[0].State == StateFailed
	})
	stop()
	if err := DeleteEndpoint(context.Background(), e.Act, ep.ID); err != nil {
		t.Fatal(err)
	}
	d := e.deliveries(ep.ID)[0]
	if d.State != StateDead || d.LastError != "endpoint deleted" {
		t.Fatalf("delivery %+v", d)
	}
	var jobState string
	e.T.DB.R.QueryRow(`SELECT state FROM jobs WHERE kind = ?`, JobKind).Scan(&jobState)
	if jobState != "cancelled" {
		t.Fatalf("job %s", jobState)
	}
	if _, err := ReplayDelivery(context.Background(), e.Act, d.ID); app.AsError(err) == nil || app.AsError(err).Reason != "endpoint_deleted" {
		t.Fatalf("replay of a deleted endpoint's delivery: %v", err)
	}
}

func TestConnectTimeRefusal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t, nil)
	ep := e.endpoint("crm", rc.URL, nil, true) // saved while private egress was allowed
	e.A.Cfg.AllowPrivateEgress = false
	fastRetries(e, time.Hour)
	e.run()
	if _, err := TestEndpoint(context.Background(), e.Act, ep.ID); err != nil {
		t.Fatal(err)
	}
	xrtest.Eventually(t, "refused attempt", func() bool {
		d := e.deliveries(ep.ID)
		return len(d) == 1 && d[0].State == StateFailed
	})
	d := e.deliveries(ep.ID)[0]
	if !strings.Contains(d.LastError, "refused to connect to 127.0.0.1: loopback") || len(rc.Hits()) != 0 {
		t.Fatalf("delivery %+v, %d hits", d, len(rc.Hits()))
	}
	if d.EventType != TestEventType || !d.Synthetic {
		t.Fatalf("synthetic delivery %+v", d)
	}
}

func TestSecretRotationSignsWithBoth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t, nil)
	ep := e.endpoint("crm", rc.URL, nil, true)
	rot, err := RotateSecret(context.Background(), e.Act, ep.ID, RotateInput{})
	if err != nil {
		t.Fatal(err)
	}
	if rot.Secret == ep.Secret || rot.PreviousSecretExpiresAt.IsZero() {
		t.Fatalf("rotation %+v", rot)
	}
	e.run()
	TestEndpoint(context.Background(), e.Act, ep.ID)
	xrtest.Eventually(t, "delivery", func() bool { return len(rc.Hits()) == 1 })
	h := rc.Hits()[0]
	ts := h.Header.Get("X-Xr-Timestamp")
	if got, want := h.Header.Get("X-Xr-Signature"), Sign(rot.Secret, ts, h.Body)+","+Sign(ep.Secret, ts, h.Body); got != want {
		t.Fatalf("signature %q, want %q", got, want)
	}
	// Without grace the old secret stops at once.
	rot2, _ := RotateSecret(context.Background(), e.Act, ep.ID, RotateInput{GraceSeconds: app.Opt[int]{Set: true, V: 0}})
	TestEndpoint(context.Background(), e.Act, ep.ID)
	xrtest.Eventually(t, "delivery", func() bool { return len(rc.Hits()) == 2 })
	h = rc.Hits()[1]
	if got := h.Header.Get("X-Xr-Signature"); got != Sign(rot2.Secret, h.Header.Get("X-Xr-Timestamp"), h.Body) {
		t.Fatalf("signature %q", got)
	}
}

func TestBackoffSchedule(t *testing.T) {
	t.Parallel()
	want := []time.Duration{20 * time.Second, time.Minute, 3 * time.Minute, 9 * time.Minute, 27 * time.Minute, 81 * time.Minute, 243 * time.Minute}
	for i, w := range want {
		if got := Backoff(DefaultRetryBase, i+1); got != w {
			t.Errorf("after attempt %d: %s, want %s", i+1, got, w)
		}
		for range 20 {
			if j := jittered(w); j < w*8/10 || j > w*12/10 {
				t.Fatalf("jitter %s of %s", j, w)
			}
		}
	}
	if Backoff(DefaultRetryBase, 20) != retryCap {
		t.Fatal("no cap")
	}
}

// An event written without waking the dispatcher (another process, such
// as the CLI, wrote it) is found by the periodic poll.
func TestPollFindsEventsWrittenElsewhere(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t, nil)
	e.endpoint("crm", rc.URL, []string{"manager.suspended"}, false)
	e.run()
	time.Sleep(100 * time.Millisecond) // let the first sweep pass
	err := e.T.Write(context.Background(), func(tx *sql.Tx) error {
		return app.Emit(context.Background(), tx, "manager.suspended", map[string]any{"id": 4})
	})
	if err != nil {
		t.Fatal(err)
	}
	xrtest.Eventually(t, "polled delivery", func() bool { return len(rc.Hits()) == 1 })
}
