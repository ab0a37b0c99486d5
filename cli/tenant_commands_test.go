package cli

import (
	"context"
	"io"
	"strings"
	"testing"

	"xr/app"
	"xr/app/identity"
)

// Contradictory flags are bad flags: a one-line refusal that changes
// nothing (the tenant is not blocked by --block --unblock).
func TestTenantUpdateBlockAndUnblock(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	before := dirState(t, dir)
	mustFail(t, runXR(t, dir, "tenant", "update", "acme", "--block", "--unblock"), "block")
	if got := dirState(t, dir); got != before {
		t.Fatalf("refused update changed the instance:\n%s\n%s", before, got)
	}
	// --reason only goes with --block.
	mustFail(t, runXR(t, dir, "tenant", "update", "acme", "--reason", "unpaid"), "reason")
	if got := dirState(t, dir); got != before {
		t.Fatalf("refused update changed the instance:\n%s\n%s", before, got)
	}
	mustOK(t, runXR(t, dir, "tenant", "update", "acme", "--block", "--reason", "unpaid"))
	if !strings.Contains(runXR(t, dir, "tenant", "show", "acme", "--json").stdout, `"blocked":true`) {
		t.Fatal("--block did not block")
	}
}

// The text form of tenant show prints timestamps as the contract writes
// them (yyyy-MM-dd HH:mm:ss UTC), and no expiry as "never" rather than Go's
// zero time.
func TestTenantShowTimestamps(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	out := mustOK(t, runXR(t, dir, "tenant", "show", "acme")).stdout
	if strings.Contains(out, "0001-01-01") || strings.Contains(out, "+0000 UTC") {
		t.Fatalf("show prints Go time values:\n%s", out)
	}
	if !strings.Contains(out, "never") {
		t.Fatalf("no expiry is not shown as never:\n%s", out)
	}
	mustOK(t, runXR(t, dir, "tenant", "update", "acme", "--license-expires", "2099-12-31"))
	if out := runXR(t, dir, "tenant", "show", "acme").stdout; !strings.Contains(out, "2099-12-31 23:59:59") {
		t.Fatalf("expiry not in the contract's format:\n%s", out)
	}
}

// The CLI contract: --json prints one JSON object on stdout, for demo too
// (its banner: data directory, URL and login).
func TestDemoBannerJSON(t *testing.T) {
	var out strings.Builder
	g := &globals{data: "/tmp/xr-demo-x", json: true, out: &out}
	demoBanner(g, newDemoInfo("/tmp/xr-demo-x", "127.0.0.1:8080", "127.0.0.1:1812", "xrt_x"))
	r := cliResult{stdout: out.String()}
	m := r.json(t)
	if m["url"] != "http://demo.localhost:8080" || m["username"] != demoUser || m["password"] != demoPassword || m["data"] != "/tmp/xr-demo-x" {
		t.Fatalf("demo --json: %v", m)
	}
	out.Reset()
	g.json = false
	demoBanner(g, newDemoInfo("/tmp/xr-demo-x", "127.0.0.1:8080", "127.0.0.1:1812", "xrt_x"))
	if !strings.Contains(out.String(), "http://demo.localhost:8080/") || !strings.Contains(out.String(), demoPassword) {
		t.Fatalf("demo text banner: %q", out.String())
	}
}

// DESIGN.md: `xr tenant update S [flags as create]`: the owner's identity
// and password flags of create work on update too (the way back in for a
// locked-out owner), with the same refusals, which change nothing.
func TestTenantUpdateOwnerFlags(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	mustOK(t, runXR(t, dir, createArgs("beta")...))
	before := dirState(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tenant", "update", "acme", "--admin-password", "password"}, "password_too_weak"},
		{[]string{"tenant", "update", "acme", "--admin-email", "nope"}, "invalid_email"},
		{[]string{"tenant", "update", "acme", "--admin-username", "bad name"}, "invalid_username"},
		{[]string{"tenant", "update", "acme", "--admin-password", "New-owner-pass-2", "--tier", "huge"}, "invalid_tier"},
		{[]string{"tenant", "update", "ghost", "--admin-password", "New-owner-pass-2"}, "not_found"},
	} {
		mustFail(t, runXR(t, dir, c.args...), c.want)
		if got := dirState(t, dir); got != before {
			t.Fatalf("refused %v changed the instance", c.args)
		}
	}
	a, err := (&globals{data: dir, errOut: io.Discard}).open(app.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tt, release, err := a.Acquire("acme")
	if err != nil {
		t.Fatal(err)
	}
	old, err := identity.Login(context.Background(), a, tt, identity.LoginRequest{Email: "owner", Password: cliPassword})
	if err != nil {
		t.Fatal(err)
	}
	release()
	a.Close()

	r := mustOK(t, runXR(t, dir, "tenant", "update", "acme", "--admin-password", "New-owner-pass-2", "--admin-email", "boss@acme.test", "--json")).json(t)
	if r["slug"] != "acme" {
		t.Fatalf("update --json: %v", r)
	}
	a, err = (&globals{data: dir, errOut: io.Discard}).open(app.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tt, release, err = a.Acquire("acme")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx := context.Background()
	if _, err := identity.Login(ctx, a, tt, identity.LoginRequest{Email: "owner", Password: cliPassword}); err == nil {
		t.Fatal("old password still signs in")
	}
	if _, err := identity.Login(ctx, a, tt, identity.LoginRequest{Email: "boss@acme.test", Password: "New-owner-pass-2"}); err != nil {
		t.Fatalf("new credentials: %v", err)
	}
	// The owner's earlier sessions end with the reset.
	if _, err := identity.Authenticate(ctx, a, tt, old.Token); err == nil {
		t.Fatal("a session from before the reset still authenticates")
	}
	// beta's owner is untouched.
	bt, brel, err := a.Acquire("beta")
	if err != nil {
		t.Fatal(err)
	}
	defer brel()
	if _, err := identity.Login(ctx, a, bt, identity.LoginRequest{Email: "owner", Password: cliPassword}); err != nil {
		t.Fatalf("other tenant's owner: %v", err)
	}
}
