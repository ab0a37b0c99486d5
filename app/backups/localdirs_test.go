package backups

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"xr/app"
	"xr/internal/xrtest"
)

// allowedDir is a fresh folder where slug's local destinations may be: the
// App's backup folders are set to a temporary one first (once).
func allowedDir(t testing.TB, a *app.App, slug string) string {
	t.Helper()
	if len(a.Cfg.BackupDirs) == 0 {
		a.Cfg.BackupDirs = []string{t.TempDir()}
	}
	d := filepath.Join(a.Cfg.BackupDirs[0], slug, app.RandomToken(4))
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// A local destination lies in <backup dir>/<slug> of a folder the instance
// operator allowed, symlinks resolved: elsewhere (a system folder, another
// tenant's folder, a way out through .. or a symlink, any folder when the
// operator allowed none) it is 400 backup_destination_path_not_allowed
// naming the allowed folders, and nothing is stored.
func TestLocalDestinationConfinedToTheOperatorsFolders(t *testing.T) {
	t.Parallel()
	e := newDestEnv(t)
	ctx := context.Background()
	_, err := CreateDestination(ctx, e.Act, DestinationInput{Name: "none", Kind: "local", Config: map[string]any{"path": t.TempDir()}})
	xrtest.WantError(t, err, 400, app.CodeValidation, "backup_destination_path_not_allowed")

	ok := allowedDir(t, e.A, "acme")
	root := e.A.Cfg.BackupDirs[0]
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "acme", "link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/etc/cron.d", root, filepath.Join(root, "beta"), filepath.Join(root, "acme", "..", "beta", "x"),
		filepath.Join(root, "acme", "link"), filepath.Join(root, "acme", "link", "deeper")} {
		_, err := CreateDestination(ctx, e.Act, DestinationInput{Name: "bad", Kind: "local", Config: map[string]any{"path": p}})
		ae := xrtest.WantError(t, err, 400, app.CodeValidation, "backup_destination_path_not_allowed")
		if ae.Field != "config.path" || fmt.Sprint(ae.Details["allowed"]) != fmt.Sprint([]string{filepath.Join(root, "acme")}) {
			t.Fatalf("%s: %+v", p, ae)
		}
	}
	if l, _ := ListDestinations(ctx, e.Act); len(l.Destinations) != 0 {
		t.Fatalf("%d stored", len(l.Destinations))
	}
	// Inside: accepted, and a folder not made yet is fine.
	for i, p := range []string{ok, filepath.Join(root, "acme", "new", "deeper")} {
		if _, err := CreateDestination(ctx, e.Act, DestinationInput{Name: fmt.Sprintf("usb%d", i), Kind: "local", Config: map[string]any{"path": p}}); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if _, err := TestDestination(ctx, e.Act, "usb0"); err != nil {
		t.Fatal(err)
	}
	// The operator narrows the folders: the saved destination stops
	// working with the same reason, at test and connect.
	e.A.Cfg.BackupDirs = []string{t.TempDir()}
	_, err = TestDestination(ctx, e.Act, "usb0")
	xrtest.WantError(t, err, 400, app.CodeValidation, "backup_destination_path_not_allowed")
	_, err = ConnectDestination(ctx, e.Act, "usb0")
	xrtest.WantError(t, err, 400, app.CodeValidation, "backup_destination_path_not_allowed")
	if ents, _ := os.ReadDir(ok); len(ents) != 0 {
		t.Fatalf("written: %v", ents)
	}
}
