package backups

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"xr/app"
	"xr/app/subs"
	"xr/internal/xrtest"
)

func newEnv(t testing.TB) (*app.App, *app.Tenant, *app.Actor) {
	t.Helper()
	a := xrtest.TenantApp(t, "acme", subs.Module, Module)
	ten := xrtest.Acquire(t, a, "acme")
	return a, ten, xrtest.System(t, ten)
}

// A backup taken while a goroutine keeps depositing restores to a
// consistent file that holds every deposit acknowledged before the
// snapshot began.
func TestBackupDuringDepositsRestoresConsistent(t *testing.T) {
	t.Parallel()
	_, ten, act := newEnv(t)
	ctx := context.Background()
	var uid int64
	err := ten.Write(ctx, func(tx *sql.Tx) error {
		c, err := subs.CreateUser(ctx, tx, ten, subs.NewUser{Username: "dep", Password: "pw-dep-12345", ParentID: act.ManagerID})
		if err == nil {
			uid = c.ID
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		amount := xrtest.Money("1.5")
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			key := fmt.Sprintf("dep-%d", i)
			if _, err := subs.Deposit(ctx, act, uid, subs.DepositInput{Amount: &amount, RequestID: key}); err != nil {
				done <- err
				return
			}
			mu.Lock()
			acked = append(acked, key)
			mu.Unlock()
		}
	}()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	xrtest.Eventually(t, "deposits flowing", func() bool { return count() >= 20 })
	mu.Lock()
	before := append([]string{}, acked...)
	mu.Unlock()
	b, err := Take(ctx, ten, TakeOptions{Kind: KindManual})
	if err != nil {
		t.Fatal(err)
	}
	n := count()
	xrtest.Eventually(t, "a deposit after the backup", func() bool { return count() > n })
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b.Verification.State != "ok" {
		t.Fatalf("verification %+v", b.Verification)
	}
	res, err := Restore(ctx, act, b.ID, RestoreInput{RequestID: "restore-1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.SafetyBackupID == 0 {
		t.Fatal("no safety backup")
	}
	for _, key := range before {
		if xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM user_ledger WHERE request_id = ?`, key) != 1 {
			t.Fatalf("deposit %s acknowledged before the backup is missing", key)
		}
	}
	got := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM user_ledger WHERE kind = 'deposit'`)
	if got < int64(len(before)) || got >= int64(count()) {
		t.Fatalf("%d deposits restored; %d before the backup, %d in all", got, len(before), count())
	}
	// Consistent: the balance is the ledger's sum, and the last running
	// balance.
	if xrtest.Scalar(t, ten, `SELECT balance - (SELECT SUM(amount) FROM user_ledger WHERE user_id = users.id) FROM users WHERE id = ?`, uid) != 0 ||
		xrtest.Scalar(t, ten, `SELECT balance - (SELECT balance_after FROM user_ledger WHERE user_id = users.id ORDER BY id DESC LIMIT 1) FROM users WHERE id = ?`, uid) != 0 {
		t.Fatal("restored balance does not match its ledger")
	}
	if xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM idempotency WHERE key = ?`, before[len(before)-1]) != 1 {
		t.Fatal("idempotency record of a restored deposit is missing")
	}
	// The same request_id answers the first outcome without restoring again.
	again, err := Restore(ctx, act, b.ID, RestoreInput{RequestID: "restore-1"})
	if err != nil || !again.Replay || again.SafetyBackupID != res.SafetyBackupID {
		t.Fatalf("replay %+v %v", again, err)
	}
}

// The scheduled backup runs on the schedule's clock and prunes by
// retention: the newest of each of the last keep_daily days, the newest
// of each of the last keep_weekly ISO weeks; manual backups stay.
func TestScheduledBackupsPruneByRetention(t *testing.T) {
	t.Parallel()
	a, ten, act := newEnv(t)
	ctx := context.Background()
	now := mustParse(t, "2026-03-02 12:00:00") // Monday
	app.SetScheduleClock(a, func() time.Time { return now })
	manual, err := Take(ctx, ten, TakeOptions{Kind: KindManual})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PutSchedule(ctx, act, ScheduleConfig{Enabled: true, Frequency: "daily", Time: "01:00", KeepDaily: 1, KeepWeekly: 2}); err != nil {
		t.Fatal(err)
	}
	for _, day := range []string{"2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06", "2026-03-09"} {
		now = mustParse(t, day+" 01:00:10")
		if n, err := a.Jobs.RunDue(ctx, "acme", now); err != nil || n != 1 {
			t.Fatalf("%s: ran %d (%v)", day, n, err)
		}
		if st := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM jobs WHERE kind = ? AND state = 'failed'`, ScheduledKind); st != 0 {
			t.Fatalf("%s: a scheduled backup failed", day)
		}
	}
	list, err := List(ctx, act)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, b := range list {
		if b.Kind == KindScheduled {
			kept = append(kept, b.CreatedAt.Format("2006-01-02"))
			if _, err := os.Stat(b.path); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fmt.Sprint(kept) != "[2026-03-09 2026-03-06]" {
		t.Fatalf("kept %v", kept)
	}
	if _, err := getBackup(ctx, ten, manual.ID); err != nil {
		t.Fatal("the manual backup was pruned")
	}
	ents, _ := os.ReadDir(Dir(a, "acme"))
	if len(ents) != 3 {
		t.Fatalf("%d files in the backup directory, want 3", len(ents))
	}
	v, _ := GetSchedule(ctx, act)
	if app.FormatTime(v.NextRunAt.Time) != "2026-03-10 01:00:00" || app.FormatTime(v.LastRunAt.Time) != "2026-03-09 01:00:10" {
		t.Fatalf("schedule %+v", v)
	}
}

func TestDownloadTicketSingleUseAndExpiring(t *testing.T) {
	t.Parallel()
	a, ten, act := newEnv(t)
	ctx := context.Background()
	b, err := Take(ctx, ten, TakeOptions{Kind: KindManual})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := CreateTicket(ctx, act, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.Inst.R.QueryRow(`SELECT COUNT(*) FROM backup_tickets WHERE token_hash = ?`, app.SHA256(tk.Token)).Scan(&n); err != nil || n != 1 {
		t.Fatalf("stored hashed: %d %v", n, err)
	}
	if _, err := redeemTicket(ctx, ten, tk.Token, tk.ExpiresAt.Add(time.Second)); app.AsError(err).Reason != "download_ticket_invalid" {
		t.Fatalf("an expired ticket: %v", err)
	}
	f, err := RedeemTicket(ctx, ten, tk.Token)
	if err != nil || f.Size != b.Size {
		t.Fatalf("%+v %v", f, err)
	}
	if _, err := RedeemTicket(ctx, ten, tk.Token); app.AsError(err).Reason != "download_ticket_invalid" {
		t.Fatalf("a used ticket: %v", err)
	}
}

func mustParse(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := app.ParseTime(s, false)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// exclude_closed_sessions drops closed sessions only; the manifest counts
// what the file holds; a stored file changed afterwards fails Verify.
func TestBackupExcludeClosedSessionsAndVerify(t *testing.T) {
	t.Parallel()
	_, ten, _ := newEnv(t)
	ctx := context.Background()
	xrtest.Exec(t, ten, `INSERT INTO radius_sessions(acct_session_id, username, start_time, stop_time) VALUES ('a', 'u', '2026-01-01 00:00:00', '2026-01-01 01:00:00'),
		('b', 'u', '2026-01-01 00:00:00', NULL)`)
	b, err := Take(ctx, ten, TakeOptions{Kind: KindManual, ExcludeClosedSessions: true})
	if err != nil {
		t.Fatal(err)
	}
	if b.Manifest.RowCounts["radius_sessions"] != 1 || !b.Manifest.ExcludeClosedSessions || b.Verification.State != "ok" {
		t.Fatalf("%v %+v", b.Manifest.RowCounts["radius_sessions"], b.Verification)
	}
	if xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM radius_sessions`) != 2 {
		t.Fatal("the live file lost sessions")
	}
	m := b.Manifest
	m.RowCounts = map[string]int64{}
	for k, v := range b.Manifest.RowCounts {
		m.RowCounts[k] = v
	}
	m.RowCounts["users"]++
	if v := Verify(ctx, b.path, &m); v.State != "failed" || v.Error == "" {
		t.Fatalf("a wrong count passed: %+v", v)
	}
	raw, err := os.ReadFile(b.path)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-3] ^= 0x55
	if err := os.WriteFile(b.path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if v := Verify(ctx, b.path, &b.Manifest); v.State != "failed" {
		t.Fatalf("a changed file passed: %+v", v)
	}
}

// Uploads: a plain tenant file (xr backup) and a gzip file are accepted
// and stored compressed; past the limit is 400 upload_too_large, empty is
// file_required; each refusal leaves nothing.
func TestUploadFormatsAndLimits(t *testing.T) {
	t.Parallel()
	a, ten, act := newEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	plain := dir + "/acme.db"
	if err := a.BackupTenant(ctx, ten, plain); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	for name, body := range map[string][]byte{"plain": raw, "gzip": gz.Bytes()} {
		b, err := Upload(ctx, act, bytes.NewReader(body), 0, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b.Kind != KindUploaded || b.Verification.State != "ok" || b.Manifest.TenantSlug != "acme" {
			t.Fatalf("%s: %+v", name, b)
		}
	}
	before, _ := os.ReadDir(Dir(a, "acme"))
	_, err = Upload(ctx, act, bytes.NewReader(raw), int64(len(raw)-1), "")
	xrtest.WantReason(t, err, 400, "upload_too_large")
	_, err = Upload(ctx, act, bytes.NewReader(nil), 0, "")
	xrtest.WantReason(t, err, 400, "file_required")
	after, _ := os.ReadDir(Dir(a, "acme"))
	if len(after) != len(before) {
		t.Fatalf("%d files after refusals, %d before", len(after), len(before))
	}
	list, _ := List(ctx, act)
	if len(list) != 2 {
		t.Fatalf("%d records", len(list))
	}
}

// A copy encrypted for a destination comes back through upload only with
// its passphrase: none is 400 backup_passphrase_required, a wrong one 400
// backup_passphrase_wrong, each leaving nothing; the right one stores the
// plain backup, verified.
func TestUploadOfEncryptedCopyNeedsThePassphrase(t *testing.T) {
	t.Parallel()
	a, _, act := newEnv(t)
	ctx := context.Background()
	const pass = "correct horse battery staple"
	b, err := Take(ctx, act.Tenant, TakeOptions{Kind: KindManual})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(b.path)
	if err != nil {
		t.Fatal(err)
	}
	var enc bytes.Buffer
	err = encryptTo(&enc, f, pass, 10)
	f.Close()
	if err != nil || !IsEncrypted(enc.Bytes()) {
		t.Fatalf("encrypt: %v", err)
	}
	before, _ := os.ReadDir(Dir(a, "acme"))
	_, err = Upload(ctx, act, bytes.NewReader(enc.Bytes()), 0, "")
	xrtest.WantReason(t, err, 400, "backup_passphrase_required")
	_, err = Upload(ctx, act, bytes.NewReader(enc.Bytes()), 0, "not the passphrase")
	xrtest.WantReason(t, err, 400, "backup_passphrase_wrong")
	if after, _ := os.ReadDir(Dir(a, "acme")); len(after) != len(before) {
		t.Fatalf("%d files after refusals, %d before", len(after), len(before))
	}
	if list, _ := List(ctx, act); len(list) != 1 {
		t.Fatalf("%d records after refusals", len(list))
	}
	up, err := Upload(ctx, act, bytes.NewReader(enc.Bytes()), 0, pass)
	if err != nil {
		t.Fatal(err)
	}
	if up.Kind != KindUploaded || up.Verification.State != "ok" || up.Manifest.RowCounts["managers"] != b.Manifest.RowCounts["managers"] {
		t.Fatalf("%+v", up)
	}
}

// A scheduled backup is copied to the schedule's destinations once it is
// verified, and the list shows each copy's state (the destinations seam).
func TestScheduledBackupCopiedAndListed(t *testing.T) {
	t.Parallel()
	a, _, act := newEnv(t)
	ctx := context.Background()
	target := allowedDir(t, a, "acme")
	d, err := CreateDestination(ctx, act, DestinationInput{Name: "usb", Kind: "local", Config: map[string]any{"path": target}})
	if err != nil {
		t.Fatal(err)
	}
	// Dates after the real clock: the next scheduled run is not due when
	// the copy job is.
	now := mustParse(t, "2036-05-01 10:00:00")
	app.SetScheduleClock(a, func() time.Time { return now })
	if _, err := PutSchedule(ctx, act, ScheduleConfig{Enabled: true, Frequency: "daily", Time: "02:00", KeepDaily: 3, DestinationIDs: []int64{d.ID}}); err != nil {
		t.Fatal(err)
	}
	now = mustParse(t, "2036-05-02 02:00:05")
	if n, err := a.Jobs.RunDue(ctx, "acme", now); err != nil || n != 1 {
		t.Fatalf("ran %d (%v)", n, err)
	}
	// The copy job is queued at the real clock: run what is due now.
	xrtest.Eventually(t, "the copy", func() bool {
		if _, err := a.Jobs.RunDue(ctx, "acme", time.Now().UTC().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		list, err := List(ctx, act)
		if err != nil {
			t.Fatal(err)
		}
		return len(list) == 1 && len(list[0].Copies) == 1 && list[0].Copies[0].State == "done" && list[0].Copies[0].Name == "usb"
	})
	ents, _ := os.ReadDir(target)
	if len(ents) == 0 {
		t.Fatal("nothing at the destination")
	}
}
