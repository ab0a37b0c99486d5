package web_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"xr/app"
	"xr/app/backups"
	"xr/app/subs"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// keysIn reads the idempotency keys of a plain tenant file.
func keysIn(t *testing.T, path string) map[string]bool {
	t.Helper()
	c, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, err := c.Query(`SELECT key FROM idempotency`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var k string
		rows.Scan(&k)
		out[k] = true
	}
	return out
}

// keysInBackup reads the idempotency keys of a stored backup.
func keysInBackup(t *testing.T, k *webtest.Kit, id int64) map[string]bool {
	t.Helper()
	f, err := backups.Open(context.Background(), k.System("acme"), id)
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dec, err := zstd.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	plain := filepath.Join(t.TempDir(), fmt.Sprintf("b%d.db", id))
	out, _ := os.Create(plain)
	if _, err := io.Copy(out, dec); err != nil {
		t.Fatal(err)
	}
	out.Close()
	return keysIn(t, plain)
}

// Deposits race restores: eight clients deposit without pause while the
// tenant is restored three times. Every deposit answered 200 is in the
// safety backup its restore took or in the final data; every other answer
// is 503 ERR_MAINTENANCE restore_in_progress or tenant_restored with a
// Retry-After, having written nothing.
func TestRestoreLosesNoAcknowledgedDeposit(t *testing.T) {
	t.Parallel()
	k := webtest.NewWith(t, app.Config{}, webtest.AllowAll{}, nil) // the clients outrun t_mutate
	tok := k.Owner("acme")
	ten := k.Acquire("acme")
	act := k.System("acme")
	ctx := context.Background()
	var uid int64
	if err := ten.Write(ctx, func(tx *sql.Tx) error {
		u, err := subs.CreateUser(ctx, tx, ten, subs.NewUser{Username: "dep", Password: "pw-dep-12345", ParentID: act.ManagerID})
		uid = u.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b0, err := backups.Take(ctx, ten, backups.TakeOptions{Kind: backups.KindManual})
	if err != nil || b0.Verification.State != "ok" {
		t.Fatalf("%v %+v", err, b0)
	}

	var mu sync.Mutex
	acked := map[string]bool{}
	refused := map[string]int{}
	var failures []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("w%d-%d", w, i)
				body, _ := json.Marshal(map[string]any{"amount": 1, "request_id": key})
				req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/users/%d/deposit", k.TS.URL, uid), bytes.NewReader(body))
				req.Host = "acme.xr.test"
				req.Header.Set("Authorization", "Bearer "+tok)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					return
				}
				var r webtest.Resp
				r.Status, r.Header = res.StatusCode, res.Header
				r.Body, _ = io.ReadAll(res.Body)
				res.Body.Close()
				json.Unmarshal(r.Body, &r.JSON)
				mu.Lock()
				switch {
				case r.Status == 200:
					acked[key] = true
				case r.Status == 503 && r.Code() == app.CodeMaintenance && r.Header.Get("Retry-After") != "" &&
					(r.Reason() == "restore_in_progress" || r.Reason() == "tenant_restored"):
					refused[r.Reason()]++
				default:
					failures = append(failures, fmt.Sprintf("%s: %d %s", key, r.Status, r.Body))
				}
				mu.Unlock()
			}
		}()
	}
	ackedNow := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	var safeties []int64
	for range 3 {
		want := ackedNow() + 30
		xrtest.Eventually(t, "deposits acknowledged between restores", func() bool { return ackedNow() >= want })
		r := k.Do("POST", "acme", fmt.Sprintf("/api/v1/admin/tools/backup/%d/restore", b0.ID), tok, map[string]any{})
		if r.Status != 200 {
			t.Fatalf("restore: %d %s", r.Status, r.Body)
		}
		safeties = append(safeties, int64(r.Data()["safety_backup_id"].(float64)))
	}
	want := ackedNow() + 30
	xrtest.Eventually(t, "deposits after the last restore", func() bool { return ackedNow() >= want })
	close(stop)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d unexpected answers, first: %s", len(failures), failures[0])
	}

	have := keysIn(t, ten.DB.Path)
	for _, id := range safeties {
		for key := range keysInBackup(t, k, id) {
			have[key] = true
		}
	}
	var lost []string
	for key := range acked {
		if !have[key] {
			lost = append(lost, key)
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d of %d acknowledged deposits are in no safety backup nor the restored data: %v", len(lost), len(acked), lost)
	}
	t.Logf("%d deposits acknowledged, all kept; refused: %v", len(acked), refused)
}

// Credentials issued before a restore are checked against the restored
// data: a session the backup holds keeps working, one issued after the
// backup stops (401 invalid_token); an API token likewise.
func TestRestoreChecksCredentialsAgainstTheRestoredData(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	kept := k.Owner("acme")
	keptToken, _ := idAPIToken(k, "acme", kept, map[string]any{"name": "kept", "full_access": true})
	b0, err := backups.Take(context.Background(), k.Acquire("acme"), backups.TakeOptions{Kind: backups.KindManual})
	if err != nil {
		t.Fatal(err)
	}
	gone := k.Owner("acme")
	goneToken, _ := idAPIToken(k, "acme", gone, map[string]any{"name": "gone", "full_access": true})
	for _, tok := range []string{kept, gone, keptToken, goneToken} {
		if r := k.Do("GET", "acme", "/api/v1/auth/me", tok, nil); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	if r := k.Do("POST", "acme", fmt.Sprintf("/api/v1/admin/tools/backup/%d/restore", b0.ID), gone, map[string]any{}); r.Status != 200 {
		t.Fatalf("restore: %d %s", r.Status, r.Body)
	}
	for _, tok := range []string{kept, keptToken} {
		if r := k.Do("GET", "acme", "/api/v1/auth/me", tok, nil); r.Status != 200 {
			t.Fatalf("kept: %d %s", r.Status, r.Body)
		}
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", gone, nil), 401, app.CodeUnauthorized, "invalid_token")
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", goneToken, nil), 401, app.CodeUnauthorized, "api_token_invalid")
}
