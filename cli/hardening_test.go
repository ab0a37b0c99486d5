package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/app/identity"
	"xr/app/modules"
	"xr/app/subs"
)

// runXRIn runs the command line with stdin as its standard input.
func runXRIn(t testing.TB, dir, stdin string, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	code := RunIO(append([]string{"--data", dir}, args...), strings.NewReader(stdin), &out, &errOut)
	return cliResult{code, out.String(), errOut.String()}
}

// jsonError asserts the --json error contract: exit code, nothing on
// stderr, one object {"error":{code, reason, field, message}} on stdout,
// the message being the catalogue's sentence.
func jsonError(t testing.TB, r cliResult, exit int, code, reason string, field any) map[string]any {
	t.Helper()
	if r.code != exit {
		t.Fatalf("exit %d, want %d: stdout %q stderr %q", r.code, exit, r.stdout, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("--json error wrote on stderr: %q", r.stderr)
	}
	e, ok := r.json(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object: %s", r.stdout)
	}
	for _, k := range []string{"code", "reason", "field", "message"} {
		if _, ok := e[k]; !ok {
			t.Errorf("error object without %q: %s", k, r.stdout)
		}
	}
	if e["code"] != code || e["reason"] != reason || e["field"] != field {
		t.Fatalf("error %v, want code %s reason %s field %v", e, code, reason, field)
	}
	if e["message"] != enMessages[reason] {
		t.Errorf("message %q, want the catalogue's %q", e["message"], enMessages[reason])
	}
	d, _ := e["details"].(map[string]any)
	return d
}

func openInstance(t testing.TB, dir string) *app.App {
	t.Helper()
	a, err := modules.Open(app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func canLogin(t testing.TB, dir, slug, user, password string) bool {
	t.Helper()
	a := openInstance(t, dir)
	tt, release, err := a.Acquire(slug)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = identity.Login(context.Background(), a, tt, identity.LoginRequest{Email: user, Password: password})
	return err == nil
}

// --json applies to errors: one object on stdout, exit 1 for a refusal and
// 2 for a usage mistake, wherever --json stands on the line.
func TestErrorsAsJSON(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))

	d := jsonError(t, runXR(t, dir, "tenant", "show", "ghost", "--json"), 1, "ERR_NOT_FOUND", "tenant_not_found", "tenant")
	if d["tenant"] != "ghost" {
		t.Errorf("details %v", d)
	}
	jsonError(t, runXR(t, dir, append(createArgs("fresh", "--tier", "huge"), "--json")...), 1, "ERR_VALIDATION", "invalid_tier", "tier")
	jsonError(t, runXR(t, dir, append([]string{"--json"}, createArgs("acme")...)...), 1, "ERR_CONFLICT", "slug_taken", "slug")

	// Usage mistakes: the usage line travels in details.
	d = jsonError(t, runXR(t, dir, "--json", "nas", "add", "--bogus"), 2, "ERR_VALIDATION", "invalid_flag", "bogus")
	if d["usage"] != "xr nas add [flags]" {
		t.Errorf("usage %v", d)
	}
	jsonError(t, runXR(t, dir, "nas", "add", "--tenant", "acme", "--coa-port", "abc", "--json"), 2, "ERR_VALIDATION", "invalid_flag", "coa-port")
	d = jsonError(t, runXR(t, dir, "nas", "list", "--json"), 2, "ERR_VALIDATION", "flag_required", "tenant")
	if d["usage"] != "xr nas list [flags]" {
		t.Errorf("usage %v", d)
	}
	jsonError(t, runXR(t, dir, "user", "show", "--tenant", "acme", "--json"), 2, "ERR_VALIDATION", "invalid_arguments", nil)
	d = jsonError(t, runXR(t, dir, "tenat", "--json"), 2, "ERR_VALIDATION", "unknown_command", nil)
	if s, _ := d["suggestions"].([]any); len(s) != 1 || s[0] != "tenant" || d["command"] != "tenat" {
		t.Errorf("suggestions %v", d)
	}
	d = jsonError(t, runXR(t, dir, "tenant", "lst", "--json"), 2, "ERR_VALIDATION", "unknown_command", nil)
	if s, _ := d["suggestions"].([]any); len(s) != 1 || s[0] != "list" {
		t.Errorf("suggestions %v", d)
	}
	// A data directory without an instance, as JSON too.
	jsonError(t, runXR(t, filepath.Join(dir, "typo"), "tenant", "list", "--json"), 1, "ERR_VALIDATION", "no_instance", "data")
}

// Without --json an error is the catalogue's sentence on stderr, with the
// reason and field in brackets; a usage mistake adds the usage line; "did
// you mean" reads as a sentence.
func TestErrorsAsText(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	r := runXR(t, dir, append(createArgs("fresh"), "--admin-email", "nope")...)
	mustFail(t, r, "invalid_email")
	if want := "xr: " + enMessages["invalid_email"] + " [invalid_email, field "; !strings.HasPrefix(r.stderr, want) {
		t.Errorf("stderr %q, want it to start with %q", r.stderr, want)
	}
	r = runXR(t, dir, "nas", "list", "--tenant", "ghost")
	mustFail(t, r, "tenant_not_found")
	if r.stderr != "xr: "+enMessages["tenant_not_found"]+" [tenant_not_found, field tenant, tenant: ghost]\n" {
		t.Errorf("stderr %q", r.stderr)
	}

	r = runXR(t, dir, "tenat")
	mustUsage(t, r, "unknown_command", "xr [command]")
	if first := strings.SplitN(r.stderr, "\n", 2)[0]; first != `xr: There is no such command. ("tenat") Did you mean tenant? [unknown_command]` {
		t.Errorf("did-you-mean line %q", first)
	}
	r = runXR(t, dir, "user", "ad")
	mustUsage(t, r, "Did you mean add?", "xr user [command]")
	mustUsage(t, runXR(t, dir, "nas", "add", "--tenant", "acme", "--nam", "x"), enMessages["invalid_flag"]+" [invalid_flag, flag --nam", "xr nas add [flags]")
	mustUsage(t, runXR(t, dir, "tenant", "show", "a", "b"), "invalid_arguments", "xr tenant show --tenant SLUG [flags]")

	// Required flags say so in the help.
	help := mustOK(t, runXR(t, dir, "nas", "add", "--help")).stdout
	for _, f := range []string{"tenant", "name", "ip"} {
		if !strings.Contains(help, "--"+f+" string") || !regexpLine(help, "--"+f+" string", "(required)") {
			t.Errorf("help of nas add does not mark --%s required:\n%s", f, help)
		}
	}
	if regexpLine(help, "--secret string", "(required)") {
		t.Error("--secret is marked required though it may come from stdin or the environment")
	}
}

// regexpLine says whether the help line of flag contains want.
func regexpLine(help, flag, want string) bool {
	for _, l := range strings.Split(help, "\n") {
		if strings.Contains(l, flag) {
			return strings.Contains(l, want)
		}
	}
	return false
}

// A --data directory without an instance is refused by every command but
// serve --init, tenant create and demo, and is left as it was.
func TestDataDirWithoutInstanceRefused(t *testing.T) {
	good := t.TempDir()
	mustOK(t, runXR(t, good, createArgs("acme")...))
	empty := t.TempDir()
	for _, dir := range []string{filepath.Join(t.TempDir(), "typo"), empty} {
		for _, args := range [][]string{
			{"tenant", "list"}, {"tenant", "show", "acme"}, {"tenant", "update", "acme", "--name", "x"}, {"tenant", "delete", "acme", "--yes"},
			{"nas", "list", "--tenant", "acme"}, {"nas", "add", "--tenant", "acme", "--name", "n", "--ip", "10.0.0.1", "--secret", "a-much-longer-random-secret"},
			{"backup", "--tenant", "acme", "--out", filepath.Join(t.TempDir(), "b")}, {"restore", "--tenant", "acme", "--from", "x"},
			{"user", "list", "--tenant", "acme"}, {"plan", "list", "--tenant", "acme"}, {"token", "create", "--tenant", "acme", "--name", "n", "--full-access"},
			{"keys", "rotate"}, {"keys", "status"}, {"serve", "--http", "127.0.0.1:0", "--no-radius"},
		} {
			r := runXR(t, dir, args...)
			if r.code != 1 || !strings.Contains(r.stderr, "[no_instance, field data") {
				t.Errorf("%v on %s: exit %d stderr %q", args, dir, r.code, r.stderr)
			}
		}
		if dir == empty {
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("refused commands wrote into the empty directory: %v", entries)
			}
		} else if _, err := os.Stat(dir); err == nil {
			t.Errorf("refused commands created %s", dir)
		}
	}

	// serve --init creates the instance and serves (stopped by SIGTERM,
	// which serve itself is listening for by then).
	fresh := filepath.Join(t.TempDir(), "new")
	var errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- RunIO([]string{"--data", fresh, "--log-level", "error", "serve", "--init", "--http", "127.0.0.1:0", "--no-radius"}, strings.NewReader(""), io.Discard, &errOut)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(fresh, "instance.db")); err == nil {
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve --init ended with %d: %s", code, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("serve --init created no instance")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve --init exit %d: %s", code, errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve --init did not stop")
	}
	mustOK(t, runXR(t, fresh, "tenant", "list"))
}

// Secrets come from standard input or the environment, not only from a
// flag other users can read in the process list.
func TestSecretsFromStdinAndEnv(t *testing.T) {
	dir := t.TempDir()
	noPW := []string{"tenant", "create", "--slug", "acme", "--name", "Acme", "--admin-username", "owner", "--admin-email", "owner@acme.test"}
	mustOK(t, runXRIn(t, dir, "Stdin-pass-1\n", append(noPW, "--admin-password-stdin")...))
	if !canLogin(t, dir, "acme", "owner", "Stdin-pass-1") {
		t.Fatal("the owner's password read from stdin does not sign in")
	}
	t.Setenv("XR_ADMIN_PASSWORD", "Env-pass-22")
	beta := []string{"tenant", "create", "--tenant", "beta", "--name", "Beta", "--admin-username", "owner", "--admin-email", "owner@beta.test"}
	mustOK(t, runXR(t, dir, beta...))
	if !canLogin(t, dir, "beta", "owner", "Env-pass-22") {
		t.Fatal("the owner's password from XR_ADMIN_PASSWORD does not sign in")
	}
	before := dirState(t, dir)
	gamma := []string{"tenant", "create", "--slug", "gamma", "--name", "Gamma", "--admin-username", "owner", "--admin-email", "owner@gamma.test"}
	mustFail(t, runXRIn(t, dir, "Stdin-pass-1\n", append(gamma, "--admin-password", "Flag-pass-1", "--admin-password-stdin")...), "conflicting_flags")
	mustFail(t, runXRIn(t, dir, "", append(gamma, "--admin-password-stdin")...), "stdin_empty")
	if dirState(t, dir) != before {
		t.Fatal("a refused create changed the instance")
	}
	// update: stdin (no environment form: a variable left set would change
	// the password on every update).
	mustOK(t, runXRIn(t, dir, "Newer-pass-3\r\n", "tenant", "update", "--tenant", "acme", "--admin-password-stdin"))
	if !canLogin(t, dir, "acme", "owner", "Newer-pass-3") || canLogin(t, dir, "acme", "owner", "Stdin-pass-1") {
		t.Fatal("tenant update --admin-password-stdin did not change the password")
	}
	mustOK(t, runXR(t, dir, "tenant", "update", "acme", "--name", "Acme 2"))
	if !canLogin(t, dir, "acme", "owner", "Newer-pass-3") {
		t.Fatal("an update without a password flag changed the password (from the environment?)")
	}

	// NAS secrets: stdin, then the environment.
	nas := func(name, ip string) []string {
		return []string{"nas", "add", "--tenant", "acme", "--name", name, "--ip", ip, "--json"}
	}
	a := mustOK(t, runXRIn(t, dir, "secret-from-stdin-123\n", append(nas("s", "10.0.0.1"), "--secret-stdin")...)).json(t)
	t.Setenv("XR_NAS_SECRET", "secret-from-the-env-456")
	b := mustOK(t, runXR(t, dir, nas("e", "10.0.0.2")...)).json(t)
	inst := openInstance(t, dir)
	tt, release, err := inst.Acquire("acme")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for id, want := range map[float64]string{a["id"].(float64): "secret-from-stdin-123", b["id"].(float64): "secret-from-the-env-456"} {
		got, err := aaa.NASSecret(context.Background(), inst, tt, int64(id))
		if err != nil || string(got) != want {
			t.Errorf("NAS %v secret %q, %v; want %q", id, got, err, want)
		}
	}
	os.Unsetenv("XR_NAS_SECRET")
	mustFail(t, runXR(t, dir, "nas", "add", "--tenant", "acme", "--name", "x", "--ip", "10.0.0.3"), "secret_required")
}

// The command line refuses a NAS secret shorter than 16 characters unless
// --weak-secret (the API keeps the spec's rule: stored, with a warning).
func TestNASWeakSecretRefused(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	before := runXR(t, dir, "nas", "list", "--tenant", "acme", "--json").stdout
	short := strings.Repeat("s", minNASSecretLen-1)
	add := []string{"nas", "add", "--tenant", "acme", "--name", "n", "--ip", "10.0.0.1"}
	r := runXR(t, dir, append(add, "--secret", short)...)
	mustFail(t, r, "secret_too_short, field secret")
	if !strings.HasPrefix(r.stderr, "xr: "+enMessages["secret_too_short"]) {
		t.Errorf("stderr %q", r.stderr)
	}
	mustFail(t, runXRIn(t, dir, short+"\n", append(add, "--secret-stdin")...), "secret_too_short")
	jsonError(t, runXR(t, dir, append(add, "--secret", short, "--json")...), 1, "ERR_VALIDATION", "secret_too_short", "secret")
	if after := runXR(t, dir, "nas", "list", "--tenant", "acme", "--json").stdout; after != before {
		t.Fatalf("a refused secret stored a NAS:\n%s", after)
	}
	w := mustOK(t, runXR(t, dir, append(add, "--secret", short, "--weak-secret")...))
	if !strings.Contains(w.stderr, "warning") {
		t.Errorf("no warning for a weak secret: %q", w.stderr)
	}
	ok := mustOK(t, runXR(t, dir, "nas", "add", "--tenant", "acme", "--name", "m", "--ip", "10.0.0.2", "--secret", strings.Repeat("s", minNASSecretLen)))
	if ok.stderr != "" {
		t.Errorf("a 16-character secret warned: %q", ok.stderr)
	}
}

// --tenant names the tenant everywhere; the tenant commands keep the
// positional slug as an alias.
func TestTenantFlagEverywhere(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	pos := mustOK(t, runXR(t, dir, "tenant", "show", "acme", "--json")).stdout
	if flag := mustOK(t, runXR(t, dir, "tenant", "show", "--tenant", "acme", "--json")).stdout; flag != pos {
		t.Fatalf("--tenant %q, positional %q", flag, pos)
	}
	mustFail(t, runXR(t, dir, "tenant", "show", "acme", "--tenant", "beta"), "conflicting_flags")
	mustFail(t, runXR(t, dir, "tenant", "show"), "tenant_required")
	mustOK(t, runXR(t, dir, "tenant", "update", "--tenant", "acme", "--name", "Renamed"))
	if !strings.Contains(runXR(t, dir, "tenant", "show", "acme").stdout, "Renamed") {
		t.Fatal("update --tenant did not apply")
	}
	mustFail(t, runXR(t, dir, "tenant", "delete", "--tenant", "acme"), "yes_required")
	mustOK(t, runXR(t, dir, "tenant", "delete", "--tenant", "acme", "--yes"))
	if l := mustOK(t, runXR(t, dir, "tenant", "list", "--json")).json(t)["tenants"].([]any); len(l) != 0 {
		t.Fatalf("after delete --tenant: %v", l)
	}
}

// The scripting commands round-trip through the same app functions as the
// API: what they write, the API's functions read, and the token they mint
// authenticates.
func TestScriptingCommands(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	run := func(args ...string) cliResult { return runXR(t, dir, append([]string{}, args...)...) }

	// Plans.
	p := mustOK(t, run("plan", "add", "--tenant", "acme", "--name", "Home 50M", "--price", "25.5", "--days", "30", "--rate-down", "51200", "--rate-up", "10240", "--json")).json(t)
	if p["name"] != "Home 50M" || p["price"] != 25.5 || p["duration_days"] != float64(30) || p["rate_down_kbps"] != float64(51200) {
		t.Fatalf("plan add: %v", p)
	}
	mustFail(t, run("plan", "add", "--tenant", "acme", "--name", "Bad", "--price", "1.2345"), "invalid_price")
	mustUsage(t, run("plan", "add", "--tenant", "acme"), "flag_required, flag --name", "xr plan add [flags]")
	pl := mustOK(t, run("plan", "list", "--tenant", "acme", "--json")).json(t)
	if rows := pl["data"].([]any); len(rows) != 1 || rows[0].(map[string]any)["id"] != p["id"] {
		t.Fatalf("plan list: %v", pl)
	}
	if txt := mustOK(t, run("plan", "list", "--tenant", "acme")).stdout; !strings.Contains(txt, "NAME") || !strings.Contains(txt, "Home 50M") || !strings.Contains(txt, "25.5") {
		t.Fatalf("plan list text: %q", txt)
	}

	// Subscribers.
	u := mustOK(t, runXRIn(t, dir, "sub-pass-1\n", "user", "add", "--tenant", "acme", "--username", "ali", "--password-stdin", "--plan", "Home 50M",
		"--email", "ali@example.com", "--json")).json(t)
	if u["username"] != "ali" || u["profile_id"] != p["id"] || u["enabled"] != true {
		t.Fatalf("user add: %v", u)
	}
	t.Setenv("XR_USER_PASSWORD", "sub-pass-2")
	mustOK(t, run("user", "add", "--tenant", "acme", "--username", "bea", "--disabled"))
	mustFail(t, run("user", "add", "--tenant", "acme", "--username", "ali"), "username_taken")
	mustFail(t, run("user", "add", "--tenant", "acme", "--username", "cid", "--plan", "No such plan"), "profile_not_found")
	list := mustOK(t, run("user", "list", "--tenant", "acme", "--json")).json(t)
	rows := list["data"].([]any)
	if len(rows) != 2 || rows[0].(map[string]any)["username"] != "ali" || list["meta"].(map[string]any)["total"] != float64(2) {
		t.Fatalf("user list: %v", list)
	}
	if f := mustOK(t, run("user", "list", "--tenant", "acme", "--filter", "enabled=false", "--json")).json(t)["data"].([]any); len(f) != 1 ||
		f[0].(map[string]any)["username"] != "bea" {
		t.Fatalf("user list --filter: %v", f)
	}
	mustFail(t, run("user", "list", "--tenant", "acme", "--filter", "enabled=maybe"), "invalid_filter")
	txt := mustOK(t, run("user", "list", "--tenant", "acme")).stdout
	if !strings.Contains(txt, "USERNAME") || !strings.Contains(txt, "ali") || !strings.Contains(txt, "Home 50M") || !strings.Contains(txt, "2 of 2") {
		t.Fatalf("user list text: %q", txt)
	}
	show := mustOK(t, run("user", "show", "--tenant", "acme", "ali", "--json")).json(t)
	byID := mustOK(t, run("user", "show", "--tenant", "acme", "1", "--json")).json(t)
	if show["id"] != u["id"] || byID["username"] != "ali" || show["email"] != "ali@example.com" {
		t.Fatalf("user show: %v / %v", show, byID)
	}
	mustFail(t, run("user", "show", "--tenant", "acme", "ghost"), "not_found")
	if d := mustOK(t, run("user", "disable", "--tenant", "acme", "ali", "--json")).json(t); d["enabled"] != false {
		t.Fatalf("disable: %v", d)
	}
	if s := mustOK(t, run("user", "show", "--tenant", "acme", "ali")).stdout; !strings.Contains(s, "enabled:     false") {
		t.Fatalf("show after disable: %q", s)
	}
	if d := mustOK(t, run("user", "enable", "--tenant", "acme", "ali")); !strings.Contains(d.stdout, "enabled subscriber 1 ali") {
		t.Fatalf("enable: %q", d.stdout)
	}

	// Token: the plaintext alone on stdout, and it authenticates with its
	// scope.
	mustFail(t, run("token", "create", "--tenant", "acme", "--name", "sync"), "scope_required")
	mustFail(t, run("token", "create", "--tenant", "acme", "--name", "sync", "--scope", "prm_nope"), "unknown_permission")
	tok := mustOK(t, run("token", "create", "--tenant", "acme", "--name", "sync", "--scope", string(subs.PermUsersIndex)))
	plain := strings.TrimSpace(tok.stdout)
	if !identity.IsAPITokenShape(plain) || strings.Count(tok.stdout, "\n") != 1 {
		t.Fatalf("token create stdout %q", tok.stdout)
	}
	j := mustOK(t, run("token", "create", "--tenant", "acme", "--name", "full", "--full-access", "--expires", "2099-01-01", "--json")).json(t)
	if j["full_access"] != true || !identity.IsAPITokenShape(j["token"].(string)) || j["expires_at"] != "2099-01-01 00:00:00" {
		t.Fatalf("token create --json: %v", j)
	}
	a := openInstance(t, dir)
	tt, release, err := a.Acquire("acme")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx := context.Background()
	act, err := identity.Authenticate(ctx, a, tt, plain)
	if err != nil {
		t.Fatalf("the minted token does not authenticate: %v", err)
	}
	if !act.Can(subs.PermUsersIndex) || act.Can(subs.PermUsersCreate) {
		t.Fatalf("token scope: %+v", act.Perms)
	}
	got, err := subs.GetUser(ctx, act, int64(u["id"].(float64)))
	if err != nil || got.Username != "ali" || !got.Enabled || got.ProfileID == nil || *got.ProfileID != int64(p["id"].(float64)) {
		t.Fatalf("the API's read of the CLI's subscriber: %+v %v", got, err)
	}
}
