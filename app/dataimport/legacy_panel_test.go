package dataimport

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/xrtest"
)

// panelZip zips the files of dir (the fixture of the set).
func panelZip(t *testing.T, dir string) string {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create("export/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(raw); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func (e *env) startPanel(j *Job, in StartInput) *Job {
	e.t.Helper()
	if _, err := StartLegacyJob(e.ctx, e.owner, j.ID, in); err != nil {
		e.t.Fatal(err)
	}
	j, err := GetLegacyJob(e.ctx, e.owner, j.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	e.runJob(*j.JobID)
	j, err = GetLegacyJob(e.ctx, e.owner, j.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

func TestLegacyPanelImport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	j := e.legacy("panel.zip", panelZip(t, "testdata/panel"), StartInput{})
	if j.Kind != SourcePanel || j.Format != "csv" {
		t.Fatalf("%+v", j)
	}
	var a Analysis
	if err := json.Unmarshal(j.Analysis, &a); err != nil {
		t.Fatal(err)
	}
	c := a.Counts
	if c.Users != 5 || c.Managers != 3 || c.Plans != 2 || c.Series != 2 || c.Cards != 4 || c.Balances != 3 || a.Importable != 3 ||
		a.Passwords["cleartext"] != 4 || a.Passwords["md5"] != 1 {
		t.Fatalf("analysis %+v", a)
	}
	got := []string{}
	for _, p := range a.Problems {
		got = append(got, itoa(p.Line)+":"+p.Username+":"+p.Reason)
	}
	if strings.Join(got, " ") != "4:bad user!:invalid_username 5:carl:invalid_expiration" {
		t.Fatalf("problems %v", got)
	}
	history := false
	for _, u := range a.Unmapped {
		history = history || (u.What == "cards" && u.Count == 1)
	}
	if !history {
		t.Fatalf("unmapped %+v", a.Unmapped)
	}
	// Without partial the problems import nothing.
	j = e.startPanel(j, StartInput{})
	if j.State != "failed" || j.Error != "import_refused" || e.scalar(`SELECT count(*) FROM users`) != 0 || e.scalar(`SELECT count(*) FROM managers`) != 1 {
		t.Fatalf("%+v", j)
	}
	j = e.legacy("panel.zip", panelZip(t, "testdata/panel"), StartInput{})
	j = e.startPanel(j, StartInput{Partial: true})
	if j.State != "done" || j.Created != 7 || j.Failed != 4 || j.RowsDone != 11 {
		t.Fatalf("%+v", j)
	}
	lines := []string{}
	for _, l := range j.Lines {
		lines = append(lines, itoa(l.Line)+":"+l.Column+":"+l.Reason)
	}
	sort.Strings(lines)
	// A code twice in the file: the second is taken by the first at write.
	want := "4:users.csv: Username:invalid_username 5:cards.csv: Code:code_taken 5:users.csv: Expiry:invalid_expiration 6:users.csv: Manager:invalid_parent_id"
	if strings.Join(lines, " ") != want {
		t.Fatalf("lines %v", lines)
	}
	// The tree with its balances through the journal.
	north := e.scalar(`SELECT id FROM managers WHERE username = 'north'`)
	if e.scalar(`SELECT parent_id FROM managers WHERE username = 'north-a'`) != north || e.scalar(`SELECT balance FROM managers WHERE id = ?`, north) != 150500 ||
		e.scalar(`SELECT count(*) FROM manager_journal WHERE kind = 'opening_balance'`) != 2 {
		t.Fatal("managers")
	}
	// Plans with price and rates.
	if e.scalar(`SELECT price + rate_down_kbps * 1000000 FROM profiles WHERE name = 'Home 10M'`) != 25000+10000*1000000 ||
		e.scalar(`SELECT duration_days FROM profiles WHERE name = 'Day'`) != 1 {
		t.Fatal("plans")
	}
	// Subscribers: manager, profile, expiration, balance; a hashed password
	// kept hashed.
	if e.scalar(`SELECT count(*) FROM users u JOIN managers m ON m.id = u.parent_id JOIN profiles p ON p.id = u.profile_id
		WHERE u.username = 'ali' AND m.username = 'north-a' AND p.name = 'Home 10M' AND u.expiration = '2026-12-31 00:00:00' AND u.balance = 12500`) != 1 {
		t.Fatal("ali")
	}
	if pw := e.password("badr"); pw != aaa.LegacyHashPrefix+"md5:5f4dcc3b5aa765d61d8327deb882cf99" {
		t.Fatalf("badr %q", pw)
	}
	// Series with their unused cards.
	if e.scalar(`SELECT count(*) FROM card_batches b JOIN profiles p ON p.id = b.plan_id JOIN managers m ON m.id = b.owner_manager_id
		WHERE b.name = 'Day pass' AND b.card_mode = 'voucher_account' AND p.name = 'Day' AND m.username = 'north' AND b.processed = 1 AND b.face_value = 1500`) != 1 {
		t.Fatal("Day pass")
	}
	if e.scalar(`SELECT count(*) FROM cards WHERE code IN ('70001111', '80001111')`) != 2 || e.scalar(`SELECT count(*) FROM cards`) != 2 {
		t.Fatal("cards")
	}
	// Again with skip: nothing new, nothing doubled.
	j = e.legacy("panel.zip", panelZip(t, "testdata/panel"), StartInput{})
	j = e.startPanel(j, StartInput{Partial: true, OnDuplicate: "skip"})
	if j.State != "done" || j.Created != 0 || j.Skipped != 8 || j.Failed != 3 || e.scalar(`SELECT count(*) FROM card_batches`) != 2 ||
		e.scalar(`SELECT balance FROM managers WHERE id = ?`, north) != 150500 {
		t.Fatalf("%+v", j)
	}
}

// Export as the CSV set, import into another tenant: the same managers,
// plans, subscribers and cards.
func TestLegacyPanelExportRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	j := e.legacy("panel.zip", panelZip(t, "testdata/panel"), StartInput{})
	if j = e.startPanel(j, StartInput{Partial: true}); j.State != "done" {
		t.Fatalf("%+v", j)
	}
	var out bytes.Buffer
	if err := Export(e.ctx, e.owner, ExportInput{Format: DialectCSV}, &out); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil || len(zr.File) != 5 {
		t.Fatalf("%v %d", err, len(zr.File))
	}
	xrtest.CreateTenant(t, e.a, app.NewTenant{Slug: "beta"})
	ten := xrtest.Acquire(t, e.a, "beta")
	b := &env{t: t, a: e.a, ten: ten, owner: xrtest.System(t, ten), ctx: e.ctx}
	j = b.legacy("acme-legacy.zip", out.String(), StartInput{})
	if j = b.startPanel(j, StartInput{}); j.State != "done" || j.Failed != 0 {
		t.Fatalf("%+v %+v", j, j.Lines)
	}
	dump := func(x *env) string {
		var parts []string
		for _, q := range []string{
			`SELECT group_concat(m.username || '<' || CASE WHEN p.parent_id IS NULL THEN '' ELSE p.username END || '=' || m.balance, ' ') FROM (SELECT * FROM managers ORDER BY username) m
				LEFT JOIN managers p ON p.id = m.parent_id WHERE m.parent_id IS NOT NULL`,
			`SELECT group_concat(name || ':' || price || ':' || rate_down_kbps || '/' || rate_up_kbps || ':' || duration_days, ' ') FROM (SELECT * FROM profiles ORDER BY name)`,
			`SELECT group_concat(u.username || ':' || COALESCE(p.name, '') || ':' || COALESCE(u.expiration, '') || ':' || u.balance || ':' || m.username || ':' || u.email, ' ')
				FROM (SELECT * FROM users ORDER BY username) u LEFT JOIN profiles p ON p.id = u.profile_id JOIN managers m ON m.id = u.parent_id`,
			`SELECT group_concat(b.name || ':' || b.card_mode || ':' || b.face_value || ':' || c.code || ':' || c.serial || ':' || COALESCE(c.username, '') || ':' || c.state, ' ')
				FROM (SELECT * FROM cards ORDER BY code) c JOIN card_batches b ON b.id = c.batch_id`,
		} {
			var s string
			if err := x.ten.DB.R.QueryRow(q).Scan(&s); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, "\n")
	}
	if a, z := dump(e), dump(b); a != z {
		t.Fatalf("round trip differs:\n%s\n---\n%s", a, z)
	}
	for _, u := range []string{"ali", "badr"} {
		if e.password(u) != b.password(u) {
			t.Fatalf("%s's password", u)
		}
	}
	xrtest.WantReason(t, CheckExport(e.owner, &ExportInput{Format: "xml"}), 400, "invalid_enum")
}

// The docs' table lists every column of the set.
func TestPanelColumnsDocumented(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docs/legacy-csv-set.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for file, fields := range PanelColumns() {
		i := strings.Index(doc, "### "+file+".csv")
		if i < 0 {
			t.Fatalf("%s.csv not documented", file)
		}
		sec := doc[i+4:]
		if j := strings.Index(sec, "### "); j >= 0 {
			sec = sec[:j]
		}
		for _, f := range fields {
			if !strings.Contains(sec, "| `"+f.Name+"` |") {
				t.Errorf("%s.csv: column %s not documented", file, f.Name)
			}
		}
	}
}

// A set's import cancelled after its first chunk resumes from the one
// checkpoint over all its files: nothing twice, every balance once.
func TestLegacyPanelCancelAndResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	SetChunkRows(e.a, 2)
	j := e.legacy("panel.zip", panelZip(t, "testdata/panel"), StartInput{})
	if _, err := StartLegacyJob(e.ctx, e.owner, j.ID, StartInput{Partial: true}); err != nil {
		t.Fatal(err)
	}
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	xrtest.Exec(t, e.ten, `UPDATE import_runs SET state = 'running' WHERE id = ?`, j.ID)
	if c, err := CancelLegacyJob(e.ctx, e.owner, j.ID); err != nil || !c.CancelRequested {
		t.Fatalf("%+v %v", c, err)
	}
	e.runJob(*j.JobID)
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	if j.State != "cancelled" || j.RowsDone != 2 || j.Created != 2 || e.scalar(`SELECT count(*) FROM managers`) != 3 {
		t.Fatalf("cancelled %+v", j)
	}
	xrtest.Exec(t, e.ten, `UPDATE import_runs SET state = 'running', cancel_requested = 0, finished_at = NULL WHERE id = ?`, j.ID)
	e.runJob(*j.JobID)
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	if j.State != "done" || j.RowsDone != 11 || j.Created != 7 || j.Failed != 4 {
		t.Fatalf("resumed %+v", j)
	}
	if e.scalar(`SELECT count(*) FROM managers`) != 4 || e.scalar(`SELECT sum(balance) FROM managers`) != 170500 ||
		e.scalar(`SELECT count(*) FROM users`) != 2 || e.scalar(`SELECT count(*) FROM cards`) != 2 || e.scalar(`SELECT count(*) FROM card_batches`) != 2 {
		t.Fatal("resumed import differs")
	}
}
