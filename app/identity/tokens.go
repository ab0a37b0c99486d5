package identity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"xr/app"
)

// APIToken is a stored API token; the plaintext is shown by create and
// reveal only.
type APIToken struct {
	ID         int64    `json:"id"`
	ManagerID  int64    `json:"manager_id"`
	Name       string   `json:"name"`
	Hint       string   `json:"hint"`
	Scopes     []string `json:"scopes"`
	FullAccess bool     `json:"full_access"`
	Status     string   `json:"status"` // active, disabled, revoked, expired
	ExpiresAt  app.Time `json:"expires_at"`
	RevokedAt  app.Time `json:"revoked_at"`
	LastUsedAt app.Time `json:"last_used_at"`
	CreatedAt  app.Time `json:"created_at"`
	Token      string   `json:"token,omitempty"`
	disabled   bool
}

// APITokenInput is POST /developer/api-tokens.
type APITokenInput struct {
	Name       string         `json:"name"`
	Scopes     []string       `json:"scopes"`
	FullAccess bool           `json:"full_access"`
	ExpiresAt  app.DateOrTime `json:"expires_at"`
}

const tokenCols = `id, manager_id, name, hint, scopes, full_access, disabled, expires_at, revoked_at, last_used_at, created_at`

func scanToken(row interface{ Scan(...any) error }, now time.Time) (*APIToken, error) {
	k := &APIToken{}
	var scopes string
	if err := row.Scan(&k.ID, &k.ManagerID, &k.Name, &k.Hint, &scopes, &k.FullAccess, &k.disabled, &k.ExpiresAt, &k.RevokedAt, &k.LastUsedAt, &k.CreatedAt); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, app.ErrNotFound()
		}
		return nil, err
	}
	var err error
	if k.Scopes, err = jsonStrings(scopes); err != nil {
		return nil, fmt.Errorf("api token %d scopes: %w", k.ID, err)
	}
	switch {
	case !k.RevokedAt.IsZero():
		k.Status = "revoked"
	case !k.ExpiresAt.IsZero() && !k.ExpiresAt.After(now):
		k.Status = "expired"
	case k.disabled:
		k.Status = "disabled"
	default:
		k.Status = "active"
	}
	return k, nil
}

// CreateAPIToken mints xrt_ + 43 base64url characters for the caller. The
// scope is validated against the catalogue; full authority is the separate
// full_access flag, an empty scope may do nothing.
func CreateAPIToken(ctx context.Context, act *app.Actor, in APITokenInput) (*APIToken, error) {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" || len(in.Name) > 100 {
		return nil, app.ErrValidation("name_required", "name")
	}
	for _, s := range in.Scopes {
		if !act.Tenant.App.KnownPermission(s) {
			return nil, app.ErrValidation("unknown_permission", "scopes").With("permission", s)
		}
	}
	if !in.ExpiresAt.IsZero() && !in.ExpiresAt.After(act.Tenant.Now()) {
		return nil, app.ErrValidation("expires_in_past", "expires_at")
	}
	scopes := append([]string{}, in.Scopes...)
	sort.Strings(scopes)
	if in.FullAccess {
		scopes = []string{}
	}
	plain := apiTokenPrefix + app.RandomToken(32)
	t := act.Tenant
	var id int64
	err := t.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `INSERT INTO api_tokens(manager_id, name, token_hash, token_sealed, hint, scopes, full_access, expires_at, created_at) VALUES (?,?,?,?,?,?,?,?,?)`,
			act.ManagerID, in.Name, app.SHA256(plain), t.App.Keys.Seal([]byte(plain)), plain[:8]+"…", mustJSON(dedupe(scopes)), in.FullAccess, in.ExpiresAt.Time, t.NowText())
		if err != nil {
			return err
		}
		id, _ = r.LastInsertId()
		return nil
	})
	if err != nil {
		return nil, err
	}
	k, err := ownToken(ctx, act, id)
	if err != nil {
		return nil, err
	}
	k.Token = plain
	return k, nil
}

func dedupe(s []string) []string {
	out := []string{}
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// ownToken reads one of the caller's own tokens; another manager's token
// is a 404.
func ownToken(ctx context.Context, act *app.Actor, id int64) (*APIToken, error) {
	return scanToken(act.Tenant.DB.R.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM api_tokens WHERE id = ? AND manager_id = ?`, id, act.ManagerID), act.Tenant.Now())
}

// ListAPITokens lists the caller's tokens, newest first.
func ListAPITokens(ctx context.Context, act *app.Actor) ([]*APIToken, error) {
	rows, err := act.Tenant.DB.R.QueryContext(ctx, `SELECT `+tokenCols+` FROM api_tokens WHERE manager_id = ? ORDER BY id DESC`, act.ManagerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*APIToken{}
	for rows.Next() {
		k, err := scanToken(rows, act.Tenant.Now())
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// SetAPITokenState revokes (permanently), disables or enables a token.
func SetAPITokenState(ctx context.Context, act *app.Actor, id int64, action string) (*APIToken, error) {
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		var revoked sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT revoked_at FROM api_tokens WHERE id = ? AND manager_id = ?`, id, act.ManagerID).Scan(&revoked)
		if errors.Is(err, sql.ErrNoRows) {
			return app.ErrNotFound()
		}
		if err != nil {
			return err
		}
		if revoked.Valid {
			if action == "revoke" {
				return nil // already revoked: the same outcome
			}
			return app.ErrConflict("api_token_revoked")
		}
		switch action {
		case "revoke":
			_, err = tx.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = ? WHERE id = ?`, act.Tenant.NowText(), id)
		case "disable":
			_, err = tx.ExecContext(ctx, `UPDATE api_tokens SET disabled = 1 WHERE id = ?`, id)
		case "enable":
			_, err = tx.ExecContext(ctx, `UPDATE api_tokens SET disabled = 0 WHERE id = ?`, id)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return ownToken(ctx, act, id)
}

// RevealAPIToken decrypts a live token of the caller's.
func RevealAPIToken(ctx context.Context, act *app.Actor, id int64) (*APIToken, error) {
	k, err := ownToken(ctx, act, id)
	if err != nil {
		return nil, err
	}
	if k.Status == "revoked" {
		return nil, app.ErrConflict("api_token_revoked")
	}
	var sealed []byte
	if err := act.Tenant.DB.R.QueryRowContext(ctx, `SELECT token_sealed FROM api_tokens WHERE id = ?`, id).Scan(&sealed); err != nil {
		return nil, err
	}
	plain, err := act.Tenant.App.Keys.Open(sealed)
	if err != nil {
		return nil, err
	}
	k.Token = string(plain)
	return k, nil
}
