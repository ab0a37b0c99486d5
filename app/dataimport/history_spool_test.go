package dataimport

import (
	"os"
	"strings"
	"testing"

	"xr/app"
	"xr/internal/xrtest"
)

// The history is written by ranges of subscribers (one spool file each):
// the lowest range's sessions are stored first; a job that dies in the
// middle of a range is resumed without storing a session twice, and the
// traffic sums, flushed at each range's end, come out exact.
func TestLegacyHistoryRangesCrashResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	SetChunkRows(e.a, 2) // ranges of about 20 sessions: 50 sessions over 5 subscribers make 3
	var b strings.Builder
	b.WriteString("INSERT INTO `radcheck` (`username`,`attribute`,`op`,`value`) VALUES ")
	for u := range 5 {
		if u > 0 {
			b.WriteString(",")
		}
		b.WriteString("('r-" + itoa(u) + "','Cleartext-Password',':=','pw')")
	}
	b.WriteString(";\nINSERT INTO `radacct` (`acctsessionid`,`username`,`acctstarttime`,`acctsessiontime`,`acctinputoctets`,`acctoutputoctets`) VALUES ")
	for i := range 53 {
		if i > 0 {
			b.WriteString(",")
		}
		user := "r-" + itoa(i%5)
		if i >= 50 { // 3 rows of a username the dump has no subscriber for
			user = "nobody"
		}
		b.WriteString("('s" + itoa(i) + "','" + user + "','2026-04-01 1" + itoa(i%10) + ":00:00',60,10,20)")
	}
	b.WriteString(";\n")
	j := e.legacy("radius.sql", b.String(), StartInput{})
	job := e.startedJob(j)
	// history_rows counts the 3 skipped rows, then the sessions in range
	// order: 19 is the 16th session, in the second range (sessions 11-30).
	xrtest.Exec(t, e.ten, `CREATE TRIGGER die AFTER UPDATE OF history_rows ON import_runs WHEN NEW.history_rows = 19 BEGIN SELECT RAISE(ABORT, 'disk gone'); END`)
	if _, err := runLegacy(e.ctx, &app.JobContext{Tenant: e.ten, Job: job}); err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Fatalf("the chunk should fail: %v", err)
	}
	if got := e.scalar(`SELECT count(*) FROM radius_sessions`); got != 14 || e.scalar(`SELECT history_rows FROM import_runs`) != 17 ||
		e.scalar(`SELECT history_rollup_rows FROM import_runs`) != 13 || e.scalar(`SELECT sum(sessions) FROM usage_rollups WHERE grain = 'd'`) != 10 {
		t.Fatalf("after the failed chunk: %d sessions, rollups %d", got, e.scalar(`SELECT sum(sessions) FROM usage_rollups WHERE grain = 'd'`))
	}
	// The first range is the lowest subscriber id, stored whole first.
	if e.scalar(`SELECT count(DISTINCT user_id) FROM (SELECT user_id FROM radius_sessions ORDER BY id LIMIT 10)`) != 1 ||
		e.scalar(`SELECT min(user_id) FROM radius_sessions`) != e.scalar(`SELECT min(id) FROM users WHERE username LIKE 'r-%'`) {
		t.Fatal("the first range should be the lowest subscriber's sessions")
	}
	if _, err := os.Stat(spoolDir(e.ten, j.ID)); !os.IsNotExist(err) {
		t.Fatalf("spool left after the failed run: %v", err)
	}
	xrtest.Exec(t, e.ten, `DROP TRIGGER die`)
	if _, err := runLegacy(e.ctx, &app.JobContext{Tenant: e.ten, Job: job}); err != nil {
		t.Fatal(err)
	}
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	if j.State != "done" || e.scalar(`SELECT count(*) FROM radius_sessions`) != 50 || e.scalar(`SELECT count(DISTINCT acct_session_id) FROM radius_sessions`) != 50 ||
		e.scalar(`SELECT history_rows FROM import_runs`) != 53 || e.scalar(`SELECT history_skipped FROM import_runs`) != 3 ||
		e.scalar(`SELECT sum(sessions) FROM usage_rollups WHERE grain = 'd'`) != 50 || e.scalar(`SELECT sum(input_octets) FROM usage_rollups WHERE grain = 'h'`) != 500 ||
		e.scalar(`SELECT max(sessions) FROM usage_rollups WHERE grain = 'd'`) != 10 {
		t.Fatalf("resumed %+v: %d sessions", j, e.scalar(`SELECT count(*) FROM radius_sessions`))
	}
	if _, err := os.Stat(spoolDir(e.ten, j.ID)); !os.IsNotExist(err) {
		t.Fatalf("spool left after the job: %v", err)
	}
}

// startedJob starts an analysed legacy job and returns its import job, to
// be run by the test (runLegacy) rather than by the runner.
func (e *env) startedJob(j *Job) *app.Job {
	e.t.Helper()
	if _, err := StartLegacyJob(e.ctx, e.owner, j.ID, StartInput{}); err != nil {
		e.t.Fatal(err)
	}
	j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
	job, err := app.GetJob(e.ctx, e.ten.DB.R, *j.JobID)
	if err != nil {
		e.t.Fatal(err)
	}
	return job
}
