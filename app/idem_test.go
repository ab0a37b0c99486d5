package app

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestValidateRequestID(t *testing.T) {
	t.Parallel()
	ok := []string{"a", NewUUID(), strings.Repeat("k", 255), "order-42_retry.1", "XR-upper-is-not-the-prefix?",
		strings.Repeat("é", 255)} // 255 characters (510 bytes)
	for _, k := range ok {
		if err := ValidateRequestID(k, true); err != nil {
			t.Errorf("%q (%d chars): %v", k, len([]rune(k)), err)
		}
	}
	cases := map[string]string{
		"":                        "request_id_required",
		strings.Repeat("k", 256):  "request_id_too_long",
		strings.Repeat("é", 256):  "request_id_too_long",
		strings.Repeat("k", 5000): "request_id_too_long",
		"a:b":                     "request_id_reserved",
		":":                       "request_id_reserved",
		"a|b":                     "request_id_reserved",
		"xr-" + NewUUID():         "request_id_reserved",
		"xr-":                     "request_id_reserved",
	}
	for k, reason := range cases {
		e := fndErr(t, ValidateRequestID(k, true), 400, CodeValidation, reason)
		if e.Field != "request_id" {
			t.Errorf("%q: field %q", k, e.Field)
		}
	}
	// Optional keys: absent is fine (the server mints one), a bad one is not.
	if err := ValidateRequestID("", false); err != nil {
		t.Fatal(err)
	}
	fndErr(t, ValidateRequestID("a|b", false), 400, CodeValidation, "request_id_reserved")
	// A minted key can never collide with a client's: clients may not use its prefix.
	if m := MintRequestID(); !strings.HasPrefix(m, "xr-") || ValidateRequestID(m, true) == nil || m == MintRequestID() {
		t.Fatalf("MintRequestID %q", m)
	}
}

type fndOutcome struct {
	ID      int64  `json:"id"`
	Balance Money  `json:"balance"`
	Note    string `json:"note"`
}

// fndIdem runs one idempotent intent in its own write transaction, the way
// an app function does; the effect inserts a row and counts its runs.
func fndIdem(t *Tenant, key, subject string, runs *atomic.Int64, effectErr error) (fndOutcome, bool, error) {
	var out fndOutcome
	var replay bool
	err := t.Write(context.Background(), func(tx *sql.Tx) error {
		var err error
		out, replay, err = Idempotent(context.Background(), tx, Idem{Key: key, Subject: subject}, func() (fndOutcome, error) {
			runs.Add(1)
			if effectErr != nil {
				return fndOutcome{}, effectErr
			}
			r, err := tx.Exec(`INSERT INTO fnd_effects(subject) VALUES (?)`, subject)
			if err != nil {
				return fndOutcome{}, err
			}
			id, _ := r.LastInsertId()
			return fndOutcome{ID: id, Balance: Money(12345 * id), Note: "first"}, nil
		})
		return err
	})
	return out, replay, err
}

func TestIdempotentReplayAndConflict(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "idem")
	fndExec(t, tt, `CREATE TABLE fnd_effects(id INTEGER PRIMARY KEY, subject TEXT NOT NULL)`)
	var runs atomic.Int64

	first, replay, err := fndIdem(tt, "key-1", "users/5/deposit", &runs, nil)
	if err != nil || replay || first.ID != 1 || first.Balance != 12345 {
		t.Fatalf("first: %+v %v %v", first, replay, err)
	}
	// The outcome is stored beside the effect, in its transaction.
	if n := fndCount(t, tt, `SELECT COUNT(*) FROM idempotency WHERE key = 'key-1' AND subject = 'users/5/deposit'`); n != 1 {
		t.Fatalf("stored keys: %d", n)
	}

	// Replay: the stored outcome, replay=true, no second effect.
	again, replay, err := fndIdem(tt, "key-1", "users/5/deposit", &runs, nil)
	if err != nil || !replay || again != first {
		t.Fatalf("replay: %+v %v %v, want %+v", again, replay, err, first)
	}
	if runs.Load() != 1 || fndCount(t, tt, `SELECT COUNT(*) FROM fnd_effects`) != 1 {
		t.Fatalf("effect re-ran: runs %d", runs.Load())
	}

	// The replay is re-read from storage: change the stored outcome and the
	// replay answers what storage says.
	fndExec(t, tt, `UPDATE idempotency SET outcome = '{"id":1,"balance":99.5,"note":"stored"}' WHERE key = 'key-1'`)
	again, replay, _ = fndIdem(tt, "key-1", "users/5/deposit", &runs, nil)
	if !replay || again.Balance != 99500 || again.Note != "stored" {
		t.Fatalf("replay not read from storage: %+v", again)
	}

	// Same key on another subject: 409 request_id_conflict, nothing runs.
	_, _, err = fndIdem(tt, "key-1", "users/6/deposit", &runs, nil)
	fndErr(t, err, 409, CodeConflict, "request_id_conflict")
	if runs.Load() != 1 || fndCount(t, tt, `SELECT COUNT(*) FROM fnd_effects`) != 1 {
		t.Fatal("a conflicting key ran the effect")
	}

	// A custom conflict reason (activation_request_conflict).
	err = tt.Write(context.Background(), func(tx *sql.Tx) error {
		_, _, err := Idempotent(context.Background(), tx, Idem{Key: "key-1", Subject: "users/5/activation", ConflictReason: "activation_request_conflict"},
			func() (int, error) { runs.Add(1); return 1, nil })
		return err
	})
	fndErr(t, err, 409, CodeConflict, "activation_request_conflict")

	// Keys are per tenant: the same key in another tenant is a fresh intent.
	other := fndTenant(t, a, "idem-two")
	fndExec(t, other, `CREATE TABLE fnd_effects(id INTEGER PRIMARY KEY, subject TEXT NOT NULL)`)
	if _, replay, err := fndIdem(other, "key-1", "users/6/deposit", &runs, nil); err != nil || replay {
		t.Fatalf("other tenant: %v %v", replay, err)
	}
}

// A failing effect stores nothing: the key stays free and a retry runs.
func TestIdempotentEffectErrorStoresNothing(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "idem")
	fndExec(t, tt, `CREATE TABLE fnd_effects(id INTEGER PRIMARY KEY, subject TEXT NOT NULL)`)
	var runs atomic.Int64

	boom := ErrConflict("insufficient_balance")
	_, _, err := fndIdem(tt, "k", "users/1/withdraw", &runs, boom)
	if !errors.Is(err, boom) {
		t.Fatalf("effect error not returned as is: %v", err)
	}
	if n := fndCount(t, tt, `SELECT COUNT(*) FROM idempotency`); n != 0 {
		t.Fatalf("a failed effect stored its key (%d rows)", n)
	}

	// An effect that wrote and then failed leaves nothing either: the
	// transaction of the effect is the transaction of the key.
	err = tt.Write(context.Background(), func(tx *sql.Tx) error {
		_, _, err := Idempotent(context.Background(), tx, Idem{Key: "k", Subject: "users/1/withdraw"}, func() (int, error) {
			if _, err := tx.Exec(`INSERT INTO fnd_effects(subject) VALUES ('half')`); err != nil {
				return 0, err
			}
			return 0, ErrValidation("amount_too_large", "amount")
		})
		return err
	})
	fndErr(t, err, 400, CodeValidation, "amount_too_large")
	if fndCount(t, tt, `SELECT COUNT(*) FROM fnd_effects`) != 0 || fndCount(t, tt, `SELECT COUNT(*) FROM idempotency`) != 0 {
		t.Fatal("a refused effect left rows behind")
	}

	// The retry with the same key now runs for real.
	out, replay, err := fndIdem(tt, "k", "users/1/withdraw", &runs, nil)
	if err != nil || replay || out.ID == 0 {
		t.Fatalf("retry: %+v %v %v", out, replay, err)
	}
}

// Many goroutines using one key at once: the effect runs exactly once and
// everybody gets the same outcome.
func TestIdempotentConcurrentOneKey(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "idem")
	fndExec(t, tt, `CREATE TABLE fnd_effects(id INTEGER PRIMARY KEY, subject TEXT NOT NULL)`)
	var runs atomic.Int64
	const n = 32
	var wg sync.WaitGroup
	outs := make([]fndOutcome, n)
	replays := make([]bool, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			outs[i], replays[i], errs[i] = fndIdem(tt, "same-key", "pos/sales", &runs, nil)
		}(i)
	}
	close(start)
	wg.Wait()
	fresh := 0
	for i := 0; i < n; i++ {
		if errs[i] != nil {
			t.Fatalf("goroutine %d: %v", i, errs[i])
		}
		if !replays[i] {
			fresh++
		}
		if outs[i] != outs[0] {
			t.Fatalf("outcomes differ: %+v vs %+v", outs[i], outs[0])
		}
	}
	if runs.Load() != 1 || fresh != 1 || fndCount(t, tt, `SELECT COUNT(*) FROM fnd_effects`) != 1 {
		t.Fatalf("effect ran %d times, %d fresh answers", runs.Load(), fresh)
	}
}

func TestPruneIdempotencyKeepsThirtyDays(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "idem")
	old := FormatTime(time.Now().UTC().AddDate(0, 0, -31))
	recent := FormatTime(time.Now().UTC().AddDate(0, 0, -29))
	fndExec(t, tt,
		`INSERT INTO idempotency(key, subject, outcome, created_at) VALUES ('old','s','{}','`+old+`')`,
		`INSERT INTO idempotency(key, subject, outcome, created_at) VALUES ('recent','s','{}','`+recent+`')`)
	var n int64
	err := tt.Write(context.Background(), func(tx *sql.Tx) error {
		var err error
		n, err = PruneIdempotency(context.Background(), tx, time.Now().UTC(), 1) // asks for 1 day, gets the 30-day floor
		return err
	})
	if err != nil || n != 1 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	if fndCount(t, tt, `SELECT COUNT(*) FROM idempotency WHERE key = 'recent'`) != 1 {
		t.Fatal("a key younger than 30 days was pruned")
	}
}

// The fingerprint of the first request's input binds its key: the same
// input (whatever its key order or request_id) replays, another input is
// 409 request_id_conflict and runs nothing; a key stored without one (before
// fingerprints existed) replays on its subject alone.
func TestIdempotentFingerprintDecides(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "idem-fp")
	var runs atomic.Int64
	run := func(key string, input any) (bool, error) {
		var replay bool
		err := tt.Write(context.Background(), func(tx *sql.Tx) error {
			var err error
			_, replay, err = Idempotent(context.Background(), tx, Idem{Key: key, Subject: "users/5/deposit", Input: input},
				func() (int, error) { runs.Add(1); return 7, nil })
			return err
		})
		return replay, err
	}
	type dep struct {
		Amount    Money  `json:"amount"`
		Note      string `json:"note"`
		RequestID string `json:"request_id"`
	}
	if replay, err := run("fp-1", dep{Amount: 5000, RequestID: "fp-1"}); err != nil || replay {
		t.Fatalf("first: %v %v", replay, err)
	}
	if replay, err := run("fp-1", map[string]any{"note": "", "request_id": "other", "amount": 5}); err != nil || !replay {
		t.Fatalf("same input, other shape: %v %v", replay, err)
	}
	_, err := run("fp-1", dep{Amount: 6000, RequestID: "fp-1"})
	fndErr(t, err, 409, CodeConflict, "request_id_conflict")
	if runs.Load() != 1 {
		t.Fatalf("runs %d", runs.Load())
	}
	want, err := Fingerprint(dep{Amount: 5000})
	if err != nil || len(want) != 64 {
		t.Fatalf("fingerprint %q %v", want, err)
	}
	var stored string
	if err := tt.DB.R.QueryRow(`SELECT fingerprint FROM idempotency WHERE key = 'fp-1'`).Scan(&stored); err != nil || stored != want {
		t.Fatalf("stored fingerprint %q %v, want %q", stored, err, want)
	}
	// A key stored before fingerprints: replays whatever the body.
	fndExec(t, tt, `UPDATE idempotency SET fingerprint = '' WHERE key = 'fp-1'`)
	if replay, err := run("fp-1", dep{Amount: 9000}); err != nil || !replay {
		t.Fatalf("legacy key: %v %v", replay, err)
	}
}
