package web_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xr/app"
	"xr/app/identity"
	"xr/internal/webtest"
)

// bdNoSettings is a manager session without prm_settings.
func bdNoSettings(t *testing.T, k *webtest.Kit) string {
	t.Helper()
	sys := k.System("acme")
	ctx := context.Background()
	role, err := identity.CreateRole(ctx, sys, identity.RoleInput{Name: app.Opt[string]{Set: true, V: "no-settings"},
		Permissions: app.Opt[[]string]{Set: true, V: []string{"prm_users_index"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := identity.CreateManager(ctx, sys, identity.ManagerInput{Username: app.Opt[string]{Set: true, V: "clerk"},
		Password: app.Opt[string]{Set: true, V: webtest.Password}, RoleIDs: app.Opt[[]int64]{Set: true, V: []int64{role.ID}}}); err != nil {
		t.Fatal(err)
	}
	return k.Login("acme", "clerk", webtest.Password)
}

func bdNoSecret(t *testing.T, r webtest.Resp) {
	t.Helper()
	if strings.Contains(string(r.Body), webtest.S3SecretKey) || strings.Contains(string(r.Body), "AKIDVISIBLE") {
		t.Fatalf("a credential is in the response: %s", r.Body)
	}
}

func TestBackupDestinationsHTTP(t *testing.T) {
	t.Parallel()
	k := webtest.NewWith(t, app.Config{AllowPrivateEgress: true}, nil, nil)
	tok := k.Owner("acme")
	const base = "/api/v1/admin/backup/destinations"

	r := k.Do("GET", "acme", "/api/v1/admin/backup/remote-types", tok, nil)
	if r.Status != 200 || len(r.List()) != 3 {
		t.Fatalf("remote-types: %d %s", r.Status, r.Body)
	}

	ep := webtest.FakeS3(t)
	r = k.Do("POST", "acme", base, tok, map[string]any{"name": "cloud", "kind": "s3", "config": map[string]any{
		"endpoint": ep, "bucket": "xr-backups", "region": "us-east-1", "use_tls": false, "path_style": true,
		"access_key": "AKIDVISIBLE", "secret_key": webtest.S3SecretKey,
	}})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	bdNoSecret(t, r)
	id := r.Data()["id"]
	if got := r.Data()["secrets_set"].([]any); len(got) != 2 {
		t.Fatalf("secrets_set %v", got)
	}
	var sealed []byte
	if err := k.App.Inst.R.QueryRow(`SELECT secrets_sealed FROM backup_destinations WHERE name = 'cloud'`).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), webtest.S3SecretKey) {
		t.Fatal("the secret key is stored in clear")
	}

	r = k.Do("POST", "acme", base+"/cloud/test", tok, nil)
	if r.Status != 200 || r.Data()["ok"] != true {
		t.Fatalf("test: %d %s", r.Status, r.Body)
	}
	bdNoSecret(t, r)
	r = k.Do("POST", "acme", base+"/cloud/connect", tok, nil)
	if r.Status != 200 || r.Data()["connected_at"] == nil {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	bdNoSecret(t, r)

	r = k.Do("PATCH", "acme", base, tok, map[string]any{"provider": "cloud", "config": map[string]any{"bucket": "missing-bucket"},
		"encryption_passphrase": "a long enough passphrase"})
	if r.Status != 200 || r.Data()["encrypted"] != true {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	bdNoSecret(t, r)
	if strings.Contains(string(r.Body), "long enough") {
		t.Fatal("the passphrase is in the response")
	}
	r = k.Do("POST", "acme", base+"/cloud/test", tok, nil)
	webtest.ExpectErr(t, r, 502, "ERR_UNAVAILABLE", "backup_destination_not_found")
	if d, _ := r.JSON["error"].(map[string]any)["details"].(map[string]any); d["step"] != "storage" {
		t.Fatalf("details %s", r.Body)
	}

	// An unreachable port: the tcp step.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	r = k.Do("POST", "acme", base, tok, map[string]any{"name": "box", "kind": "sftp", "config": map[string]any{
		"host": host, "port": port, "username": "u", "password": webtest.S3SecretKey}})
	if r.Status != 201 {
		t.Fatalf("create sftp: %d %s", r.Status, r.Body)
	}
	bdNoSecret(t, r)
	r = k.Do("POST", "acme", base+"/box/test", tok, nil)
	webtest.ExpectErr(t, r, 502, "ERR_UNAVAILABLE", "backup_destination_tcp_failed")

	// A local directory: only inside the folders the operator allows
	// (xr serve --backup-dirs), in the tenant's own.
	root := t.TempDir()
	r = k.Do("POST", "acme", base, tok, map[string]any{"name": "usb", "kind": "local", "config": map[string]any{"path": root}})
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "backup_destination_path_not_allowed")
	k.App.Cfg.BackupDirs = []string{root}
	for _, p := range []string{"/etc/cron.d", filepath.Join(root, "beta")} {
		r = k.Do("POST", "acme", base, tok, map[string]any{"name": "usb", "kind": "local", "config": map[string]any{"path": p}})
		webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "backup_destination_path_not_allowed")
	}
	dir := filepath.Join(root, "acme", "usb")
	r = k.Do("POST", "acme", base, tok, map[string]any{"name": "usb", "kind": "local", "config": map[string]any{"path": dir}})
	if r.Status != 201 {
		t.Fatalf("create local: %d %s", r.Status, r.Body)
	}
	if r = k.Do("POST", "acme", base+"/usb/test", tok, nil); r.Status != 200 {
		t.Fatalf("local test: %d %s", r.Status, r.Body)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("probe left %v", ents)
	}
	// The operator's folder gone (a disk not mounted): not written through.
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	r = k.Do("POST", "acme", base+"/usb/test", tok, nil)
	webtest.ExpectErr(t, r, 502, "ERR_UNAVAILABLE", "backup_destination_not_found")

	r = k.Do("GET", "acme", base, tok, nil)
	if r.Status != 200 || len(r.Data()["destinations"].([]any)) != 3 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	bdNoSecret(t, r)

	r = k.Do("DELETE", "acme", base+"/usb", tok, nil)
	if r.Status != 200 || r.Data()["deleted"] != true {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("DELETE", "acme", base+"/usb", tok, nil), 404, "ERR_NOT_FOUND", "not_found")
	if r = k.Do("DELETE", "acme", base+"/"+fmt.Sprint(int64(id.(float64))), tok, nil); r.Status != 200 {
		t.Fatalf("delete by id: %d %s", r.Status, r.Body)
	}
	if n := bdCount(t, k); n != 1 {
		t.Fatalf("%d destinations left", n)
	}
	if r := k.Do("GET", "acme", "/metrics", "", nil); r.Status != 200 || !strings.Contains(string(r.Body), "xr_backup_destinations_failing 0\n") {
		t.Fatalf("metrics: %d %s", r.Status, r.Body)
	}
}

func bdCount(t *testing.T, k *webtest.Kit) int64 {
	t.Helper()
	var n int64
	if err := k.App.Inst.R.QueryRow(`SELECT COUNT(*) FROM backup_destinations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBackupDestinationsRefusals(t *testing.T) {
	t.Parallel()
	k := webtest.New(t) // no --allow-private-egress
	tok := k.Owner("acme")
	const base = "/api/v1/admin/backup/destinations"
	r := k.Do("POST", "acme", base, tok, map[string]any{"name": "lan", "kind": "s3", "config": map[string]any{
		"endpoint": "127.0.0.1:9000", "bucket": "xr-backups", "access_key": "AKIDVISIBLE", "secret_key": webtest.S3SecretKey}})
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "backup_destination_address_not_allowed")
	if r.Field() != "config.endpoint" {
		t.Fatalf("field %q", r.Field())
	}
	bdNoSecret(t, r)
	r = k.Do("POST", "acme", base, tok, map[string]any{"name": "lan", "kind": "sftp", "config": map[string]any{
		"host": "10.1.2.3", "username": "u", "password": webtest.S3SecretKey}})
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "backup_destination_address_not_allowed")
	if n := bdCount(t, k); n != 0 {
		t.Fatalf("%d stored", n)
	}

	// Without prm_settings: 403 before the body is even looked at.
	clerk := bdNoSettings(t, k)
	for _, c := range []struct{ m, p string }{
		{"GET", base}, {"GET", "/api/v1/admin/backup/remote-types"},
		{"POST", base}, {"PATCH", base}, {"DELETE", base + "/x"},
		{"POST", base + "/x/test"}, {"POST", base + "/x/connect"},
	} {
		r := k.Do(c.m, "acme", c.p, clerk, map[string]any{"kind": "ftp", "name": 12})
		webtest.ExpectErr(t, r, 403, "ERR_FORBIDDEN", "insufficient_permissions")
	}
	// Bad input from the owner: 400 with a field, never 500.
	r = k.Do("POST", "acme", base, tok, map[string]any{"name": "x", "kind": "ftp"})
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "invalid_enum")
	r = k.Do("PATCH", "acme", base, tok, map[string]any{"provider": "nope"})
	webtest.ExpectErr(t, r, 404, "ERR_NOT_FOUND", "not_found")
	r = k.Do("POST", "acme", base+"/nope/test", tok, nil)
	webtest.ExpectErr(t, r, 404, "ERR_NOT_FOUND", "not_found")
}
