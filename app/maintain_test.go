package app

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"testing"
	"time"
)

// Housekeeping removes old rows and keeps everything still needed: recent
// idempotency keys (30 days), undispatched events, queued jobs, live
// sessions, and every ledger row.
func TestMaintainPrunesOnlyWhatIsDone(t *testing.T) {
	t.Parallel()
	a, err := Open(Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	if _, _, err := a.CreateTenant(ctx, NewTenant{Slug: "m1", Name: "M", AdminUsername: "owner", AdminPassword: "Owner-pass-1"}); err != nil {
		t.Fatal(err)
	}
	ten, release, _ := a.Acquire("m1")
	defer release()
	old := FormatTime(time.Now().AddDate(0, 0, -40))
	recent := FormatTime(time.Now().AddDate(0, 0, -3))
	err = ten.Write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`INSERT INTO idempotency(key, subject, outcome, created_at) VALUES ('old', 's', '{}', '` + old + `'), ('new', 's', '{}', '` + recent + `')`,
			`INSERT INTO events(event_id, type, data, created_at, dispatched) VALUES ('e1', 'user.created', '{}', '` + old + `', 1), ('e2', 'user.created', '{}', '` + old + `', 0), ('e3', 'user.created', '{}', '` + recent + `', 1)`,
			`INSERT INTO jobs(kind, run_at, state, created_at, updated_at, finished_at) VALUES ('x', '` + old + `', 'done', '` + old + `', '` + old + `', '` + old + `'), ('x', '` + old + `', 'queued', '` + old + `', '` + old + `', NULL)`,
			`INSERT INTO auth_sessions(jti, manager_id, audience, created_at, expires_at) VALUES ('gone', 1, 'staff', '` + old + `', '` + old + `'), ('live', 1, 'staff', '` + old + `', '2999-01-01 00:00:00')`,
		} {
			if _, err := tx.Exec(q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Maintain(ctx, ten)
	if err != nil {
		t.Fatal(err)
	}
	if r.Idempotency != 1 || r.Events != 1 || r.Jobs != 1 || r.Sessions != 1 {
		t.Fatalf("pruned %+v", r)
	}
	for q, want := range map[string]int{
		`SELECT COUNT(*) FROM idempotency WHERE key = 'new'`:        1,
		`SELECT COUNT(*) FROM events WHERE event_id IN ('e2','e3')`: 2,
		`SELECT COUNT(*) FROM jobs WHERE state = 'queued'`:          1,
		`SELECT COUNT(*) FROM auth_sessions WHERE jti = 'live'`:     1,
	} {
		var n int
		ten.DB.R.QueryRow(q).Scan(&n)
		if n != want {
			t.Errorf("%s = %d, want %d", q, n, want)
		}
	}
}
