package devgw

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"

	"xr/app"
)

// CredentialsView is a target's SSH credentials as the API shows them: the
// password and the private key are write-only (only whether they are set),
// the host key is read-only (the SHA256 fingerprint trusted on first use),
// HostKeyPending the different fingerprint the device offered last, refused
// until staff accept it.
type CredentialsView struct {
	Kind           string   `json:"kind"`
	ID             int64    `json:"id"`
	Port           int      `json:"port"`
	Username       string   `json:"username"`
	HasPassword    bool     `json:"has_password"`
	HasPrivateKey  bool     `json:"has_private_key"`
	HostKey        string   `json:"host_key"`
	HostKeyPending string   `json:"host_key_pending"`
	UpdatedAt      app.Time `json:"updated_at"`
}

// Credentials is the name the console pages use for the view.
type Credentials = CredentialsView

// CredentialsInput is the body of PUT /admin/devgw/credentials/{kind}/{id}:
// fields left out keep their value; password or private_key null clears it.
type CredentialsInput struct {
	Port       app.Opt[int]    `json:"port"`
	Username   app.Opt[string] `json:"username"`
	Password   app.Opt[string] `json:"password"`
	PrivateKey app.Opt[string] `json:"private_key"`
}

// AcceptHostKeyInput is the body of POST .../accept-host-key: the pending
// fingerprint staff checked on the device (it must match what is pending).
type AcceptHostKeyInput struct {
	Fingerprint string `json:"fingerprint"`
}

// creds is a stored row, secrets opened.
type creds struct {
	port                int
	username            string
	password, key       []byte // plaintext
	hostKey, hostKeyNew string
	updatedAt           app.Time
	found               bool
}

func (c *creds) view(kind string, id int64) *CredentialsView {
	port := c.port
	if port == 0 {
		port = 22
	}
	return &CredentialsView{Kind: kind, ID: id, Port: port, Username: c.username, HasPassword: len(c.password) > 0,
		HasPrivateKey: len(c.key) > 0, HostKey: c.hostKey, HostKeyPending: c.hostKeyNew, UpdatedAt: c.updatedAt}
}

// loadCreds reads and opens a target's credentials (found false when none).
func loadCreds(ctx context.Context, q app.Querier, t *app.Tenant, kind string, id int64) (*creds, error) {
	c := &creds{port: 22}
	var pw, key []byte
	err := q.QueryRowContext(ctx, `SELECT port, username, password_sealed, key_sealed, host_key, host_key_pending, updated_at
		FROM devgw_credentials WHERE kind = ? AND target_id = ?`, kind, id).Scan(&c.port, &c.username, &pw, &key, &c.hostKey, &c.hostKeyNew, &c.updatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	c.found = true
	if len(pw) > 0 {
		if c.password, err = t.App.Keys.Open(pw); err != nil {
			return nil, app.ErrInternal(err)
		}
	}
	if len(key) > 0 {
		if c.key, err = t.App.Keys.Open(key); err != nil {
			return nil, app.ErrInternal(err)
		}
	}
	return c, nil
}

// storeCreds writes a target's credentials, sealing the secrets.
func storeCreds(ctx context.Context, tx *sql.Tx, t *app.Tenant, kind string, id int64, c *creds, now string) error {
	var pw, key []byte
	if len(c.password) > 0 {
		pw = t.App.Keys.Seal(c.password)
	}
	if len(c.key) > 0 {
		key = t.App.Keys.Seal(c.key)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO devgw_credentials(kind, target_id, port, username, password_sealed, key_sealed, host_key, host_key_pending, updated_at)
		VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(kind, target_id) DO UPDATE SET port = excluded.port, username = excluded.username,
		password_sealed = excluded.password_sealed, key_sealed = excluded.key_sealed, host_key = excluded.host_key,
		host_key_pending = excluded.host_key_pending, updated_at = excluded.updated_at`,
		kind, id, c.port, c.username, pw, key, c.hostKey, c.hostKeyNew, now)
	return err
}

// GetCredentials answers GET /admin/devgw/credentials/{kind}/{id}.
func GetCredentials(ctx context.Context, act *app.Actor, kind string, id int64) (*CredentialsView, error) {
	if err := pathKind(act, kind); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out *CredentialsView
	err := t.Read(ctx, func(tx *sql.Tx) error {
		if _, err := resolveTarget(ctx, tx, act, kind, id); err != nil {
			return err
		}
		c, err := loadCreds(ctx, tx, t, kind, id)
		if err != nil {
			return err
		}
		out = c.view(kind, id)
		return nil
	})
	return out, err
}

// Input bounds.
const (
	maxUsername = 64
	maxPassword = 256
	maxKey      = 16 << 10
)

func (in *CredentialsInput) validate() error {
	if in.Port.Set && (in.Port.Null || in.Port.V < 1 || in.Port.V > 65535) {
		return app.ErrValidation("invalid_port", "port")
	}
	if in.Username.Set {
		in.Username.V = strings.TrimSpace(in.Username.V)
		if in.Username.Null || in.Username.V == "" || len(in.Username.V) > maxUsername || strings.ContainsAny(in.Username.V, "\x00\r\n") {
			return app.ErrValidation("invalid_username", "username")
		}
	}
	if in.Password.Set && !in.Password.Null && (in.Password.V == "" || len(in.Password.V) > maxPassword) {
		return app.ErrValidation("invalid_password", "password")
	}
	if in.PrivateKey.Set && !in.PrivateKey.Null {
		if len(in.PrivateKey.V) > maxKey || !utf8.ValidString(in.PrivateKey.V) {
			return app.ErrValidation("invalid_private_key", "private_key")
		}
		if _, err := ssh.ParsePrivateKey([]byte(in.PrivateKey.V)); err != nil {
			// A key protected by a passphrase cannot be used unattended.
			return app.ErrValidation("invalid_private_key", "private_key")
		}
	}
	return nil
}

// PutCredentials answers PUT /admin/devgw/credentials/{kind}/{id}: sets the
// port, user name, password and private key (sealed at rest, never
// returned). The host key is not set here: it is learnt on first use and
// replaced only through AcceptHostKey.
func PutCredentials(ctx context.Context, act *app.Actor, kind string, id int64, in CredentialsInput) (*CredentialsView, error) {
	if err := pathKind(act, kind); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out *CredentialsView
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := resolveTarget(ctx, tx, act, kind, id); err != nil {
			return err
		}
		if err := in.validate(); err != nil {
			return err
		}
		c, err := loadCreds(ctx, tx, t, kind, id)
		if err != nil {
			return err
		}
		if in.Port.Set {
			c.port = in.Port.V
		}
		if in.Username.Set {
			c.username = in.Username.V
		}
		if in.Password.Set {
			c.password = nil
			if !in.Password.Null {
				c.password = []byte(in.Password.V)
			}
		}
		if in.PrivateKey.Set {
			c.key = nil
			if !in.PrivateKey.Null {
				c.key = []byte(in.PrivateKey.V)
			}
		}
		now := t.NowText()
		if err := storeCreds(ctx, tx, t, kind, id, c, now); err != nil {
			return err
		}
		c.updatedAt, _ = parseTime(now)
		out = c.view(kind, id)
		return nil
	})
	return out, err
}

// AcceptHostKey answers POST /admin/devgw/credentials/{kind}/{id}/accept-host-key:
// the pending fingerprint (it must be the one given) becomes the trusted
// host key. 409 no_pending_host_key when none is pending,
// 409 host_key_mismatch when the device offered another one.
func AcceptHostKey(ctx context.Context, act *app.Actor, kind string, id int64, in AcceptHostKeyInput) (*CredentialsView, error) {
	if err := pathKind(act, kind); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out *CredentialsView
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := resolveTarget(ctx, tx, act, kind, id); err != nil {
			return err
		}
		fp := strings.TrimSpace(in.Fingerprint)
		if fp == "" {
			return app.ErrValidation("fingerprint_required", "fingerprint")
		}
		c, err := loadCreds(ctx, tx, t, kind, id)
		if err != nil {
			return err
		}
		if c.hostKeyNew == "" {
			return app.ErrConflict("no_pending_host_key")
		}
		if c.hostKeyNew != fp {
			return app.ErrConflict("host_key_mismatch").With("pending", c.hostKeyNew)
		}
		c.hostKey, c.hostKeyNew = fp, ""
		now := t.NowText()
		if err := storeCreds(ctx, tx, t, kind, id, c, now); err != nil {
			return err
		}
		c.updatedAt, _ = parseTime(now)
		out = c.view(kind, id)
		return nil
	})
	return out, err
}

func parseTime(s string) (app.Time, error) {
	tm, err := app.ParseTime(s, false)
	return app.Time{Time: tm}, err
}
