package cli

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	lradius "layeh.com/radius"

	"xr/app/replica"
	"xr/internal/storetest"
	"xr/internal/xrtest"
)

// xr serve --replicate-to streams instance.db: a tenant another command
// creates while it runs is in the replica once serve has stopped (its
// shutdown ships what is left). A replica it cannot use is refused before
// anything starts.
func TestServeReplicateTo(t *testing.T) {
	dir, rdir := t.TempDir(), t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	g := &globals{data: dir, out: io.Discard, errOut: io.Discard, logLevel: "error"}
	base := serveOpts{http: "127.0.0.1:0", domain: "xr.test", noRadius: true}

	for _, bad := range []string{"sftp://backup@host/xr", "/mnt/replica", "file://"} {
		o := base
		o.replicateTo = bad
		err := runServe(context.Background(), g, o, func(string, string) { t.Errorf("serve started with --replicate-to %s", bad) })
		if err == nil || !strings.Contains(err.Error(), "--replicate-to") {
			t.Fatalf("--replicate-to %s: %v", bad, err)
		}
	}

	o := base
	o.replicateTo = "file://" + rdir
	served := serveXR(t, dir, o)
	mustOK(t, runXR(t, dir, createArgs("late")...))
	served.stop()

	target, err := replica.ParseTarget(o.replicateTo)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "instance.db")
	if err := replica.Restore(context.Background(), target, "instance.db", out); err != nil {
		t.Fatal(err)
	}
	c, err := sql.Open("sqlite", "file:"+out+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	if err := c.QueryRow(`SELECT COUNT(*) FROM tenants WHERE slug IN ('acme', 'late')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("the replica of instance.db has %d of acme and late, want 2", n)
	}
}

// remoteReplica starts an in-process server of scheme (sftp, s3) and
// returns a replica URL on it and the environment that gives xr serve its
// credentials.
func remoteReplica(t *testing.T, scheme string) (url string, env []string) {
	t.Helper()
	// Litestream's s3 client cannot take AWS_CA_BUNDLE (set on some build
	// machines): the child processes run without it.
	env = []string{"AWS_CA_BUNDLE="}
	switch scheme {
	case "sftp":
		srv := storetest.StartSFTP(t, "", storetest.NewHostKey(t))
		return "sftp://" + srv.User + "@" + srv.Addr + filepath.ToSlash(t.TempDir()) + "/replica", append(env, envReplicaSecret+"="+srv.Pass)
	default:
		srv := storetest.StartS3(t)
		return "s3://" + srv.Bucket + "/xr?endpoint=" + srv.URL + "&path-style=true",
			append(env, envReplicaAccessKeyID+"="+storetest.WriteKey, envReplicaSecret+"="+storetest.Secret)
	}
}

// A primary replicating to an sftp:// or s3:// replica and a standby
// following it, two xr processes: a subscriber created on the primary is
// accepted by the standby; restarted without any credential (they were
// kept sealed), both go on, and the next subscriber reaches the standby.
func TestStandbyFollowsRemoteReplica(t *testing.T) {
	t.Parallel()
	bin := buildXR(t)
	for _, scheme := range []string{"sftp", "s3"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			pdata, sdata := filepath.Join(work, "primary"), filepath.Join(work, "standby")
			url, env := remoteReplica(t, scheme)
			const secret = "remote-standby-secret"
			mustOK(t, runXR(t, pdata, createArgs("acme")...))
			mustOK(t, runXR(t, pdata, "nas", "add", "--tenant", "acme", "--name", "lo", "--ip", "127.0.0.1", "--secret", secret, "--no-message-authenticator"))

			primary := startXREnv(t, bin, pdata, work, "primary", env, "--replicate-to", url, "--allow-private-egress")
			api := &testAPI{t: t, base: "http://" + primary.http}
			tok := api.login()
			api.do("POST", "/admin/profiles", tok, map[string]any{"name": "Home", "price": 10, "duration_days": 30}, 201)
			api.do("POST", "/users", tok, map[string]any{"username": "bob", "password": "bob-pw", "profile_id": 1, "expiration": "2099-01-01"}, 201)
			standby := startXREnv(t, bin, sdata, work, "standby", env, "--standby-of", url, "--allow-private-egress")
			xrtest.Eventually(t, "the standby accepts bob", func() bool { return accessCode(t, standby.auth, secret, "bob", "bob-pw") == lradius.CodeAccessAccept })

			primary.kill(t)
			standby.kill(t)
			// Kept sealed: the secret is in neither the primary's
			// instance.db nor the standby's file.
			pass := strings.SplitN(env[len(env)-1], "=", 2)[1]
			kept := keptCredentials(t, pdata)
			sb, err := os.ReadFile(replica.StandbyCredentialsPath(sdata))
			if err != nil || len(kept) == 0 || bytes.Contains(kept, []byte(pass)) || bytes.Contains(sb, []byte(pass)) {
				t.Fatalf("credentials kept: primary %q, standby %q (%v); the secret must be there sealed only", kept, sb, err)
			}
			noCreds := []string{"AWS_CA_BUNDLE=", envReplicaSecret + "=", envReplicaAccessKeyID + "="}
			primary = startXREnv(t, bin, pdata, work, "primary-again", noCreds, "--replicate-to", url, "--allow-private-egress")
			standby = startXREnv(t, bin, sdata, work, "standby-again", noCreds, "--standby-of", url, "--allow-private-egress")
			api = &testAPI{t: t, base: "http://" + primary.http}
			api.do("POST", "/users", api.login(), map[string]any{"username": "carol", "password": "carol-pw", "profile_id": 1, "expiration": "2099-01-01"}, 201)
			xrtest.Eventually(t, "the restarted standby accepts carol", func() bool {
				return accessCode(t, standby.auth, secret, "carol", "carol-pw") == lradius.CodeAccessAccept
			})
		})
	}
}

// keptCredentials is the sealed credentials a primary keeps (nil: none).
func keptCredentials(t *testing.T, data string) []byte {
	t.Helper()
	c, err := sql.Open("sqlite", "file:"+filepath.Join(data, "instance.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b []byte
	if err := c.QueryRow(`SELECT credentials_sealed FROM replica_credentials`).Scan(&b); err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	return b
}

// A remote replica xr serve cannot use is refused before anything starts
// (nothing listens, no credential is kept): a URL carrying a password, no
// credentials, an address the egress rules refuse.
func TestServeRemoteReplicaRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	url, _ := remoteReplica(t, "sftp")
	srvAddr := strings.TrimPrefix(strings.SplitN(strings.TrimPrefix(url, "sftp://"), "/", 2)[0], "backup@")
	serve := []string{"serve", "--http", "127.0.0.1:0", "--no-radius", "--domain", "xr.test"}
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"a password in the URL", "", []string{"--replicate-to", "sftp://backup:pw@" + srvAddr + "/r"}, "process list"},
		{"no credentials", "", []string{"--replicate-to", url, "--allow-private-egress"}, "no credentials"},
		{"standby without credentials", "", []string{"--standby-of", url, "--allow-private-egress"}, "no credentials"},
		{"a loopback address", "s3cret-pass\n", []string{"--replicate-to", url, "--replica-secret-stdin"}, "address not allowed"},
		{"a standby on a loopback address", "s3cret-pass\n", []string{"--standby-of", url, "--replica-secret-stdin"}, "address not allowed"},
		{"a wrong password", "wrong\n", []string{"--replicate-to", url, "--replica-secret-stdin", "--allow-private-egress"}, "do not open it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runXRIn(t, dir, tc.stdin, append(serve, tc.args...)...)
			if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want a refusal saying %q", r.code, r.stderr, tc.want)
			}
		})
	}
	if kept := keptCredentials(t, dir); kept != nil {
		t.Fatal("credentials kept after refusals")
	}
	if _, err := os.Stat(replica.StandbyCredentialsPath(dir)); !os.IsNotExist(err) {
		t.Fatalf("a standby's credentials file after refusals: %v", err)
	}
}
