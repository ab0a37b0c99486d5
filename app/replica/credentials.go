package replica

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"xr/app"
)

// Module declares the replica area's sealed column, so xr keys rotate
// re-seals the replica credentials with the rest.
var Module = app.Module{
	Name:                  "replica",
	InstanceSealedColumns: []app.SealedColumn{{Table: "replica_credentials", Column: "credentials_sealed"}},
}

// A primary keeps the credentials of its remote target sealed in
// instance.db (table replica_credentials). A standby cannot: its
// instance.db is the followed copy of the primary's, read-only; it keeps
// them sealed in a file of its own (StandbyCredentialsPath), under the
// instance's sealing key, which it reads from that copy before it starts
// following (ReadSealingKeys).

// SaveCredentials keeps t's credentials sealed in instance.db.
func SaveCredentials(ctx context.Context, a *app.App, t Target) error {
	b, err := json.Marshal(t.creds)
	if err != nil {
		return err
	}
	sealed := a.Keys.Seal(b)
	return a.Inst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO replica_credentials(url, credentials_sealed, updated_at) VALUES (?, ?, ?)
			ON CONFLICT(url) DO UPDATE SET credentials_sealed = excluded.credentials_sealed, updated_at = excluded.updated_at`,
			t.URL, sealed, time.Now().UTC().Format(time.RFC3339))
		return err
	})
}

// LoadCredentials returns the credentials kept for the target at url; ok
// is false when none are.
func LoadCredentials(ctx context.Context, a *app.App, url string) (c Credentials, ok bool, err error) {
	var sealed []byte
	err = a.Inst.R.QueryRowContext(ctx, `SELECT credentials_sealed FROM replica_credentials WHERE url = ?`, url).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	b, err := a.Keys.Open(sealed)
	if err != nil {
		return c, false, fmt.Errorf("the credentials kept for %s do not open: %w", url, err)
	}
	return c, true, json.Unmarshal(b, &c)
}

// StandbyCredentialsPath is where a standby keeps its target's
// credentials.
func StandbyCredentialsPath(dataDir string) string {
	return filepath.Join(dataDir, "standby", "credentials.json")
}

type standbyCredentials struct {
	URL    string `json:"url"`
	Sealed []byte `json:"credentials_sealed"`
}

// SaveStandbyCredentials keeps t's credentials sealed under keys (the
// standby's App's, from the followed instance.db) in the standby's file.
func SaveStandbyCredentials(dataDir string, keys *app.Keys, t Target) error {
	b, err := json.Marshal(t.creds)
	if err != nil {
		return err
	}
	out, err := json.Marshal(standbyCredentials{URL: t.URL, Sealed: keys.Seal(b)})
	if err != nil {
		return err
	}
	path := StandbyCredentialsPath(dataDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// LoadStandbyCredentials returns the credentials a standby kept for the
// target at url, opened with the sealing keys of its copy of instance.db
// (master unwraps them when the instance keeps them wrapped); ok is false
// when the standby kept none for url (or has no copy yet).
func LoadStandbyCredentials(ctx context.Context, dataDir string, master []byte, url string) (c Credentials, ok bool, err error) {
	b, err := os.ReadFile(StandbyCredentialsPath(dataDir))
	if errors.Is(err, os.ErrNotExist) {
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	var sc standbyCredentials
	if err := json.Unmarshal(b, &sc); err != nil {
		return c, false, fmt.Errorf("%s: %w", StandbyCredentialsPath(dataDir), err)
	}
	if sc.URL != url {
		return c, false, nil
	}
	keys, err := app.ReadSealingKeys(ctx, dataDir, master)
	if err != nil {
		return c, false, err
	}
	plain, err := app.OpenWithKeys(keys, sc.Sealed)
	if err != nil {
		return c, false, fmt.Errorf("the credentials kept in %s do not open with this instance's keys (give them again): %w", StandbyCredentialsPath(dataDir), err)
	}
	return c, true, json.Unmarshal(plain, &c)
}
