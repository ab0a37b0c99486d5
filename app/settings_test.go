package app

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// rawSettingForTest reads a stored setting's JSON text, bypassing the
// registry (tests only).
func rawSettingForTest(ctx context.Context, tt *Tenant, key string) (string, error) {
	var v string
	err := tt.DB.R.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	return v, err
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
	root := ".."
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
		if rel != "../app/settings.go" && rawRead.Match(b) {
			t.Errorf("%s reads the settings table directly; use a typed setting", rel)
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			declared++
			key := strings.Trim(m[3], `"`)
			if key == "SessionRetentionSetting" {
				key = SessionRetentionSetting
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

// Test-local typed settings over keys of the areas (an internal test
// cannot import them): the accessors depend on the key and the type only.
var (
	tstStalePct      = IntSetting{Key: "radius_stale_multiplier_pct", Default: 250}
	tstInterim       = IntSetting{Key: "radius_interim_interval", Default: 300, Seeded: true}
	tstReplaceStale  = BoolSetting{Key: "radius_replace_stale_session", Default: true}
	tstSellResellers = BoolSetting{Key: "cards_sell_to_resellers", Default: false}
	tstPointsValue   = MoneySetting{Key: "points_value", Default: 0}
	tstBranding      = JSONSetting{Key: "branding"}
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
	if v, err := SettingCurrency.Get(ctx, q); err != nil || v != "USD" {
		t.Fatalf("seeded string: %q %v", v, err)
	}

	fndExec(t, tt, `INSERT INTO settings(key, value) VALUES
		('radius_stale_multiplier_pct', ' 400 '), ('cards_sell_to_resellers', 'true'), ('radius_replace_stale_session', '0'),
		('points_value', '"0.5"'), ('branding', '{"color":"#123456"}')`,
		`UPDATE settings SET value = '"IQD"' WHERE key = 'currency'`)
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
	if v, err := SettingCurrency.Get(ctx, q); err != nil || v != "IQD" {
		t.Fatalf("string: %q %v", v, err)
	}

	// Corrupt values: Get errors, GetOr answers the default.
	fndExec(t, tt, `UPDATE settings SET value = '"300"' WHERE key = 'radius_interim_interval'`,
		`UPDATE settings SET value = '3.5' WHERE key = 'radius_stale_multiplier_pct'`,
		`UPDATE settings SET value = '"yes"' WHERE key = 'radius_replace_stale_session'`,
		`UPDATE settings SET value = 'USD' WHERE key = 'currency'`,
		`UPDATE settings SET value = 'abc' WHERE key = 'points_value'`,
		`UPDATE settings SET value = '{"color":' WHERE key = 'branding'`)
	for name, get := range map[string]func() error{
		"int":    func() error { _, err := tstInterim.Get(ctx, q); return err },
		"float":  func() error { _, err := tstStalePct.Get(ctx, q); return err },
		"bool":   func() error { _, err := tstReplaceStale.Get(ctx, q); return err },
		"string": func() error { _, err := SettingCurrency.Get(ctx, q); return err },
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
	if v := SettingCurrency.GetOr(ctx, q); v != "USD" {
		t.Errorf("GetOr string: %q", v)
	}
	if v := tstBranding.GetOr(ctx, q); string(v) != "null" {
		t.Errorf("GetOr json: %s", v)
	}
}
