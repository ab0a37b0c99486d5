package modules_test

import (
	"context"
	"database/sql"
	"fmt"
	"go/ast"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"xr/app"
	"xr/app/aaa"
	"xr/db"
	"xr/internal/xrtest"
)

// Test-local typed settings over keys of the areas (the accessors depend on the key
// and the type only).
var (
	tstStalePct      = app.IntSetting{Key: "radius_stale_multiplier_pct", Default: 250}
	tstInterim       = app.IntSetting{Key: "radius_interim_interval", Default: 300, Seeded: true}
	tstReplaceStale  = app.BoolSetting{Key: "radius_replace_stale_session", Default: true}
	tstSellResellers = app.BoolSetting{Key: "cards_sell_to_resellers", Default: false}
	tstPointsValue   = app.MoneySetting{Key: "points_value", Default: 0}
	tstBranding      = app.JSONSetting{Key: "branding"}
)

// Get: the default when unset, the value when well typed, an error when
// corrupt; GetOr logs a corrupt value and answers the default.
func TestSettingAccessors(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "set")
	ctx := context.Background()
	q := tt.DB.R

	// Unset rows answer their defaults.
	if v, err := tstStalePct.Get(ctx, q); err != nil || v != 250 {
		t.Fatalf("unset int: %d %v", v, err)
	}
	if v, err := tstSellResellers.Get(ctx, q); err != nil || v {
		t.Fatalf("unset bool: %v %v", v, err)
	}
	if v, err := tstPointsValue.Get(ctx, q); err != nil || v != 0 {
		t.Fatalf("unset money: %v %v", v, err)
	}
	if v, err := tstBranding.Get(ctx, q); err != nil || string(v) != "null" {
		t.Fatalf("unset json: %s %v", v, err)
	}
	// Seeded rows.
	if v, err := app.SettingCurrency.Get(ctx, q); err != nil || v != "USD" {
		t.Fatalf("seeded string: %q %v", v, err)
	}

	for _, q := range []string{`INSERT INTO settings(key, value) VALUES
		('radius_stale_multiplier_pct', ' 400 '), ('cards_sell_to_resellers', 'true'), ('radius_replace_stale_session', '0'),
		('points_value', '"0.5"'), ('branding', '{"color":"#123456"}')`,
		`UPDATE settings SET value = '"IQD"' WHERE key = 'currency'`} {
		xrtest.Exec(t, tt, q)
	}
	if v, err := tstStalePct.Get(ctx, q); err != nil || v != 400 {
		t.Fatalf("int: %d %v", v, err)
	}
	if v, err := tstSellResellers.Get(ctx, q); err != nil || !v {
		t.Fatalf("bool: %v %v", v, err)
	}
	if v, err := tstReplaceStale.Get(ctx, q); err != nil || v {
		t.Fatalf("bool 0: %v %v", v, err)
	}
	if v, err := tstPointsValue.Get(ctx, q); err != nil || v.String() != "0.5" {
		t.Fatalf("money: %v %v", v, err)
	}
	if v, err := tstBranding.Get(ctx, q); err != nil || string(v) != `{"color":"#123456"}` {
		t.Fatalf("json: %s %v", v, err)
	}
	if v, err := app.SettingCurrency.Get(ctx, q); err != nil || v != "IQD" {
		t.Fatalf("string: %q %v", v, err)
	}

	// Corrupt values: Get errors, GetOr answers the default.
	for _, q := range []string{`UPDATE settings SET value = '"300"' WHERE key = 'radius_interim_interval'`,
		`UPDATE settings SET value = '3.5' WHERE key = 'radius_stale_multiplier_pct'`,
		`UPDATE settings SET value = '"yes"' WHERE key = 'radius_replace_stale_session'`,
		`UPDATE settings SET value = 'USD' WHERE key = 'currency'`,
		`UPDATE settings SET value = 'abc' WHERE key = 'points_value'`,
		`UPDATE settings SET value = '{"color":' WHERE key = 'branding'`} {
		xrtest.Exec(t, tt, q)
	}
	for name, get := range map[string]func() error{
		"int":    func() error { _, err := tstInterim.Get(ctx, q); return err },
		"float":  func() error { _, err := tstStalePct.Get(ctx, q); return err },
		"bool":   func() error { _, err := tstReplaceStale.Get(ctx, q); return err },
		"string": func() error { _, err := app.SettingCurrency.Get(ctx, q); return err },
		"money":  func() error { _, err := tstPointsValue.Get(ctx, q); return err },
		"json":   func() error { _, err := tstBranding.Get(ctx, q); return err },
	} {
		if err := get(); err == nil || !strings.Contains(err.Error(), "is not a JSON") {
			t.Errorf("corrupt %s: %v", name, err)
		}
	}
	if v := tstInterim.GetOr(ctx, q); v != 300 {
		t.Errorf("GetOr int: %d", v)
	}
	if v := tstReplaceStale.GetOr(ctx, q); !v {
		t.Errorf("GetOr bool: %v", v)
	}
	if v := app.SettingCurrency.GetOr(ctx, q); v != "USD" {
		t.Errorf("GetOr string: %q", v)
	}
	if v := tstBranding.GetOr(ctx, q); string(v) != "null" {
		t.Errorf("GetOr json: %s", v)
	}
}

// Every registry entry is unique, of a known type, described, and its
// default parses as its type; new tenants get the seeded defaults, which
// are the ones tenants always got.
func TestSettingsRegistry(t *testing.T) {
	t.Parallel()
	reg := fndApp(t).Registry()
	seen := map[string]bool{}
	for _, d := range reg.Settings() {
		if d.Key == "" || seen[d.Key] {
			t.Fatalf("empty or duplicate key %q", d.Key)
		}
		seen[d.Key] = true
		if strings.TrimSpace(d.Description) == "" {
			t.Errorf("%s: no description", d.Key)
		}
		if err := d.ParseSetting(d.Default); err != nil {
			t.Errorf("%s: default %s: %v", d.Key, d.Default, err)
		}
		if got, ok := reg.Setting(d.Key); !ok || got != d {
			t.Errorf("%s: lookup %+v %v", d.Key, got, ok)
		}
	}
	if len(seen) != 59 {
		t.Errorf("%d settings, want the 59 xr reads", len(seen))
	}
	want := map[string]string{
		"currency": `"USD"`, "timezone": `"UTC"`, "default_language": `"en"`, "pos_undo_window_seconds": `300`,
		"session_length_minutes": `720`, "refresh_length_days": `30`, "radius_interim_interval": `300`,
		"radius_idle_window": `900`, "activation_payer": `"subscriber"`, "portal_enabled": `true`,
	}
	defaults := reg.DefaultSettings()
	if len(defaults) != len(want) {
		t.Fatalf("DefaultSettings %v, want %v", defaults, want)
	}
	for k, v := range want {
		if defaults[k] != v {
			t.Errorf("DefaultSettings[%s] = %q, want %q", k, defaults[k], v)
		}
	}
}

// Settings are read only through the registry: no non-test source outside
// app/settings.go queries the settings table, and every typed setting
// declared anywhere is in the installed modules' registry (so every key
// string in use is a registry key, and a setting cannot be declared and
// forgotten in its Module).
func TestSettingsReadOnlyThroughRegistry(t *testing.T) {
	t.Parallel()
	root := "../.."
	rawRead := regexp.MustCompile(`(?i)\bFROM\s+settings\b`)
	decl := regexp.MustCompile(`(?m)^\s*(?:var\s+)?(Setting\w+)\s*=\s*(?:app\.)?(Int|Bool|String|Money|JSON)Setting\{Key:\s*(\w+|"[^"]+")`)
	reg := fndApp(t).Registry()
	var files, declared int
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		rel := filepath.ToSlash(p)
		if rel != "../../app/settings.go" && rawRead.Match(b) {
			t.Errorf("%s reads the settings table directly; use a typed setting", rel)
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			declared++
			key := strings.Trim(m[3], `"`)
			if key == "SessionRetentionSetting" {
				key = app.SessionRetentionSetting
			}
			if _, ok := reg.Setting(key); !ok {
				t.Errorf("%s: %s (%s) is in no module's Settings", rel, m[1], key)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("scanned only %d files", files)
	}
	if n := len(reg.Settings()); declared != n {
		t.Errorf("%d typed settings declared, %d in the registry", declared, n)
	}
}

// The flat buckets of the spec and of DESIGN.md, declared by the modules
// that own their routes: every bucket of the installed modules, with its
// scope and reference number.
func TestBucketNumbers(t *testing.T) {
	t.Parallel()
	want := map[string]app.BucketDef{
		app.BucketMutate: {Scope: app.ScopeTenant, Limit: 300}, app.BucketValues: {Scope: app.ScopeTenant, Limit: 600}, app.BucketHeavy: {Scope: app.ScopeTenant, Limit: 30},
		app.BucketProbe: {Scope: app.ScopeTenant, Limit: 10}, app.BucketEgress: {Scope: app.ScopeTenant, Limit: 5},
		"user_list": {Scope: app.ScopeOperator, Limit: 240}, "user_resolve": {Scope: app.ScopeOperator, Limit: 120}, "card_search": {Scope: app.ScopeOperator, Limit: 120},
		"card_timeline": {Scope: app.ScopeOperator, Limit: 120}, "card_redeem": {Scope: app.ScopeOperator, Limit: 60}, "card_wallet_redeem": {Scope: app.ScopeOperator, Limit: 60},
		"user_login_as": {Scope: app.ScopeOperator, Limit: 30}, "account_reauth": {Scope: app.ScopeOperator, Limit: 10}, "api_token_reveal": {Scope: app.ScopeOperator, Limit: 10},
		"login": {Scope: app.ScopeIP, Limit: 20}, "refresh": {Scope: app.ScopeIP, Limit: 60}, "portal_login": {Scope: app.ScopeIP, Limit: 20},
		"register_start": {Scope: app.ScopeIP, Limit: 10}, "register_verify": {Scope: app.ScopeIP, Limit: 10}, "register_resend": {Scope: app.ScopeIP, Limit: 10}, "register_complete": {Scope: app.ScopeIP, Limit: 10},
		"card_redeem_public": {Scope: app.ScopeIP, Limit: 60}, "portal_refresh": {Scope: app.ScopeIP, Limit: 60}, "portal_captcha": {Scope: app.ScopeIP, Limit: 20},
		"portal_exchange": {Scope: app.ScopeIP, Limit: 120}, "portal_messenger_exchange": {Scope: app.ScopeIP, Limit: 120}, "portal_join": {Scope: app.ScopeIP, Limit: 20},
		"portal_signup": {Scope: app.ScopeIP, Limit: 20}, "portal_parental_unlock": {Scope: app.ScopeIP, Limit: 20}, "portal_tunnel_identify": {Scope: app.ScopeIP, Limit: 120},
		"portal_tunnel_tenant": {Scope: app.ScopeIP, Limit: 120}, "public": {Scope: app.ScopeIP, Limit: 20}, "pay_webhook": {Scope: app.ScopeIP, Limit: 600},
		"shop_browse": {Scope: app.ScopeIP, Limit: 120}, "shop_buy": {Scope: app.ScopeIP, Limit: 20}, "shop_hold": {Scope: app.ScopeIP, Limit: 20}, "shop_return": {Scope: app.ScopeIP, Limit: 60},
		"portal_subscriber": {Scope: app.ScopeSubscriber, Limit: 120}, "portal_deposit": {Scope: app.ScopeSubscriber, Limit: 20}, "portal_guest": {Scope: app.ScopeSubscriber, Limit: 20},
		"pay_init": {Scope: app.ScopeOperator, Limit: 20},
	}
	got := fndApp(t).Buckets()
	if len(got) != len(want) {
		t.Errorf("%d buckets, want %d", len(got), len(want))
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s: %+v %v, want %+v", name, g, ok, w)
		}
	}
}

// Every catalogue code has its constant (declared once, in the area that
// owns it), every constant is in the catalogue of the installed modules,
// constants are named from their code, and the modules list their codes
// with the constants (so the two cannot drift).
func TestPermConstantsMatchCatalogue(t *testing.T) {
	t.Parallel()
	consts, foreign, groupArgs, fset := permConsts(t)
	reg := fndApp(t).Registry()
	catalogue := reg.Permissions()
	if len(consts) == 0 || len(consts) != len(catalogue) {
		t.Fatalf("parsed %d constants, the catalogue has %d codes", len(consts), len(catalogue))
	}
	byCode, byName := map[string]string{}, map[string]bool{}
	for _, c := range consts {
		if want := permConstName(c.code); c.name != want {
			t.Errorf("%s: constant %s = %q: want the name %s", c.at, c.name, c.code, want)
		}
		if other, dup := byCode[c.code]; dup {
			t.Errorf("%q has two constants, %s and %s", c.code, other, c.at)
		}
		byCode[c.code], byName[c.name] = c.at, true
		if !reg.KnownPermission(c.code) {
			t.Errorf("%s: constant %s = %q is in no module's Permissions", c.at, c.name, c.code)
		}
	}
	// A code named again in a package that cannot import its home
	// (permX for the home's PermX) is the home constant's code.
	codeOf := map[string]string{}
	for _, c := range consts {
		codeOf[c.name] = c.code
	}
	if len(foreign) == 0 {
		t.Error("no code named again found: the parse of unexported constants is broken")
	}
	for _, f := range foreign {
		home := strings.ToUpper(f.name[:1]) + f.name[1:]
		if code, ok := codeOf[home]; !ok || code != f.code {
			t.Errorf("%s: %s = %q names again %s, which is %q", f.at, f.name, f.code, home, code)
		}
	}
	for _, p := range catalogue {
		if _, ok := byCode[string(p.Code)]; !ok {
			t.Errorf("catalogue code %q has no constant (want %s)", p.Code, permConstName(string(p.Code)))
		}
	}
	if len(groupArgs) != len(catalogue) {
		t.Errorf("PermGroup calls list %d codes, the catalogue has %d", len(groupArgs), len(catalogue))
	}
	for _, e := range groupArgs {
		name := ""
		switch x := e.(type) {
		case *ast.Ident:
			name = x.Name
		case *ast.SelectorExpr:
			name = x.Sel.Name
		}
		if !byName[name] {
			t.Errorf("%s: a PermGroup code is not written with its constant", fset.Position(e.Pos()))
		}
	}
	// The boundary conversions agree with the catalogue.
	all := reg.AllPerms()
	if len(all) != len(catalogue) || len(reg.AllPermissionCodes()) != len(all) || !slices.IsSorted(all) {
		t.Errorf("AllPerms %d (sorted %v), AllPermissionCodes %d, catalogue %d", len(all), slices.IsSorted(all), len(reg.AllPermissionCodes()), len(catalogue))
	}
	if reg.KnownPermission("prm_users_indx") || !reg.KnownPermission("prm_users_index") {
		t.Error("KnownPermission does not follow the catalogue")
	}
	// The system role templates are granted known codes only.
	// The templates as a new tenant gets them (its system roles).
	tt := fndTenant(t, fndApp(t), "roles")
	rows, err := tt.DB.R.Query(`SELECT template_key FROM roles WHERE is_system = 1 AND template_key <> 'administrator'`)
	if err != nil {
		t.Fatal(err)
	}
	var templates []struct{ Key string }
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		templates = append(templates, struct{ Key string }{k})
	}
	if err := rows.Close(); err != nil || len(templates) < 3 {
		t.Fatalf("system role templates %v %v", templates, err)
	}
	for _, rt := range templates {
		codes := reg.RoleGrants(rt.Key)
		if len(codes) == 0 {
			t.Errorf("role template %s is granted nothing", rt.Key)
		}
		for _, c := range codes {
			if !reg.KnownPermission(string(c)) {
				t.Errorf("role template %s is granted %q, not in the catalogue", rt.Key, c)
			}
		}
	}
}

// Emit writes the outbox row in the effect's transaction: a rolled-back
// effect leaves no event; an unknown key is refused.
func TestEmitIsTransactional(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "events")
	ctx := context.Background()
	before := xrtest.Scalar(t, tt, `SELECT COUNT(*) FROM events`)
	err := tt.Write(ctx, func(tx *sql.Tx) error {
		if err := app.Emit(ctx, tx, "user.created", map[string]any{"id": 1}); err != nil {
			return err
		}
		return app.ErrConflict("username_taken")
	})
	xrtest.WantError(t, err, 409, app.CodeConflict, "username_taken")
	if n := xrtest.Scalar(t, tt, `SELECT COUNT(*) FROM events`); n != before {
		t.Fatalf("a rolled-back effect left %d events", n-before)
	}
	if err := tt.Write(ctx, func(tx *sql.Tx) error { return app.Emit(ctx, tx, "user.exploded", nil) }); err == nil {
		t.Fatal("unknown event key emitted")
	}
	if err := tt.Write(ctx, func(tx *sql.Tx) error { return app.Emit(ctx, tx, "user.created", map[string]any{"id": 7}) }); err != nil {
		t.Fatal(err)
	}
	var typ, data, id string
	tt.DB.R.QueryRow(`SELECT type, data, event_id FROM events ORDER BY id DESC LIMIT 1`).Scan(&typ, &data, &id)
	if typ != "user.created" || data != `{"id":7}` || len(id) != 36 {
		t.Fatalf("event row: %s %s %s", typ, data, id)
	}
	// The installed modules' catalogue: every key once, with its category
	// (the spec names user.created, user.disconnected, usage.threshold).
	want := map[string]string{
		"user.created": "lifecycle", "user.updated": "lifecycle", "user.deleted": "lifecycle", "user.enabled": "lifecycle",
		"user.disabled": "lifecycle", "user.activated": "lifecycle", "user.expired": "lifecycle", "user.disconnected": "lifecycle",
		"usage.threshold": "usage", "session.started": "usage", "session.ended": "usage",
		"payment.deposit": "billing", "payment.withdraw": "billing", "payment.succeeded": "billing", "payment.failed": "billing",
		"card.redeemed": "billing", "card_batch.ready": "billing", "manager.created": "lifecycle", "manager.suspended": "lifecycle",
		"ticket.created": "support", "ticket.replied": "support", "ticket.state_changed": "support", "ticket.assigned": "support",
		"backup.completed": "backups", "backup.failed": "backups", "device.down": "monitoring", "device.up": "monitoring",
		"console.opened": "console", "console.closed": "console",
	}
	cat := a.Events()
	if len(cat) != len(want) {
		t.Errorf("%d events in the catalogue, want %d", len(cat), len(want))
	}
	for _, e := range cat {
		if want[e.Key] != e.Category || !a.Registry().KnownEvent(e.Key) {
			t.Errorf("%s (%s): want category %q", e.Key, e.Category, want[e.Key])
		}
		delete(want, e.Key)
	}
	if len(want) > 0 {
		t.Errorf("missing from the catalogue: %v", want)
	}
}

// A restore brings back the NAS rows of the snapshot; the instance NAS
// index (which dispatches RADIUS packets to a tenant) must follow them,
// or packets from a restored NAS are dropped and a NAS deleted by the
// restore keeps its IP reserved forever.
func TestRestoreTenantResyncsNASIndex(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	ctx := context.Background()
	tt := fndTenant(t, a, "nasr")
	other := fndTenant(t, a, "nasx")
	mk := func(tn *app.Tenant, name, ip string) int64 {
		t.Helper()
		n, err := aaa.CreateNAS(ctx, xrtest.System(t, tn), aaa.NASInput{Name: app.Opt[string]{Set: true, V: name},
			IP: app.Opt[string]{Set: true, V: ip}, Secret: app.Opt[string]{Set: true, V: "a-long-enough-secret-1"}})
		if err != nil {
			t.Fatal(err)
		}
		return n.ID
	}
	index := func() map[string]string {
		rows, err := a.Inst.R.Query(`SELECT n.ip, t.slug, n.nas_id FROM nas_index n JOIN tenants t ON t.id = n.tenant_id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]string{}
		for rows.Next() {
			var ip, slug string
			var id int64
			rows.Scan(&ip, &slug, &id)
			m[ip] = slug + "/" + strconv.FormatInt(id, 10)
		}
		return m
	}
	kept := mk(tt, "kept", "10.5.0.1")
	gone := mk(tt, "gone-after-backup", "10.5.0.9")
	mk(other, "theirs", "10.6.0.1")
	file := filepath.Join(t.TempDir(), "nasr.db")
	if err := a.BackupTenant(ctx, tt, file); err != nil {
		t.Fatal(err)
	}
	otherFile := filepath.Join(t.TempDir(), "nasx.db")
	if err := a.BackupTenant(ctx, other, otherFile); err != nil {
		t.Fatal(err)
	}
	if err := aaa.DeleteNAS(ctx, xrtest.System(t, tt), kept); err != nil {
		t.Fatal(err)
	}
	added := mk(tt, "added-after-backup", "10.5.0.2")
	_ = gone

	if err := a.RestoreTenant(ctx, tt, file, false); err != nil {
		t.Fatal(err)
	}
	got := index()
	want := map[string]string{
		"10.5.0.1": "nasr/" + strconv.FormatInt(kept, 10), // back with the restored row
		"10.5.0.9": "nasr/" + strconv.FormatInt(gone, 10),
		"10.6.0.1": "nasx/1",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("NAS index after restore:\n got %v\nwant %v (NAS %d added after the backup is gone)", got, want, added)
	}
	// The IP of the NAS the restore removed is free again.
	mk(other, "reuse", "10.5.0.2")

	// A forced restore of another tenant's backup does not steal its IPs.
	if err := a.RestoreTenant(ctx, tt, otherFile, true); err != nil {
		t.Fatal(err)
	}
	got = index()
	if got["10.6.0.1"] != "nasx/1" || got["10.5.0.1"] != "" || got["10.5.0.9"] != "" {
		t.Fatalf("NAS index after a forced restore: %v", got)
	}
}

// The licence check fails closed: a subscriber count that cannot be read
// is an error, never a count of zero that lets the request through.
func TestCurrentLicenseFailsClosed(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "lic")
	ctx := context.Background()

	// No users_count row yet (no subscriber ever): zero, not an error.
	if n, err := tt.CountUsers(ctx); err != nil || n != 0 {
		t.Fatalf("fresh tenant: %d %v", n, err)
	}
	if l, err := tt.CurrentLicense(ctx); err != nil || l.Status != "active" || l.Locked() {
		t.Fatalf("fresh tenant: %+v %v", l, err)
	}

	// A closed handle: every read fails.
	d, err := db.Open(filepath.Join(t.TempDir(), "closed.db"), "tenant", db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	closed := &app.Tenant{TenantInfo: tt.TenantInfo, DB: d, App: a}
	if n, err := closed.CountUsers(ctx); err == nil {
		t.Fatalf("closed handle counted %d users without an error", n)
	}
	if l, err := closed.CurrentLicense(ctx); err == nil {
		t.Fatalf("closed handle: licence %+v without an error", l)
	}

	// A broken file: the meta table is gone. The error is a server fault
	// (500), not a licence answer.
	xrtest.Exec(t, tt, `ALTER TABLE meta RENAME TO meta_gone`)
	_, err = tt.CurrentLicense(ctx)
	if err == nil {
		t.Fatal("missing meta table: no error")
	}
	if e := app.Classify(err); e != nil && e.Status < 500 {
		t.Fatalf("an unreadable count answers %d %s/%s, want a server fault", e.Status, e.Code, e.Reason)
	}
	owner, err := app.SystemActor(ctx, tt)
	if err != nil {
		t.Fatal(err)
	}
	if err := getMe(ctx, owner); err == nil {
		t.Fatal("GET /me with an unreadable count: no error")
	}
}

func TestCreateTenantProvisionsOwner(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	ti, owner, err := a.CreateTenant(context.Background(), app.NewTenant{Slug: "acme-1", Name: "  Acme ISP ", AdminUsername: "boss",
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
	tt := xrtest.Acquire(t, a, "acme-1")
	if v, err := db.FileMeta(context.Background(), tt.DB.Path, "tenant_slug"); err != nil || v != "acme-1" {
		t.Fatalf("file marker: %q %v", v, err)
	}
	// The owner is the root manager with the administrator role.
	var parent sql.NullInt64
	var role string
	if err := tt.DB.R.QueryRow(`SELECT m.parent_id, r.name FROM managers m JOIN manager_roles mr ON mr.manager_id = m.id JOIN roles r ON r.id = mr.role_id WHERE m.id = ?`, owner).Scan(&parent, &role); err != nil {
		t.Fatal(err)
	}
	if parent.Valid || role != app.AdminRoleName {
		t.Fatalf("owner parent %v role %s", parent, role)
	}
	if l, err := rawSetting(context.Background(), tt, "default_language"); err != nil || l != `"en"` {
		t.Fatal("default settings missing")
	}
	if n, err := rawSetting(context.Background(), tt, "session_length_minutes"); err != nil || n != "720" {
		t.Fatal("default settings missing")
	}
	uid, slug, err := loginOwner(context.Background(), a, tt, "boss", fndPassword)
	if err != nil || uid != owner || slug != "acme-1" {
		t.Fatalf("owner login: %d %s %v", uid, slug, err)
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
	xrtest.Tenant(t, cli, "late")
	xrtest.Eventually(t, "the new tenant to appear", func() bool { _, ok := server.TenantBySlug("late"); return ok })
	<-reloaded
	// It is usable there: its file opens and its owner can sign in.
	tt := xrtest.Acquire(t, server, "late")
	if _, _, err := loginOwner(context.Background(), server, tt, "owner", fndPassword); err != nil {
		t.Fatal(err)
	}

	name := "Later"
	if _, err := cli.UpdateTenant(context.Background(), "late", app.TenantUpdate{Name: &name}); err != nil {
		t.Fatal(err)
	}
	xrtest.Eventually(t, "the rename", func() bool { ti, _ := server.TenantBySlug("late"); return ti != nil && ti.Name == "Later" })

	if err := cli.DeleteTenant(context.Background(), "late"); err != nil {
		t.Fatal(err)
	}
	xrtest.Eventually(t, "the deleted tenant to disappear", func() bool { _, ok := server.TenantBySlug("late"); return !ok })
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
