package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"xr/app"
)

func TestImportUsersCommand(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	file := filepath.Join(dir, "users.csv")
	write := func(s string) { os.WriteFile(file, []byte(s), 0o600) }

	write("username,password,email,balance\nann,pw1,ann@x.example,5\nbob,,bob@x.example,\ncid,pw3,nope,\n")
	r := runXR(t, dir, "import", "users", "--tenant", "acme", "--file", file)
	if r.code == 0 || !strings.Contains(r.stdout, "line 3: password_required (password) [bob]") || !strings.Contains(r.stdout, "line 4: invalid_email (email) [cid]") ||
		!strings.Contains(r.stdout, "nothing imported") {
		t.Fatalf("all-or-nothing: %+v", r)
	}
	// --dry-run --partial reports what would be imported; --json is one object.
	j := mustOK(t, runXR(t, dir, "import", "users", "--tenant", "acme", "--file", file, "--dry-run", "--partial", "--json")).json(t)
	if j["imported"].(float64) != 1 || j["failed"].(float64) != 2 || j["dry_run"] != true {
		t.Fatalf("%v", j)
	}
	r = mustOK(t, runXR(t, dir, "import", "users", "--tenant", "acme", "--file", file, "--partial"))
	if !strings.Contains(r.stdout, "imported 1 of 3 rows into acme (1 created, 0 updated), 0 skipped, 2 refused") {
		t.Fatalf("%q", r.stdout)
	}
	// A refused import still reports its lines: with --json inside the one
	// error object on stdout, exit 1.
	write("username,password\nann,again\n")
	r = runXR(t, dir, "import", "users", "--tenant", "acme", "--file", file, "--json")
	e, _ := r.json(t)["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	if r.code != 1 || r.stderr != "" || e["reason"] != "import_refused" || d["refused"] != float64(1) ||
		d["errors"].([]any)[0].(map[string]any)["reason"] != "username_taken" {
		t.Fatalf("%+v", r)
	}
	r = runXR(t, dir, "import", "users", "--tenant", "acme", "--file", file)
	if r.code != 1 || !strings.Contains(r.stdout, "line 2: username_taken (username) [ann]") || !strings.Contains(r.stderr, "[import_refused, field file") {
		t.Fatalf("%+v", r)
	}
	write("nom,password\nx,y\n")
	mustFail(t, runXR(t, dir, "import", "users", "--tenant", "acme", "--file", file), "mapping_required")
	mustFail(t, runXR(t, dir, "import", "users", "--tenant", "acme", "--file", file, "--mapping", `{"username":"login"}`), "unknown_column")
	// --mapping names the columns; --on-duplicate update rewrites an existing subscriber.
	write("nom,pin,courriel\nann,newpw,ann2@x.example\n")
	r = mustOK(t, runXR(t, dir, "import", "users", "--tenant", "acme", "--file", file, "--mapping", `{"username":"nom","password":"PIN","email":"courriel"}`,
		"--on-duplicate", "update"))
	if !strings.Contains(r.stdout, "(0 created, 1 updated)") {
		t.Fatalf("%q", r.stdout)
	}
	// XLSX, the same engine: columns named in Arabic.
	xf := excelize.NewFile()
	for i, row := range [][]any{{"اسم المستخدم", "كلمة المرور"}, {"xl1", "pw-xl1"}} {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		xf.SetSheetRow("Sheet1", cell, &row)
	}
	xlsx := filepath.Join(dir, "users.xlsx")
	if err := xf.SaveAs(xlsx); err != nil {
		t.Fatal(err)
	}
	r = mustOK(t, runXR(t, dir, "import", "users", "--tenant", "acme", "--file", xlsx))
	if !strings.Contains(r.stdout, "imported 1 of 1 rows into acme (1 created, 0 updated)") {
		t.Fatalf("xlsx: %q", r.stdout)
	}
	write("username,password\nzed,pw\n")
	mustFail(t, runXR(t, dir, "import", "users", "--tenant", "acme", "--file", file, "--parent", "ghost"), "invalid_parent_id")
	mustFail(t, runXR(t, dir, "import", "users", "--tenant", "nope", "--file", file), "tenant_not_found")
	mustUsage(t, runXR(t, dir, "import", "users", "--tenant", "acme"), "flag_required, flag --file", "xr import users [flags]")
}

func TestDemoSeedsSubscribers(t *testing.T) {
	dir := t.TempDir()
	g := &globals{data: dir, out: io.Discard, errOut: io.Discard}
	if err := seedDemo(g, "3799"); err != nil {
		t.Fatal(err)
	}
	a, err := g.open(app.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ten, release, err := a.Acquire(demoSlug)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if n := mustCount(t, ten, context.Background()); n != demoSubscribers {
		t.Fatalf("demo has %d subscribers", n)
	}
	// The rest of the demo's shape: TestDemoSeedThroughAPI.
	var active int
	if err := ten.DB.R.QueryRow(`SELECT COUNT(*) FROM users WHERE username LIKE 'user000%' AND expiration > ?`, app.StampNow()).Scan(&active); err != nil || active < 50 {
		t.Fatalf("%d active demo subscribers among the first 100 (%v)", active, err)
	}
}

// mustCount is a subscriber count that failed the test if unreadable.
func mustCount(t *testing.T, ten *app.Tenant, ctx context.Context) int64 {
	t.Helper()
	n, err := ten.CountUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
