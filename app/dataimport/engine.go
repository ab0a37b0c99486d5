package dataimport

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"xr/app"
	"xr/app/sheet"
	"xr/app/subs"
)

// Spec is what an import does: the kind, the column mapping (field →
// header; empty = suggested from the header) and the options.
type Spec struct {
	Kind    string            `json:"kind"`
	Mapping map[string]string `json:"mapping"`
	// OnDuplicate: what a row whose username exists does: fail (the
	// default: refused with username_taken), skip, or update (the row's
	// mapped fields overwrite the subscriber's; not its balance).
	OnDuplicate string `json:"on_duplicate"`
	// Parent is the default parent manager (username or email); Plan the
	// default plan (name). A row's own parent/profile column wins.
	Parent string `json:"parent"`
	Plan   string `json:"plan"`
	// Series is the card series of a cards import (id or name) when a row
	// names none.
	Series string `json:"series,omitempty"`
	// PasswordPolicy: require (a row without a password is refused) or
	// generate (it gets a random one).
	PasswordPolicy string `json:"password_policy"`
	// Partial imports the valid rows and reports the others; without it
	// one refused row imports nothing.
	Partial bool `json:"partial"`
	// Encoding of a CSV: empty or auto detects it (UTF-8, UTF-16 with its
	// mark, Windows-1256, Windows-1252/Latin-1); see sheet.Encodings.
	Encoding string `json:"encoding,omitempty"`
}

func (s *Spec) normalize() error {
	if s.Kind == "" {
		s.Kind = KindSubscribers
	}
	if kindFields(s.Kind) == nil {
		return app.ErrValidation("invalid_enum", "kind")
	}
	switch s.OnDuplicate {
	case "":
		s.OnDuplicate = "fail"
	case "fail", "skip", "update":
	default:
		return app.ErrValidation("invalid_enum", "on_duplicate")
	}
	enc, err := sheet.NormalizeEncoding(s.Encoding)
	if err != nil {
		return err
	}
	s.Encoding = enc
	switch s.PasswordPolicy {
	case "":
		s.PasswordPolicy = "require"
	case "require", "generate":
	default:
		return app.ErrValidation("invalid_enum", "password_policy")
	}
	return nil
}

// LineError is the result of one line that was not simply created.
type LineError struct {
	Line     int    `json:"line"`
	Outcome  string `json:"outcome"` // failed, skipped, updated
	Field    string `json:"field"`
	Column   string `json:"column"` // the file's header of the field
	Reason   string `json:"reason"`
	Username string `json:"username,omitempty"`
}

// Report is the outcome of a validation or an import.
type Report struct {
	Rows     int               `json:"rows"`
	Created  int               `json:"created"`
	Updated  int               `json:"updated"`
	Skipped  int               `json:"skipped"`
	Failed   int               `json:"failed"`
	Imported int               `json:"imported"` // created + updated (on a dry run: that would be)
	DryRun   bool              `json:"dry_run"`
	Partial  bool              `json:"partial"`
	Format   string            `json:"format"`
	Header   []string          `json:"header"`
	Mapping  map[string]string `json:"mapping"`
	Unmapped []string          `json:"unmapped_columns"`
	Preview  []PreviewRow      `json:"preview"`
	Errors   []LineError       `json:"errors"`
	// ErrorsTruncated: more lines were refused than errors lists (the
	// first 10,000; failed counts them all).
	ErrorsTruncated bool `json:"errors_truncated"`
	// Committed is false when nothing was written (a dry run, or refused
	// rows without partial).
	Committed bool `json:"committed"`
	Cancelled bool `json:"cancelled"`
}

// PreviewRow is a row as it would be stored.
type PreviewRow struct {
	Line       int       `json:"line"`
	Action     string    `json:"action"` // create, update, skip
	Username   string    `json:"username"`
	ParentID   int64     `json:"parent_id"`
	ProfileID  *int64    `json:"profile_id"`
	Expiration app.Time  `json:"expiration"`
	Email      string    `json:"email"`
	Firstname  string    `json:"firstname"`
	Lastname   string    `json:"lastname"`
	Phone      string    `json:"phone"`
	StaticIP   string    `json:"static_ip"`
	MACs       []string  `json:"mac_locked_addrs"`
	Balance    app.Money `json:"balance"`
	Enabled    bool      `json:"enabled"`
	// Values are a managers, cards or coordinates row as it would be stored
	// (its fields by name; those kinds fill Username with the row's key).
	Values map[string]string `json:"values,omitempty"`
}

const previewRows = 10

// chunkRows is the number of rows per transaction of a running import.
const chunkRows = 500

type chunkKey struct{}

// SetChunkRows changes the rows per transaction of an App's imports
// (tests: a few rows make several chunks).
func SetChunkRows(a *app.App, n int) { a.SetValue(chunkKey{}, n) }

func chunkOf(a *app.App) int {
	if n, ok := a.Value(chunkKey{}).(int); ok && n > 0 {
		return n
	}
	return chunkRows
}

// run is one pass of the engine over a file.
type run struct {
	act    *app.Actor
	spec   Spec
	open   func() (table, error)
	format string
	im     *subs.UserImporter
	cols   map[string]int
	header []string
	rep    *Report
}

// Checkpoint is what a job's chunk commits with its rows: called inside
// the chunk's transaction with the rows settled so far and the lines of
// the chunk; stop asks to end after this chunk (a cancel).
type Checkpoint func(ctx context.Context, tx *sql.Tx, done int, rep *Report, lines []LineError) (stop bool, err error)

// prepare opens the file, resolves the mapping and the importer.
func prepare(ctx context.Context, act *app.Actor, path, format string, spec Spec) (*run, error) {
	if err := act.Require(PermToolsImport); err != nil {
		return nil, err
	}
	if format == "" {
		f, err := detectFormat(path)
		if err != nil {
			return nil, err
		}
		format = f
	}
	return prepareTable(ctx, act, func() (table, error) { return openTable(act.Tenant.App, path, format, spec.Encoding) }, format, spec)
}

// prepareTable is prepare over any table (a legacy import's rows).
func prepareTable(ctx context.Context, act *app.Actor, open func() (table, error), format string, spec Spec) (*run, error) {
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
	cols, mapping, err := resolveMapping(kindFields(spec.Kind), header, spec.Mapping, spec.PasswordPolicy == "generate")
	if err != nil {
		return nil, err
	}
	im, err := subs.NewUserImporter(ctx, act, spec.Parent, spec.Plan)
	if err != nil {
		return nil, err
	}
	im.GeneratePasswords = spec.PasswordPolicy == "generate"
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
	return &run{act: act, spec: spec, open: open, format: format, im: im, cols: cols, header: header, rep: rep}, nil
}

// values is a row's values by field.
func (r *run) values(rec []string) (map[string]string, map[string]bool) {
	v := map[string]string{}
	present := map[string]bool{}
	for f, i := range r.cols {
		if i < len(rec) {
			v[f] = rec[i]
			present[f] = true
		}
	}
	return v, present
}

func (r *run) column(field string) string {
	if i, ok := r.cols[field]; ok && i < len(r.header) {
		return r.header[i]
	}
	return ""
}

func (r *run) lineError(line int, outcome, field, reason, username string) LineError {
	return LineError{Line: line, Outcome: outcome, Field: field, Column: r.column(field), Reason: reason, Username: username}
}

// validate reads every row without writing: per row the result it would
// have (create, update, skip or an error), and the preview.
func (r *run) validate(ctx context.Context) error {
	tb, err := r.open()
	if err != nil {
		return err
	}
	defer tb.Close()
	seenUser, seenIP := newKeySet(), newKeySet()
	rep := r.rep
	return r.act.Tenant.Read(ctx, func(rtx *sql.Tx) error {
		tx := subs.NewQueryCache(rtx)
		defer tx.Close()
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
			v, _ := r.values(rec)
			nu, refusal, err := r.im.Build(ctx, tx, v)
			if err != nil {
				return err
			}
			if refusal != nil {
				rep.refuse(r.lineError(line, "failed", refusal.Field, refusal.Reason, nu.Username))
				continue
			}
			if !seenUser.add(strings.ToLower(nu.Username)) {
				rep.refuse(r.lineError(line, "failed", "username", "duplicate_in_file", nu.Username))
				continue
			}
			if nu.StaticIP != "" {
				if !seenIP.add(nu.StaticIP) {
					rep.refuse(r.lineError(line, "failed", "static_ip", "duplicate_in_file", nu.Username))
					continue
				}
			}
			action := "create"
			ex, err := r.im.FindForImport(ctx, tx, nu.Username)
			if err != nil {
				return err
			}
			if ex == nil {
				taken, err := subs.UsernameTaken(ctx, tx, nu.Username)
				if err != nil {
					return err
				}
				if taken { // a deleted subscriber keeps its username
					rep.refuse(r.lineError(line, "failed", "username", "username_taken", nu.Username))
					continue
				}
				if nu.StaticIP != "" {
					if taken, err = subs.StaticIPTaken(ctx, tx, nu.StaticIP); err != nil {
						return err
					}
					if taken {
						rep.refuse(r.lineError(line, "failed", "static_ip", "static_ip_taken", nu.Username))
						continue
					}
				}
				rep.Created++
			} else {
				switch {
				case !ex.InScope || r.spec.OnDuplicate == "fail":
					// A subscriber outside the caller's subtree is taken
					// like any other: its existence is all that shows.
					rep.refuse(r.lineError(line, "failed", "username", "username_taken", nu.Username))
					continue
				case r.spec.OnDuplicate == "skip":
					action = "skip"
					rep.Skipped++
				default:
					action = "update"
					rep.Updated++
				}
			}
			if len(rep.Preview) < previewRows {
				p := PreviewRow{Line: line, Action: action, Username: nu.Username, ParentID: nu.ParentID, Expiration: nu.Expiration,
					Email: nu.Email, Firstname: nu.Firstname, Lastname: nu.Lastname, Phone: nu.Phone, StaticIP: nu.StaticIP,
					MACs: nu.MacLockedAddrs, Balance: nu.OpeningBalance, Enabled: nu.Enabled == nil || *nu.Enabled}
				if nu.ProfileID != 0 {
					id := nu.ProfileID
					p.ProfileID = &id
				}
				if p.MACs == nil {
					p.MACs = []string{}
				}
				rep.Preview = append(rep.Preview, p)
			}
		}
	})
}

// checkCap refuses the rows past the licence's max_users.
func (r *run) checkCap(ctx context.Context) error {
	t := r.act.Tenant
	if t.MaxUsers == nil {
		return nil
	}
	count, err := app.ReadUsersCount(ctx, t.DB.R)
	if err != nil {
		return err
	}
	room := max(*t.MaxUsers-count, 0)
	if int64(r.rep.Created) > room {
		return app.ErrLicenseLocked().With("max_users", *t.MaxUsers).With("users_count", count)
	}
	return nil
}

// write reads the file again and writes its rows in chunks of chunkRows,
// one transaction each, from row number skip (the checkpoint of a resumed
// job). A chunk is first written without savepoints (its rows were
// validated); when a row is refused after all (a username taken since),
// the chunk rolls back and is written again with a savepoint per row, so a
// refused row undoes only itself.
func (r *run) write(ctx context.Context, skip int, cp Checkpoint) error {
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
		attempt := func(safe bool) error {
			return t.Write(ctx, func(tx *sql.Tx) error {
				lines, created = lines[:0], 0
				w, err := r.im.Writer(ctx, tx)
				if err != nil {
					return err
				}
				defer w.Close()
				for _, rc := range recs {
					if rc.bad {
						lines = append(lines, r.lineError(rc.line, "failed", "", "malformed_csv", ""))
						continue
					}
					le, ok, err := r.writeRow(ctx, w, rc.line, rc.vals, safe)
					if err != nil {
						return err
					}
					if le != nil {
						lines = append(lines, *le)
					}
					if ok {
						created++
					}
				}
				if err := w.Finish(ctx); err != nil {
					return err
				}
				counts := *rep
				counts.tally(created, lines)
				if cp != nil {
					s, err := cp(ctx, tx, done, &counts, lines)
					if err != nil {
						return err
					}
					stop = s
				}
				return nil
			})
		}
		err = attempt(false)
		if errors.Is(err, errRowRefused) {
			err = attempt(true)
		}
		if err != nil {
			return err
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

// errRowRefused rolls a chunk back to write it again row by row.
var errRowRefused = errors.New("a row was refused")

// writeRow writes one row (inside a savepoint when safe): the line result
// when it was not simply created, and whether it was created.
func (r *run) writeRow(ctx context.Context, w *subs.ImportWriter, line int, rec []string, safe bool) (*LineError, bool, error) {
	v, present := r.values(rec)
	nu, refusal, err := r.im.Build(ctx, w.Q(), v)
	if err != nil {
		return nil, false, err
	}
	if refusal != nil {
		le := r.lineError(line, "failed", refusal.Field, refusal.Reason, nu.Username)
		return &le, false, nil
	}
	ex, err := r.im.FindForImport(ctx, w.Q(), nu.Username)
	if err != nil {
		return nil, false, err
	}
	if ex != nil && ex.InScope && r.spec.OnDuplicate == "skip" {
		le := r.lineError(line, "skipped", "username", "", nu.Username)
		return &le, false, nil
	}
	if safe {
		if err := w.Savepoint(ctx); err != nil {
			return nil, false, err
		}
	}
	outcome := ""
	if ex != nil && ex.InScope && r.spec.OnDuplicate == "update" {
		err = w.Update(ctx, ex.ID, nu, present)
		outcome = "updated"
	} else if ex != nil {
		err = app.ErrConflict("username_taken").With("field", "username")
	} else {
		_, err = w.Create(ctx, nu)
	}
	if err != nil {
		e := app.AsError(err)
		if e == nil {
			return nil, false, err
		}
		if !safe {
			return nil, false, errRowRefused
		}
		if rerr := w.Rollback(ctx); rerr != nil {
			return nil, false, rerr
		}
		field := e.Field
		if f, ok := e.Details["field"].(string); ok && field == "" {
			field = f
		}
		le := r.lineError(line, "failed", field, e.Reason, nu.Username)
		return &le, false, nil
	}
	if safe {
		if err := w.Release(ctx); err != nil {
			return nil, false, err
		}
	}
	if outcome == "" {
		return nil, true, nil
	}
	le := r.lineError(line, outcome, "", "", nu.Username)
	return &le, false, nil
}

// Validate is the dry run: every row checked against the file and the
// database, nothing written. path is a file on disk (CSV or XLSX; format
// "" = from the bytes).
func Validate(ctx context.Context, act *app.Actor, path, format string, spec Spec) (*Report, error) {
	if spec.Kind == KindNAS {
		return nasFile(ctx, act, path, format, spec, true, 0, nil)
	}
	if k := rowKindOf(spec.Kind); k != nil {
		return rowsFile(ctx, act, k, path, format, spec, true, 0, nil)
	}
	r, err := prepare(ctx, act, path, format, spec)
	if err != nil {
		return nil, err
	}
	r.rep.DryRun = true
	if err := r.validate(ctx); err != nil {
		return nil, err
	}
	finishReport(r.rep)
	return r.rep, nil
}

// Import validates then writes (the CLI; a job adds its checkpoint): when a
// row is refused and the spec is not partial, nothing is written.
func Import(ctx context.Context, act *app.Actor, path, format string, spec Spec) (*Report, error) {
	return importFrom(ctx, act, path, format, spec, 0, nil)
}

func importFrom(ctx context.Context, act *app.Actor, path, format string, spec Spec, skip int, cp Checkpoint) (*Report, error) {
	if spec.Kind == KindNAS {
		return nasFile(ctx, act, path, format, spec, false, skip, cp)
	}
	if k := rowKindOf(spec.Kind); k != nil {
		return rowsFile(ctx, act, k, path, format, spec, false, skip, cp)
	}
	r, err := prepare(ctx, act, path, format, spec)
	if err != nil {
		return nil, err
	}
	return r.importAll(ctx, skip, cp)
}

// nasFile runs the NAS kind on a file.
func nasFile(ctx context.Context, act *app.Actor, path, format string, spec Spec, dry bool, skip int, cp Checkpoint) (*Report, error) {
	if err := spec.normalize(); err != nil {
		return nil, err
	}
	if format == "" {
		f, err := detectFormat(path)
		if err != nil {
			return nil, err
		}
		format = f
	}
	return nasRun(ctx, act, func() (table, error) { return openTable(act.Tenant.App, path, format, spec.Encoding) }, format, spec, dry, skip, cp)
}

// importAll validates (unless resuming) then writes.
func (r *run) importAll(ctx context.Context, skip int, cp Checkpoint) (*Report, error) {
	spec := r.spec
	if skip == 0 {
		if err := r.validate(ctx); err != nil {
			return nil, err
		}
		if r.rep.Failed > 0 && !spec.Partial {
			finishReport(r.rep)
			return r.rep, nil
		}
		if err := r.checkCap(ctx); err != nil {
			return nil, err
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

func finishReport(rep *Report) {
	sort.SliceStable(rep.Errors, func(i, j int) bool { return rep.Errors[i].Line < rep.Errors[j].Line })
	failed := 0
	for _, e := range rep.Errors {
		if e.Outcome == "failed" {
			failed++
		}
	}
	if rep.Failed < failed {
		rep.Failed = failed
	}
	rep.Imported = rep.Created + rep.Updated
}

// String is a one-line summary.
func (rep *Report) String() string {
	return fmt.Sprintf("%d rows: %d created, %d updated, %d skipped, %d refused", rep.Rows, rep.Created, rep.Updated, rep.Skipped, rep.Failed)
}

// chunkRec is one data row of a chunk: its line, its values, and whether
// the reader found it malformed.
type chunkRec struct {
	line int
	vals []string
	bad  bool
}

// nextChunk reads up to n rows of tb, passing over the first skip rows of
// the table (done counts every row read so far: the checkpoint of a
// resumed job); eof is the end of the table.
func nextChunk(tb table, n, skip int, done *int) ([]chunkRec, bool, error) {
	var recs []chunkRec
	for len(recs) < n {
		line, vals, err := tb.Next()
		if errors.Is(err, io.EOF) {
			return recs, true, nil
		}
		bad := errors.Is(err, errMalformedRow)
		if err != nil && !bad {
			return nil, false, err
		}
		*done++
		if *done <= skip {
			continue
		}
		recs = append(recs, chunkRec{line: line, vals: vals, bad: bad})
	}
	return recs, false, nil
}

// tally adds a chunk's outcome to the report: created rows, and the
// failed, skipped and updated ones by their line results.
func (rep *Report) tally(created int, lines []LineError) {
	rep.Created += created
	for _, l := range lines {
		switch l.Outcome {
		case "failed":
			rep.Failed++
		case "skipped":
			rep.Skipped++
		case "updated":
			rep.Updated++
		}
	}
}

// keepLines appends a chunk's line results; a job keeps only the last
// 1,000 in its report (every line is in import_lines).
func (rep *Report) keepLines(lines []LineError, job bool) {
	rep.Errors = append(rep.Errors, lines...)
	if n := len(rep.Errors); n > 1000 && job {
		rep.Errors = rep.Errors[n-1000:]
	}
}
