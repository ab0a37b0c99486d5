package app

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"strconv"
	"sync"
	"time"
)

// CredKind is how the caller authenticated.
type CredKind int

const (
	CredSystem  CredKind = iota // the CLI or the server itself
	CredSession                 // a manager session token
	CredAPIToken
	CredSubscriber // a subscriber's portal session
)

// Actor is who is calling: the manager, its resolved authority and scope.
// Downstream code does not branch on the credential kind except where the
// spec says a surface refuses tokens.
type Actor struct {
	Tenant       *Tenant
	ManagerID    int64
	SubscriberID int64 // the portal caller (CredSubscriber only)
	Kind         CredKind
	JTI          string // session token id
	TokenID      int64  // API token id
	Impersonator int64  // the manager acting through login-as, or 0
	Roles        []string
	Perms        map[Perm]bool
	IsAdmin      bool
	// TenantWide is true for callers who see every record (the
	// administrator role, the tenant owner, or a role granting tenant-wide
	// visibility); everyone else sees only their own manager subtree.
	TenantWide bool
}

// SubscriberActor is the principal of a verified portal session: the
// subscriber uid of tenant t, signed in with session jti. It holds no
// permission and its manager scope is empty, so a staff function handed it
// by mistake finds nothing.
func SubscriberActor(t *Tenant, uid int64, jti string) *Actor {
	return &Actor{Tenant: t, Kind: CredSubscriber, SubscriberID: uid, JTI: jti}
}

// Can reports whether the actor holds any of codes.
func (a *Actor) Can(codes ...Perm) bool {
	if a.Kind == CredSystem && a.IsAdmin {
		// xr itself (SystemActor: jobs, the CLI): every code, also of
		// an area the App was built without.
		return true
	}
	for _, c := range codes {
		if a.Perms[c] {
			return true
		}
	}
	return false
}

// Require is Can as an error: a plain 403.
func (a *Actor) Require(codes ...Perm) error {
	if len(codes) == 0 || a.Can(codes...) {
		return nil
	}
	return ErrForbidden("insufficient_permissions")
}

// PermList is the sorted resolved permission codes.
func (a *Actor) PermList() []string {
	out := make([]string, 0, len(a.Perms))
	for c := range a.Perms {
		out = append(out, string(c))
	}
	sort.Strings(out)
	return out
}

// ScopeSQL returns a condition restricting col (a manager id column) to the
// actor's subtree, and its argument; "1=1" for tenant-wide callers. It is
// the one scoping primitive every list and lookup uses.
func (a *Actor) ScopeSQL(col string) (string, []any) {
	if a.TenantWide {
		return "1=1", nil
	}
	return col + " IN (SELECT descendant_id FROM manager_tree WHERE ancestor_id = ?)", []any{a.ManagerID}
}

// InScope reports whether managerID is in the actor's subtree.
func (a *Actor) InScope(ctx context.Context, q Querier, managerID int64) (bool, error) {
	if a.TenantWide {
		var one int
		err := q.QueryRowContext(ctx, `SELECT 1 FROM managers WHERE id = ?`, managerID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	}
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM manager_tree WHERE ancestor_id = ? AND descendant_id = ?`, a.ManagerID, managerID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// RequireScope answers the spec's 404 for a manager outside the subtree.
func (a *Actor) RequireScope(ctx context.Context, q Querier, managerID int64) error {
	ok, err := a.InScope(ctx, q, managerID)
	if err != nil {
		return err
	}
	if !ok {
		// Both answer the same bytes; only a bulk call tells a missing
		// record (not_found) from one outside the subtree (not_authorized).
		var one int
		if err := q.QueryRowContext(ctx, `SELECT 1 FROM managers WHERE id = ?`, managerID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound()
		}
		return ErrOutOfScope()
	}
	return nil
}

// Querier is what both *sql.DB and *sql.Tx offer for reads.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// SystemActor acts for the CLI and internal jobs: tenant-wide, every code,
// as the tenant owner.
func SystemActor(ctx context.Context, t *Tenant) (*Actor, error) {
	var root int64
	if err := t.DB.R.QueryRowContext(ctx, `SELECT id FROM managers WHERE parent_id IS NULL`).Scan(&root); err != nil {
		return nil, err
	}
	perms := map[Perm]bool{}
	for _, c := range t.App.AllPerms() {
		perms[c] = true
	}
	return &Actor{Tenant: t, ManagerID: root, Kind: CredSystem, Roles: []string{AdminRoleName}, Perms: perms, IsAdmin: true, TenantWide: true}, nil
}

// AdminRoleName is the immutable role that holds every code.
const AdminRoleName = "administrator"

// reservedRoleNames cannot be given to hand-made roles and are stripped
// from the claims of a scoped API token.
var reservedRoleNames = map[string]bool{"administrator": true, "admin": true, "superadmin": true, "super_admin": true, "owner": true, "root": true}

// grant is a manager's authority as stored: role names and codes.
type grant struct {
	roles   []string
	perms   map[Perm]bool
	isAdmin bool
	isRoot  bool
	wide    bool // a role of it grants tenant-wide visibility
	status  string
	at      time.Time
}

// permCache keeps resolved grants for PermCacheWindow. Role edits in this
// process drop a tenant's entries at once; other processes re-read within
// the window.
type permCache struct {
	mu sync.Mutex
	m  map[string]*grant
}

// PermCacheWindow is how long a resolved grant may be reused.
var PermCacheWindow = 30 * time.Second

// grantKey names a manager's grant: slug first (DropGrants matches on it),
// then the tenant's id and creation time, so a tenant re-created under the
// same slug never reuses a stale grant. The cache lives on the App, so two
// instances in one process never share it.
func grantKey(t *Tenant, id int64) string {
	k := t.Slug + "/" + strconv.FormatInt(id, 10)
	if t.TenantInfo != nil {
		k += "/" + strconv.FormatInt(t.ID, 10) + "/" + strconv.FormatInt(t.CreatedAt.Unix(), 10)
	}
	return k
}

// DropGrants forgets every cached grant of a tenant (after a role edit).
func (a *App) DropGrants(slug string) {
	a.grants.mu.Lock()
	for k := range a.grants.m {
		if len(k) > len(slug) && k[:len(slug)+1] == slug+"/" {
			delete(a.grants.m, k)
		}
	}
	a.grants.mu.Unlock()
}

// resolveGrant reads a manager's roles and codes (cached).
func resolveGrant(ctx context.Context, t *Tenant, managerID int64) (*grant, error) {
	grants := &t.App.grants
	key := grantKey(t, managerID)
	grants.mu.Lock()
	g := grants.m[key]
	grants.mu.Unlock()
	if g != nil && time.Since(g.at) < PermCacheWindow {
		return g, nil
	}
	g = &grant{perms: map[Perm]bool{}, at: time.Now()}
	var parent sql.NullInt64
	err := t.DB.R.QueryRowContext(ctx, `SELECT status, parent_id FROM managers WHERE id = ?`, managerID).Scan(&g.status, &parent)
	if errors.Is(err, sql.ErrNoRows) {
		g.status = "deleted"
		return g, nil
	}
	if err != nil {
		return nil, err
	}
	g.isRoot = !parent.Valid
	rows, err := t.DB.R.QueryContext(ctx, `SELECT r.name, r.immutable, r.tenant_wide, COALESCE(rp.code, '') FROM manager_roles mr JOIN roles r ON r.id = mr.role_id
		LEFT JOIN role_permissions rp ON rp.role_id = r.id WHERE mr.manager_id = ?`, managerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var name, code string
		var immutable, wide bool
		if err := rows.Scan(&name, &immutable, &wide, &code); err != nil {
			return nil, err
		}
		if !seen[name] {
			seen[name] = true
			g.roles = append(g.roles, name)
		}
		if immutable && name == AdminRoleName {
			g.isAdmin = true
		}
		g.wide = g.wide || wide
		if code != "" {
			// Stored codes are kept as they are; one no longer in the
			// catalogue matches no constant and grants nothing.
			g.perms[Perm(code)] = true
		}
	}
	if g.isAdmin {
		for _, c := range t.App.AllPerms() {
			g.perms[c] = true
		}
	}
	sort.Strings(g.roles)
	grants.mu.Lock()
	if grants.m == nil {
		grants.m = map[string]*grant{}
	}
	grants.m[key] = g
	grants.mu.Unlock()
	return g, rows.Err()
}

// ManagerActor resolves a manager's current grant (cached) into an actor,
// narrowed by an API token's scope when scope != nil. status is the
// manager's status ("deleted" when the row is gone); callers refuse any
// other than "active".
func ManagerActor(ctx context.Context, t *Tenant, managerID int64, scope []string) (*Actor, string, error) {
	g, err := resolveGrant(ctx, t, managerID)
	if err != nil {
		return nil, "", err
	}
	return actorFor(t, managerID, g, scope), g.status, nil
}

// ReservedRoleName tells whether a role name is reserved for the system.
func ReservedRoleName(name string) bool { return reservedRoleNames[name] }

// actorFor builds an actor from a manager's current grant, narrowed by an
// API token's scope when scope != nil (the narrowed set is never cached).
func actorFor(t *Tenant, managerID int64, g *grant, scope []string) *Actor {
	a := &Actor{Tenant: t, ManagerID: managerID, Roles: g.roles, Perms: g.perms, IsAdmin: g.isAdmin,
		TenantWide: g.isAdmin || g.isRoot || g.wide}
	if scope != nil {
		narrowed := map[Perm]bool{}
		for _, c := range scope {
			if g.perms[Perm(c)] {
				narrowed[Perm(c)] = true
			}
		}
		var roles []string
		for _, r := range g.roles {
			if !reservedRoleNames[r] {
				roles = append(roles, r)
			}
		}
		a.Perms, a.Roles, a.IsAdmin = narrowed, roles, false
	}
	if a.Roles == nil {
		a.Roles = []string{}
	}
	return a
}
