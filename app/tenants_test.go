package app

import (
	"context"
	"database/sql"
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

func TestCreateTenantProvisionsOwner(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	ti, owner, err := a.CreateTenant(context.Background(), NewTenant{Slug: "acme-1", Name: "  Acme ISP ", AdminUsername: "boss",
		AdminEmail: "boss@acme.test", AdminPassword: fndPassword})
	if err != nil {
		t.Fatal(err)
	}
	if ti.ID == 0 || ti.Slug != "acme-1" || ti.Name != "Acme ISP" || owner != 1 || ti.MaxUsers != nil || ti.Tier() != "xl" {
		t.Fatalf("%+v owner %d", ti, owner)
	}
	if got, ok := a.TenantBySlug("acme-1"); !ok || got.ID != ti.ID {
		t.Fatal("not in the registry cache")
	}
	if got, ok := a.TenantByID(ti.ID); !ok || got.Slug != "acme-1" {
		t.Fatal("not in the id cache")
	}
	tt := fndAcquire(t, a, "acme-1")
	if v, err := db.FileMeta(context.Background(), tt.DB.Path, "tenant_slug"); err != nil || v != "acme-1" {
		t.Fatalf("file marker: %q %v", v, err)
	}
	// The owner is the root manager with the administrator role.
	var parent sql.NullInt64
	var role string
	if err := tt.DB.R.QueryRow(`SELECT m.parent_id, r.name FROM managers m JOIN manager_roles mr ON mr.manager_id = m.id JOIN roles r ON r.id = mr.role_id WHERE m.id = ?`, owner).Scan(&parent, &role); err != nil {
		t.Fatal(err)
	}
	if parent.Valid || role != AdminRoleName {
		t.Fatalf("owner parent %v role %s", parent, role)
	}
	if l, err := rawSettingForTest(context.Background(), tt, "default_language"); err != nil || l != `"en"` {
		t.Fatal("default settings missing")
	}
	if n, err := rawSettingForTest(context.Background(), tt, "session_length_minutes"); err != nil || n != "720" {
		t.Fatal("default settings missing")
	}
	uid, slug, err := LoginForTest(context.Background(), a, tt, "boss", fndPassword)
	if err != nil || uid != owner || slug != "acme-1" {
		t.Fatalf("owner login: %d %s %v", uid, slug, err)
	}
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

// A tenant created or deleted by another process on the same data
// directory (xr tenant while xr serve runs) is seen after the next tick of
// WatchRegistry, without a restart.
func TestRegistryReloadAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	server := fndOpen(t, dir)
	defer server.Close()
	reloaded := make(chan struct{}, 100)
	server.OnReload(func() { reloaded <- struct{}{} })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); server.WatchRegistry(ctx, 20*time.Millisecond) }()
	defer func() { cancel(); <-done }()

	cli := fndOpen(t, dir)
	defer cli.Close()
	fndCreate(t, cli, "late")
	fndEventually(t, 5*time.Second, "the new tenant to appear", func() bool { _, ok := server.TenantBySlug("late"); return ok })
	<-reloaded
	// It is usable there: its file opens and its owner can sign in.
	tt := fndAcquire(t, server, "late")
	if _, _, err := LoginForTest(context.Background(), server, tt, "owner", fndPassword); err != nil {
		t.Fatal(err)
	}

	name := "Later"
	if _, err := cli.UpdateTenant(context.Background(), "late", TenantUpdate{Name: &name}); err != nil {
		t.Fatal(err)
	}
	fndEventually(t, 5*time.Second, "the rename", func() bool { ti, _ := server.TenantBySlug("late"); return ti != nil && ti.Name == "Later" })

	if err := cli.DeleteTenant(context.Background(), "late"); err != nil {
		t.Fatal(err)
	}
	fndEventually(t, 5*time.Second, "the deleted tenant to disappear", func() bool { _, ok := server.TenantBySlug("late"); return !ok })
	if _, _, err := server.Acquire("late"); err == nil {
		t.Fatal("a deleted tenant can still be acquired")
	}
	// No change, no reload.
	n := len(reloaded)
	time.Sleep(100 * time.Millisecond)
	if len(reloaded) != n {
		t.Fatal("the registry is re-read without a change")
	}
}
