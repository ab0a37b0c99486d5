package dataimport

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/xrtest"
)

// importLegacy analyses and starts a legacy upload, runs its job and
// returns the finished run and its analysis.
func (e *env) importLegacy(name, body string, in StartInput) (*Job, Analysis) {
	e.t.Helper()
	j := e.legacy(name, body, in)
	if _, err := StartLegacyJob(e.ctx, e.owner, j.ID, in); err != nil {
		e.t.Fatal(err)
	}
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	e.runJob(*j.JobID)
	j, err := GetLegacyJob(e.ctx, e.owner, j.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	var a Analysis
	if err := json.Unmarshal(j.Analysis, &a); err != nil {
		e.t.Fatal(err)
	}
	return j, a
}

func (e *env) text(q string, args ...any) string {
	e.t.Helper()
	var s string
	if err := e.ten.DB.R.QueryRow(q, args...).Scan(&s); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return s
}

type storedPlan struct{ up, down, sim, bytes int64 }

func (e *env) plan(name string) storedPlan {
	e.t.Helper()
	var p storedPlan
	if err := e.ten.DB.R.QueryRow(`SELECT rate_up_kbps, rate_down_kbps, simultaneous_use, bytes_limit FROM profiles WHERE name = ?`, name).
		Scan(&p.up, &p.down, &p.sim, &p.bytes); err != nil {
		e.t.Fatalf("plan %s: %v", name, err)
	}
	return p
}

func TestCopyValueEscapes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{`a\tb`: "a\tb", `\\N`: `\N`, `\101\x42\x4`: "AB\x04", `x\`: `x\`, `\b\f\n\r\v\q`: "\b\f\n\r\vq", `plain`: "plain"} {
		if got := copyValue([]byte(in)); got.Null || got.S != want {
			t.Errorf("%q: %q want %q", in, got.S, want)
		}
	}
	if !copyValue([]byte(`\N`)).Null {
		t.Fatal(`\N is NULL`)
	}
}

// A pg_dump in its default COPY format imports like the INSERT dumps:
// subscribers, plans, NAS, hashed passwords and session history.
func TestLegacyPostgresCOPYImport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	raw, err := os.ReadFile("testdata/freeradius_pg_copy.sql")
	if err != nil {
		t.Fatal(err)
	}
	j, a := e.importLegacy("radius.sql", string(raw), StartInput{})
	if a.Format != "postgresql" || a.Counts.Users != 4 || a.Counts.Sessions != 3 || a.Counts.PostAuth != 1 || a.Counts.NAS != 1 || a.Importable != 4 ||
		a.Passwords["cleartext"] != 2 || a.Passwords["ssha2-256"] != 1 || a.Passwords["crypt"] != 1 {
		t.Fatalf("analysis %+v", a)
	}
	if j.State != "done" || j.Created != 4 {
		t.Fatalf("%+v", j)
	}
	if e.password("pg-ann") != "tab\there\\back" || e.password("pg-bob") != `\N literal and AB` ||
		!strings.HasPrefix(e.password("pg-dee"), aaa.LegacyHashPrefix+"crypt:$6$saltsalt$") {
		t.Fatalf("passwords %q %q %q", e.password("pg-ann"), e.password("pg-bob"), e.password("pg-dee"))
	}
	if e.text(`SELECT p.name FROM users u JOIN profiles p ON p.id = u.profile_id WHERE u.username = 'pg-bob'`) != "fiber" ||
		e.text(`SELECT expiration FROM users WHERE username = 'pg-bob'`) != "2027-02-01 00:00:00" ||
		e.text(`SELECT static_ip FROM users WHERE username = 'pg-ann'`) != "10.40.0.2" {
		t.Fatal("subscribers")
	}
	if p := e.plan("fiber"); p.up != 10000 || p.down != 50000 {
		t.Fatalf("fiber %+v", p)
	}
	if e.scalar(`SELECT count(*) FROM nas WHERE ip = '10.9.0.1'`) != 1 {
		t.Fatal("nas")
	}
	// History: pg-ann's two sessions (the open one closed at start plus
	// its time, the +02 start read as UTC); ghost's is skipped.
	if h := a.History; h == nil || h.State != "done" || h.Rows != 3 || h.Imported != 2 || h.Skipped != 1 || h.InputOctets != 1010 || h.OutputOctets != 5020 {
		t.Fatalf("history %+v", a.History)
	}
	type sess struct{ start, stop, cause string }
	got := map[string]sess{}
	rows, err := e.ten.DB.R.Query(`SELECT s.acct_session_id, s.start_time, s.stop_time, s.stop_cause FROM radius_sessions s JOIN users u ON u.id = s.user_id
		WHERE u.username = 'pg-ann' AND s.close_reason = 'imported' AND s.nas_id IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var s sess
		if err := rows.Scan(&id, &s.start, &s.stop, &s.cause); err != nil {
			t.Fatal(err)
		}
		got[id] = s
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if got["s-100"] != (sess{"2026-02-01 10:15:00", "2026-02-01 11:15:00", "user_request"}) || got["s-101"] != (sess{"2026-02-01 08:45:00", "2026-02-01 08:55:00", "lost_service"}) {
		t.Fatalf("sessions %+v", got)
	}
	if n := e.scalar(`SELECT sessions FROM usage_rollups r JOIN users u ON u.id = r.user_id WHERE u.username = 'pg-ann' AND r.grain = 'd'`); n != 2 {
		t.Fatalf("day rollup sessions %d", n)
	}
	if n := e.scalar(`SELECT output_octets FROM usage_rollups r JOIN users u ON u.id = r.user_id WHERE u.username = 'pg-ann' AND r.grain = 'h' AND r.bucket = unixepoch('2026-02-01 10:00:00')`); n != 5000 {
		t.Fatalf("hour rollup %d", n)
	}
	if n := e.scalar(`SELECT count(*) FROM import_history_users`); n != 0 {
		t.Fatalf("the phase's subscribers were kept: %d", n)
	}
	// The export writes the hashes back under their attributes.
	var out bytes.Buffer
	if err := Export(e.ctx, e.owner, ExportInput{Format: "postgresql"}, &out); err != nil {
		t.Fatal(err)
	}
	if x := out.String(); !strings.Contains(x, "('pg-dee','Crypt-Password',':=','$6$saltsalt$") || !strings.Contains(x, "('pg-cid','SSHA2-256-Password',':=','LIxU") {
		t.Fatalf("export:\n%s", x)
	}
	// A re-run (update) does not import the history twice; sessions:false
	// leaves it out.
	off := false
	j, a = e.importLegacy("radius.sql", string(raw), StartInput{OnDuplicate: "update"})
	if j.State != "done" || j.Updated != 4 || a.History.Imported != 0 || a.History.Skipped != 3 {
		t.Fatalf("re-run %+v %+v", j, a.History)
	}
	_, a = e.importLegacy("radius.sql", string(raw), StartInput{OnDuplicate: "skip", Sessions: &off})
	if a.History.State != "off" || e.scalar(`SELECT count(*) FROM radius_sessions`) != 2 {
		t.Fatalf("history off %+v", a.History)
	}
}

// FreeRADIUS as CSV per table: a zip of the tables, or one table alone
// named by its file.
func TestLegacyFreeRADIUSCSVTables(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tables := zipOf(t, map[string]string{
		"radius/radcheck.csv": "id,username,attribute,op,value\n1,csv-ann,Cleartext-Password,:=,\"a,b \"\"c\"\"\"\n2,csv-ann,Expiration,:=,March 03 2027\n" +
			"3,csv-ben,NT-Password,:=,8846F7EAEE8FB117AD06BDD830B7586C\n4,csv-cid,Crypt-Password,:=,abJnggxhB/yWI\n",
		"radius/radreply.csv":      "username,attribute,op,value\ncsv-ann,Framed-IP-Address,=,10.70.0.1\n",
		"radius/radusergroup.csv":  "username,groupname,priority\ncsv-ann,copper,1\ncsv-ben,copper,1\n",
		"radius/radgroupreply.csv": "id,groupname,attribute,op,value\n1,copper,Mikrotik-Rate-Limit,:=,1M/2M\n",
		"radius/radacct.csv": "radacctid,acctsessionid,username,nasipaddress,acctstarttime,acctupdatetime,acctstoptime,acctsessiontime,acctinputoctets,acctoutputoctets,acctterminatecause\n" +
			"1,c1,csv-ann,10.9.0.1,2026-03-01 09:00:00,\\N,2026-03-01 09:30:00,1800,100,200,Idle-Timeout\n",
		"README.txt": "not a table",
	})
	j, a := e.importLegacy("radius.zip", tables, StartInput{Partial: true})
	if j.Format != "csv" || a.Format != "csv" || a.Counts.Users != 3 || a.Importable != 3 || a.Counts.Sessions != 1 || len(a.Problems) != 0 {
		t.Fatalf("analysis %+v", a)
	}
	if j.State != "done" || j.Created != 3 || e.password("csv-cid") != aaa.LegacyHashPrefix+"crypt:abJnggxhB/yWI" || e.password("csv-ann") != `a,b "c"` || e.password("csv-ben") != aaa.LegacyHashPrefix+"nt:8846F7EAEE8FB117AD06BDD830B7586C" ||
		e.text(`SELECT expiration FROM users WHERE username = 'csv-ann'`) != "2027-03-03 00:00:00" ||
		e.text(`SELECT static_ip FROM users WHERE username = 'csv-ann'`) != "10.70.0.1" {
		t.Fatalf("%+v", j)
	}
	if p := e.plan("copper"); p.up != 1000 || p.down != 2000 {
		t.Fatalf("copper %+v", p)
	}
	if a.History.Imported != 1 || e.scalar(`SELECT session_time FROM radius_sessions WHERE acct_session_id = 'c1' AND stop_cause = 'idle_timeout'`) != 1800 {
		t.Fatalf("history %+v", a.History)
	}
	// One table alone, named by its file.
	_, a = e.importLegacy("radcheck.csv", "username,attribute,op,value\ncsv-dan,Cleartext-Password,:=,dan-pw\n", StartInput{})
	if a.Counts.Users != 1 || e.password("csv-dan") != "dan-pw" {
		t.Fatalf("single table %+v", a)
	}
}

// MikroTik User Manager, RouterOS v6 and v7: users, profiles with their
// limitations as plans, routers as NAS.
func TestLegacyUserManagerImport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	raw, err := os.ReadFile("testdata/usermanager_v6.rsc")
	if err != nil {
		t.Fatal(err)
	}
	j, a := e.importLegacy("um6.rsc", string(raw), StartInput{Partial: true})
	if j.Kind != "mikrotik" || a.Counts.Users != 3 || a.Importable != 2 || a.Counts.NAS != 1 || len(a.Problems) != 1 ||
		a.Problems[0] != (Problem{Line: 23, Username: "um6-cid", Reason: "password_required"}) {
		t.Fatalf("v6 analysis %+v", a)
	}
	unm := map[string]bool{}
	for _, u := range a.Unmapped {
		unm[u.Name] = true
	}
	if !unm["validity=12h"] || !unm["validity=99999w"] || unm["price"] || len(a.Unmapped) != 2 {
		t.Fatalf("unmapped %+v", a.Unmapped)
	}
	// Price and validity (4w2d: 30 days) from the profile, the uptime
	// limit (100h) from the limitation; biz's unlimited validity (0s)
	// leaves xr's default duration.
	for name, want := range map[string][3]int64{"home-10M": {150000, 30, 0}, "biz": {0, 30, 360000}} {
		var got [3]int64
		if err := e.ten.DB.R.QueryRow(`SELECT price, duration_days, seconds_limit FROM profiles WHERE name = ?`, name).Scan(&got[0], &got[1], &got[2]); err != nil || got != want {
			t.Fatalf("%s: price, days, seconds %v, want %v (%v)", name, got, want, err)
		}
	}
	if j.State != "done" || j.Created != 2 || e.password("um6-ben") != "with space" || e.scalar(`SELECT enabled FROM users WHERE username = 'um6-ben'`) != 0 ||
		e.text(`SELECT static_ip FROM users WHERE username = 'um6-ann'`) != "10.50.0.2" ||
		e.text(`SELECT p.name FROM users u JOIN profiles p ON p.id = u.profile_id WHERE u.username = 'um6-ann'`) != "home-10M" {
		t.Fatalf("v6 %+v", j)
	}
	if p := e.plan("home-10M"); p != (storedPlan{up: 2000, down: 10000, sim: 1, bytes: 50 << 30}) {
		t.Fatalf("home-10M %+v", p)
	}
	if p := e.plan("biz"); p != (storedPlan{up: 20000, down: 20000, sim: 3}) {
		t.Fatalf("biz %+v", p)
	}
	if e.scalar(`SELECT count(*) FROM nas WHERE ip = '10.9.0.1'`) != 1 {
		t.Fatal("v6 router")
	}

	raw, err = os.ReadFile("testdata/usermanager_v7.rsc")
	if err != nil {
		t.Fatal(err)
	}
	j, a = e.importLegacy("um7.rsc", string(raw), StartInput{Partial: true})
	if a.Counts.Users != 3 || a.Importable != 2 || j.Created != 2 || a.Problems[0].Username != "um7-cid" {
		t.Fatalf("v7 %+v %+v", a, j)
	}
	if e.password("um7-ann") != "um7-pw-1" || e.text(`SELECT static_ip FROM users WHERE username = 'um7-ann'`) != "10.60.0.9" ||
		e.text(`SELECT p.name FROM users u JOIN profiles p ON p.id = u.profile_id WHERE u.username = 'um7-ann'`) != "fiber-20M" ||
		e.text(`SELECT p.name FROM users u JOIN profiles p ON p.id = u.profile_id WHERE u.username = 'um7-ben'`) != "legacy 3M/6M x2" {
		t.Fatal("v7 subscribers")
	}
	if p := e.plan("fiber-20M"); p != (storedPlan{up: 4000, down: 20000, sim: 1, bytes: 100 << 30}) {
		t.Fatalf("fiber-20M %+v", p)
	}
	if e.scalar(`SELECT price FROM profiles WHERE name = 'fiber-20M'`) != 25000 || e.scalar(`SELECT duration_days FROM profiles WHERE name = 'fiber-20M'`) != 30 {
		t.Fatal("fiber-20M price and validity")
	}
	if p := e.plan("legacy 3M/6M x2"); p != (storedPlan{up: 3000, down: 6000, sim: 2}) {
		t.Fatalf("own plan %+v", p)
	}
	if e.scalar(`SELECT count(*) FROM nas WHERE ip = '10.9.0.2'`) != 1 {
		t.Fatal("v7 router")
	}
}

// The history phase stops after the chunk in which a cancel was asked and
// a resumed job goes on from its checkpoint without importing a session
// twice.
func TestLegacyHistoryCancelAndResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	SetChunkRows(e.a, 2)
	var b strings.Builder
	b.WriteString("INSERT INTO `radcheck` (`username`,`attribute`,`op`,`value`) VALUES ('h-ann','Cleartext-Password',':=','pw');\n")
	for i := range 7 {
		b.WriteString("INSERT INTO `radacct` (`acctsessionid`,`username`,`nasipaddress`,`acctstarttime`,`acctstoptime`,`acctsessiontime`,`acctinputoctets`,`acctoutputoctets`) VALUES ('h" +
			itoa(i) + "','h-ann','10.9.0.1','2026-04-0" + itoa(i+1) + " 10:00:00','2026-04-0" + itoa(i+1) + " 11:00:00',3600,1,2);\n")
	}
	j := e.legacy("radius.sql", b.String(), StartInput{})
	job := e.startedJob(j)
	// A cancel asked while the history runs: the first chunk commits,
	// then the phase stops.
	xrtest.Exec(t, e.ten, `CREATE TRIGGER cancel_mid AFTER UPDATE OF history_rows ON import_runs WHEN NEW.history_rows = 2
		BEGIN UPDATE import_runs SET cancel_requested = 1 WHERE id = NEW.id; END`)
	if _, err := runLegacy(e.ctx, &app.JobContext{Tenant: e.ten, Job: job}); err != nil {
		t.Fatal(err)
	}
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	if j.State != "cancelled" || e.scalar(`SELECT count(*) FROM radius_sessions`) != 2 || e.scalar(`SELECT history_rows FROM import_runs`) != 2 {
		t.Fatalf("cancelled %+v, %d sessions", j, e.scalar(`SELECT count(*) FROM radius_sessions`))
	}
	// Resumed (as after a crash): from the checkpoint on.
	xrtest.Exec(t, e.ten, `DROP TRIGGER cancel_mid`)
	xrtest.Exec(t, e.ten, `UPDATE import_runs SET state = 'running', cancel_requested = 0, finished_at = NULL`)
	if _, err := runLegacy(e.ctx, &app.JobContext{Tenant: e.ten, Job: job}); err != nil {
		t.Fatal(err)
	}
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	var a Analysis
	if err := json.Unmarshal(j.Analysis, &a); err != nil {
		t.Fatal(err)
	}
	if j.State != "done" || a.History.Imported != 7 || e.scalar(`SELECT count(DISTINCT acct_session_id) FROM radius_sessions`) != 7 ||
		e.scalar(`SELECT count(*) FROM radius_sessions`) != 7 || e.scalar(`SELECT sum(sessions) FROM usage_rollups WHERE grain = 'd'`) != 7 {
		t.Fatalf("resumed %+v %+v", j, a.History)
	}
}

// A job that dies mid-history (a chunk fails) is retried: the sessions of
// the committed chunks are not stored twice and their traffic, summed in
// memory when the job died, is summed again from the file.
func TestLegacyHistoryCrashResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	SetChunkRows(e.a, 2)
	var b strings.Builder
	b.WriteString("INSERT INTO `radcheck` (`username`,`attribute`,`op`,`value`) VALUES ('h-ann','Cleartext-Password',':=','pw'),('h-ben','Cleartext-Password',':=','pw');\n")
	b.WriteString("INSERT INTO `radacct` (`acctsessionid`,`username`,`acctstarttime`,`acctsessiontime`,`acctinputoctets`,`acctoutputoctets`) VALUES ")
	for i := range 7 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("('c" + itoa(i) + "','h-" + []string{"ann", "ben"}[i%2] + "','2026-04-01 10:0" + itoa(i) + ":00',60,10,20)")
	}
	b.WriteString(";\n")
	j := e.legacy("radius.sql", b.String(), StartInput{})
	job := e.startedJob(j)
	xrtest.Exec(t, e.ten, `CREATE TRIGGER die AFTER UPDATE OF history_rows ON import_runs WHEN NEW.history_rows = 6 BEGIN SELECT RAISE(ABORT, 'disk gone'); END`)
	if _, err := runLegacy(e.ctx, &app.JobContext{Tenant: e.ten, Job: job}); err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Fatalf("the chunk should fail: %v", err)
	}
	if e.scalar(`SELECT count(*) FROM radius_sessions`) != 4 || e.scalar(`SELECT history_rows FROM import_runs`) != 4 ||
		e.scalar(`SELECT history_rollup_rows FROM import_runs`) != 0 || e.scalar(`SELECT count(*) FROM usage_rollups`) != 0 {
		t.Fatalf("after the failed chunk: %d sessions", e.scalar(`SELECT count(*) FROM radius_sessions`))
	}
	xrtest.Exec(t, e.ten, `DROP TRIGGER die`)
	if _, err := runLegacy(e.ctx, &app.JobContext{Tenant: e.ten, Job: job}); err != nil {
		t.Fatal(err)
	}
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	if j.State != "done" || e.scalar(`SELECT count(*) FROM radius_sessions`) != 7 || e.scalar(`SELECT sum(sessions) FROM usage_rollups WHERE grain = 'd'`) != 7 ||
		e.scalar(`SELECT sum(input_octets) FROM usage_rollups WHERE grain = 'h'`) != 70 ||
		e.scalar(`SELECT sessions FROM usage_rollups r JOIN users u ON u.id = r.user_id WHERE u.username = 'h-ann' AND grain = 'h'`) != 4 {
		t.Fatalf("resumed %+v", j)
	}
}

func TestRouterOSDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"4w2d": 30 * 24 * time.Hour, "30d": 30 * 24 * time.Hour, "1d12h30m": 36*time.Hour + 30*time.Minute,
		"90s": 90 * time.Second, "0s": 0, "00:30:00": 30 * time.Minute, "1d00:00:01": 24*time.Hour + time.Second, "3600": time.Hour} {
		if got, ok := rosDuration(in); !ok || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "forever", "10x", "d", "1:2", "99999999d", "1d:00:00"} {
		if got, ok := rosDuration(in); ok {
			t.Errorf("%q read as %v", in, got)
		}
	}
}
