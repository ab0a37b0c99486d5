package webtest

import (
	"context"
	"database/sql"
	"testing"
)

// Exec runs a statement on acme's database.
func Exec(t *testing.T, k *Kit, q string, args ...any) {
	t.Helper()
	if err := k.Acquire("acme").Write(context.Background(), func(tx *sql.Tx) error { _, err := tx.Exec(q, args...); return err }); err != nil {
		t.Fatal(err)
	}
}

// Scalar reads one integer.
func Scalar(k *Kit, slug, q string, args ...any) int64 {
	k.T.Helper()
	var n int64
	if err := k.Acquire(slug).DB.R.QueryRowContext(Background, q, args...).Scan(&n); err != nil {
		k.T.Fatalf("%s: %v", q, err)
	}
	return n
}
