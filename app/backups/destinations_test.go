package backups

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/internal/storetest"
	"xr/internal/xrtest"
)

type destEnv struct {
	A   *app.App
	T   *app.Tenant
	Act *app.Actor
}

func newDestEnv(t *testing.T) *destEnv {
	t.Helper()
	a := xrtest.Seeded(t, app.Config{AllowPrivateEgress: true}, "acme", Module)
	t.Cleanup(a.Close)
	ten := xrtest.Acquire(t, a, "acme")
	SetEncryptionWorkFactor(a, 10) // age's default (18) costs seconds per copy
	return &destEnv{A: a, T: ten, Act: xrtest.System(t, ten)}
}

func (e *destEnv) runJobs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.A.Jobs.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func (e *destEnv) sftpDest(t *testing.T, name string, s *storetest.SFTP, dir string) Destination {
	t.Helper()
	d, err := CreateDestination(context.Background(), e.Act, DestinationInput{Name: name, Kind: "sftp", Config: map[string]any{
		"host": s.Host(), "port": s.Port(), "username": s.User, "password": s.Pass, "path": dir,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (e *destEnv) s3Dest(t *testing.T, name string, s *storetest.S3, key string) Destination {
	t.Helper()
	d, err := CreateDestination(context.Background(), e.Act, DestinationInput{Name: name, Kind: "s3", Config: map[string]any{
		"endpoint": s.Endpoint(), "bucket": s.Bucket, "region": "us-east-1", "use_tls": false, "path_style": true,
		"prefix": "xr", "access_key": key, "secret_key": storetest.Secret,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func wantStep(t *testing.T, err error, step, reason string) {
	t.Helper()
	e := xrtest.WantError(t, err, 502, app.CodeUnavailable, reason)
	if e != nil && e.Details["step"] != step {
		t.Fatalf("step = %v, want %s (%v)", e.Details["step"], step, err)
	}
}

func TestDestinationSFTPProbeAuthAndHostKey(t *testing.T) {
	t.Parallel()
	e := newDestEnv(t)
	ctx := context.Background()
	key := storetest.NewHostKey(t)
	srv := storetest.StartSFTP(t, "", key)
	dir := t.TempDir()
	d := e.sftpDest(t, "offsite", srv, dir)

	res, err := TestDestination(ctx, e.Act, "offsite")
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Destination.HostKey == "" || res.Destination.ConnectedAt.IsZero() {
		t.Fatalf("test result %+v", res)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Fatalf("the probe left %d entries behind", len(left))
	}
	pinned := res.Destination.HostKey

	// Wrong password: the auth step.
	if _, err := PatchDestinations(ctx, e.Act, DestinationPatch{Provider: "offsite", Config: map[string]any{"password": "wrong-password"}}); err != nil {
		t.Fatal(err)
	}
	_, err = TestDestination(ctx, e.Act, "offsite")
	wantStep(t, err, "auth", "backup_destination_auth_failed")
	if _, err := PatchDestinations(ctx, e.Act, DestinationPatch{Provider: "offsite", Config: map[string]any{"password": srv.Pass}}); err != nil {
		t.Fatal(err)
	}

	// Another server (another host key) on the same address: refused.
	addr := srv.Addr
	srv.Stop()
	srv2 := storetest.StartSFTP(t, addr, storetest.NewHostKey(t))
	_, err = TestDestination(ctx, e.Act, "offsite")
	wantStep(t, err, "host_key", "backup_destination_host_key_changed")
	_, err = ConnectDestination(ctx, e.Act, "offsite")
	wantStep(t, err, "host_key", "backup_destination_host_key_changed")
	got, err := GetDestination(ctx, e.Act, "offsite")
	if err != nil || got.HostKey != pinned {
		t.Fatalf("pinned key changed to %q (%v)", got.HostKey, err)
	}

	// The operator accepts the change: the next connect pins the new key.
	if _, err := PatchDestinations(ctx, e.Act, DestinationPatch{Provider: "offsite", ResetHostKey: true}); err != nil {
		t.Fatal(err)
	}
	c, err := ConnectDestination(ctx, e.Act, "offsite")
	if err != nil {
		t.Fatal(err)
	}
	if c.HostKey == "" || c.HostKey == pinned {
		t.Fatalf("after reset, pinned %q (was %q)", c.HostKey, pinned)
	}
	_ = d

	// A private key instead of a password.
	if _, err := CreateDestination(ctx, e.Act, DestinationInput{Name: "bykey", Kind: "sftp", Config: map[string]any{
		"host": srv2.Host(), "port": srv2.Port(), "username": srv2.User, "private_key": srv2.ClientKeyPEM(t), "path": t.TempDir(),
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := TestDestination(ctx, e.Act, "bykey"); err != nil {
		t.Fatal(err)
	}
}

func TestDestinationS3ProbeAuthPermission(t *testing.T) {
	t.Parallel()
	e := newDestEnv(t)
	ctx := context.Background()
	s3 := storetest.StartS3(t)
	e.s3Dest(t, "bucket", s3, storetest.WriteKey)
	res, err := TestDestination(ctx, e.Act, "bucket")
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Fatalf("%+v", res)
	}
	if _, err := ConnectDestination(ctx, e.Act, "bucket"); err != nil {
		t.Fatal(err)
	}

	e.s3Dest(t, "badkey", s3, "AKUNKNOWN")
	_, err = TestDestination(ctx, e.Act, "badkey")
	wantStep(t, err, "auth", "backup_destination_auth_failed")

	e.s3Dest(t, "readonly", s3, storetest.ReadKey)
	_, err = TestDestination(ctx, e.Act, "readonly")
	wantStep(t, err, "permission", "backup_destination_permission_denied")

	// A TLS server whose certificate no public authority signed.
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	if _, err := CreateDestination(ctx, e.Act, DestinationInput{Name: "selfsigned", Kind: "s3", Config: map[string]any{
		"endpoint": strings.TrimPrefix(tlsSrv.URL, "https://"), "bucket": "xr-backups", "region": "us-east-1",
		"access_key": storetest.WriteKey, "secret_key": storetest.Secret,
	}}); err != nil {
		t.Fatal(err)
	}
	_, err = TestDestination(ctx, e.Act, "selfsigned")
	wantStep(t, err, "tls", "backup_destination_tls_failed")
}

func TestDestinationUnreachable(t *testing.T) {
	t.Parallel()
	e := newDestEnv(t)
	ctx := context.Background()
	// A port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	host, port, _ := net.SplitHostPort(addr)
	if _, err := CreateDestination(ctx, e.Act, DestinationInput{Name: "down", Kind: "sftp", Config: map[string]any{
		"host": host, "port": port, "username": "u", "password": "p",
	}}); err != nil {
		t.Fatal(err)
	}
	_, err = TestDestination(ctx, e.Act, "down")
	wantStep(t, err, "tcp", "backup_destination_tcp_failed")

	if _, err := CreateDestination(ctx, e.Act, DestinationInput{Name: "down-s3", Kind: "s3", Config: map[string]any{
		"endpoint": addr, "bucket": "b-1", "region": "us-east-1", "use_tls": false, "access_key": "a", "secret_key": "s",
	}}); err != nil {
		t.Fatal(err)
	}
	_, err = TestDestination(ctx, e.Act, "down-s3")
	wantStep(t, err, "tcp", "backup_destination_tcp_failed")

	// A name that does not resolve (.invalid is reserved, RFC 2606).
	if _, err := CreateDestination(ctx, e.Act, DestinationInput{Name: "nxdomain", Kind: "sftp", Config: map[string]any{
		"host": "backup.xr-test.invalid", "username": "u", "password": "p",
	}}); err != nil {
		t.Fatal(err)
	}
	_, err = TestDestination(ctx, e.Act, "nxdomain")
	wantStep(t, err, "dns", "backup_destination_dns_failed")
}

func TestDestinationEgressRules(t *testing.T) {
	t.Parallel()
	e := newDestEnv(t)
	ctx := context.Background()
	e.A.Cfg.AllowPrivateEgress = false
	_, err := CreateDestination(ctx, e.Act, DestinationInput{Name: "lan", Kind: "s3", Config: map[string]any{
		"endpoint": "127.0.0.1:9000", "bucket": "bk1", "access_key": "a", "secret_key": "s",
	}})
	ae := xrtest.WantError(t, err, 400, app.CodeValidation, "backup_destination_address_not_allowed")
	if ae.Field != "config.endpoint" || ae.Details["class"] != "loopback" {
		t.Fatalf("%+v", ae)
	}
	_, err = CreateDestination(ctx, e.Act, DestinationInput{Name: "lan2", Kind: "sftp", Config: map[string]any{
		"host": "192.168.1.10", "username": "u", "password": "p",
	}})
	xrtest.WantError(t, err, 400, app.CodeValidation, "backup_destination_address_not_allowed")
	_, err = CreateDestination(ctx, e.Act, DestinationInput{Name: "lan3", Kind: "sftp", Config: map[string]any{
		"host": "nas.localhost", "username": "u", "password": "p",
	}})
	xrtest.WantError(t, err, 400, app.CodeValidation, "backup_destination_address_not_allowed")
	if n := instScalar(t, e.A, `SELECT COUNT(*) FROM backup_destinations`); n != 0 {
		t.Fatalf("%d destinations stored", n)
	}

	// Saved while allowed, refused again at connect time.
	e.A.Cfg.AllowPrivateEgress = true
	srv := storetest.StartSFTP(t, "", storetest.NewHostKey(t))
	e.sftpDest(t, "box", srv, t.TempDir())
	e.A.Cfg.AllowPrivateEgress = false
	_, err = TestDestination(ctx, e.Act, "box")
	wantStep(t, err, "tcp", "backup_destination_address_not_allowed")
}

func TestDestinationValidationAndSecrets(t *testing.T) {
	t.Parallel()
	e := newDestEnv(t)
	ctx := context.Background()
	cases := []struct {
		in            DestinationInput
		reason, field string
	}{
		{DestinationInput{Name: "", Kind: "local"}, "backup_destination_name_required", "name"},
		{DestinationInput{Name: "Bad Name", Kind: "local"}, "backup_destination_name_invalid", "name"},
		{DestinationInput{Name: "123", Kind: "local"}, "backup_destination_name_invalid", "name"},
		{DestinationInput{Name: "x", Kind: "ftp"}, "invalid_enum", "kind"},
		{DestinationInput{Name: "x", Kind: "local", Config: map[string]any{}}, "backup_destination_field_required", "config.path"},
		{DestinationInput{Name: "x", Kind: "local", Config: map[string]any{"path": "rel/dir"}}, "backup_destination_path_not_absolute", "config.path"},
		{DestinationInput{Name: "x", Kind: "local", Config: map[string]any{"path": filepath.Join(e.A.Cfg.DataDir, "files")}}, "backup_destination_path_inside_data", "config.path"},
		{DestinationInput{Name: "x", Kind: "local", Config: map[string]any{"path": "/mnt/b", "color": "red"}}, "backup_destination_field_unknown", "config.color"},
		{DestinationInput{Name: "x", Kind: "sftp", Config: map[string]any{"host": "h.example", "username": "u"}}, "backup_destination_credentials_required", "config.password"},
		{DestinationInput{Name: "x", Kind: "sftp", Config: map[string]any{"host": "h.example", "username": "u", "password": "p", "port": 70000}}, "backup_destination_field_invalid", "config.port"},
		{DestinationInput{Name: "x", Kind: "s3", Config: map[string]any{"endpoint": "http://s3.example", "bucket": "bk1", "access_key": "a", "secret_key": "s"}}, "backup_destination_host_invalid", "config.endpoint"},
		{DestinationInput{Name: "x", Kind: "s3", Config: map[string]any{"endpoint": "s3.example", "bucket": "B", "access_key": "a", "secret_key": "s"}}, "backup_destination_field_invalid", "config.bucket"},
		{DestinationInput{Name: "x", Kind: "s3", Config: map[string]any{"endpoint": "s3.example", "bucket": "bk1", "access_key": "a"}}, "backup_destination_field_required", "config.secret_key"},
	}
	for _, c := range cases {
		_, err := CreateDestination(ctx, e.Act, c.in)
		ae := xrtest.WantError(t, err, 400, app.CodeValidation, c.reason)
		if ae.Field != c.field {
			t.Errorf("%+v: field %q, want %q", c.in, ae.Field, c.field)
		}
	}
	d, err := CreateDestination(ctx, e.Act, DestinationInput{Name: "aws", Kind: "s3", Config: map[string]any{
		"endpoint": "s3.example.com", "bucket": "bk1", "access_key": "AKIAVERYSECRET", "secret_key": "wJalrXUtnFEMI-very-secret",
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = CreateDestination(ctx, e.Act, DestinationInput{Name: "aws", Kind: "local", Config: map[string]any{"path": allowedDir(t, e.A, "acme")}})
	xrtest.WantError(t, err, 409, app.CodeConflict, "backup_destination_name_taken")

	// Credentials are sealed at rest and never shown.
	var cfg string
	var sealed []byte
	if err := e.A.Inst.R.QueryRow(`SELECT config, secrets_sealed FROM backup_destinations WHERE id = ?`, d.ID).Scan(&cfg, &sealed); err != nil {
		t.Fatal(err)
	}
	list, err := ListDestinations(ctx, e.Act)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(list)
	for _, blob := range [][]byte{[]byte(cfg), sealed, out} {
		if bytes.Contains(blob, []byte("VERYSECRET")) || bytes.Contains(blob, []byte("very-secret")) {
			t.Fatalf("a credential is visible: %s", blob)
		}
	}
	if got := list.Destinations[0].SecretsSet; strings.Join(got, ",") != "access_key,secret_key" {
		t.Fatalf("secrets_set %v", got)
	}
	// A PATCH that leaves secrets out keeps them.
	if _, err := PatchDestinations(ctx, e.Act, DestinationPatch{Provider: "aws", Config: map[string]any{"bucket": "bk2", "secret_key": ""}}); err != nil {
		t.Fatal(err)
	}
	dd, err := findDestination(ctx, e.A, e.T.ID, "aws")
	if err != nil || dd.secrets["secret_key"] != "wJalrXUtnFEMI-very-secret" || dd.str("bucket") != "bk2" {
		t.Fatalf("%+v %v", dd, err)
	}
	// Another tenant sees nothing of it.
	xrtest.CreateTenant(t, e.A, app.NewTenant{Slug: "other"})
	oth := xrtest.System(t, xrtest.Acquire(t, e.A, "other"))
	_, err = TestDestination(ctx, oth, "aws")
	xrtest.WantError(t, err, 404, app.CodeNotFound, "not_found")
	err = DeleteDestination(ctx, oth, "aws")
	xrtest.WantError(t, err, 404, app.CodeNotFound, "not_found")
	if err := DeleteDestination(ctx, e.Act, "aws"); err != nil {
		t.Fatal(err)
	}
}

func instScalar(t *testing.T, a *app.App, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := a.Inst.R.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// writeBackupFile stands for a verified backup of the other half of the
// area: any file works for a copy.
func writeBackupFile(t *testing.T, e *destEnv, size int) (string, []byte) {
	t.Helper()
	dir := e.A.FilesDir("acme")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	body := app.RandomBytes(size)
	p := filepath.Join(dir, "acme-20260101-000000.xrbak")
	if err := os.WriteFile(p, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, body
}

func copyState(t *testing.T, e *destEnv, backupID, destID int64) CopyState {
	t.Helper()
	m, err := CopyStates(context.Background(), e.A, e.T, []int64{backupID})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range m[backupID] {
		if s.DestinationID == destID {
			return s
		}
	}
	return CopyState{}
}

func TestCopyRetriedThroughOutage(t *testing.T) {
	t.Parallel()
	e := newDestEnv(t)
	SetCopyBackoff(e.A, 20*time.Millisecond)
	ctx := context.Background()
	key := storetest.NewHostKey(t)
	srv := storetest.StartSFTP(t, "", key)
	dir := t.TempDir()
	d := e.sftpDest(t, "offsite", srv, dir)
	if _, err := ConnectDestination(ctx, e.Act, "offsite"); err != nil { // pins the key
		t.Fatal(err)
	}
	addr := srv.Addr
	srv.Stop() // the outage

	path, body := writeBackupFile(t, e, 300<<10)
	e.runJobs(t)
	if err := QueueCopies(ctx, e.A, e.T, 41, path, []int64{d.ID}); err != nil {
		t.Fatal(err)
	}
	xrtest.Eventually(t, "three failed runs", func() bool {
		return instScalar(t, e.A, `SELECT fail_streak FROM backup_destinations WHERE id = ?`, d.ID) >= FailStreakAlert
	})
	st := copyState(t, e, 41, d.ID)
	if st.State == "done" || st.Attempts < FailStreakAlert || !strings.Contains(st.Error, "tcp") {
		t.Fatalf("during the outage: %+v", st)
	}
	// The event is written just after the third failure is counted.
	xrtest.Eventually(t, "backup.failed", func() bool {
		return xrtest.Scalar(t, e.T, `SELECT COUNT(*) FROM events WHERE type = 'backup.failed'`) >= 1
	})
	var data string
	if err := e.T.DB.R.QueryRow(`SELECT data FROM events WHERE type = 'backup.failed'`).Scan(&data); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(data, `"destination":"offsite"`) || !strings.Contains(data, `"failures":3`) || !strings.Contains(data, `"stage":"copy"`) {
		t.Fatalf("event data %s", data)
	}
	if n, err := FailingDestinations(ctx, e.A); err != nil || n != 1 {
		t.Fatalf("failing destinations %d (%v)", n, err)
	}
	var m bytes.Buffer
	WriteMetrics(ctx, e.A, &m)
	if !strings.Contains(m.String(), "xr_backup_destinations_failing 1\n") {
		t.Fatalf("metrics:\n%s", m.String())
	}

	storetest.StartSFTP(t, addr, key) // back
	xrtest.Eventually(t, "the copy done", func() bool { return copyState(t, e, 41, d.ID).State == "done" })
	got, err := os.ReadFile(filepath.Join(dir, "acme", filepath.Base(path)))
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("copied file differs (%v)", err)
	}
	if n := instScalar(t, e.A, `SELECT fail_streak FROM backup_destinations WHERE id = ?`, d.ID); n != 0 {
		t.Fatalf("fail streak %d after success", n)
	}
	if n, _ := FailingDestinations(ctx, e.A); n != 0 {
		t.Fatalf("still failing: %d", n)
	}
}

func TestEncryptedCopyDecryptsOnlyWithPassphrase(t *testing.T) {
	t.Parallel()
	e := newDestEnv(t)
	ctx := context.Background()
	const pass = "correct horse battery staple"
	_, err := PatchDestinations(ctx, e.Act, DestinationPatch{EncryptionPassphrase: app.Opt[string]{Set: true, V: "short"}})
	xrtest.WantError(t, err, 400, app.CodeValidation, "backup_passphrase_too_short")
	list, err := PatchDestinations(ctx, e.Act, DestinationPatch{EncryptionPassphrase: app.Opt[string]{Set: true, V: pass}})
	if err != nil || !list.Encrypted {
		t.Fatalf("%+v %v", list, err)
	}
	var sealed []byte
	if err := e.A.Inst.R.QueryRow(`SELECT passphrase_sealed FROM backup_encryption WHERE tenant_id = ?`, e.T.ID).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("battery")) {
		t.Fatal("the passphrase is stored in clear")
	}

	target := allowedDir(t, e.A, "acme")
	d, err := CreateDestination(ctx, e.Act, DestinationInput{Name: "usb", Kind: "local", Config: map[string]any{"path": target}})
	if err != nil {
		t.Fatal(err)
	}
	s3 := storetest.StartS3(t)
	d3 := e.s3Dest(t, "cloud", s3, storetest.WriteKey)
	path, body := writeBackupFile(t, e, 100<<10)
	e.runJobs(t)
	if err := QueueCopies(ctx, e.A, e.T, 7, path, []int64{d.ID, d3.ID}); err != nil {
		t.Fatal(err)
	}
	xrtest.Eventually(t, "both copies done", func() bool {
		return copyState(t, e, 7, d.ID).State == "done" && copyState(t, e, 7, d3.ID).State == "done"
	})
	enc, err := os.ReadFile(filepath.Join(target, "acme", filepath.Base(path)+".age"))
	if err != nil {
		t.Fatal(err)
	}
	if !IsEncrypted(enc) || bytes.Contains(enc, body[:64]) {
		t.Fatal("the copy is not encrypted")
	}
	_, err = DecryptBackup(bytes.NewReader(enc), "wrong passphrase!!")
	xrtest.WantError(t, err, 400, app.CodeValidation, "backup_passphrase_wrong")
	_, err = DecryptBackup(bytes.NewReader(body), pass)
	xrtest.WantError(t, err, 400, app.CodeValidation, "backup_not_encrypted")
	r, err := DecryptBackup(bytes.NewReader(enc), pass)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(plain, body) {
		t.Fatalf("decrypted copy differs (%v)", err)
	}
	// The S3 copy went encrypted too (read it back through the driver).
	dd, err := loadDestination(ctx, e.A, e.T.ID, d3.ID)
	if err != nil {
		t.Fatal(err)
	}
	rem, err := dialS3(ctx, e.A, dd, 1)
	if err != nil {
		t.Fatal(err)
	}
	head, err := rem.Get(ctx, "acme/"+filepath.Base(path)+".age")
	if err != nil || !IsEncrypted(head) {
		t.Fatalf("s3 copy: %v %d %q", err, len(head), head[:min(len(head), 80)])
	}
	// Removing the passphrase: later copies go in clear.
	if list, err := PatchDestinations(ctx, e.Act, DestinationPatch{EncryptionPassphrase: app.Opt[string]{Set: true, Null: true}}); err != nil || list.Encrypted {
		t.Fatalf("%+v %v", list, err)
	}
}

// TestDestinationSecretsSurviveRotation: a key rotation re-seals the
// destinations' secrets (app's TestInstanceSealedColumnsCoverMigrations
// holds every instance sealed column declared).
func TestDestinationSecretsSurviveRotation(t *testing.T) {
	t.Parallel()
	// A rotation re-seals them: the secrets still open afterwards.
	e := newDestEnv(t)
	ctx := context.Background()
	if _, err := CreateDestination(ctx, e.Act, DestinationInput{Name: "box", Kind: "sftp", Config: map[string]any{
		"host": "sftp.example.com", "username": "u", "password": "pw-before-rotation",
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.A.RotateKeys(ctx, app.RotateOptions{Settle: -1}); err != nil {
		t.Fatal(err)
	}
	d, err := findDestination(ctx, e.A, e.T.ID, "box")
	if err != nil || d.secrets["password"] != "pw-before-rotation" {
		t.Fatalf("%v %v", d, err)
	}
}

// TestCopyOfPrunedBackupAndMissingDestination: a backup deleted before its
// copy ran fails that copy at once without counting against the
// destination; an id that is not a destination is skipped.
func TestCopyOfPrunedBackupAndMissingDestination(t *testing.T) {
	t.Parallel()
	e := newDestEnv(t)
	ctx := context.Background()
	d, err := CreateDestination(ctx, e.Act, DestinationInput{Name: "usb", Kind: "local", Config: map[string]any{"path": allowedDir(t, e.A, "acme")}})
	if err != nil {
		t.Fatal(err)
	}
	e.runJobs(t)
	if err := QueueCopies(ctx, e.A, e.T, 9, filepath.Join(e.A.FilesDir("acme"), "gone.xrbak"), []int64{d.ID, 999}); err != nil {
		t.Fatal(err)
	}
	xrtest.Eventually(t, "the copy failed", func() bool { return copyState(t, e, 9, d.ID).State == "failed" })
	if st := copyState(t, e, 9, d.ID); st.Attempts != 1 || !strings.Contains(st.Error, "no longer exists") {
		t.Fatalf("%+v", st)
	}
	if n := instScalar(t, e.A, `SELECT fail_streak FROM backup_destinations WHERE id = ?`, d.ID); n != 0 {
		t.Fatalf("fail streak %d", n)
	}
	if n := instScalar(t, e.A, `SELECT COUNT(*) FROM backup_copies WHERE backup_id = 9`); n != 1 {
		t.Fatalf("%d copy rows", n)
	}
	if n := xrtest.Scalar(t, e.T, `SELECT COUNT(*) FROM jobs WHERE kind = 'backup.copy'`); n != 1 {
		t.Fatalf("%d copy jobs", n)
	}
}

// TestDestinationsGoWithTheTenant: deleting a tenant deletes its
// destinations, copy states and passphrase from instance.db.
func TestDestinationsGoWithTheTenant(t *testing.T) {
	t.Parallel()
	e := newDestEnv(t)
	ctx := context.Background()
	xrtest.CreateTenant(t, e.A, app.NewTenant{Slug: "gone"})
	ten, release, err := e.A.Acquire("gone")
	if err != nil {
		t.Fatal(err)
	}
	act := xrtest.System(t, ten)
	d, err := CreateDestination(ctx, act, DestinationInput{Name: "usb", Kind: "local", Config: map[string]any{"path": allowedDir(t, e.A, "gone")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PatchDestinations(ctx, act, DestinationPatch{EncryptionPassphrase: app.Opt[string]{Set: true, V: "a long passphrase here"}}); err != nil {
		t.Fatal(err)
	}
	if err := QueueCopies(ctx, e.A, ten, 3, "/nowhere", []int64{d.ID}); err != nil {
		t.Fatal(err)
	}
	release()
	if _, err := CreateDestination(ctx, e.Act, DestinationInput{Name: "kept", Kind: "local", Config: map[string]any{"path": allowedDir(t, e.A, "acme")}}); err != nil {
		t.Fatal(err)
	}
	if err := e.A.DeleteTenant(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range []string{"backup_destinations", "backup_copies", "backup_encryption"} {
		want := int64(0)
		if tbl == "backup_destinations" {
			want = 1 // acme's
		}
		if n := instScalar(t, e.A, `SELECT COUNT(*) FROM `+tbl); n != want {
			t.Errorf("%s: %d rows left", tbl, n)
		}
	}
}
