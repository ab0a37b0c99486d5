package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// A backup carries its tenant's secrets sealed under the keys of the
// instance that took it. Restored on another instance (or after a key
// rotation retired the key it used), they would not open: every page
// that reads one would fail. So a backup is checked before it is kept or
// restored: a sealed value no key of this instance opens refuses it (400
// backup_sealed_with_other_keys), unless the operator gives the other
// instance's keys (xr restore --source-data DIR), which re-seals them
// under this instance's key in the copy restored.

// ErrSealedWithOtherKeys refuses a backup holding n sealed values this
// instance cannot open.
func ErrSealedWithOtherKeys(field string, n int) *Error {
	return ErrValidation("backup_sealed_with_other_keys", field).With("sealed_values", n)
}

// sealedColumnsIn is the sealed columns a file has (an older schema lacks
// the newer ones).
func (a *App) sealedColumnsIn(ctx context.Context, q Querier) ([]SealedColumn, error) {
	var out []SealedColumn
	for _, c := range a.Registry().SealedColumns() {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, c.Table, c.Column).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			out = append(out, c)
		}
	}
	return out, nil
}

// UnopenedSealed counts the sealed values of the plain tenant file at
// path that no key of this instance opens.
func (a *App) UnopenedSealed(ctx context.Context, path string) (int, error) {
	c, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return 0, err
	}
	defer func() { _ = c.Close() }() // read only
	tx, err := c.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }() // read only
	cols, err := a.sealedColumnsIn(ctx, tx)
	if err != nil {
		return 0, err
	}
	n := 0
	err = eachSealedIn(ctx, tx, cols, func(_ SealedColumn, _ int64, v []byte) error {
		if _, err := a.Keys.Open(v); err != nil {
			n++
		}
		return nil
	})
	return n, err
}

// ResealFile re-seals under this instance's current key every sealed
// value of the plain tenant file at path that one of from (another
// instance's sealing keys) or this instance's keys opens; unreadable
// counts the values none opens (left as they were).
func (a *App) ResealFile(ctx context.Context, path string, from [][]byte) (resealed, unreadable int, err error) {
	c, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}()
	c.SetMaxOpenConns(1)
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, err
	}
	cols, err := a.sealedColumnsIn(ctx, tx)
	if err == nil {
		enc, prev := a.Keys.sealing()
		resealed, unreadable, err = resealIn(ctx, tx, cols, enc, append(append([][]byte{}, prev...), from...))
	}
	if err != nil {
		return 0, 0, errors.Join(err, tx.Rollback())
	}
	return resealed, unreadable, tx.Commit()
}

// ReadSealingKeys reads the sealing keys (current and retired) of the
// instance whose data directory is dataDir, read-only; master unwraps
// them when that instance keeps them wrapped.
func ReadSealingKeys(ctx context.Context, dataDir string, master []byte) ([][]byte, error) {
	p := filepath.Join(dataDir, "instance.db")
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("source instance: %w", err)
	}
	c, err := sql.Open("sqlite", "file:"+p+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Close() }() // read only
	rows, err := readKeyRows(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("source instance %s: %w", dataDir, err)
	}
	_, enc, prev, err := keysFromRows(rows, master)
	if err != nil {
		return nil, fmt.Errorf("source instance %s: %w", dataDir, err)
	}
	if enc == nil {
		return nil, fmt.Errorf("source instance %s holds no sealing key", dataDir)
	}
	return append([][]byte{enc}, prev...), nil
}

// OpenWithKeys opens a value Keys.Seal produced under one of keys (as
// ReadSealingKeys returns them), for a process that holds no App yet.
func OpenWithKeys(keys [][]byte, sealed []byte) ([]byte, error) {
	err := errors.New("no key given")
	for _, k := range keys {
		var p []byte
		if p, err = openWith(k, sealed, nil); err == nil {
			return p, nil
		}
	}
	return nil, err
}
