package dataimport

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"strings"

	"xr/app"
)

// The kinds written row by row through their area's primitives (managers,
// cards into a series, device coordinates): one engine for the dry run and
// the job, with the options of the subscriber kind (on_duplicate, partial,
// the caller's subtree). A job writes chunks of chunkRows rows, each in one
// transaction with its checkpoint and a savepoint per row (a row refused at
// write time undoes only itself); a kind whose area writes in its own
// transaction (coordinates) writes row by row and checkpoints after each
// chunk (writing a row again after a crash sets the same values).

// rowCheck is one row checked against the tenant.
type rowCheck struct {
	key    string // the row's identity (username, code, device), for the report and duplicate_in_file
	field  string // a refusal's field
	reason string // a refusal ("" = valid)
	exists bool   // the record exists (the on_duplicate option decides)
	scoped bool   // an existing record is in the caller's subtree (else it is taken, never updated)
	data   any    // what write needs
	show   map[string]string
}

// rowWriter is a kind's side of the engine.
type rowWriter interface {
	// check validates a row's values (by field) against q.
	check(ctx context.Context, q app.Querier, v map[string]string, present map[string]bool) (rowCheck, error)
	// write creates (or updates, when rc.exists) a checked row: in tx, or
	// in its own transaction when ownTx (tx nil).
	write(ctx context.Context, tx *sql.Tx, rc rowCheck) error
	// chunkDone runs in a chunk's transaction after its rows.
	chunkDone(ctx context.Context, tx *sql.Tx) error
	ownTx() bool
	// keyField is the field of the row's identity; takenReason the refusal
	// of an existing record (on_duplicate fail, or outside the subtree).
	keyField() string
	takenReason() string
}

// rowKind is a kind of this engine: its fields and how a run begins (the
// permissions and the defaults resolved once).
type rowKind struct {
	fields []Field
	begin  func(ctx context.Context, act *app.Actor, spec Spec) (rowWriter, error)
}

func rowKindOf(kind string) *rowKind {
	switch kind {
	case KindManagers:
		return &managersKind
	case KindCards:
		return &cardsKind
	case KindCoordinates:
		return &coordinatesKind
	}
	return nil
}

// rowRun is one pass over a file of a row kind.
type rowRun struct {
	*run
	w rowWriter
}

// prepareRows opens the table, resolves the mapping and begins the kind.
func prepareRows(ctx context.Context, act *app.Actor, k *rowKind, open func() (table, error), format string, spec Spec) (*rowRun, error) {
	if err := act.Require(PermToolsImport); err != nil {
		return nil, err
	}
	if err := spec.normalize(); err != nil {
		return nil, err
	}
	tb, err := open()
	if err != nil {
		return nil, err
	}
	header := tb.Header()
	if err := tb.Close(); err != nil {
		return nil, err
	}
	cols, mapping, err := resolveMapping(k.fields, header, spec.Mapping, spec.PasswordPolicy == "generate")
	if err != nil {
		return nil, err
	}
	w, err := k.begin(ctx, act, spec)
	if err != nil {
		return nil, err
	}
	rep := &Report{Partial: spec.Partial, Format: format, Header: header, Mapping: mapping, Unmapped: []string{}, Preview: []PreviewRow{}, Errors: []LineError{}}
	used := map[int]bool{}
	for _, i := range cols {
		used[i] = true
	}
	for i, h := range header {
		if !used[i] {
			rep.Unmapped = append(rep.Unmapped, h)
		}
	}
	return &rowRun{run: &run{act: act, spec: spec, open: open, format: format, cols: cols, header: header, rep: rep}, w: w}, nil
}

// outcome is what a checked row does: "" create, skip, update, or a
// refusal (field and reason).
func (r *rowRun) outcome(rc rowCheck) (action, field, reason string) {
	switch {
	case rc.reason != "":
		return "", rc.field, rc.reason
	case !rc.exists:
		return "create", "", ""
	case !rc.scoped || r.spec.OnDuplicate == "fail":
		return "", r.w.keyField(), r.w.takenReason()
	case r.spec.OnDuplicate == "skip":
		return "skip", "", ""
	}
	return "update", "", ""
}

// validate reads every row without writing.
func (r *rowRun) validate(ctx context.Context) error {
	tb, err := r.open()
	if err != nil {
		return err
	}
	defer tb.Close()
	seen := newKeySet()
	rep := r.rep
	return r.act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		for {
			line, rec, err := tb.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if errors.Is(err, errMalformedRow) {
				rep.Rows++
				rep.refuse(r.lineError(line, "failed", "", "malformed_csv", ""))
				if r.format == "csv" {
					continue
				}
				return nil
			}
			if err != nil {
				return err
			}
			rep.Rows++
			v, present := r.values(rec)
			rc, err := r.w.check(ctx, tx, v, present)
			if err != nil {
				return err
			}
			k := strings.ToLower(rc.key)
			if rc.reason == "" && k != "" && seen.has(k) {
				rc.field, rc.reason = r.w.keyField(), "duplicate_in_file"
			}
			action, field, reason := r.outcome(rc)
			if reason != "" {
				rep.refuse(r.lineError(line, "failed", field, reason, rc.key))
				continue
			}
			seen.add(k)
			switch action {
			case "create":
				rep.Created++
			case "skip":
				rep.Skipped++
			case "update":
				rep.Updated++
			}
			if len(rep.Preview) < previewRows {
				rep.Preview = append(rep.Preview, PreviewRow{Line: line, Action: action, Username: rc.key, Values: rc.show, MACs: []string{}})
			}
		}
	})
}

// write writes the rows from row number skip, chunk by chunk.
func (r *rowRun) write(ctx context.Context, skip int, cp Checkpoint) error {
	tb, err := r.open()
	if err != nil {
		return err
	}
	defer tb.Close()
	t := r.act.Tenant
	rep := r.rep
	done := 0
	chunk := chunkOf(t.App)
	for {
		recs, eof, err := nextChunk(tb, chunk, skip, &done)
		if err != nil {
			return err
		}
		if len(recs) == 0 && eof {
			return nil
		}
		var lines []LineError
		var created int
		stop := false
		// one writes a row: its line result (nil when created).
		one := func(tx *sql.Tx, rc chunkRec) (*LineError, error) {
			if rc.bad {
				le := r.lineError(rc.line, "failed", "", "malformed_csv", "")
				return &le, nil
			}
			v, present := r.values(rc.vals)
			var q app.Querier = t.DB.R
			if tx != nil {
				q = tx
			}
			ck, err := r.w.check(ctx, q, v, present)
			if err != nil {
				return nil, err
			}
			action, field, reason := r.outcome(ck)
			switch {
			case reason != "":
				le := r.lineError(rc.line, "failed", field, reason, ck.key)
				return &le, nil
			case action == "skip":
				le := r.lineError(rc.line, "skipped", "", "", ck.key)
				return &le, nil
			}
			if tx != nil {
				if _, err := tx.ExecContext(ctx, `SAVEPOINT import_row`); err != nil {
					return nil, err
				}
			}
			if err := r.w.write(ctx, tx, ck); err != nil {
				e := app.AsError(err)
				if e == nil || e.Status >= 500 {
					return nil, err
				}
				if tx != nil {
					if _, err := tx.ExecContext(ctx, `ROLLBACK TO import_row`); err != nil {
						return nil, err
					}
					if _, err := tx.ExecContext(ctx, `RELEASE import_row`); err != nil {
						return nil, err
					}
				}
				f := e.Field
				if s, ok := e.Details["field"].(string); ok && f == "" {
					f = s
				}
				le := r.lineError(rc.line, "failed", f, e.Reason, ck.key)
				return &le, nil
			}
			if tx != nil {
				if _, err := tx.ExecContext(ctx, `RELEASE import_row`); err != nil {
					return nil, err
				}
			}
			if action == "update" {
				le := r.lineError(rc.line, "updated", "", "", ck.key)
				return &le, nil
			}
			return nil, nil
		}
		tally := func(le *LineError) {
			if le == nil {
				created++
				return
			}
			lines = append(lines, *le)
		}
		checkpoint := func(tx *sql.Tx) error {
			if cp == nil {
				return nil
			}
			c := *rep
			c.tally(created, lines)
			s, err := cp(ctx, tx, done, &c, lines)
			stop = s
			return err
		}
		if r.w.ownTx() {
			for _, rc := range recs {
				le, err := one(nil, rc)
				if err != nil {
					return err
				}
				tally(le)
			}
			if err := t.Write(ctx, checkpoint); err != nil {
				return err
			}
		} else {
			err := t.Write(ctx, func(tx *sql.Tx) error {
				lines, created = lines[:0], 0
				for _, rc := range recs {
					le, err := one(tx, rc)
					if err != nil {
						return err
					}
					tally(le)
				}
				if err := r.w.chunkDone(ctx, tx); err != nil {
					return err
				}
				return checkpoint(tx)
			})
			if err != nil {
				return err
			}
		}
		rep.tally(created, lines)
		rep.keepLines(lines, cp != nil)
		if eof {
			return nil
		}
		if stop {
			rep.Cancelled = true
			return nil
		}
	}
}

// importAll validates (unless resuming) then writes.
func (r *rowRun) importAll(ctx context.Context, skip int, cp Checkpoint) (*Report, error) {
	spec := r.spec
	if skip == 0 {
		if err := r.validate(ctx); err != nil {
			return nil, err
		}
		if r.rep.Failed > 0 && !spec.Partial {
			finishReport(r.rep)
			return r.rep, nil
		}
	}
	total := r.rep.Rows
	*r.rep = Report{Rows: total, Partial: spec.Partial, Format: r.rep.Format, Header: r.rep.Header, Mapping: r.rep.Mapping, Unmapped: r.rep.Unmapped,
		Preview: r.rep.Preview, Errors: []LineError{}}
	if err := r.write(ctx, skip, cp); err != nil {
		return nil, err
	}
	r.rep.Rows = total
	r.rep.Committed = true
	finishReport(r.rep)
	return r.rep, nil
}

// rowsFile runs a row kind on a file: the dry run, or the import from row
// skip with a job's checkpoint.
func rowsFile(ctx context.Context, act *app.Actor, k *rowKind, path, format string, spec Spec, dry bool, skip int, cp Checkpoint) (*Report, error) {
	if format == "" {
		f, err := detectFormat(path)
		if err != nil {
			return nil, err
		}
		format = f
	}
	r, err := prepareRows(ctx, act, k, func() (table, error) { return openTable(act.Tenant.App, path, format, spec.Encoding) }, format, spec)
	if err != nil {
		return nil, err
	}
	if dry {
		r.rep.DryRun = true
		if err := r.validate(ctx); err != nil {
			return nil, err
		}
		finishReport(r.rep)
		return r.rep, nil
	}
	return r.importAll(ctx, skip, cp)
}
