package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"xr/app"
	"xr/app/replica"
)

// replicaCredOpts give the credentials of a remote replica (sftp://,
// s3://) to xr serve --replicate-to / --standby-of. Secrets never come as
// flags (the process list shows them): the environment or standard
// input. Once given they are kept sealed (a primary in instance.db, a
// standby in a file of its own), so a restart needs none.
type replicaCredOpts struct {
	secretStdin bool   // --replica-secret-stdin; else XR_REPLICA_SECRET
	keyFile     string // --replica-key-file: an SFTP private key (a path, not a secret)
	hostKey     string // --replica-host-key: pin this SFTP host key (a changed server key)
}

const (
	envReplicaSecret      = "XR_REPLICA_SECRET"        // the SFTP password or the S3 secret key
	envReplicaAccessKeyID = "XR_REPLICA_ACCESS_KEY_ID" // the S3 access key
)

func (r *replicaCredOpts) flags(f *pflag.FlagSet) {
	f.BoolVar(&r.secretStdin, "replica-secret-stdin", false, "read the replica's secret (SFTP password, S3 secret key) from the first line of standard input instead of env "+envReplicaSecret)
	f.StringVar(&r.keyFile, "replica-key-file", "", "SFTP replica: authenticate with this private key file (kept readable by xr)")
	f.StringVar(&r.hostKey, "replica-host-key", "", "SFTP replica: pin this host key (an authorized_keys line) instead of the one seen at the first connect")
}

// given reads the credentials given with this start (ok false: none).
func (r replicaCredOpts) given(g *globals, t replica.Target) (c replica.Credentials, ok bool, err error) {
	secret := os.Getenv(envReplicaSecret) // set but empty: not given
	hasSecret := secret != ""
	if r.secretStdin {
		if secret, err = readSecretLine(g.in); err != nil {
			return c, false, err
		}
		if secret == "" {
			return c, false, app.ErrValidation("stdin_empty", "replica-secret-stdin")
		}
		hasSecret = true
	}
	switch t.Scheme {
	case "sftp":
		c.Password = secret
		if r.keyFile != "" {
			if c.KeyFile, err = filepath.Abs(r.keyFile); err != nil {
				return c, false, err
			}
		}
		return c, hasSecret || r.keyFile != "", nil
	case "s3":
		c.AccessKeyID, c.SecretAccessKey = os.Getenv(envReplicaAccessKeyID), secret
		return c, hasSecret || c.AccessKeyID != "", nil
	}
	return c, false, nil
}

// resolve is t with the credentials given now, else those kept; the host
// key kept stays pinned unless --replica-host-key pins another.
func (r replicaCredOpts) resolve(g *globals, t replica.Target, kept replica.Credentials) (replica.Target, error) {
	c, ok, err := r.given(g, t)
	if err != nil {
		return t, err
	}
	if !ok {
		c = kept
	}
	c.HostKey = kept.HostKey
	if r.hostKey != "" {
		c.HostKey = strings.TrimSpace(r.hostKey)
	}
	t = t.WithCredentials(c)
	return t, t.CheckCredentials()
}

// primaryTarget gives the primary's remote target its credentials,
// checks it (replica.Prepare: egress rules, host key, the credentials
// open it) and keeps the credentials sealed in instance.db.
func (r replicaCredOpts) primaryTarget(ctx context.Context, g *globals, a *app.App, t replica.Target, allowPrivate bool) (replica.Target, error) {
	if !t.Remote() {
		return t, nil
	}
	kept, _, err := replica.LoadCredentials(ctx, a, t.URL)
	if err != nil {
		return t, err
	}
	if t, err = r.resolve(g, t, kept); err != nil {
		return t, err
	}
	if t, err = replica.Prepare(ctx, t, allowPrivate); err != nil {
		return t, err
	}
	if t.Credentials() != kept {
		return t, replica.SaveCredentials(ctx, a, t)
	}
	return t, nil
}

// standbyTarget gives a standby's remote target its credentials (given
// now, else those the standby kept: StandbyCredentialsPath) and checks it
// before the follower starts. The caller keeps them once the App is open
// (replica.SaveStandbyCredentials).
func (r replicaCredOpts) standbyTarget(ctx context.Context, g *globals, t replica.Target, allowPrivate bool) (replica.Target, error) {
	if !t.Remote() {
		return t, nil
	}
	master, err := g.masterKey()
	if err != nil {
		return t, err
	}
	kept, _, err := replica.LoadStandbyCredentials(ctx, g.data, master, t.URL)
	if err != nil {
		return t, err
	}
	if t, err = r.resolve(g, t, kept); err != nil {
		return t, err
	}
	return replica.Prepare(ctx, t, allowPrivate)
}
