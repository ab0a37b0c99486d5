package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	lradius "layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"

	"xr/internal/xrtest"
)

// Failover with two xr processes on loopback and a file:// replica: the
// primary is killed (-9) under mixed load (Access-Requests, accounting, API
// deposits); the standby answers every Access-Request while alone and
// journals the accounting; xr promote makes it the primary without a
// restart, charging the journal's usage exactly once; the old primary,
// started again with --replicate-to the same replica, is fenced.
func TestPromoteStandbyAfterPrimaryKilled(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	bin := buildXR(t)
	pdata, sdata, rdir := filepath.Join(work, "primary"), filepath.Join(work, "standby"), filepath.Join(work, "replica")
	primary, api, tok := startPrimary(t, bin, pdata, work, rdir)
	api.do("POST", "/admin/profiles", tok, map[string]any{"name": "Home", "price": 10, "duration_days": 30}, 201)
	erin := userID(t, api.do("POST", "/users", tok, map[string]any{"username": "erin", "password": "erin-pw", "profile_id": 1, "expiration": "2099-01-01"}, 201))
	standby := startXR(t, bin, sdata, work, "standby", "--standby-of", "file://"+rdir)
	xrtest.Eventually(t, "the standby accepts erin", func() bool {
		return accessCode(t, standby.auth, nasSecret, "erin", "erin-pw") == lradius.CodeAccessAccept
	})

	// Mixed load on the primary until it is killed: logins, erin's
	// session growing by Interim-Updates, deposits with request ids.
	const mb = 1_000_000
	var (
		mu         sync.Mutex
		acked      []string // deposit request ids the primary answered 2xx
		lastCharge uint64   // erin's counters in the last Interim the primary acknowledged
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		client := &http.Client{Timeout: 2 * time.Second}
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = tryExchange(primary.auth, accessRequest("erin", "erin-pw"))
			if c, err := tryExchange(primary.acct, acctRecord("erin", "erin-1", rfc2866.AcctStatusType_Value_InterimUpdate, uint64(i)*mb, uint32(i))); err == nil && c == lradius.CodeAccountingResponse {
				mu.Lock()
				lastCharge = uint64(i) * mb
				mu.Unlock()
			}
			rid := fmt.Sprintf("dep-%d", i)
			body, _ := json.Marshal(map[string]any{"amount": 1, "request_id": rid})
			req, _ := http.NewRequest("POST", fmt.Sprintf("http://%s/api/v1/users/%d/deposit", primary.http, erin), bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+tok)
			if res, err := client.Do(req); err == nil {
				if res.StatusCode == 200 {
					mu.Lock()
					acked = append(acked, rid)
					mu.Unlock()
				}
				res.Body.Close()
			}
		}
	}()
	xrtest.Eventually(t, "load acknowledged by the primary", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 20 && lastCharge >= 20*mb
	})
	// Some of it has reached the standby (the rest is what a kill loses:
	// the primary ships each second).
	sapi := &testAPI{t: t, base: "http://" + standby.http}
	replicated := func() (balance float64, used int64) {
		var u struct {
			Data struct {
				Balance   float64 `json:"balance"`
				UsedBytes int64   `json:"used_bytes"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sapi.do("GET", fmt.Sprintf("/users/%d", erin), tok, nil, 200), &u); err != nil {
			t.Fatal(err)
		}
		return u.Data.Balance, u.Data.UsedBytes
	}
	xrtest.Eventually(t, "deposits and usage on the standby", func() bool { b, u := replicated(); return b >= 10 && u >= 10*mb })
	primary.kill(t)
	close(stop)
	wg.Wait()

	// Alone, the standby answers every Access-Request and journals
	// erin's session to its end.
	for range 5 {
		if c := accessCode(t, standby.auth, nasSecret, "erin", "erin-pw"); c != lradius.CodeAccessAccept {
			t.Fatalf("erin on the standby without its primary: %v", c)
		}
	}
	final := lastCharge + 7*mb
	for _, st := range []rfc2866.AcctStatusType{rfc2866.AcctStatusType_Value_InterimUpdate, rfc2866.AcctStatusType_Value_Stop} {
		if c := exchange(t, standby.acct, acctRecord("erin", "erin-1", st, final, 100_000)); c != lradius.CodeAccountingResponse {
			t.Fatalf("accounting %v on the standby: %v", st, c)
		}
	}

	out, err := exec.Command(bin, "--data", sdata, "promote").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "promoted") || !strings.Contains(string(out), "generation 2") {
		t.Fatalf("xr promote: %v\n%s", err, out)
	}
	_, usedBefore := replicated()
	xrtest.Eventually(t, "the promoted box serves writes", func() bool {
		res, err := http.Get(sapi.base + "/readyz")
		if err != nil {
			return false
		}
		b, _ := readAll(res)
		return res.StatusCode == 200 && !bytes.Contains(b, []byte(`"standby"`))
	})

	t.Run("usage taken while alone is charged exactly once", func(t *testing.T) {
		var u struct {
			Data struct {
				UsedBytes int64 `json:"used_bytes"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sapi.do("GET", fmt.Sprintf("/users/%d", erin), tok, nil, 200), &u); err != nil {
			t.Fatal(err)
		}
		// The session's counters are cumulative: charged once, erin's
		// usage is exactly the Stop's (what the primary charged before it
		// died, plus the growth the standby journaled); the journal's
		// records charged again in full would add usedBefore.
		if u.Data.UsedBytes != int64(final) {
			t.Fatalf("erin's used_bytes = %d, want %d (the session's total, charged once; %d were replicated before the kill)", u.Data.UsedBytes, final, usedBefore)
		}
		var s struct {
			Data []struct {
				AcctSessionID string `json:"acct_session_id"`
				In            int64  `json:"input_octets"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sapi.do("GET", fmt.Sprintf("/users/%d/sessions", erin), tok, nil, 200), &s); err != nil {
			t.Fatal(err)
		}
		if len(s.Data) != 1 || s.Data[0].AcctSessionID != "erin-1" || s.Data[0].In != int64(final) {
			t.Fatalf("erin's closed sessions = %+v, want erin-1 once with %d bytes in", s.Data, final)
		}
		// A second application finds nothing new (exactly once on a retry).
		b, _ := os.ReadFile(filepath.Join(sdata, "standby", "promoted.json"))
		if !bytes.Contains(b, []byte(`"records":2`)) {
			t.Fatalf("promotion record: %s (want the 2 journaled records applied)", b)
		}
	})

	t.Run("deposits acknowledged by the primary: on the promoted box or counted lost", func(t *testing.T) {
		balance := func() float64 {
			var u struct {
				Data struct {
					Balance float64 `json:"balance"`
				} `json:"data"`
			}
			if err := json.Unmarshal(sapi.do("GET", fmt.Sprintf("/users/%d", erin), tok, nil, 200), &u); err != nil {
				t.Fatal(err)
			}
			return u.Data.Balance
		}
		before := balance()
		// Each acknowledged deposit sent again with its request id: one
		// the promoted box holds answers its stored result and adds
		// nothing; one it lacks (shipped after the replica's last
		// second: the RPO) is applied now and counted lost.
		for _, rid := range acked {
			sapi.do("POST", fmt.Sprintf("/users/%d/deposit", erin), tok, map[string]any{"amount": 1, "request_id": rid}, 200)
		}
		lost := balance() - before
		t.Logf("RPO: %.0f of %d deposits acknowledged by the primary were lost by its kill -9", lost, len(acked))
		if lost < 0 || lost > float64(len(acked)) || balance() < float64(len(acked)) {
			t.Fatalf("balance %v before the replay, %v after, for %d acknowledged deposits", before, balance(), len(acked))
		}
	})

	t.Run("the old primary, started again, is fenced and stores nothing", func(t *testing.T) {
		old := startXR(t, bin, pdata, work, "old-primary", "--replicate-to", "file://"+rdir)
		oapi := &testAPI{t: t, base: "http://" + old.http}
		body := oapi.do("POST", "/users", tok, map[string]any{"username": "zoe", "password": "zoe-pw", "profile_id": 1}, 503)
		if !bytes.Contains(body, []byte(`"ERR_MAINTENANCE"`)) || !bytes.Contains(body, []byte(`"reason":"fenced"`)) {
			t.Fatalf("a write on the old primary: %s", body)
		}
		for _, a := range []*testAPI{oapi, sapi} {
			if list := a.do("GET", "/users", tok, nil, 200); bytes.Contains(list, []byte(`"zoe"`)) {
				t.Fatalf("zoe was stored (%s)", a.base)
			}
		}
		if !strings.Contains(string(oapi.do("GET", "/metrics", "", nil, 200)), "xr_replication_fenced 1") {
			t.Error("/metrics of the old primary does not say it is fenced")
		}
		// The promoted box replicates under generation 2.
		xrtest.Eventually(t, "generation 2 in the replica", func() bool {
			_, err := os.Stat(filepath.Join(rdir, "g2", "instance.db"))
			return err == nil
		})
	})
}

// userID reads data.id from a creation's answer.
func userID(t *testing.T, body []byte) int64 {
	t.Helper()
	var v struct {
		Data struct {
			ID int64 `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Data.ID == 0 {
		t.Fatalf("no id in %s (%v)", body, err)
	}
	return v.Data.ID
}

func accessRequest(user, pw string) *lradius.Packet {
	p := lradius.New(lradius.CodeAccessRequest, []byte(nasSecret))
	_ = rfc2865.UserName_SetString(p, user)
	_ = rfc2865.UserPassword_SetString(p, pw)
	return p
}

// acctRecord is an accounting record of user's session sid with bytes in
// (nothing out) and secs.
func acctRecord(user, sid string, st rfc2866.AcctStatusType, bytes uint64, secs uint32) *lradius.Packet {
	p := lradius.New(lradius.CodeAccountingRequest, []byte(nasSecret))
	_ = rfc2865.UserName_SetString(p, user)
	_ = rfc2866.AcctStatusType_Set(p, st)
	_ = rfc2866.AcctSessionID_SetString(p, sid)
	_ = rfc2866.AcctInputOctets_Set(p, rfc2866.AcctInputOctets(bytes))
	_ = rfc2866.AcctSessionTime_Set(p, rfc2866.AcctSessionTime(secs))
	return p
}

// tryExchange is exchange for a goroutine: the error instead of a failure.
func tryExchange(addr string, p *lradius.Packet) (lradius.Code, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	res, err := (&lradius.Client{Retry: 300 * time.Millisecond}).Exchange(ctx, p, addr)
	if err != nil {
		return 0, err
	}
	return res.Code, nil
}

func readAll(res *http.Response) ([]byte, error) {
	defer res.Body.Close()
	var b bytes.Buffer
	_, err := b.ReadFrom(res.Body)
	return b.Bytes(), err
}

func TestPromoteAfterNeedsAStandby(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    serveOpts
		want string
	}{
		{"off", serveOpts{}, ""},
		{"standby", serveOpts{standbyOf: "file:///r", promoteAfter: 30 * time.Second}, ""},
		{"primary", serveOpts{replicateTo: "file:///r", promoteAfter: 30 * time.Second}, "only a standby"},
		{"too short", serveOpts{standbyOf: "file:///r", promoteAfter: time.Second}, "at least 3s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.checkPromoteAfter()
			if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("checkPromoteAfter = %v, want %q", err, tc.want)
			}
		})
	}
}

// probe sends one Access-Request and one HTTP request to p every 20 ms,
// each once (no retry), until stop, and records those not answered.
type probe struct {
	stopc  chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	sent   int
	failed []string
}

func startProbe(t *testing.T, p *xrProcess, user, pw string) *probe {
	t.Helper()
	pr := &probe{stopc: make(chan struct{})}
	fail := func(what string, err error) {
		pr.mu.Lock()
		pr.failed = append(pr.failed, fmt.Sprintf("%s: %v", what, err))
		pr.mu.Unlock()
	}
	client := &http.Client{Timeout: 15 * time.Second}
	pr.wg.Add(1)
	go func() {
		defer pr.wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-pr.stopc:
				return
			case <-tick.C:
			}
			pr.mu.Lock()
			pr.sent += 2
			pr.mu.Unlock()
			pr.wg.Add(2)
			go func() {
				defer pr.wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				defer cancel()
				res, err := (&lradius.Client{}).Exchange(ctx, accessRequest(user, pw), p.auth)
				if err == nil && res.Code != lradius.CodeAccessAccept {
					err = fmt.Errorf("answered %v", res.Code)
				}
				if err != nil {
					fail("Access-Request", err)
				}
			}()
			go func() {
				defer pr.wg.Done()
				res, err := client.Get("http://" + p.http + "/healthz")
				if err == nil {
					res.Body.Close()
				}
				if err != nil {
					fail("GET /healthz", err)
				}
			}()
		}
	}()
	return pr
}

// stop ends the probe once every request sent is answered or failed.
func (pr *probe) stop() (sent int, failed []string) {
	close(pr.stopc)
	pr.wg.Wait()
	return pr.sent, pr.failed
}
