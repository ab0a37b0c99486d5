package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/egress"
)

// JobKind is the job that drives one delivery.
const JobKind = "webhook.deliver"

// jobMaxAttempts is the job's own budget, spent only by infrastructure
// errors (the database); receiver failures are the delivery's budget and
// are retried through app.RetryLater.
const jobMaxAttempts = 5

type jobPayload struct {
	DeliveryID int64 `json:"delivery_id"`
	Gen        int64 `json:"gen"`
}

// AttemptTimeout bounds one delivery attempt: connect, TLS, request and
// response headers.
const AttemptTimeout = 10 * time.Second

// Retry schedule: after failed attempt n (1-based) the next one waits
// base·3^(n-1), at most retryCap, with ±20 % jitter. With the default base
// of 20 s and 8 attempts: 20 s, 1 min, 3 min, 9 min, 27 min, 81 min, 4 h 3 min
// (about 6 h from first to last attempt).
const (
	DefaultRetryBase = 20 * time.Second
	retryCap         = 6 * time.Hour
)

// SetRetryBase changes an App's first retry delay (tests run the schedule
// fast); it returns the previous value.
func SetRetryBase(a *app.App, d time.Duration) time.Duration {
	return time.Duration(hubFor(a).retryBase.Swap(int64(d)))
}

// SetAttemptTimeout changes an App's attempt timeout (tests); it returns
// the previous value.
func SetAttemptTimeout(a *app.App, d time.Duration) time.Duration {
	return time.Duration(hubFor(a).attemptTimeout.Swap(int64(d)))
}

func (h *hub) timeout() time.Duration { return time.Duration(h.attemptTimeout.Load()) }

// Backoff is the delay after failed attempt n (1-based) with a first delay
// of base, before jitter.
func Backoff(base time.Duration, n int) time.Duration {
	d := float64(base) * math.Pow(3, float64(max(n-1, 0)))
	if d > float64(retryCap) {
		return retryCap
	}
	return time.Duration(d)
}

func jittered(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// Clients: one per egress policy, shared by every tenant of the process.
// Redirects are never followed (a 3xx is a failed attempt) and proxies from
// the environment are ignored (the connect-time check must see the real
// destination).
var (
	strictClient  = newClient(false)
	privateClient = newClient(true)
)

func newClient(allowPrivate bool) *http.Client {
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            egress.SafeDialer(allowPrivate).DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    AttemptTimeout,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        60 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func clientFor(a *app.App) *http.Client {
	if a.Cfg.AllowPrivateEgress {
		return privateClient
	}
	return strictClient
}

// Sign is the signature of one delivery under secret: "v1=" followed by
// the hex HMAC-SHA256 of timestamp + "." + body.
func Sign(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte("."))
	m.Write(body)
	return "v1=" + hex.EncodeToString(m.Sum(nil))
}

// Body is the JSON a receiver gets.
type Body struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt app.Time        `json:"created_at"`
	Tenant    string          `json:"tenant"`
	Data      json.RawMessage `json:"data"`
}

// attemptPlan is what one attempt needs, read when it is claimed.
type attemptPlan struct {
	id, gen    int64
	attempt    int
	maxAttempt int
	url        string
	eventID    string
	eventType  string
	body       []byte
	secrets    []string
}

type sendResult struct {
	ok         bool
	code       *int
	ms         int64
	err        string
	retryAfter time.Duration
}

// runDelivery is the job handler. It never holds a worker longer than one
// attempt (≤ AttemptTimeout), and holds at most one worker per endpoint:
// while an endpoint has an attempt in flight in this process, its other
// deliveries park (RetryLater, without counting an attempt) and are woken
// one by one as the lane frees. A hung receiver thus costs one worker for
// ten seconds at a time and never delays another endpoint.
func runDelivery(ctx context.Context, jc *app.JobContext) (any, error) {
	var p jobPayload
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil || p.DeliveryID <= 0 {
		return map[string]string{"error": "bad payload"}, nil
	}
	t := jc.Tenant
	var state string
	var gen, endpointID int64
	var next app.Time
	err := t.DB.R.QueryRowContext(ctx, `SELECT state, gen, endpoint_id, next_attempt_at FROM webhook_deliveries WHERE id = ?`, p.DeliveryID).
		Scan(&state, &gen, &endpointID, &next)
	if errors.Is(err, sql.ErrNoRows) {
		return map[string]any{"delivery_id": p.DeliveryID, "state": "gone"}, nil
	}
	if err != nil {
		return nil, err
	}
	result := map[string]any{"delivery_id": p.DeliveryID, "state": state}
	if gen != p.Gen {
		result["superseded"] = true
		return result, nil
	}
	switch state {
	case StateSent, StateDead:
		return result, nil
	case StateQueued, StateFailed:
		if !next.IsZero() && next.After(t.Now()) {
			return nil, &app.RetryLater{At: next.Time, Reason: "next attempt"}
		}
	}
	h := hubFor(t.App)
	key := laneKey{t.Slug, endpointID}
	ok, waiting := h.acquire(key, jc.Job.ID)
	if !ok {
		park := min(h.timeout()*time.Duration(waiting+1)+5*time.Second, 10*time.Minute)
		return nil, &app.RetryLater{At: t.Now().Add(park), Reason: "waiting for the endpoint's attempt in flight"}
	}
	defer h.release(key)
	return attempt(ctx, t, p)
}

func attempt(ctx context.Context, t *app.Tenant, p jobPayload) (any, error) {
	plan, done, err := claimAttempt(ctx, t, p)
	if err != nil || done != nil {
		return done, err
	}
	res := send(ctx, clientFor(t.App), plan, hubFor(t.App).timeout())
	if !res.ok && ctx.Err() != nil {
		// Shutdown cut the attempt short: give it back uncounted; the job
		// is re-queued by the runner for the next start.
		err := t.Write(context.Background(), func(tx *sql.Tx) error {
			_, err := tx.Exec(`UPDATE webhook_deliveries SET state = 'queued', attempts = attempts - 1 WHERE id = ? AND gen = ? AND state = 'sending'`, p.DeliveryID, p.Gen)
			return err
		})
		// The runner drops the error of a job cut short by shutdown, so
		// this one is logged.
		if err != nil {
			t.App.Log.Error("give back interrupted webhook attempt", "tenant", t.Slug, "delivery", p.DeliveryID, "err", err)
		}
		return nil, ctx.Err()
	}
	return recordAttempt(t, plan, res)
}

// claimAttempt moves a due delivery to sending and counts the attempt. It
// returns a non-nil result instead of a plan when there is nothing to send
// (superseded, finished, or dead because its endpoint is gone, disabled or
// its secret unreadable).
func claimAttempt(ctx context.Context, t *app.Tenant, p jobPayload) (*attemptPlan, any, error) {
	var plan *attemptPlan
	var done any
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var state, lastErr, eventID, typ, data string
		var gen, endpointID int64
		var attempts, maxAttempts int
		var eventAt app.Time
		err := tx.QueryRowContext(ctx, `SELECT state, gen, endpoint_id, attempts, max_attempts, last_error, event_id, event_type, event_created_at, data
			FROM webhook_deliveries WHERE id = ?`, p.DeliveryID).Scan(&state, &gen, &endpointID, &attempts, &maxAttempts, &lastErr, &eventID, &typ, &eventAt, &data)
		if errors.Is(err, sql.ErrNoRows) {
			done = map[string]any{"delivery_id": p.DeliveryID, "state": "gone"}
			return nil
		}
		if err != nil {
			return err
		}
		if gen != p.Gen || (state != StateQueued && state != StateFailed && state != StateSending) {
			done = map[string]any{"delivery_id": p.DeliveryID, "state": state, "superseded": gen != p.Gen}
			return nil
		}
		dead := func(reason string) error {
			done = map[string]any{"delivery_id": p.DeliveryID, "state": StateDead}
			_, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = 'dead', last_error = ?, next_attempt_at = NULL WHERE id = ?`, reason, p.DeliveryID)
			return err
		}
		var url string
		var enabled bool
		var secret, prev []byte
		var prevUntil app.Time
		err = tx.QueryRowContext(ctx, `SELECT url, enabled, secret, prev_secret, prev_secret_until FROM webhook_endpoints WHERE id = ?`, endpointID).
			Scan(&url, &enabled, &secret, &prev, &prevUntil)
		if errors.Is(err, sql.ErrNoRows) {
			return dead("endpoint deleted")
		}
		if err != nil {
			return err
		}
		if !enabled {
			return dead("endpoint disabled")
		}
		if attempts >= maxAttempts {
			// Only after a crash in the middle of the last attempt.
			if lastErr == "" {
				lastErr = "attempt interrupted"
			}
			return dead(lastErr)
		}
		s, err := t.App.Keys.Open(secret)
		if err != nil {
			return dead("signing secret unreadable")
		}
		secrets := []string{string(s)}
		if prev != nil && prevUntil.After(t.Now()) {
			if ps, err := t.App.Keys.Open(prev); err == nil {
				secrets = append(secrets, string(ps))
			}
		}
		body, err := json.Marshal(Body{ID: eventID, Type: typ, CreatedAt: eventAt, Tenant: t.Slug, Data: json.RawMessage(data)})
		if err != nil {
			return dead("payload not JSON")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = 'sending', attempts = attempts + 1, url = ?, next_attempt_at = NULL WHERE id = ?`,
			url, p.DeliveryID); err != nil {
			return err
		}
		plan = &attemptPlan{id: p.DeliveryID, gen: p.Gen, attempt: attempts + 1, maxAttempt: maxAttempts, url: url,
			eventID: eventID, eventType: typ, body: body, secrets: secrets}
		return nil
	})
	return plan, done, err
}

// send makes one POST. 2xx is success; a 3xx (redirects are not followed),
// 4xx, 5xx, a refused address, a network error or the timeout are failures.
func send(ctx context.Context, c *http.Client, p *attemptPlan, timeout time.Duration) sendResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(p.body))
	if err != nil {
		return sendResult{err: "invalid url"}
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10) // the receiver checks it against its own clock
	sigs := make([]string, len(p.secrets))
	for i, s := range p.secrets {
		sigs[i] = Sign(s, ts, p.body)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "xr-webhooks/"+app.Version)
	req.Header.Set("X-Xr-Event-Id", p.eventID)
	req.Header.Set("X-Xr-Event-Type", p.eventType)
	req.Header.Set("X-Xr-Delivery-Id", strconv.FormatInt(p.id, 10))
	req.Header.Set("X-Xr-Attempt", strconv.Itoa(p.attempt))
	req.Header.Set("X-Xr-Timestamp", ts)
	req.Header.Set("X-Xr-Signature", strings.Join(sigs, ","))
	start := time.Now()
	resp, err := c.Do(req)
	ms := time.Since(start).Milliseconds()
	if err != nil {
		return sendResult{ms: ms, err: describe(err, timeout)}
	}
	// Drained only so the connection can be reused: the status code is the
	// outcome, a failed body read changes nothing.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	code := resp.StatusCode
	r := sendResult{code: &code, ms: ms}
	switch {
	case code >= 200 && code < 300:
		r.ok = true
	case code >= 300 && code < 400:
		r.err = fmt.Sprintf("HTTP %d: redirect not followed", code)
	default:
		r.err = fmt.Sprintf("HTTP %d", code)
		if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
				r.retryAfter = time.Duration(s) * time.Second
			}
		}
	}
	return r
}

// describe renders a transport error for last_error without the URL.
func describe(err error, timeout time.Duration) string {
	var re *egress.RefusedError
	if errors.As(err, &re) {
		return re.Error()
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Sprintf("timeout after %s", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	s := err.Error()
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// recordAttempt stores the outcome and tells the runner what is next: done
// (sent or dead) or run again at next_attempt_at.
func recordAttempt(t *app.Tenant, p *attemptPlan, r sendResult) (any, error) {
	now := t.Now()
	state := StateSent
	var next app.Time
	switch {
	case r.ok:
	case p.attempt >= p.maxAttempt:
		state = StateDead
	default:
		state = StateFailed
		d := jittered(Backoff(time.Duration(hubFor(t.App).retryBase.Load()), p.attempt))
		if r.retryAfter > d {
			d = min(r.retryAfter, retryCap)
		}
		next = app.T(now.Add(d))
	}
	var sentAt app.Time
	if r.ok {
		sentAt = app.T(now)
	}
	var code any
	if r.code != nil {
		code = *r.code
	}
	var applied int64
	err := t.Write(context.Background(), func(tx *sql.Tx) error {
		res, err := tx.Exec(`UPDATE webhook_deliveries SET state = ?, response_code = ?, response_ms = ?, last_error = ?, sent_at = COALESCE(?, sent_at), next_attempt_at = ?
			WHERE id = ? AND gen = ? AND state = 'sending'`, state, code, r.ms, r.err, sentAt, next, p.id, p.gen)
		if err != nil {
			return err
		}
		applied, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return nil, err
	}
	result := map[string]any{"delivery_id": p.id, "state": state, "attempts": p.attempt}
	if applied == 0 {
		result["superseded"] = true
		return result, nil
	}
	if state == StateFailed {
		return nil, &app.RetryLater{At: next.Time, Reason: r.err}
	}
	return result, nil
}

// Lanes: per (tenant, endpoint), at most one attempt in flight in this
// process; the jobs that found the lane busy wait in FIFO order.

type laneKey struct {
	slug     string
	endpoint int64
}

type lane struct {
	busy    bool
	waiting []int64 // job ids, oldest first
}

func (h *hub) acquire(k laneKey, jobID int64) (ok bool, waiting int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.lanes[k]
	if l == nil {
		l = &lane{}
		h.lanes[k] = l
	}
	idx := -1
	for i, id := range l.waiting {
		if id == jobID {
			idx = i
		}
	}
	if !l.busy {
		l.busy = true
		if idx >= 0 {
			l.waiting = append(l.waiting[:idx], l.waiting[idx+1:]...)
		}
		return true, 0
	}
	if idx < 0 {
		l.waiting = append(l.waiting, jobID)
		idx = len(l.waiting) - 1
	}
	return false, idx + 1
}

func (h *hub) release(k laneKey) {
	h.mu.Lock()
	l := h.lanes[k]
	l.busy = false
	hasWaiters := len(l.waiting) > 0
	if !hasWaiters {
		delete(h.lanes, k)
	}
	h.mu.Unlock()
	if hasWaiters {
		go h.wakeNext(k)
	}
}

// wakeNext moves the oldest parked job of a free lane to now. A job no
// longer queued (cancelled, done) is skipped for the next one. If a wake is
// lost (a restart), the park timeout brings the job back anyway.
func (h *hub) wakeNext(k laneKey) {
	t, release, err := h.a.Acquire(k.slug)
	if err != nil {
		return
	}
	defer release()
	for {
		h.mu.Lock()
		l := h.lanes[k]
		if l == nil || l.busy || len(l.waiting) == 0 {
			if l != nil && !l.busy && len(l.waiting) == 0 {
				delete(h.lanes, k)
			}
			h.mu.Unlock()
			return
		}
		jobID := l.waiting[0]
		l.waiting = l.waiting[1:]
		h.mu.Unlock()
		if wakeJob(t, jobID) {
			return
		}
	}
}

// wakeJob sets a parked job's run_at to now. A job that parked but whose
// RetryLater is not committed yet is still 'running': wait for it, for as
// long as a lease at most (under load the runner's write can take seconds,
// and a wake given up early would leave the job parked for its whole park
// time). It reports whether the job will run now.
func wakeJob(t *app.Tenant, jobID int64) bool {
	deadline := time.Now().Add(30 * time.Second)
	pause := 20 * time.Millisecond
	for {
		var n int64
		var state string
		err := t.Write(context.Background(), func(tx *sql.Tx) error {
			var err error
			if n, err = app.WakeJobs(context.Background(), tx, t.Now(), jobID); err != nil {
				return err
			}
			return tx.QueryRow(`SELECT state FROM jobs WHERE id = ?`, jobID).Scan(&state)
		})
		switch {
		case err != nil:
			return false
		case n > 0:
			return true
		case state != "running", time.Now().After(deadline):
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 500*time.Millisecond)
	}
}
