package dataimport

import (
	"archive/zip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/aaa"
	"xr/app/cards"
	"xr/app/files"
	"xr/app/identity"
	"xr/app/sheet"
	"xr/app/subs"
)

// SourcePanel is the reseller-panel CSV set of the legacy product: a zip
// of managers.csv, profiles.csv, users.csv, series.csv and cards.csv (any
// of them; columns matched by name like a data import). It is also what
// GET /admin/legacy/export?format=csv writes, so an export imports back.
const SourcePanel = "panel_csv"

// The files of the set, in import order.
const (
	panelManagers = "managers"
	panelProfiles = "profiles"
	panelUsers    = "users"
	panelSeries   = "series"
	panelCards    = "cards"
)

var panelFileNames = []string{panelManagers, panelProfiles, panelUsers, panelSeries, panelCards}

// profileFields are the columns of profiles.csv.
var profileFields = []Field{
	{Name: "name", Type: "string", Required: true, Example: "Home 10M", Headers: []string{"name", "profile", "plan", "package", "الاسم", "الباقة"}},
	{Name: "price", Type: "money", Example: "25", Headers: []string{"price", "cost", "السعر"}},
	{Name: "duration_days", Type: "integer", Example: "30", Headers: []string{"duration_days", "duration", "days", "validity", "المدة"}},
	{Name: "rate_down_kbps", Type: "integer", Example: "10000", Headers: []string{"rate_down_kbps", "download", "download_rate", "rate_down", "down", "التنزيل"}},
	{Name: "rate_up_kbps", Type: "integer", Example: "2000", Headers: []string{"rate_up_kbps", "upload", "upload_rate", "rate_up", "up", "الرفع"}},
	{Name: "bytes_limit", Type: "integer", Example: "0", Headers: []string{"bytes_limit", "quota", "quota_bytes", "traffic_limit", "الحصة"}},
	{Name: "simultaneous_use", Type: "integer", Example: "1", Headers: []string{"simultaneous_use", "sessions", "shared_users", "الجلسات"}},
	{Name: "description", Type: "string", Example: "", Headers: []string{"description", "notes", "الوصف"}},
}

// seriesFields are the columns of series.csv.
var seriesFields = []Field{
	{Name: "name", Type: "string", Required: true, Example: "Day pass", Headers: []string{"name", "series", "batch", "الاسم", "السلسلة"}},
	{Name: "type", Type: "enum", Format: "prepaid or refill", Example: "prepaid", Headers: []string{"type", "card_type", "mode", "النوع"}},
	{Name: "profile", Type: "reference", Format: "a plan name (required for prepaid)", Example: "Day", Headers: []string{"profile", "plan", "الباقة"}},
	{Name: "face_value", Type: "money", Example: "5", Headers: []string{"face_value", "value", "price", "القيمة"}},
	{Name: "expiration", Type: "date", Example: "2027-12-31", Headers: []string{"expiration", "expiry", "expires", "الانتهاء"}},
	{Name: "owner", Type: "reference", Format: "a manager's username (empty: the importer)", Example: "reseller1",
		Headers: []string{"owner", "manager", "reseller", "المالك", "المدير"}},
}

// panelCardExtra: the cards.csv column beside the cards kind's.
var panelCardStatus = Field{Name: "status", Type: "enum", Format: "unused cards are imported; others are history", Example: "unused",
	Headers: []string{"status", "state", "الحالة"}}

// panelPasswordType: the users.csv column naming a hashed password.
var panelPasswordType = Field{Name: "password_type", Type: "enum", Format: "cleartext (default), md5, smd5, sha, ssha, nt", Example: "cleartext",
	Headers: []string{"password_type", "password type", "hash", "نوع كلمة المرور"}}

// PanelColumns documents the set: per file its fields (the docs' table).
func PanelColumns() map[string][]Field {
	return map[string][]Field{
		panelManagers: managerFields, panelProfiles: profileFields, panelUsers: append(append([]Field{}, subscriberFields...), panelPasswordType),
		panelSeries: seriesFields, panelCards: append(append([]Field{}, cardFields...), panelCardStatus),
	}
}

// panelSet is an uploaded zip: the entry of each file of the set.
type panelSet struct {
	path    string
	lim     sheet.Limits
	limit   int64             // what an entry may inflate to (sheet.CheckZip)
	entries map[string]string // file → entry name
	others  []string
}

func openPanel(p string, lim sheet.Limits) (*panelSet, error) {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return nil, &errDump{Line: 0, Msg: "not a zip of CSV files"}
	}
	defer func() { _ = zr.Close() }() // read only
	limit, err := sheet.CheckZip(p, &zr.Reader, legacyExpanded, lim.MaxRatio)
	if err != nil {
		return nil, err
	}
	s := &panelSet{path: p, lim: lim, limit: limit, entries: map[string]string{}}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		base := strings.ToLower(path.Base(f.Name))
		name := strings.TrimSuffix(base, ".csv")
		if name == "card_series" || name == "batches" {
			name = panelSeries
		}
		if name == "profiles" || name == "plans" || name == "packages" {
			name = panelProfiles
		}
		if name == "resellers" {
			name = panelManagers
		}
		if name == "subscribers" {
			name = panelUsers
		}
		known := strings.HasSuffix(base, ".csv")
		if known {
			known = false
			for _, k := range panelFileNames {
				if k == name {
					known = true
				}
			}
		}
		if _, dup := s.entries[name]; !known || dup {
			s.others = append(s.others, f.Name)
			continue
		}
		s.entries[name] = f.Name
	}
	if len(s.entries) == 0 {
		return nil, &errDump{Line: 0, Msg: "no file of the reseller-panel CSV set (managers.csv, profiles.csv, users.csv, series.csv, cards.csv)"}
	}
	return s, nil
}

// zipTable is a CSV entry of the zip read as a table.
type zipTable struct {
	rowsTable
	zr *zip.ReadCloser
	rc io.ReadCloser
}

func (t *zipTable) Close() error { return errors.Join(t.rc.Close(), t.zr.Close()) }

// table opens a file of the set (nil when absent).
func (s *panelSet) table(name string) (table, error) {
	entry, ok := s.entries[name]
	if !ok {
		return nil, nil
	}
	zr, err := zip.OpenReader(s.path)
	if err != nil {
		return nil, err
	}
	var rc io.ReadCloser
	for _, f := range zr.File {
		if f.Name == entry {
			rc, err = sheet.OpenEntry(f, s.limit)
			break
		}
	}
	if rc == nil || err != nil {
		_ = zr.Close() // read only
		return nil, &errDump{Msg: entry + ": unreadable"}
	}
	c, err := sheet.NewCSV(rc, sheet.CSVOptions{TrimLeadingSpace: true}, s.lim)
	if err != nil {
		_ = errors.Join(rc.Close(), zr.Close()) // read only
		if app.AsError(err) != nil && app.AsError(err).Reason != "header_required" && app.AsError(err).Reason != "malformed_csv" {
			return nil, err
		}
		return nil, &errDump{Line: 1, Msg: entry + ": no header"}
	}
	return &zipTable{rowsTable: rowsTable{rows: c, unescape: true}, zr: zr, rc: rc}, nil
}

// maxMemRows bounds a file of the set read into memory (managers, plans,
// series, cards).
const maxMemRows = 200_000

// readAll reads a (small) file of the set into memory.
func (s *panelSet) readAll(name string) (*memTable, error) {
	tb, err := s.table(name)
	if err != nil || tb == nil {
		return nil, err
	}
	defer tb.Close()
	m := &memTable{header: tb.Header()}
	for {
		if len(m.rows) == maxMemRows {
			return nil, app.ErrValidation("too_many_rows", "file").With("max", maxMemRows).With("file", s.entries[name])
		}
		line, rec, err := tb.Next()
		if errors.Is(err, io.EOF) {
			return m, nil
		}
		if errors.Is(err, errMalformedRow) {
			return nil, &errDump{Line: line, Msg: s.entries[name] + ": malformed CSV"}
		}
		if err != nil {
			return nil, err
		}
		m.rows = append(m.rows, rec)
		m.lines = append(m.lines, line)
	}
}

// colOf is the column of a field in a header (-1 when none), matched by
// the field's names like a mapping.
func colOf(fields []Field, header []string, field string) int {
	m := suggestMapping(fields, header)
	h, ok := m[field]
	if !ok {
		return -1
	}
	for i, x := range header {
		if x == h {
			return i
		}
	}
	return -1
}

func cell(rec []string, i int) string {
	if i < 0 || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

// analysePanel reads the set into an analysis.
func analysePanel(ctx context.Context, t *app.Tenant, p string) (*Analysis, error) {
	s, err := openPanel(p, limitsOf(t.App))
	if err != nil {
		return nil, err
	}
	a := &Analysis{Source: SourcePanel, Format: "csv", Passwords: map[string]int{}, Plans: []legacyPlan{}, Unmapped: []Unmapped{}, Problems: []Problem{}}
	for _, o := range s.others {
		a.Unmapped = append(a.Unmapped, Unmapped{What: "file", Name: o, Count: 1, Reason: "not a file of the reseller-panel CSV set"})
	}
	cols := PanelColumns()
	unmappedCols := func(file string, header []string) {
		used := map[string]bool{}
		for _, h := range suggestMapping(cols[file], header) {
			used[h] = true
		}
		for _, h := range header {
			if !used[h] {
				a.Unmapped = append(a.Unmapped, Unmapped{What: "column", Name: file + ".csv: " + h, Count: 1, Reason: "no xr field of that name"})
			}
		}
	}
	problem := func(line int, key, reason string) {
		a.ProblemsTotal++
		if len(a.Problems) < 200 {
			a.Problems = append(a.Problems, Problem{Line: line, Username: key, Reason: reason})
		}
	}
	planUsers := map[string]int{}
	// users.csv, streamed.
	if tb, err := s.table(panelUsers); err != nil {
		return nil, err
	} else if tb != nil {
		h := tb.Header()
		unmappedCols(panelUsers, h)
		cu, cp, ct := colOf(subscriberFields, h, "username"), colOf(subscriberFields, h, "password"), colOf([]Field{panelPasswordType}, h, "password_type")
		ce, cb, cprof := colOf(subscriberFields, h, "expiration"), colOf(subscriberFields, h, "balance"), colOf(subscriberFields, h, "profile")
		err := t.Read(ctx, func(rtx *sql.Tx) error {
			q := subs.NewQueryCache(rtx)
			defer q.Close()
			for {
				line, rec, err := tb.Next()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if errors.Is(err, errMalformedRow) {
					problem(line, "", "malformed_csv")
					continue
				}
				if err != nil {
					return err
				}
				a.Counts.Users++
				u := cell(rec, cu)
				kind := strings.ToLower(cell(rec, ct))
				if kind == "" {
					kind = "cleartext"
				}
				if cell(rec, cp) != "" {
					a.Passwords[kind]++
				}
				if b := cell(rec, cb); b != "" && b != "0" {
					a.Counts.Balances++
				}
				switch {
				case !subs.ValidUsername(u):
					problem(line, u, "invalid_username")
					continue
				case cell(rec, cp) == "":
					problem(line, u, "password_required")
					continue
				case kind != "cleartext" && !aaa.LegacyHashKinds[kind]:
					problem(line, u, "password_hashed")
					continue
				}
				if e := cell(rec, ce); e != "" {
					if _, err := app.ParseTime(e, true); err != nil {
						problem(line, u, "invalid_expiration")
						continue
					}
				}
				if b := cell(rec, cb); b != "" {
					if _, bad := parseMoneyField("balance", b); bad != "" {
						problem(line, u, bad)
						continue
					}
				}
				a.Importable++
				planUsers[strings.ToLower(cell(rec, cprof))]++
				taken, err := subs.UsernameTaken(ctx, q, u)
				if err != nil {
					return err
				}
				if taken {
					a.Existing++
				}
			}
		})
		tb.Close()
		if err != nil {
			return nil, err
		}
	}
	// managers.csv
	if m, err := s.readAll(panelManagers); err != nil {
		return nil, err
	} else if m != nil {
		unmappedCols(panelManagers, m.header)
		cu, cb := colOf(managerFields, m.header, "username"), colOf(managerFields, m.header, "balance")
		for i, rec := range m.rows {
			a.Counts.Managers++
			if b := cell(rec, cb); b != "" && b != "0" {
				a.Counts.Balances++
			}
			if u := cell(rec, cu); u == "" {
				problem(m.lines[i], u, "identity_required")
			} else if b := cell(rec, cb); b != "" {
				if _, bad := parseMoneyField("balance", b); bad != "" {
					problem(m.lines[i], u, bad)
				}
			}
		}
	}
	// profiles.csv
	if m, err := s.readAll(panelProfiles); err != nil {
		return nil, err
	} else if m != nil {
		unmappedCols(panelProfiles, m.header)
		for _, rec := range m.rows {
			pl := panelPlan(m.header, rec)
			if pl.Name.V == "" {
				continue
			}
			lp := legacyPlan{Name: pl.Name.V, RateDown: pl.RateDownKbps.V, RateUp: pl.RateUpKbps.V, SimUse: pl.SimultaneousUse.V,
				BytesLimit: pl.BytesLimit.V, Users: planUsers[strings.ToLower(pl.Name.V)]}
			var n int
			if err := t.DB.R.QueryRowContext(ctx, `SELECT count(*) FROM profiles WHERE name = ?`, lp.Name).Scan(&n); err != nil {
				return nil, err
			}
			lp.Exists = n > 0
			a.Plans = append(a.Plans, lp)
		}
		a.Counts.Plans = len(a.Plans)
	}
	// series.csv and cards.csv
	if m, err := s.readAll(panelSeries); err != nil {
		return nil, err
	} else if m != nil {
		unmappedCols(panelSeries, m.header)
		a.Counts.Series = len(m.rows)
	}
	if tb, err := s.table(panelCards); err != nil {
		return nil, err
	} else if tb != nil {
		unmappedCols(panelCards, tb.Header())
		cs := colOf([]Field{panelCardStatus}, tb.Header(), "status")
		history := 0
		for {
			_, rec, err := tb.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil && !errors.Is(err, errMalformedRow) {
				tb.Close()
				return nil, err
			}
			a.Counts.Cards++
			if err == nil && !unusedCard(cell(rec, cs)) {
				history++
			}
		}
		tb.Close()
		if history > 0 {
			a.Unmapped = append(a.Unmapped, Unmapped{What: "cards", Name: "cards.csv", Count: history, Reason: "used, revoked or expired cards are history: not imported"})
		}
	}
	sort.Slice(a.Plans, func(i, j int) bool { return a.Plans[i].Name < a.Plans[j].Name })
	return a, nil
}

func unusedCard(status string) bool {
	switch strings.ToLower(status) {
	case "", "unused", "new", "available", "ready":
		return true
	}
	return false
}

// panelPlan reads a profiles.csv row into a plan.
func panelPlan(header, rec []string) subs.ProfileInput {
	get := func(f string) string { return cell(rec, colOf(profileFields, header, f)) }
	num := func(f string) app.Opt[int64] {
		n, err := strconv.ParseInt(get(f), 10, 64)
		if err != nil {
			return app.Opt[int64]{}
		}
		return some(n)
	}
	in := subs.ProfileInput{Name: some(get("name")), RateDownKbps: num("rate_down_kbps"), RateUpKbps: num("rate_up_kbps"),
		BytesLimit: num("bytes_limit"), SimultaneousUse: num("simultaneous_use"), DurationDays: num("duration_days")}
	if d := get("description"); d != "" {
		in.Description = some(d)
	}
	if p := get("price"); p != "" {
		if m, err := app.ParseMoney(p); err == nil {
			in.Price = some(m)
		}
	}
	return in
}

// usersTable is users.csv with each hashed password (password_type md5,
// nt, ...) turned into the stored form PAP verifies.
type usersTable struct {
	table
	pw, kind int
}

func (u *usersTable) Next() (int, []string, error) {
	line, rec, err := u.table.Next()
	if err == nil && u.pw >= 0 && u.kind >= 0 && u.pw < len(rec) {
		if k := strings.ToLower(cell(rec, u.kind)); k != "" && k != "cleartext" && rec[u.pw] != "" {
			rec[u.pw] = aaa.LegacyHashPrefix + k + ":" + rec[u.pw]
		}
	}
	return line, rec, err
}

// panelPhase is one file imported through the engine.
type panelPhase struct {
	file string
	rows int
	run  func(ctx context.Context, skip int, cp Checkpoint) (*Report, error)
}

// runPanel imports an analysed set: plans (a tenant-wide caller creates
// the missing ones), then managers (parents first), subscribers, series
// and their unused cards, each file through the engine in chunks with one
// checkpoint counting the rows of every file in that order, so a resumed
// job goes on where it stopped.
func runPanel(ctx context.Context, jc *app.JobContext, j *Job, f *files.File) (any, error) {
	t := jc.Tenant
	var in StartInput
	if err := json.Unmarshal(j.Spec, &in); err != nil {
		return nil, err
	}
	var an Analysis
	if err := json.Unmarshal(j.Analysis, &an); err != nil {
		return nil, err
	}
	act, err := runActor(ctx, t, j.ManagerID)
	if err != nil {
		return nil, err
	}
	s, err := openPanel(files.Path(t, f), limitsOf(t.App))
	if err != nil {
		return nil, err
	}
	if err := setRunState(ctx, t, j.ID, "running"); err != nil {
		return nil, err
	}
	if an.ProblemsTotal > 0 && !in.Partial {
		lines := make([]LineError, 0, len(an.Problems))
		for _, p := range an.Problems {
			lines = append(lines, LineError{Line: p.Line, Outcome: "failed", Reason: p.Reason, Username: p.Username})
		}
		return nil, finishRun(ctx, t, j.ID, "failed", "import_refused", func(tx *sql.Tx) error {
			var p app.Patch
			p.Set("failed", int64(an.ProblemsTotal))
			if _, err := p.Exec(ctx, tx, "import_runs", j.ID, t.NowText()); err != nil {
				return err
			}
			return insertLines(ctx, tx, j.ID, lines)
		})
	}
	var lead []LineError
	if j.RowsDone == 0 && act.TenantWide {
		if lead, err = panelPlans(ctx, act, s); err != nil {
			return nil, err
		}
	}
	phases, err := panelPhases(ctx, act, s, in)
	if err != nil {
		if e := app.AsError(err); e != nil && e.Status < 500 {
			return nil, finishRun(ctx, t, j.ID, "failed", e.Reason, nil)
		}
		return nil, err
	}
	total := 0
	for _, ph := range phases {
		total += ph.rows
	}
	cp := runCheckpoint(t, jc.Job.ID, j, lead)
	var acc Report
	offset := 0
	cancelled := false
	for _, ph := range phases {
		skip := min(max(int(j.RowsDone)-offset, 0), ph.rows)
		if skip == ph.rows && ph.rows > 0 {
			offset += ph.rows
			continue
		}
		base, file := offset, ph.file
		phaseCP := func(ctx context.Context, tx *sql.Tx, done int, rep *Report, lines []LineError) (bool, error) {
			c := Report{Rows: total, Created: acc.Created + rep.Created, Updated: acc.Updated + rep.Updated, Skipped: acc.Skipped + rep.Skipped,
				Failed: acc.Failed + rep.Failed}
			for i := range lines {
				lines[i].Column = strings.TrimSuffix(file+".csv: "+lines[i].Column, ": ")
			}
			return cp(ctx, tx, base+done, &c, lines)
		}
		rep, err := ph.run(ctx, skip, phaseCP)
		if err != nil {
			if e := app.AsError(err); e != nil && e.Status < 500 {
				return nil, finishRun(ctx, t, j.ID, "failed", e.Reason, nil)
			}
			return nil, err
		}
		acc.Created += rep.Created
		acc.Updated += rep.Updated
		acc.Skipped += rep.Skipped
		acc.Failed += rep.Failed
		offset += ph.rows
		if rep.Cancelled {
			cancelled = true
			break
		}
	}
	acc.Rows = total
	if cancelled {
		return acc.summary(), finishRun(ctx, t, j.ID, "cancelled", "", nil)
	}
	return acc.summary(), finishRun(ctx, t, j.ID, "done", "", nil)
}

// panelPlans creates the plans of profiles.csv that do not exist (by
// name); refused ones are reported on their line.
func panelPlans(ctx context.Context, act *app.Actor, s *panelSet) ([]LineError, error) {
	m, err := s.readAll(panelProfiles)
	if err != nil || m == nil {
		return nil, err
	}
	var lines []LineError
	for i, rec := range m.rows {
		in := panelPlan(m.header, rec)
		var n int
		if err := act.Tenant.DB.R.QueryRowContext(ctx, `SELECT count(*) FROM profiles WHERE name = ?`, in.Name.V).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			continue
		}
		if _, err := subs.ImportProfile(ctx, act, in); err != nil {
			e := app.AsError(err)
			if e == nil || e.Status >= 500 {
				return nil, err
			}
			lines = append(lines, LineError{Line: m.lines[i], Outcome: "failed", Field: e.Field, Column: "profiles.csv: " + e.Field, Reason: e.Reason, Username: in.Name.V})
		}
	}
	return lines, nil
}

// countRows counts the data rows of a file of the set.
func (s *panelSet) countRows(name string) (int, error) {
	tb, err := s.table(name)
	if err != nil || tb == nil {
		return 0, err
	}
	defer tb.Close()
	n := 0
	for {
		_, _, err := tb.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil && !errors.Is(err, errMalformedRow) {
			return 0, err
		}
		n++
	}
}

// panelPhases prepares the managers, users and cards files.
func panelPhases(ctx context.Context, act *app.Actor, s *panelSet, in StartInput) ([]panelPhase, error) {
	var out []panelPhase
	dup := in.OnDuplicate
	if m, err := s.readAll(panelManagers); err != nil {
		return nil, err
	} else if m != nil {
		sortManagers(m)
		spec := Spec{Kind: KindManagers, OnDuplicate: dup, Parent: in.Parent, Partial: true, PasswordPolicy: "generate"}
		r, err := prepareRows(ctx, act, &managersKind, func() (table, error) { m.i = 0; return m, nil }, "csv", spec)
		if err != nil {
			return nil, err
		}
		out = append(out, panelPhase{file: panelManagers, rows: len(m.rows), run: func(ctx context.Context, skip int, cp Checkpoint) (*Report, error) {
			return r.importAll(ctx, skip, cp)
		}})
	}
	if _, ok := s.entries[panelUsers]; ok {
		n, err := s.countRows(panelUsers)
		if err != nil {
			return nil, err
		}
		open := func() (table, error) {
			tb, err := s.table(panelUsers)
			if err != nil {
				return nil, err
			}
			h := tb.Header()
			return &usersTable{table: tb, pw: colOf(subscriberFields, h, "password"), kind: colOf([]Field{panelPasswordType}, h, "password_type")}, nil
		}
		spec := Spec{Kind: KindSubscribers, OnDuplicate: dup, Parent: in.Parent, Partial: true}
		out = append(out, panelPhase{file: panelUsers, rows: n, run: func(ctx context.Context, skip int, cp Checkpoint) (*Report, error) {
			// Prepared when it runs: the managers and plans exist by then.
			r, err := prepareTable(ctx, act, open, "csv", spec)
			if err != nil {
				return nil, err
			}
			return r.importAll(ctx, skip, cp)
		}})
	}
	if _, ok := s.entries[panelCards]; ok {
		m, err := s.readAll(panelCards)
		if err != nil {
			return nil, err
		}
		// History cards (used, revoked, expired) are counted by the
		// analysis and left out.
		st := colOf([]Field{panelCardStatus}, m.header, "status")
		k := 0
		for i, rec := range m.rows {
			if unusedCard(cell(rec, st)) {
				m.rows[k], m.lines[k] = rec, m.lines[i]
				k++
			}
		}
		m.rows, m.lines = m.rows[:k], m.lines[:k]
		out = append(out, panelPhase{file: panelCards, rows: len(m.rows), run: func(ctx context.Context, skip int, cp Checkpoint) (*Report, error) {
			if err := panelSeriesFor(ctx, act, s, m); err != nil {
				return nil, err
			}
			spec := Spec{Kind: KindCards, OnDuplicate: dup, Partial: true}
			r, err := prepareRows(ctx, act, &cardsKind, func() (table, error) { m.i = 0; return m, nil }, "csv", spec)
			if err != nil {
				return nil, err
			}
			return r.importAll(ctx, skip, cp)
		}})
	}
	return out, nil
}

// sortManagers orders managers.csv so that a parent of the file comes
// before its children (stable otherwise).
func sortManagers(m *memTable) {
	cu, cp := colOf(managerFields, m.header, "username"), colOf(managerFields, m.header, "parent")
	parent := map[string]string{}
	for _, rec := range m.rows {
		parent[strings.ToLower(cell(rec, cu))] = strings.ToLower(cell(rec, cp))
	}
	depth := func(u string) int {
		d := 0
		for p := parent[u]; p != "" && d < len(parent); p = parent[p] {
			if _, ok := parent[p]; !ok {
				break
			}
			d++
		}
		return d
	}
	idx := make([]int, len(m.rows))
	ds := make([]int, len(m.rows))
	for i, rec := range m.rows {
		idx[i], ds[i] = i, depth(strings.ToLower(cell(rec, cu)))
	}
	sort.SliceStable(idx, func(a, b int) bool { return ds[idx[a]] < ds[idx[b]] })
	rows, lines := make([][]string, len(idx)), make([]int, len(idx))
	for k, i := range idx {
		rows[k], lines[k] = m.rows[i], m.lines[i]
	}
	m.rows, m.lines = rows, lines
}

// panelSeriesFor creates the series of series.csv that the caller does not
// see by name yet, and points each card of cards.csv at its series by id;
// history cards (used, revoked, expired) are left out.
func panelSeriesFor(ctx context.Context, act *app.Actor, s *panelSet, c *memTable) error {
	t := act.Tenant
	ids := map[string]string{}
	if m, err := s.readAll(panelSeries); err != nil {
		return err
	} else if m != nil {
		get := func(rec []string, f string) string { return cell(rec, colOf(seriesFields, m.header, f)) }
		for _, rec := range m.rows {
			name := get(rec, "name")
			if name == "" {
				continue
			}
			if ex, err := cards.FindImportSeries(ctx, t.DB.R, act, name); err == nil {
				ids[strings.ToLower(name)] = strconv.FormatInt(ex.ID, 10)
				continue
			} else if e := app.AsError(err); e == nil || e.Reason != "invalid_series" {
				continue // a series of that name that takes no cards: its cards report why
			}
			in := cards.NewImportSeries{Name: name, Prepaid: strings.EqualFold(get(rec, "type"), "prepaid"), Expiration: get(rec, "expiration")}
			if in.Expiration != "" && len(in.Expiration) > 10 {
				if tm, err := app.ParseTime(in.Expiration, true); err == nil {
					in.Expiration = tm.UTC().Format("2006-01-02 15:04:05")
				}
			}
			if v := get(rec, "face_value"); v != "" {
				if m, err := app.ParseMoney(v); err == nil {
					in.FaceValue = m
				}
			}
			err := t.Write(ctx, func(tx *sql.Tx) error {
				if p := get(rec, "profile"); p != "" {
					if err := tx.QueryRowContext(ctx, `SELECT id FROM profiles WHERE name = ?`, p).Scan(&in.PlanID); err != nil && !errors.Is(err, sql.ErrNoRows) {
						return err
					}
				}
				if o := get(rec, "owner"); o != "" {
					id, ok, err := identity.FindManagerForImport(ctx, tx, act, o)
					if err != nil {
						return err
					}
					if ok {
						in.Owner = id
					}
				}
				ns, err := cards.CreateImportSeries(ctx, tx, act, in, t.Now())
				if err != nil {
					return err
				}
				ids[strings.ToLower(name)] = strconv.FormatInt(ns.ID, 10)
				return nil
			})
			if e := app.AsError(err); e != nil && e.Status < 500 {
				continue // its cards report invalid_series
			}
			if err != nil {
				return err
			}
		}
	}
	cs := colOf(cardFields, c.header, "series")
	for i, rec := range c.rows {
		if id, ok := ids[strings.ToLower(cell(rec, cs))]; ok && cs >= 0 {
			c.rows[i] = append([]string{}, rec...)
			c.rows[i][cs] = id
		}
	}
	return nil
}

// guessPanel is SourcePanel for a zip holding a file of the set.
func guessPanel(p string) string {
	if _, err := openPanel(p, sheet.DefaultLimits); err == nil {
		return SourcePanel
	}
	return ""
}
