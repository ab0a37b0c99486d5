package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"xr/db"
)

// TenantInfo is a tenant's row in the instance registry.
type TenantInfo struct {
	ID               int64  `json:"id"`
	Slug             string `json:"slug"`
	Name             string `json:"name"`
	MaxUsers         *int64 `json:"max_users"`
	LicenseExpiresAt Time   `json:"license_expires_at"`
	TierPinned       string `json:"tier_pinned"`
	Blocked          bool   `json:"blocked"`
	BlockedReason    string `json:"blocked_reason"`
	CreatedAt        Time   `json:"created_at"`
}

// Tier is the tenant's resource-share tier.
func (t *TenantInfo) Tier() string { return DeriveTier(t.TierPinned, t.MaxUsers) }

func (a *App) listTenants(ctx context.Context) ([]*TenantInfo, error) {
	rows, err := a.Inst.R.QueryContext(ctx, `SELECT id, slug, name, max_users, license_expires_at, tier, blocked, blocked_reason, created_at FROM tenants ORDER BY slug`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*TenantInfo
	for rows.Next() {
		t := &TenantInfo{}
		var max sql.NullInt64
		if err := rows.Scan(&t.ID, &t.Slug, &t.Name, &max, &t.LicenseExpiresAt, &t.TierPinned, &t.Blocked, &t.BlockedReason, &t.CreatedAt); err != nil {
			return nil, err
		}
		if max.Valid {
			v := max.Int64
			t.MaxUsers = &v
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Tenants lists every tenant (fresh from the registry file).
func (a *App) Tenants(ctx context.Context) ([]*TenantInfo, error) { return a.listTenants(ctx) }

var slugRe = regexp.MustCompile(`^[a-z0-9-]{2,40}$`)

// Slugs a tenant may not take: they name parts of the instance itself.
var reservedSlugs = map[string]bool{"www": true, "api": true, "admin": true, "app": true, "static": true, "mail": true}

// ValidateSlug checks a tenant slug.
func ValidateSlug(slug string) error {
	if !slugRe.MatchString(slug) || strings.HasPrefix(slug, "-") || strings.HasSuffix(slug, "-") {
		return ErrValidation("invalid_slug", "slug")
	}
	if reservedSlugs[slug] {
		return ErrValidation("slug_reserved", "slug")
	}
	return nil
}

// NewTenant is what xr tenant create and registration provide.
type NewTenant struct {
	Slug, Name                string
	AdminUsername, AdminEmail string
	AdminPassword             string
	MaxUsers                  *int64
	Tier                      string // pinned tier, or "" to derive
	LicenseExpiresAt          Time
}

// Validate checks every field before anything is written.
func (n *NewTenant) Validate() error {
	if err := ValidateSlug(n.Slug); err != nil {
		return err
	}
	if strings.TrimSpace(n.Name) == "" {
		return ErrValidation("name_required", "name")
	}
	if n.AdminUsername == "" && n.AdminEmail == "" {
		return ErrValidation("admin_identity_required", "admin_username")
	}
	if n.AdminUsername != "" && !usernameRe.MatchString(n.AdminUsername) {
		return ErrValidation("invalid_username", "admin_username")
	}
	if n.AdminEmail != "" && !emailRe.MatchString(n.AdminEmail) {
		return ErrValidation("invalid_email", "admin_email")
	}
	if err := CheckPasswordStrength(n.AdminPassword, "admin_password"); err != nil {
		return err
	}
	if n.Tier != "" && !ValidTier(n.Tier) {
		return ErrValidation("invalid_tier", "tier")
	}
	if n.MaxUsers != nil && *n.MaxUsers < 0 {
		return ErrValidation("invalid_max_users", "max_users")
	}
	return nil
}

var (
	usernameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$`)
	emailRe    = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
)

// CreateTenant registers a tenant, creates its file and provisions it: the
// settings, the system roles and the root manager (the owner) with the
// administrator role. On any failure nothing is left behind.
func (a *App) CreateTenant(ctx context.Context, n NewTenant) (*TenantInfo, int64, error) {
	if err := n.Validate(); err != nil {
		return nil, 0, err
	}
	path := db.TenantPath(a.Cfg.DataDir, n.Slug)
	if _, err := os.Stat(path); err == nil {
		return nil, 0, ErrConflict("slug_taken").With("field", "slug")
	}
	now := a.NowText()
	var id int64
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `INSERT INTO tenants(slug, name, max_users, license_expires_at, tier, created_at, updated_at) VALUES (?,?,?,?,?,?,?)`,
			n.Slug, strings.TrimSpace(n.Name), n.MaxUsers, n.LicenseExpiresAt, n.Tier, now, now)
		if db.IsUnique(err) {
			return ErrConflict("slug_taken").With("field", "slug")
		}
		if err != nil {
			return err
		}
		id, err = r.LastInsertId()
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	ownerID, err := a.provisionTenant(ctx, n)
	if err != nil {
		// Undo; whatever cannot be undone is reported with the cause.
		a.Pool.Evict(ctx, n.Slug)
		rmErr := removeTenantFiles(path)
		delErr := a.Inst.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `DELETE FROM tenants WHERE id = ?`, id)
			return err
		})
		if delErr != nil {
			delErr = fmt.Errorf("unregister half-created tenant %s: %w", n.Slug, delErr)
		}
		if undoErr := errors.Join(rmErr, delErr); undoErr != nil {
			err = errors.Join(err, undoErr)
		}
		return nil, 0, err
	}
	if err := a.reload(ctx); err != nil {
		return nil, 0, err
	}
	t, _ := a.TenantByID(id)
	return t, ownerID, nil
}

// removeTenantFiles deletes a tenant's database file and its WAL and shared
// memory files; a file already missing is no error. A file left behind
// would keep the slug taken.
func removeTenantFiles(path string) error {
	var errs []error
	for _, s := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + s); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (a *App) provisionTenant(ctx context.Context, n NewTenant) (int64, error) {
	d, release, err := a.Pool.Acquire(n.Slug, true)
	if err != nil {
		return 0, err
	}
	defer release()
	var owner int64
	err = d.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('tenant_slug', ?)`, n.Slug); err != nil {
			return err
		}
		reg := a.Registry()
		for k, v := range reg.DefaultSettings() {
			if _, err := tx.ExecContext(ctx, `INSERT INTO settings(key, value) VALUES (?,?)`, k, v); err != nil {
				return err
			}
		}
		adminRole, err := provisionRoles(ctx, tx, reg)
		if err != nil {
			return err
		}
		owner, err = InsertManager(ctx, tx, ManagerRecord{
			Username: n.AdminUsername, Email: n.AdminEmail, PasswordHash: HashPassword(n.AdminPassword),
			Firstname: "Owner",
		})
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO manager_roles(manager_id, role_id) VALUES (?,?)`, owner, adminRole)
		return err
	})
	return owner, err
}

// TenantUpdate changes registry fields; nil/empty fields are kept.
type TenantUpdate struct {
	Name             *string
	MaxUsers         Opt[int64]
	Tier             *string
	LicenseExpiresAt Opt[Time]
	Blocked          *bool
	BlockedReason    *string
}

// UpdateTenant changes a tenant's registry row.
func (a *App) UpdateTenant(ctx context.Context, slug string, u TenantUpdate) (*TenantInfo, error) {
	if u.Tier != nil && *u.Tier != "" && !ValidTier(*u.Tier) {
		return nil, ErrValidation("invalid_tier", "tier")
	}
	if u.Name != nil && strings.TrimSpace(*u.Name) == "" {
		return nil, ErrValidation("name_required", "name")
	}
	if u.MaxUsers.Set && !u.MaxUsers.Null && u.MaxUsers.V < 0 {
		return nil, ErrValidation("invalid_max_users", "max_users")
	}
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		var id int64
		if err := tx.QueryRowContext(ctx, `SELECT id FROM tenants WHERE slug = ?`, slug).Scan(&id); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound()
			}
			return err
		}
		var p Patch
		if u.Name != nil {
			p.Set("name", strings.TrimSpace(*u.Name))
		}
		if u.MaxUsers.Set {
			var v any
			if !u.MaxUsers.Null {
				v = u.MaxUsers.V
			}
			p.Set("max_users", v)
		}
		if u.Tier != nil {
			p.Set("tier", *u.Tier)
		}
		if u.LicenseExpiresAt.Set {
			p.Set("license_expires_at", u.LicenseExpiresAt.V)
		}
		if u.Blocked != nil {
			p.Set("blocked", *u.Blocked)
		}
		if u.BlockedReason != nil {
			p.Set("blocked_reason", *u.BlockedReason)
		}
		_, err := p.Exec(ctx, tx, "tenants", id, a.NowText())
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := a.reload(ctx); err != nil {
		return nil, err
	}
	t, _ := a.TenantBySlug(slug)
	return t, nil
}

// DeleteTenant removes a tenant from the registry and deletes its file.
func (a *App) DeleteTenant(ctx context.Context, slug string) error {
	var found bool
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM tenants WHERE slug = ?`, slug)
		if err != nil {
			return err
		}
		n, _ := r.RowsAffected()
		found = n > 0
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return ErrNotFound()
	}
	ctx2, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	a.Pool.Evict(ctx2, slug)
	rmErr := errors.Join(removeTenantFiles(db.TenantPath(a.Cfg.DataDir, slug)), os.RemoveAll(a.FilesDir(slug)))
	err = a.reload(ctx)
	if rmErr != nil {
		err = errors.Join(err, fmt.Errorf("tenant %s unregistered, remove its files: %w", slug, rmErr))
	}
	return err
}

// FilesDir is where a tenant's job artifacts live.
func (a *App) FilesDir(slug string) string {
	return a.Cfg.DataDir + "/files/" + slug
}

// LicenseStatus tells whether the tenant's admin surface is locked.
type LicenseStatus struct {
	Status        string `json:"license_status"` // active, expired, over_cap, blocked
	ExpiresAt     Time   `json:"license_expires_at"`
	MaxUsers      *int64 `json:"max_users"`
	UsersCount    int64  `json:"users_count"`
	Blocked       bool   `json:"blocked"`
	BlockedReason string `json:"blocked_reason"`
}

// Locked reports whether the status locks the admin surface.
func (l LicenseStatus) Locked() bool { return l.Status != "active" }

// License computes the licence status from the registry row and the
// tenant's subscriber count.
func (t *Tenant) License(usersCount int64) LicenseStatus {
	l := LicenseStatus{ExpiresAt: t.LicenseExpiresAt, MaxUsers: t.MaxUsers, UsersCount: usersCount,
		Blocked: t.Blocked, BlockedReason: t.BlockedReason, Status: "active"}
	switch {
	case t.Blocked:
		l.Status = "blocked"
	case t.MaxUsers != nil && *t.MaxUsers == 0:
		l.Status, l.Blocked, l.BlockedReason = "blocked", true, "max_users_zero"
	case !t.LicenseExpiresAt.IsZero() && t.Now().After(t.LicenseExpiresAt.Time):
		l.Status = "expired"
	case t.MaxUsers != nil && usersCount > *t.MaxUsers:
		l.Status = "over_cap"
	}
	return l
}

// CountUsers is the tenant's subscriber count as the licence sees it. The
// subscribers area keeps it in meta by trigger, so it costs one primary-key
// read; a tenant without subscribers yet has no row and counts zero. A
// failed read is an error, never zero.
func (t *Tenant) CountUsers(ctx context.Context) (int64, error) {
	return ReadUsersCount(ctx, t.DB.R)
}

// ReadUsersCount is CountUsers inside a transaction (q). A stored value
// that is not a non-negative integer is an error too (SQLite's CAST would
// read it as 0, under every cap).
func ReadUsersCount(ctx context.Context, q Querier) (int64, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT CAST(value AS TEXT) FROM meta WHERE key = 'users_count'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("users count: %w", err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("users count: stored value %q is not a count", v)
	}
	return n, nil
}

// CurrentLicense is the licence status with the subscriber count read now.
// The licence check fails closed: an unreadable count is an error, not a
// count of zero that lets the request through.
func (t *Tenant) CurrentLicense(ctx context.Context) (LicenseStatus, error) {
	n, err := t.CountUsers(ctx)
	if err != nil {
		return LicenseStatus{}, err
	}
	return t.License(n), nil
}
