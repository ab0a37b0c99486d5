package dataimport

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"xr/app"
	"xr/app/aaa"
	"xr/app/cards"
	"xr/app/identity"
	"xr/app/monitoring"
	"xr/app/subs"
	"xr/internal/xrtest"
)

type env struct {
	t     testing.TB
	a     *app.App
	ten   *app.Tenant
	owner *app.Actor
	ctx   context.Context
}

func newEnv(t testing.TB) *env {
	t.Helper()
	a := xrtest.TenantApp(t, "acme", identity.Module, subs.Module, aaa.Module, cards.Module, monitoring.Module, Module)
	ten := xrtest.Acquire(t, a, "acme")
	return &env{t: t, a: a, ten: ten, owner: xrtest.System(t, ten), ctx: context.Background()}
}

func (e *env) manager(parent int64, username string) int64 {
	e.t.Helper()
	now := app.StampNow()
	id := xrtest.Exec(e.t, e.ten, `INSERT INTO managers(parent_id, username, password_hash, created_at, updated_at) VALUES (?,?,?,?,?)`,
		parent, username, "x", now, now)
	xrtest.Exec(e.t, e.ten, `INSERT INTO manager_tree(ancestor_id, descendant_id, depth)
		SELECT ancestor_id, ?, depth + 1 FROM manager_tree WHERE descendant_id = ? UNION ALL SELECT ?, ?, 0`, id, parent, id, id)
	return id
}

func (e *env) file(name, body string) string {
	e.t.Helper()
	p := filepath.Join(e.t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) scalar(q string, args ...any) int64 { return xrtest.Scalar(e.t, e.ten, q, args...) }

func (e *env) password(username string) string {
	e.t.Helper()
	var sealed []byte
	if err := e.ten.DB.R.QueryRow(`SELECT password_sealed FROM users WHERE username = ?`, username).Scan(&sealed); err != nil {
		e.t.Fatalf("%s: %v", username, err)
	}
	pw, err := e.a.Keys.Open(sealed)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(pw)
}

func TestSQLDumpQuotingAndStatements(t *testing.T) {
	t.Parallel()
	dump := "-- comment; with 'quote\n" +
		"/*!40101 SET NAMES utf8mb4 */;\n" +
		"# hash comment 'x\n" +
		"CREATE TABLE `t` (`a` varchar(10) DEFAULT 'x;y', /* c */ `b` int);\n" +
		"INSERT INTO `t` VALUES ('a\\'b','c''d'),('\\\\','\\0\\n\\r\\t\\Z\\b'),(NULL,-12),('\\%\\_\\q',\"dq\\\"x\");\n" +
		"INSERT IGNORE INTO db.`u` (`x`, y) VALUES (_binary 'bin',0x414243),(X'4142', 1.5e3) ON DUPLICATE KEY UPDATE x=VALUES(x);\n" +
		"REPLACE INTO v VALUES ('multi\nline');\n" +
		"SET standard_conforming_strings = on;\n" +
		"INSERT INTO public.w (s) VALUES ('back\\slash'),(E'esc\\'d'),('it''s');\n"
	d := newSQLDump(strings.NewReader(dump))
	type got struct {
		table string
		cols  string
		vals  []string
		line  int
	}
	var rows []got
	for {
		r, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		g := got{table: r.Table, cols: strings.Join(r.Cols, ","), line: r.Line}
		for _, v := range r.Vals {
			if v.Null {
				g.vals = append(g.vals, "<NULL>")
			} else {
				g.vals = append(g.vals, v.S)
			}
		}
		rows = append(rows, g)
	}
	want := []got{
		{"t", "", []string{"a'b", "c'd"}, 5},
		{"t", "", []string{`\`, "\x00\n\r\t\x1a\b"}, 5},
		{"t", "", []string{"<NULL>", "-12"}, 5},
		{"t", "", []string{`\%\_q`, `dq"x`}, 5},
		{"u", "x,y", []string{"bin", "ABC"}, 6},
		{"u", "x,y", []string{"AB", "1.5e3"}, 6},
		{"v", "", []string{"multi\nline"}, 7},
		{"w", "s", []string{`back\slash`}, 10},
		{"w", "s", []string{"esc'd"}, 10},
		{"w", "s", []string{"it's"}, 10},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %d: %+v", len(rows), rows)
	}
	for i := range want {
		if rows[i].table != want[i].table || rows[i].cols != want[i].cols || strings.Join(rows[i].vals, "|") != strings.Join(want[i].vals, "|") || rows[i].line != want[i].line {
			t.Errorf("row %d: got %+v want %+v", i, rows[i], want[i])
		}
	}
	// An unterminated string is an error with the line it started on.
	d = newSQLDump(strings.NewReader("\n\nINSERT INTO t VALUES ('open\n);\n"))
	_, err := d.Next()
	var de *errDump
	if !errors.As(err, &de) || de.Line != 3 {
		t.Fatalf("unterminated: %v", err)
	}
}

func TestImportMappingValidateAndRerun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	xrtest.Exec(t, e.ten, `INSERT INTO profiles(name, created_at, updated_at) VALUES ('Home', ?, ?)`, app.StampNow(), app.StampNow())
	// Arabic and accented headers, any case: auto-mapped.
	path := e.file("subs.csv", "\ufeffاسم المستخدم,Mot de passe,الباقة,E-MAIL,Téléphone,Balance\n"+
		"ann,pw-ann,home,ann@x.example,555,5\n"+
		"bob,,Home,bob@x.example,,\n"+
		"cid,pw-cid,Gold,,,\n"+
		"dan,pw-dan,,nope,,1.2345\n"+
		"ann,pw2,,,,\n")
	rep, err := Validate(e.ctx, e.owner, path, "", Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mapping["username"] != "اسم المستخدم" || rep.Mapping["password"] != "Mot de passe" || rep.Mapping["profile"] != "الباقة" ||
		rep.Mapping["phone"] != "Téléphone" || rep.Rows != 5 || rep.Created != 1 {
		t.Fatalf("%+v", rep)
	}
	want := []string{"3 password Mot de passe password_required", "4 profile الباقة profile_not_assignable", "5 balance Balance too_many_decimals",
		"6 username اسم المستخدم duplicate_in_file"}
	var got []string
	for _, l := range rep.Errors {
		got = append(got, strings.Join([]string{itoa(l.Line), l.Field, l.Column, l.Reason}, " "))
	}
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("errors:\n%q\nwant\n%q", got, want)
	}
	if len(rep.Preview) != 1 || rep.Preview[0].Username != "ann" || rep.Preview[0].Balance != xrtest.Money("5") || rep.Preview[0].ProfileID == nil {
		t.Fatalf("preview %+v", rep.Preview)
	}
	if n := e.scalar(`SELECT count(*) FROM users`); n != 0 {
		t.Fatalf("validate wrote %d", n)
	}
	// All-or-nothing: refused rows import nothing.
	rep, err = Import(e.ctx, e.owner, path, "", Spec{})
	if err != nil || rep.Committed || rep.Failed != 4 {
		t.Fatalf("%+v %v", rep, err)
	}
	if n := e.scalar(`SELECT count(*) FROM users`); n != 0 {
		t.Fatalf("refused import wrote %d", n)
	}
	// Partial, with generated passwords: ann and bob.
	rep, err = Import(e.ctx, e.owner, path, "", Spec{Partial: true, PasswordPolicy: "generate"})
	if err != nil || !rep.Committed || rep.Created != 2 || rep.Failed != 3 {
		t.Fatalf("%+v %v", rep, err)
	}
	if e.password("ann") != "pw-ann" || len(e.password("bob")) != 10 {
		t.Fatal("passwords")
	}
	if b := e.scalar(`SELECT balance FROM users WHERE username = 'ann'`); b != 5000 {
		t.Fatalf("balance %d", b)
	}
	// Re-run: skip leaves them; update rewrites the mapped fields (not the balance).
	path2 := e.file("again.csv", "username,password,email,balance\nann,new-pw,ann2@x.example,99\neve,pw-eve,,\n")
	rep, err = Import(e.ctx, e.owner, path2, "csv", Spec{OnDuplicate: "skip"})
	if err != nil || rep.Created != 1 || rep.Skipped != 1 || e.password("ann") != "pw-ann" {
		t.Fatalf("skip: %+v %v", rep, err)
	}
	rep, err = Import(e.ctx, e.owner, path2, "csv", Spec{OnDuplicate: "update"})
	if err != nil || rep.Updated != 2 || rep.Created != 0 || e.password("ann") != "new-pw" {
		t.Fatalf("update: %+v %v", rep, err)
	}
	if b := e.scalar(`SELECT balance FROM users WHERE username = 'ann'`); b != 5000 {
		t.Fatalf("update moved the balance: %d", b)
	}
	rep, err = Import(e.ctx, e.owner, path2, "csv", Spec{})
	if err != nil || rep.Committed || rep.Errors[0].Reason != "username_taken" || rep.Errors[0].Line != 2 {
		t.Fatalf("fail: %+v %v", rep, err)
	}
	// File-level refusals.
	_, err = Validate(e.ctx, e.owner, e.file("x.csv", "nom,pw\nx,y\n"), "", Spec{})
	xrtest.WantReason(t, err, 400, "mapping_required")
	_, err = Validate(e.ctx, e.owner, path2, "", Spec{Mapping: map[string]string{"username": "login"}})
	xrtest.WantReason(t, err, 400, "unknown_column")
	_, err = Validate(e.ctx, e.owner, path2, "", Spec{Mapping: map[string]string{"shoe_size": "username"}})
	xrtest.WantReason(t, err, 400, "unknown_field")
	_, err = Validate(e.ctx, e.owner, path2, "", Spec{OnDuplicate: "merge"})
	xrtest.WantReason(t, err, 400, "invalid_enum")
	_, err = Validate(e.ctx, e.owner, path2, "", Spec{Plan: "Nope"})
	xrtest.WantReason(t, err, 400, "profile_not_assignable")
}

func TestImportXLSXWithMapping(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := excelize.NewFile()
	rows := [][]any{{"Login", "PIN", "Expires"}, {"x1", "p1", "2027-01-02"}, {}, {"x2", "p2", "tomorrow"}}
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &r); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "subs.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Mapping: map[string]string{"username": "login", "password": "pin", "expiration": "EXPIRES"}, Partial: true}
	rep, err := Import(e.ctx, e.owner, path, "", spec)
	if err != nil || rep.Format != "xlsx" || rep.Created != 1 || len(rep.Errors) != 1 || rep.Errors[0].Line != 4 ||
		rep.Errors[0].Reason != "invalid_expiration" || rep.Errors[0].Column != "Expires" {
		t.Fatalf("%+v %v", rep, err)
	}
	if n := e.scalar(`SELECT count(*) FROM users WHERE username = 'x1' AND expiration = '2027-01-02 00:00:00'`); n != 1 {
		t.Fatal("x1 not stored")
	}
}

// A reseller imports only under its subtree: a parent outside it and a
// username of a subscriber outside it are refused, never updated.
func TestImportResellerScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	root := e.owner.ManagerID
	r1 := e.manager(root, "r1")
	e.manager(r1, "r1sub")
	e.manager(root, "r2")
	if _, err := Import(e.ctx, e.owner, e.file("o.csv", "username,password,parent\nowned,pw,r2\n"), "", Spec{}); err != nil {
		t.Fatal(err)
	}
	act := xrtest.Reseller(e.ten, r1)
	path := e.file("r.csv", "username,password,parent\nmine,pw,r1sub\ntheirs,pw,r2\nowned,pw,\n")
	rep, err := Import(e.ctx, act, path, "", Spec{Partial: true, OnDuplicate: "update"})
	if err != nil || rep.Created != 1 || rep.Failed != 2 || rep.Errors[0].Reason != "invalid_parent_id" || rep.Errors[1].Reason != "username_taken" {
		t.Fatalf("%+v %v", rep, err)
	}
	if p := e.scalar(`SELECT parent_id FROM users WHERE username = 'owned'`); p == r1 {
		t.Fatal("reseller moved a subscriber outside its subtree")
	}
	_, err = Import(e.ctx, act, path, "", Spec{Parent: "r2"})
	xrtest.WantReason(t, err, 400, "invalid_parent_id")
}

// A job commits in chunks: a cancel stops it after the current chunk, and
// a job resumed after a crash goes on from its checkpoint.
func TestImportJobCancelAndResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	SetChunkRows(e.a, 2)
	var b strings.Builder
	b.WriteString("username,password\n")
	for i := range 7 {
		b.WriteString("j" + itoa(i) + ",pw\n")
	}
	j, err := CreateJob(e.ctx, e.owner, "jobs.csv", strings.NewReader(b.String()), Spec{})
	if err != nil || j.State != "queued" || j.JobID == nil {
		t.Fatalf("%+v %v", j, err)
	}
	// The job is running (as the runner would mark it); a cancel asks it
	// to stop after its current chunk.
	xrtest.Exec(t, e.ten, `UPDATE import_runs SET state = 'running' WHERE id = ?`, j.ID)
	if c, err := CancelJob(e.ctx, e.owner, j.ID); err != nil || !c.CancelRequested || c.State != "running" {
		t.Fatalf("%+v %v", c, err)
	}
	job, err := app.GetJob(e.ctx, e.ten.DB.R, *j.JobID)
	if err != nil {
		t.Fatal(err)
	}
	// runDataOnce: the job without the removal of its finished file, so the
	// state after it is that of a process that died after the chunk.
	if _, err := runDataOnce(e.ctx, &app.JobContext{Tenant: e.ten, Job: job}); err != nil {
		t.Fatal(err)
	}
	got, err := GetJob(e.ctx, e.owner, j.ID)
	if err != nil || got.State != "cancelled" || got.Created != 2 || got.RowsDone != 2 || got.RowsTotal != 7 {
		t.Fatalf("cancelled: %+v %v", got, err)
	}
	if n := e.scalar(`SELECT count(*) FROM users`); n != 2 {
		t.Fatalf("committed %d", n)
	}
	if _, err := CancelJob(e.ctx, e.owner, j.ID); err == nil {
		t.Fatal("cancel of a cancelled job")
	} else {
		xrtest.WantReason(t, err, 409, "job_not_cancellable")
	}
	// A crash after that chunk: the run is still running at the next
	// start; the job resumes from rows_done without importing twice.
	xrtest.Exec(t, e.ten, `UPDATE import_runs SET state = 'running', cancel_requested = 0, finished_at = NULL WHERE id = ?`, j.ID)
	if _, err := runData(e.ctx, &app.JobContext{Tenant: e.ten, Job: job}); err != nil {
		t.Fatal(err)
	}
	got, err = GetJob(e.ctx, e.owner, j.ID)
	if err != nil || got.State != "done" || got.Created != 7 || got.RowsDone != 7 || got.Failed != 0 {
		t.Fatalf("resumed: %+v %v", got, err)
	}
	if n := e.scalar(`SELECT count(*) FROM users`); n != 7 {
		t.Fatalf("users %d", n)
	}
	if n := e.scalar(`SELECT progress FROM jobs WHERE id = ?`, *j.JobID); n != 7 {
		t.Fatalf("progress %d", n)
	}
	if n := e.scalar(`SELECT count(*) FROM files WHERE area = 'imports'`); n != 0 {
		t.Fatalf("the finished run kept its file: %d", n)
	}
	// Another reseller does not see it.
	_, err = GetJob(e.ctx, xrtest.Reseller(e.ten, e.manager(e.owner.ManagerID, "other")), j.ID)
	xrtest.WantReason(t, err, 404, "not_found")
}

func (e *env) legacy(name, body string, in StartInput) *Job {
	e.t.Helper()
	j, err := CreateLegacyJob(e.ctx, e.owner, name, strings.NewReader(body), LegacyInput{})
	if err != nil || j.State != "analysing" {
		e.t.Fatalf("%+v %v", j, err)
	}
	e.runJob(*j.JobID)
	j, err = GetLegacyJob(e.ctx, e.owner, j.ID)
	if err != nil || j.State != "analysed" {
		e.t.Fatalf("analysed: %+v %v", j, err)
	}
	return j
}

func (e *env) runJob(id int64) {
	e.t.Helper()
	job, err := app.GetJob(e.ctx, e.ten.DB.R, id)
	if err != nil {
		e.t.Fatal(err)
	}
	h := map[string]app.JobHandler{kindDataRun: runData, kindLegacyAnalyse: runLegacyAnalyse, kindLegacyRun: runLegacy}[job.Kind]
	if _, err := h(e.ctx, &app.JobContext{Tenant: e.ten, Job: job}); err != nil {
		e.t.Fatal(err)
	}
}

func lineOf(t *testing.T, body, needle string) int {
	for i, l := range strings.Split(body, "\n") {
		if strings.Contains(l, needle) {
			return i + 1
		}
	}
	t.Fatalf("%q not in fixture", needle)
	return 0
}

func TestLegacyFreeRADIUSImport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	raw, err := os.ReadFile("testdata/freeradius_mysql.sql")
	if err != nil {
		t.Fatal(err)
	}
	body := string(raw)
	j := e.legacy("radius.sql", body, StartInput{})
	var a Analysis
	if err := json.Unmarshal(j.Analysis, &a); err != nil {
		t.Fatal(err)
	}
	if a.Source != "freeradius" || a.Format != "mysql" || a.Counts.Users != 8 || a.Counts.NAS != 2 || a.Counts.Sessions != 2 || a.Counts.PostAuth != 2 ||
		a.Counts.Plans != 3 || a.Passwords["cleartext"] != 6 || a.Passwords["md5"] != 1 || a.Passwords["crypt"] != 1 || a.Importable != 6 {
		t.Fatalf("analysis %+v", a)
	}
	problems := map[string]Problem{}
	for _, p := range a.Problems {
		problems[p.Username] = p
	}
	if p := problems["gina"]; p.Reason != "password_hashed" || p.Line != lineOf(t, body, "(11,'gina'") {
		t.Fatalf("gina %+v", p)
	}
	if p := problems["dave"]; p.Reason != "invalid_expiration" || p.Line != lineOf(t, body, "(7,'dave'") {
		t.Fatalf("dave %+v", p)
	}
	if len(problems) != 2 {
		t.Fatalf("%+v", problems)
	}
	unm := map[string]bool{}
	for _, u := range a.Unmapped {
		unm[u.Name] = true
	}
	if !unm["Idle-Timeout"] || !unm["Framed-Pool"] || unm["radacct"] { // radacct: session history (history.go)
		t.Fatalf("unmapped %+v", a.Unmapped)
	}
	// Without partial, refused subscribers import nothing.
	if _, err := StartLegacyJob(e.ctx, e.owner, j.ID, StartInput{}); err != nil {
		t.Fatal(err)
	}
	_, err = StartLegacyJob(e.ctx, e.owner, j.ID, StartInput{})
	xrtest.WantReason(t, err, 409, "job_not_analysed")
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	e.runJob(*j.JobID)
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	if j.State != "failed" || j.Error != "import_refused" || e.scalar(`SELECT count(*) FROM users`) != 0 {
		t.Fatalf("%+v", j)
	}
	// A new run, partial.
	j = e.legacy("radius.sql", body, StartInput{})
	if _, err := StartLegacyJob(e.ctx, e.owner, j.ID, StartInput{Partial: true}); err != nil {
		t.Fatal(err)
	}
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	e.runJob(*j.JobID)
	j, err = GetLegacyJob(e.ctx, e.owner, j.ID)
	if err != nil || j.State != "done" || j.Created != 6 {
		t.Fatalf("%+v %v", j, err)
	}
	// No RADIUS service in this process: the cut-over replay says so.
	var after Analysis
	if err := json.Unmarshal(j.Analysis, &after); err != nil || after.Cutover == nil || after.Cutover.Skipped != "radius_not_running" {
		t.Fatalf("cutover %+v %v", after.Cutover, err)
	}
	failed := map[string]string{}
	for _, l := range j.Lines {
		failed[l.Username] = l.Reason
	}
	if failed["gina"] != "password_hashed" || failed["dave"] != "invalid_expiration" || len(j.Lines) != 2 {
		t.Fatalf("lines %+v", j.Lines)
	}
	type u struct {
		plan, exp, ip string
		enabled       bool
	}
	want := map[string]u{"alice": {"gold", "2027-01-31 12:00:00", "10.20.0.5", true}, "bob": {"silver", "", "", false},
		"erin": {"legacy 1M/3M", "", "", true}, "frank": {"gold", "2027-03-05 00:00:00", "", true}}
	for name, w := range want {
		var g u
		var exp sql.NullString
		if err := e.ten.DB.R.QueryRow(`SELECT COALESCE(p.name, ''), u.expiration, u.static_ip, u.enabled FROM users u LEFT JOIN profiles p ON p.id = u.profile_id
			WHERE u.username = ?`, name).Scan(&g.plan, &exp, &g.ip, &g.enabled); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		g.exp = exp.String
		if g != w {
			t.Errorf("%s: %+v want %+v", name, g, w)
		}
	}
	if e.password("alice") != "al;ice's pw" || e.password("bob") != `back\slash` || e.password("frank") != `fr"ank` || e.password("hank") != "h\x00\n\t\x1ax" ||
		e.password("carol") != aaa.LegacyHashPrefix+"md5:5f4dcc3b5aa765d61d8327deb882cf99" {
		t.Fatal("passwords")
	}
	var up, down, sim, bytes int64
	if err := e.ten.DB.R.QueryRow(`SELECT rate_up_kbps, rate_down_kbps, simultaneous_use, bytes_limit FROM profiles WHERE name = 'gold'`).Scan(&up, &down, &sim, &bytes); err != nil ||
		up != 5000 || down != 20000 || sim != 2 || bytes != 53687091200 {
		t.Fatalf("gold %d %d %d %d %v", up, down, sim, bytes, err)
	}
	if n := e.scalar(`SELECT count(*) FROM nas`); n != 2 {
		t.Fatalf("nas %d", n)
	}
	// Deleting a finished run removes it and its file; imported data stays.
	if err := DeleteLegacyJob(e.ctx, e.owner, j.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := GetLegacyJob(e.ctx, e.owner, j.ID); err == nil {
		t.Fatal("deleted run still there")
	}
	if n := e.scalar(`SELECT count(*) FROM users`); n != 6 {
		t.Fatal("delete removed subscribers")
	}
}

func TestLegacyMikroTikImport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	raw, err := os.ReadFile("testdata/ppp_secret_export.rsc")
	if err != nil {
		t.Fatal(err)
	}
	j := e.legacy("secrets.rsc", string(raw), StartInput{})
	if j.Kind != "mikrotik" {
		t.Fatalf("%+v", j)
	}
	var a Analysis
	if err := json.Unmarshal(j.Analysis, &a); err != nil {
		t.Fatal(err)
	}
	if a.Counts.Users != 4 || a.Importable != 3 || len(a.Problems) != 1 || a.Problems[0].Username != "mt-dee" || a.Problems[0].Line != 12 {
		t.Fatalf("%+v", a)
	}
	if _, err := StartLegacyJob(e.ctx, e.owner, j.ID, StartInput{Partial: true}); err != nil {
		t.Fatal(err)
	}
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	e.runJob(*j.JobID)
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	if j.State != "done" || j.Created != 3 {
		t.Fatalf("%+v", j)
	}
	if e.password("mt-ben") != "ben pw" || e.scalar(`SELECT enabled FROM users WHERE username = 'mt-ben'`) != 0 ||
		e.scalar(`SELECT count(*) FROM users WHERE username = 'mt-ann' AND static_ip = '10.30.0.2'`) != 1 ||
		e.scalar(`SELECT rate_down_kbps FROM profiles WHERE name = '20M'`) != 20000 ||
		e.scalar(`SELECT simultaneous_use FROM profiles WHERE name = '10M'`) != 1 ||
		e.scalar(`SELECT count(*) FROM users WHERE username = 'mt-cid' AND profile_id IS NULL`) != 1 {
		t.Fatal("stored state")
	}
}

// Export → import gives the same subscribers, for both dialects.
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{DialectMySQL, DialectPostgreSQL} {
		src := newEnv(t)
		now := app.StampNow()
		xrtest.Exec(t, src.ten, `INSERT INTO profiles(name, rate_down_kbps, rate_up_kbps, simultaneous_use, bytes_limit, created_at, updated_at)
			VALUES ('Fibre 50', 50000, 10000, 2, 1000000, ?, ?)`, now, now)
		csv := "username,password,profile,expiration,static_ip,enabled\n" +
			"rt1,\"it's \\ \"\"tricky\"\";\",Fibre 50,2027-05-06 07:08:09,10.40.0.1,true\n" +
			"rt2,plain,,,,false\n"
		if rep, err := Import(src.ctx, src.owner, src.file("rt.csv", csv), "", Spec{}); err != nil || rep.Created != 2 {
			t.Fatalf("%+v %v", rep.Errors, err)
		}
		var b strings.Builder
		if err := Export(src.ctx, src.owner, ExportInput{Format: dialect}, &b); err != nil {
			t.Fatal(err)
		}
		dst := newEnv(t)
		j := dst.legacy("export.sql", b.String(), StartInput{})
		if _, err := StartLegacyJob(dst.ctx, dst.owner, j.ID, StartInput{}); err != nil {
			t.Fatal(err)
		}
		j, _ = GetLegacyJob(dst.ctx, dst.owner, j.ID)
		dst.runJob(*j.JobID)
		j, _ = GetLegacyJob(dst.ctx, dst.owner, j.ID)
		if j.State != "done" || j.Created != 2 {
			t.Fatalf("%s: %+v\n%s", dialect, j, b.String())
		}
		q := `SELECT u.username || '|' || COALESCE(p.name,'') || '|' || COALESCE(u.expiration,'') || '|' || u.static_ip || '|' || u.enabled || '|' ||
			COALESCE(p.rate_down_kbps,0) || '|' || COALESCE(p.rate_up_kbps,0) || '|' || COALESCE(p.simultaneous_use,0) || '|' || COALESCE(p.bytes_limit,0)
			FROM users u LEFT JOIN profiles p ON p.id = u.profile_id ORDER BY u.username`
		read := func(e *env) string {
			rows, err := e.ten.DB.R.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var out []string
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				out = append(out, s+"|"+e.password(strings.SplitN(s, "|", 2)[0]))
			}
			return strings.Join(out, "\n")
		}
		if a, b := read(src), read(dst); a != b {
			t.Fatalf("%s round trip:\n%s\nvs\n%s", dialect, a, b)
		}
	}
}

func TestImportNAS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	path := e.file("nas.csv", "shortname,nasname,secret,type,description\n"+
		"core-1,10.9.0.1,s3cr3t-shared-key-1,other,tower\n"+
		"edge,10.9.0.300,s3cr3t-shared-key-2,mikrotik,\n"+
		"edge-2,10.9.0.1,s3cr3t-shared-key-3,cisco,\n"+
		"edge-3,10.9.0.3,s3cr3t-shared-key-4,acme,\n")
	rep, err := Validate(e.ctx, e.owner, path, "", Spec{Kind: KindNAS})
	if err != nil || rep.Rows != 4 || rep.Created != 1 || rep.Mapping["ip"] != "nasname" || rep.Mapping["name"] != "shortname" {
		t.Fatalf("%+v %v", rep, err)
	}
	var got []string
	for _, l := range rep.Errors {
		got = append(got, itoa(l.Line)+" "+l.Column+" "+l.Reason)
	}
	if strings.Join(got, ";") != "3 nasname invalid_ip;4 nasname duplicate_in_file;5 type invalid_enum" {
		t.Fatalf("%q", got)
	}
	if rep, err = Import(e.ctx, e.owner, path, "", Spec{Kind: KindNAS}); err != nil || rep.Committed || e.scalar(`SELECT count(*) FROM nas`) != 0 {
		t.Fatalf("all-or-nothing: %+v %v", rep, err)
	}
	if rep, err = Import(e.ctx, e.owner, path, "", Spec{Kind: KindNAS, Partial: true}); err != nil || rep.Created != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	if e.scalar(`SELECT count(*) FROM nas WHERE ip = '10.9.0.1' AND type = 'generic' AND description = 'tower'`) != 1 {
		t.Fatal("NAS not stored")
	}
	again := e.file("again.csv", "name,ip,secret,description\ncore-1,10.9.0.1,s3cr3t-shared-key-9,moved\n")
	if rep, err = Import(e.ctx, e.owner, again, "", Spec{Kind: KindNAS, OnDuplicate: "skip"}); err != nil || rep.Skipped != 1 {
		t.Fatalf("skip: %+v %v", rep, err)
	}
	if rep, err = Import(e.ctx, e.owner, again, "", Spec{Kind: KindNAS}); err != nil || rep.Committed || rep.Errors[0].Reason != "ip_taken" {
		t.Fatalf("fail: %+v %v", rep, err)
	}
	if rep, err = Import(e.ctx, e.owner, again, "", Spec{Kind: KindNAS, OnDuplicate: "update"}); err != nil || rep.Updated != 1 ||
		e.scalar(`SELECT count(*) FROM nas WHERE description = 'moved'`) != 1 {
		t.Fatalf("update: %+v %v", rep, err)
	}
}
