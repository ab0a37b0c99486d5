package app

import (
	"context"
	"database/sql"
	"strings"
)

// Patch builds the one UPDATE of a PATCH: the columns the body set, in
// order, and nothing else. Every area applies a PATCH through it, so a
// field left out of the body is never written and a field sent as null is
// written as NULL.
//
//	var p app.Patch
//	app.SetOpt(&p, "name", in.Name)
//	app.SetOptAs(&p, "price", in.Price, func(m app.Money) any { return int64(m) })
//	if !p.Empty() { _, err = p.Exec(ctx, tx, "plans", id, t.NowText()) }
type Patch struct {
	cols []string
	args []any
}

// Set writes col = v.
func (p *Patch) Set(col string, v any) {
	p.cols = append(p.cols, col+" = ?")
	p.args = append(p.args, v)
}

// SetOpt writes col when the body set it: NULL for null, else the value.
func SetOpt[T any](p *Patch, col string, o Opt[T]) {
	SetOptAs(p, col, o, func(v T) any { return v })
}

// SetOptAs is SetOpt with the stored form of the value (conv).
func SetOptAs[T any](p *Patch, col string, o Opt[T], conv func(T) any) {
	switch {
	case !o.Set:
	case o.Null:
		p.Set(col, nil)
	default:
		p.Set(col, conv(o.V))
	}
}

// SetOptOrZero writes col when the body set it, null as the zero value
// of T (columns that are NOT NULL: a null text clears to "").
func SetOptOrZero[T any](p *Patch, col string, o Opt[T], conv func(T) any) {
	if o.Set {
		p.Set(col, conv(o.V))
	}
}

// Empty reports whether no column is set.
func (p *Patch) Empty() bool { return len(p.cols) == 0 }

// Has reports whether col is set.
func (p *Patch) Has(col string) bool {
	for _, c := range p.cols {
		if strings.TrimSuffix(c, " = ?") == col {
			return true
		}
	}
	return false
}

// Exec runs UPDATE table SET ..., updated_at = stamp WHERE id = id (no
// updated_at when stamp is ""). An empty patch writes nothing and answers
// a nil result.
func (p *Patch) Exec(ctx context.Context, tx *sql.Tx, table string, id int64, stamp string) (sql.Result, error) {
	if p.Empty() {
		return nil, nil
	}
	cols, args := p.cols, p.args
	if stamp != "" {
		cols = append(cols[:len(cols):len(cols)], "updated_at = ?")
		args = append(args[:len(args):len(args)], stamp)
	}
	args = append(args, id)
	return tx.ExecContext(ctx, `UPDATE `+table+` SET `+strings.Join(cols, ", ")+` WHERE id = ?`, args...)
}
