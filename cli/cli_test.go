package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"xr/app"
	"xr/app/identity"
)

const cliPassword = "Owner-pass-1"

type cliResult struct {
	code           int
	stdout, stderr string
}

// runXR runs the command line in-process, on the data directory dir.
func runXR(t testing.TB, dir string, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(append([]string{"--data", dir}, args...), &out, &errOut)
	return cliResult{code, out.String(), errOut.String()}
}

func (r cliResult) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("--json output is not one JSON object: %q (%v)", r.stdout, err)
	}
	if strings.Count(strings.TrimSpace(r.stdout), "\n") != 0 {
		t.Fatalf("--json output spans lines: %q", r.stdout)
	}
	return m
}

func mustOK(t testing.TB, r cliResult) cliResult {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d: stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	return r
}

// mustFail asserts a non-zero exit with a one-line reason on stderr that
// contains want, and nothing on stdout.
func mustFail(t testing.TB, r cliResult, want string) {
	t.Helper()
	if r.code == 0 {
		t.Fatalf("exit 0, want a refusal (%s): stdout %q", want, r.stdout)
	}
	if r.stdout != "" {
		t.Errorf("a refusal printed on stdout: %q", r.stdout)
	}
	line := strings.TrimSuffix(r.stderr, "\n")
	if line == "" || strings.Contains(line, "\n") {
		t.Errorf("stderr is not one line: %q", r.stderr)
	}
	if !strings.Contains(line, want) {
		t.Errorf("stderr %q does not say %q", line, want)
	}
}

// mustUsage asserts a usage mistake: exit 2, nothing on stdout, the
// refusal (containing want) then the command's usage line on stderr.
func mustUsage(t testing.TB, r cliResult, want, usage string) {
	t.Helper()
	if r.code != exitUsage {
		t.Fatalf("exit %d, want %d for a usage mistake (%s): stdout %q stderr %q", r.code, exitUsage, want, r.stdout, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("a refusal printed on stdout: %q", r.stdout)
	}
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], want) || !strings.HasPrefix(lines[0], "xr: ") ||
		lines[1] != "Usage: "+usage || !strings.HasPrefix(lines[2], "Run '") {
		t.Errorf("stderr is not refusal + usage line (%s, %s):\n%s", want, usage, r.stderr)
	}
}

func createArgs(slug string, extra ...string) []string {
	return append([]string{"tenant", "create", "--slug", slug, "--name", "Name of " + slug, "--admin-username", "owner",
		"--admin-email", "owner@" + slug + ".test", "--admin-password", cliPassword}, extra...)
}

// dirState is what a refused command must not change: the files of the
// data directory and the tenant list.
func dirState(t testing.TB, dir string) string {
	t.Helper()
	var files []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && !strings.HasSuffix(p, "-wal") && !strings.HasSuffix(p, "-shm") && !strings.HasSuffix(p, "instance.db") {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	list := runXR(t, dir, "tenant", "list", "--json").stdout
	return strings.Join(files, ",") + "|" + list
}

func TestTenantCreateRefusals(t *testing.T) {
	dir := t.TempDir()
	r := mustOK(t, runXR(t, dir, createArgs("acme")...))
	if !strings.Contains(r.stdout, "acme") || !strings.Contains(r.stdout, "1") {
		t.Fatalf("create output: %q", r.stdout)
	}
	before := dirState(t, dir)
	refusals := []struct {
		args []string
		want string
	}{
		{createArgs("A"), "invalid_slug"},
		{createArgs("x"), "invalid_slug"},
		{createArgs("bad_slug"), "invalid_slug"},
		{createArgs("a.b"), "invalid_slug"},
		{createArgs(strings.Repeat("s", 41)), "invalid_slug"},
		{createArgs("../../etc"), "invalid_slug"},
		{createArgs("acme"), "slug_taken"},
		{createArgs("www"), "slug_reserved"},
		{createArgs("fresh", "--admin-password", "password"), "password_too_weak"},
		{createArgs("fresh", "--admin-password", "Ab1"), "password_too_short"},
		{createArgs("fresh", "--tier", "huge"), "invalid_tier"},
		{createArgs("fresh", "--max-users", "lots"), "invalid_max_users"},
		{createArgs("fresh", "--max-users", "-5"), "invalid_max_users"},
		{createArgs("fresh", "--license-expires", "next week"), "invalid_license_expires"},
		{createArgs("fresh", "--name", ""), "name_required"},
		{createArgs("fresh", "--admin-email", "nope"), "invalid_email"},
		{createArgs("fresh", "--slug", ""), "invalid_slug"},
	}
	for _, c := range refusals {
		mustFail(t, runXR(t, dir, c.args...), c.want)
		if got := dirState(t, dir); got != before {
			t.Fatalf("refused %v changed the data directory:\n%s\n%s", c.args, before, got)
		}
	}
	mustUsage(t, runXR(t, dir, "tenant", "create"), "flag_required, flag --name", "xr tenant create [flags]")
	mustUsage(t, runXR(t, dir, createArgs("fresh", "--bogus-flag")...), "invalid_flag, flag --bogus-flag", "xr tenant create [flags]")
	if got := dirState(t, dir); got != before {
		t.Fatalf("usage mistakes changed the data directory:\n%s\n%s", before, got)
	}
	// The refused slug "fresh" was never half-created: it can be created now.
	mustOK(t, runXR(t, dir, createArgs("fresh")...))

	// Bad flags on a fresh directory leave no directory content behind.
	empty := filepath.Join(t.TempDir(), "new")
	mustFail(t, runXR(t, empty, createArgs("fresh", "--tier", "huge")...), "invalid_tier")
	if _, err := os.Stat(empty); err == nil {
		entries, _ := os.ReadDir(filepath.Join(empty, "tenants"))
		if len(entries) != 0 {
			t.Fatalf("refused create left files: %v", entries)
		}
	}
}

func TestTenantLifecycle(t *testing.T) {
	dir := t.TempDir()
	c := mustOK(t, runXR(t, dir, append(createArgs("acme", "--max-users", "50", "--license-expires", "2099-12-31"), "--json")...)).json(t)
	if c["id"] != float64(1) || c["slug"] != "acme" || c["owner_id"] != float64(1) {
		t.Fatalf("create --json: %v", c)
	}
	if _, err := os.Stat(filepath.Join(dir, "tenants", "acme.db")); err != nil {
		t.Fatal("no tenant file")
	}
	mustOK(t, runXR(t, dir, createArgs("beta")...))

	list := mustOK(t, runXR(t, dir, "tenant", "list", "--json")).json(t)
	rows, _ := list["tenants"].([]any)
	if len(rows) != 2 {
		t.Fatalf("list: %v", list)
	}
	first := rows[0].(map[string]any)
	if first["slug"] != "acme" || first["max_users"] != float64(50) || first["tier"] != "small" || first["license_expires_at"] != "2099-12-31 23:59:59" {
		t.Fatalf("list row: %v", first)
	}
	text := mustOK(t, runXR(t, dir, "tenant", "list")).stdout
	if !strings.Contains(text, "SLUG") || !strings.Contains(text, "beta") || !strings.Contains(text, "unlimited") {
		t.Fatalf("list text: %q", text)
	}

	show := mustOK(t, runXR(t, dir, "tenant", "show", "acme", "--json")).json(t)
	if show["license_status"] != "active" || show["users_count"] != float64(0) || show["name"] != "Name of acme" {
		t.Fatalf("show: %v", show)
	}
	mustFail(t, runXR(t, dir, "tenant", "show", "nope"), "not_found")

	up := mustOK(t, runXR(t, dir, "tenant", "update", "acme", "--name", "Acme ISP", "--max-users", "5000", "--json")).json(t)
	if up["name"] != "Acme ISP" || up["max_users"] != float64(5000) || up["tier"] != "large" {
		t.Fatalf("update: %v", up)
	}
	up = mustOK(t, runXR(t, dir, "tenant", "update", "acme", "--tier", "max", "--max-users", "unlimited", "--license-expires", "never", "--json")).json(t)
	if up["tier"] != "max" || up["max_users"] != nil || up["license_expires_at"] != nil || up["name"] != "Acme ISP" {
		t.Fatalf("update 2: %v", up)
	}
	up = mustOK(t, runXR(t, dir, "tenant", "update", "acme", "--block", "--reason", "unpaid", "--json")).json(t)
	if up["blocked"] != true || up["blocked_reason"] != "unpaid" {
		t.Fatalf("block: %v", up)
	}
	if s := mustOK(t, runXR(t, dir, "tenant", "show", "acme", "--json")).json(t); s["license_status"] != "blocked" {
		t.Fatalf("show blocked: %v", s)
	}
	before := dirState(t, dir)
	mustFail(t, runXR(t, dir, "tenant", "update", "acme", "--tier", "huge"), "invalid_tier")
	mustFail(t, runXR(t, dir, "tenant", "update", "acme", "--max-users", "-1"), "invalid_max_users")
	mustFail(t, runXR(t, dir, "tenant", "update", "ghost", "--name", "x"), "not_found")
	mustFail(t, runXR(t, dir, "tenant", "update", "acme", "--name", " "), "name_required")
	if dirState(t, dir) != before {
		t.Fatal("a refused update changed something")
	}

	mustFail(t, runXR(t, dir, "tenant", "delete", "beta"), "--yes")
	if _, err := os.Stat(filepath.Join(dir, "tenants", "beta.db")); err != nil {
		t.Fatal("delete without --yes removed the file")
	}
	d := mustOK(t, runXR(t, dir, "tenant", "delete", "beta", "--yes", "--json")).json(t)
	if d["deleted"] != "beta" {
		t.Fatalf("delete: %v", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "tenants", "beta.db")); err == nil {
		t.Fatal("tenant file left behind")
	}
	mustFail(t, runXR(t, dir, "tenant", "delete", "beta", "--yes"), "not_found")
	if rows := mustOK(t, runXR(t, dir, "tenant", "list", "--json")).json(t)["tenants"].([]any); len(rows) != 1 {
		t.Fatalf("after delete: %v", rows)
	}
}

func TestNASCommands(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	mustOK(t, runXR(t, dir, createArgs("beta")...))

	short := mustOK(t, runXR(t, dir, "nas", "add", "--tenant", "acme", "--name", "core", "--ip", "10.0.0.1", "--secret", "shortsecret", "--weak-secret", "--json"))
	if !strings.Contains(short.stderr, "warning") {
		t.Fatalf("no short-secret warning: %q", short.stderr)
	}
	n := short.json(t)
	if n["id"] != float64(1) || n["name"] != "core" || n["ip"] != "10.0.0.1" || strings.Contains(short.stdout, "shortsecret") {
		t.Fatalf("add: %s", short.stdout)
	}
	long := mustOK(t, runXR(t, dir, "nas", "add", "--tenant", "acme", "--name", "edge", "--ip", "10.0.0.2", "--secret", "a-much-longer-random-secret", "--type", "cisco", "--coa-port", "1700"))
	if strings.Contains(long.stderr, "warning") || !strings.Contains(long.stdout, "edge") {
		t.Fatalf("add long secret: %+v", long)
	}

	before := runXR(t, dir, "nas", "list", "--tenant", "acme", "--json").stdout
	mustFail(t, runXR(t, dir, "nas", "add", "--tenant", "acme", "--name", "dup", "--ip", "10.0.0.1", "--secret", "a-much-longer-random-secret"), "ip")
	mustFail(t, runXR(t, dir, "nas", "add", "--tenant", "beta", "--name", "dup", "--ip", "10.0.0.1", "--secret", "a-much-longer-random-secret"), "ip")
	mustFail(t, runXR(t, dir, "nas", "add", "--tenant", "acme", "--name", "x", "--ip", "not-an-ip", "--secret", "a-much-longer-random-secret"), "ip")
	mustFail(t, runXR(t, dir, "nas", "add", "--tenant", "acme", "--name", "x", "--ip", "10.0.0.9", "--secret", "a-much-longer-random-secret", "--type", "toaster"), "invalid_type")
	mustFail(t, runXR(t, dir, "nas", "add", "--tenant", "ghost", "--name", "x", "--ip", "10.0.0.9", "--secret", "a-much-longer-random-secret"), "ghost")
	mustUsage(t, runXR(t, dir, "nas", "add", "--name", "x", "--ip", "10.0.0.9", "--secret", "a-much-longer-random-secret"), "flag_required, flag --tenant", "xr nas add [flags]")
	if after := runXR(t, dir, "nas", "list", "--tenant", "acme", "--json").stdout; after != before {
		t.Fatalf("refusals changed the NAS list:\n%s\n%s", before, after)
	}

	list := mustOK(t, runXR(t, dir, "nas", "list", "--tenant", "acme", "--json"))
	nas, _ := list.json(t)["nas"].([]any)
	if len(nas) != 2 || strings.Contains(list.stdout, "secret-") || strings.Contains(list.stdout, "shortsecret") {
		t.Fatalf("list: %s", list.stdout)
	}
	if b := mustOK(t, runXR(t, dir, "nas", "list", "--tenant", "beta", "--json")).json(t)["nas"].([]any); len(b) != 0 {
		t.Fatalf("beta sees acme's NAS: %v", b)
	}
	text := mustOK(t, runXR(t, dir, "nas", "list", "--tenant", "acme")).stdout
	if !strings.Contains(text, "core") || !strings.Contains(text, "cisco") || !strings.Contains(text, "1700") {
		t.Fatalf("list text: %q", text)
	}

	mustOK(t, runXR(t, dir, "nas", "delete", "1", "--tenant", "acme"))
	mustFail(t, runXR(t, dir, "nas", "delete", "1", "--tenant", "acme"), "not_found")
	mustFail(t, runXR(t, dir, "nas", "delete", "abc", "--tenant", "acme"), "invalid_id")
	if l := mustOK(t, runXR(t, dir, "nas", "list", "--tenant", "acme", "--json")).json(t)["nas"].([]any); len(l) != 1 {
		t.Fatalf("after delete: %v", l)
	}
	// The operator's shell may register a lab NAS on loopback (the API
	// refuses it to tenant admins), with a warning that xr sends it
	// nothing unless serve allows private egress.
	lab := mustOK(t, runXR(t, dir, "nas", "add", "--tenant", "beta", "--name", "lab", "--ip", "127.0.0.1", "--secret", "a-much-longer-random-secret"))
	if !strings.Contains(lab.stderr, "warning: 127.0.0.1 is a loopback address") || !strings.Contains(lab.stderr, "--allow-private-egress") {
		t.Fatalf("loopback NAS warning: %q", lab.stderr)
	}
	// The freed IP can be registered again, by another tenant too.
	mustOK(t, runXR(t, dir, "nas", "add", "--tenant", "beta", "--name", "core", "--ip", "10.0.0.1", "--secret", "a-much-longer-random-secret"))
}

func TestBackupRestoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	mustOK(t, runXR(t, dir, createArgs("beta")...))
	nasAdd := func(slug, name, ip string) {
		mustOK(t, runXR(t, dir, "nas", "add", "--tenant", slug, "--name", name, "--ip", ip, "--secret", "a-much-longer-random-secret"))
	}
	names := func(slug string) string {
		var out []string
		for _, n := range mustOK(t, runXR(t, dir, "nas", "list", "--tenant", slug, "--json")).json(t)["nas"].([]any) {
			out = append(out, n.(map[string]any)["name"].(string))
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	nasAdd("acme", "kept", "10.1.0.1")
	nasAdd("beta", "beta-only", "10.2.0.1")
	out := filepath.Join(t.TempDir(), "acme.xrbak")
	b := mustOK(t, runXR(t, dir, "backup", "--tenant", "acme", "--out", out, "--json")).json(t)
	if b["tenant"] != "acme" || b["file"] != out {
		t.Fatalf("backup: %v", b)
	}
	mustFail(t, runXR(t, dir, "backup", "--tenant", "acme", "--out", out), "backup_failed")
	mustUsage(t, runXR(t, dir, "backup", "--tenant", "acme"), "flag_required, flag --out", "xr backup [flags]")
	mustFail(t, runXR(t, dir, "backup", "--tenant", "ghost", "--out", out+".2"), "ghost")
	betaOut := filepath.Join(t.TempDir(), "beta.xrbak")
	mustOK(t, runXR(t, dir, "backup", "--tenant", "beta", "--out", betaOut))

	nasAdd("acme", "after-backup", "10.1.0.2")
	if names("acme") != "after-backup,kept" {
		t.Fatal(names("acme"))
	}

	// Refusals change nothing.
	garbage := filepath.Join(t.TempDir(), "garbage.xrbak")
	os.WriteFile(garbage, bytes.Repeat([]byte("garbage!"), 1000), 0o600)
	truncated := filepath.Join(t.TempDir(), "truncated.xrbak")
	raw, _ := os.ReadFile(out)
	os.WriteFile(truncated, raw[:len(raw)/2], 0o600)
	mustFail(t, runXR(t, dir, "restore", "--tenant", "acme", "--from", garbage), "invalid_backup_file")
	mustFail(t, runXR(t, dir, "restore", "--tenant", "acme", "--from", truncated), "invalid_backup_file")
	mustFail(t, runXR(t, dir, "restore", "--tenant", "acme", "--from", filepath.Join(dir, "instance.db")), "invalid_backup_file")
	mustFail(t, runXR(t, dir, "restore", "--tenant", "acme", "--from", betaOut), "backup_of_other_tenant")
	mustUsage(t, runXR(t, dir, "restore", "--tenant", "acme"), "flag_required, flag --from", "xr restore [flags]")
	if names("acme") != "after-backup,kept" {
		t.Fatalf("a refused restore changed the tenant: %s", names("acme"))
	}

	r := mustOK(t, runXR(t, dir, "restore", "--tenant", "acme", "--from", out, "--json")).json(t)
	if r["tenant"] != "acme" {
		t.Fatalf("restore: %v", r)
	}
	if names("acme") != "kept" || names("beta") != "beta-only" {
		t.Fatalf("after restore: acme %q beta %q", names("acme"), names("beta"))
	}
	// The owner can still sign in to the restored tenant.
	a, err := app.Open(app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tt, release, err := a.Acquire("acme")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := identity.Login(context.Background(), a, tt, identity.LoginRequest{Email: "owner", Password: cliPassword}); err != nil {
		t.Fatal(err)
	}
}

func TestVersion(t *testing.T) {
	dir := t.TempDir()
	r := mustOK(t, runXR(t, dir, "version"))
	if strings.TrimSpace(r.stdout) != "xr "+app.Version {
		t.Fatalf("%q", r.stdout)
	}
	if v := mustOK(t, runXR(t, dir, "version", "--json")).json(t); v["version"] != app.Version {
		t.Fatalf("%v", v)
	}
	mustUsage(t, runXR(t, dir, "no-such-command"), "unknown_command", "xr [command]")
}

// syncBuffer is a bytes.Buffer safe for the server's logger goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// xr serve sees tenant create/delete and restore made by other commands on
// its data directory within about a second, serves a backup taken while it
// runs, and stops cleanly when its context ends.
func TestServeSeesCLIChanges(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	var logs syncBuffer
	g := &globals{data: dir, out: io.Discard, errOut: &logs, logLevel: "error"}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, g, serveOpts{http: "127.0.0.1:0", domain: "xr.test", noRadius: true}, func(addr, _ string) { addrc <- addr })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("serve ended: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start")
	}
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	}()
	get := func(host, path string) (int, map[string]any) {
		req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		json.NewDecoder(res.Body).Decode(&m)
		return res.StatusCode, m
	}
	hostKind := func(slug string) any {
		_, m := get(slug+".xr.test", "/api/v1/auth/context")
		d, _ := m["data"].(map[string]any)
		return d["host_kind"]
	}
	if code, _ := get("xr.test", "/healthz"); code != 200 {
		t.Fatalf("healthz %d", code)
	}
	if hostKind("acme") != "tenant" || hostKind("late") != "unknown" {
		t.Fatal("initial hosts")
	}
	// Polled on /readyz: a root route, outside the per-IP public buckets
	// (/auth/context has one of 20 a minute).
	waitTenants := func(n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			code, m := get("xr.test", "/readyz")
			d, _ := m["data"].(map[string]any)
			if code == 200 && d["tenants"] == float64(n) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the running server never saw %d tenants (%d %v); server log:\n%s", n, code, m, logs.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	mustOK(t, runXR(t, dir, createArgs("late")...))
	start := time.Now()
	waitTenants(2)
	t.Logf("running server saw the new tenant after %v", time.Since(start).Round(time.Millisecond))
	if hostKind("late") != "tenant" {
		t.Fatal("the new tenant's host does not resolve")
	}

	// A backup while the server runs, then a restore it sees.
	mustOK(t, runXR(t, dir, "nas", "add", "--tenant", "late", "--name", "one", "--ip", "10.3.0.1", "--secret", "a-much-longer-random-secret"))
	out := filepath.Join(t.TempDir(), "late.xrbak")
	mustOK(t, runXR(t, dir, "backup", "--tenant", "late", "--out", out))
	mustOK(t, runXR(t, dir, "nas", "add", "--tenant", "late", "--name", "two", "--ip", "10.3.0.2", "--secret", "a-much-longer-random-secret"))
	mustOK(t, runXR(t, dir, "restore", "--tenant", "late", "--from", out))
	if l := mustOK(t, runXR(t, dir, "nas", "list", "--tenant", "late", "--json")).json(t)["nas"].([]any); len(l) != 1 {
		t.Fatalf("after restore under a running server: %v", l)
	}

	mustOK(t, runXR(t, dir, "tenant", "delete", "late", "--yes"))
	waitTenants(1)
	if hostKind("late") != "unknown" {
		t.Fatal("the deleted tenant's host still resolves")
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
