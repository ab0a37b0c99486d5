package app

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"xr/db"
)

func fndTenantFiles(t testing.TB, a *App) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(a.Cfg.DataDir, "tenants"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// Every refusal of CreateTenant leaves nothing: no registry row, no file.
func TestCreateTenantRefusalsChangeNothing(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	fndCreate(t, a, "taken")
	gen, _ := a.Generation(context.Background())
	files := fndTenantFiles(t, a)
	good := NewTenant{Slug: "fresh", Name: "Fresh", AdminUsername: "owner", AdminEmail: "o@fresh.test", AdminPassword: fndPassword}
	cases := []struct {
		mut    func(n *NewTenant)
		status int
		reason string
		field  string
	}{
		{func(n *NewTenant) { n.Slug = "A" }, 400, "invalid_slug", "slug"},
		{func(n *NewTenant) { n.Slug = "x" }, 400, "invalid_slug", "slug"},
		{func(n *NewTenant) { n.Slug = strings.Repeat("a", 41) }, 400, "invalid_slug", "slug"},
		{func(n *NewTenant) { n.Slug = "Acme" }, 400, "invalid_slug", "slug"},
		{func(n *NewTenant) { n.Slug = "ac_me" }, 400, "invalid_slug", "slug"},
		{func(n *NewTenant) { n.Slug = "ac.me" }, 400, "invalid_slug", "slug"},
		{func(n *NewTenant) { n.Slug = "../etc" }, 400, "invalid_slug", "slug"},
		{func(n *NewTenant) { n.Slug = "-acme" }, 400, "invalid_slug", "slug"},
		{func(n *NewTenant) { n.Slug = "www" }, 400, "slug_reserved", "slug"},
		{func(n *NewTenant) { n.Slug = "taken" }, 409, "slug_taken", ""},
		{func(n *NewTenant) { n.Name = "  " }, 400, "name_required", "name"},
		{func(n *NewTenant) { n.AdminPassword = "short1" }, 400, "password_too_short", "admin_password"},
		{func(n *NewTenant) { n.AdminPassword = "alllowercase" }, 400, "password_too_weak", "admin_password"},
		{func(n *NewTenant) { n.Tier = "huge" }, 400, "invalid_tier", "tier"},
		{func(n *NewTenant) { n.AdminEmail = "not-an-email" }, 400, "invalid_email", "admin_email"},
		{func(n *NewTenant) { n.AdminUsername, n.AdminEmail = "", "" }, 400, "admin_identity_required", "admin_username"},
		{func(n *NewTenant) { v := int64(-1); n.MaxUsers = &v }, 400, "invalid_max_users", "max_users"},
	}
	for _, c := range cases {
		n := good
		c.mut(&n)
		_, _, err := a.CreateTenant(context.Background(), n)
		code := CodeValidation
		if c.status == 409 {
			code = CodeConflict
		}
		e := fndErr(t, err, c.status, code, c.reason)
		if c.field != "" && e.Field != c.field {
			t.Errorf("%s: field %q, want %q", c.reason, e.Field, c.field)
		}
	}
	if g, _ := a.Generation(context.Background()); g != gen {
		t.Fatalf("registry changed: generation %d → %d", gen, g)
	}
	if got := fndTenantFiles(t, a); strings.Join(got, ",") != strings.Join(files, ",") {
		t.Fatalf("files changed: %v → %v", files, got)
	}
	list, _ := a.Tenants(context.Background())
	if len(list) != 1 || list[0].Slug != "taken" {
		t.Fatalf("tenants: %v", list)
	}
	// The slug taken check also holds when only the file exists (a crash
	// between file and registry must not let a second tenant adopt it).
	os.WriteFile(db.TenantPath(a.Cfg.DataDir, "orphan"), []byte("x"), 0o600)
	n := good
	n.Slug = "orphan"
	_, _, err := a.CreateTenant(context.Background(), n)
	fndErr(t, err, 409, CodeConflict, "slug_taken")
}

func TestUpdateAndDeleteTenant(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	fndCreate(t, a, "upd")
	ctx := context.Background()
	name := "Renamed"
	tier := "medium"
	ti, err := a.UpdateTenant(ctx, "upd", TenantUpdate{Name: &name, MaxUsers: Opt[int64]{Set: true, V: 50}, Tier: &tier})
	if err != nil || ti.Name != "Renamed" || ti.MaxUsers == nil || *ti.MaxUsers != 50 || ti.Tier() != "medium" {
		t.Fatalf("update: %+v %v", ti, err)
	}
	empty := ""
	ti, _ = a.UpdateTenant(ctx, "upd", TenantUpdate{Tier: &empty})
	if ti.Tier() != "small" { // unpinned: derived from max_users 50
		t.Fatalf("unpinned tier %s", ti.Tier())
	}
	ti, _ = a.UpdateTenant(ctx, "upd", TenantUpdate{MaxUsers: Opt[int64]{Set: true, Null: true}})
	if ti.MaxUsers != nil || ti.Name != "Renamed" {
		t.Fatalf("unlimited: %+v", ti)
	}
	bad := "huge"
	_, err = a.UpdateTenant(ctx, "upd", TenantUpdate{Tier: &bad})
	fndErr(t, err, 400, CodeValidation, "invalid_tier")
	_, err = a.UpdateTenant(ctx, "upd", TenantUpdate{MaxUsers: Opt[int64]{Set: true, V: -3}})
	fndErr(t, err, 400, CodeValidation, "invalid_max_users")
	_, err = a.UpdateTenant(ctx, "nope", TenantUpdate{Name: &name})
	fndErr(t, err, 404, CodeNotFound, "not_found")
	if ti, _ := a.TenantBySlug("upd"); ti.MaxUsers != nil || ti.Tier() != "xl" {
		t.Fatalf("a refused update changed the tenant: %+v", ti)
	}

	path := db.TenantPath(a.Cfg.DataDir, "upd")
	os.MkdirAll(a.FilesDir("upd"), 0o700)
	if err := a.DeleteTenant(ctx, "upd"); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.TenantBySlug("upd"); ok {
		t.Fatal("deleted tenant still resolves")
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", a.FilesDir("upd")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
	fndErr(t, a.DeleteTenant(ctx, "upd"), 404, CodeNotFound, "not_found")
	if _, _, err := a.Acquire("upd"); AsError(err) == nil || AsError(err).Code != CodeNotFound {
		t.Fatalf("Acquire of a deleted tenant: %v", err)
	}
	// The slug is free again.
	fndCreate(t, a, "upd")
}

func TestLicenseStatus(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	fndCreate(t, a, "lic")
	ctx := context.Background()
	lic := func() LicenseStatus {
		t.Helper()
		tt, release, err := a.Acquire("lic")
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		lic, err := tt.CurrentLicense(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return lic
	}
	if l := lic(); l.Status != "active" || l.Locked() || l.UsersCount != 0 {
		t.Fatalf("fresh: %+v", l)
	}
	a.UpdateTenant(ctx, "lic", TenantUpdate{MaxUsers: Opt[int64]{Set: true, V: 0}})
	if l := lic(); !l.Locked() || l.Status != "blocked" || !l.Blocked || l.BlockedReason != "max_users_zero" {
		t.Fatalf("max_users 0 is blocked, not unlimited: %+v", l)
	}
	a.UpdateTenant(ctx, "lic", TenantUpdate{MaxUsers: Opt[int64]{Set: true, V: 10}, LicenseExpiresAt: Opt[Time]{Set: true, V: T(time.Now().Add(-time.Hour))}})
	if l := lic(); !l.Locked() || l.Status != "expired" {
		t.Fatalf("expired: %+v", l)
	}
	a.UpdateTenant(ctx, "lic", TenantUpdate{LicenseExpiresAt: Opt[Time]{Set: true, V: T(time.Now().Add(time.Hour))}})
	if l := lic(); l.Locked() {
		t.Fatalf("valid licence: %+v", l)
	}
	// Over the cap: the subscriber count kept in meta exceeds max_users.
	tt := fndAcquire(t, a, "lic")
	fndExec(t, tt, `INSERT INTO meta(key, value) VALUES ('users_count', '11') ON CONFLICT(key) DO UPDATE SET value = '11'`)
	if l := lic(); !l.Locked() || l.Status != "over_cap" || l.UsersCount != 11 {
		t.Fatalf("over cap: %+v", l)
	}
	blocked, reason := true, "unpaid"
	a.UpdateTenant(ctx, "lic", TenantUpdate{MaxUsers: Opt[int64]{Set: true, Null: true}, Blocked: &blocked, BlockedReason: &reason})
	if l := lic(); !l.Locked() || l.Status != "blocked" || l.BlockedReason != "unpaid" {
		t.Fatalf("blocked: %+v", l)
	}
}
