package web

import (
	"context"
	"io"
	"strings"

	"xr/app"
	"xr/app/identity"
)

// Account, two-factor, sessions, API tokens, managers and roles handlers
// that need more than an adapter.

// avatar takes the image as the raw body or as the "avatar" part of a
// multipart form.
func (s *Server) avatar(c *Ctx) error {
	var data []byte
	var err error
	if strings.HasPrefix(c.R.Header.Get("Content-Type"), "multipart/form-data") {
		if err := c.R.ParseMultipartForm(identity.MaxAvatarBytes + 4096); err != nil {
			return app.ErrValidation("avatar_too_large", "avatar")
		}
		f, _, ferr := c.R.FormFile("avatar")
		if ferr != nil {
			return app.ErrValidation("avatar_required", "avatar")
		}
		defer f.Close()
		data, err = io.ReadAll(io.LimitReader(f, identity.MaxAvatarBytes+1))
	} else {
		data, err = io.ReadAll(io.LimitReader(c.R.Body, identity.MaxAvatarBytes+1))
	}
	if err != nil {
		return app.ErrValidation("unreadable_body", "avatar")
	}
	path, err := identity.SetAvatar(c.R.Context(), c.Actor, data)
	if err != nil {
		return err
	}
	return c.OK(map[string]string{"avatar": path})
}

func (s *Server) revokeSession(c *Ctx) error {
	jti := c.R.PathValue("jti")
	if err := identity.RevokeSession(c.R.Context(), c.Actor, jti); err != nil {
		return err
	}
	return c.OK(map[string]any{"ok": true, "jti": jti})
}

func (s *Server) revokeOtherSessions(c *Ctx) error {
	n, err := identity.RevokeOtherSessions(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	return c.OK(map[string]any{"ok": true, "revoked": n})
}

func (s *Server) addPushToken(c *Ctx) error {
	var in identity.PushToken
	if err := c.Decode(&in); err != nil {
		return err
	}
	if err := identity.AddPushToken(c.R.Context(), c.Actor, in); err != nil {
		return err
	}
	return c.OK(map[string]bool{"ok": true})
}

func (s *Server) removePushToken(c *Ctx) error {
	var in identity.PushToken
	if err := c.Decode(&in); err != nil {
		return err
	}
	if err := identity.RemovePushToken(c.R.Context(), c.Actor, in.Token); err != nil {
		return err
	}
	return c.OK(map[string]bool{"ok": true})
}

func (s *Server) loginAsManager(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	out, err := identity.LoginAs(c.R.Context(), c.Actor, id, c.IP, c.R.UserAgent())
	if err != nil {
		return err
	}
	return c.OK(out)
}

func tokenAction(action string) func(context.Context, *app.Actor, int64) (*identity.APIToken, error) {
	return func(ctx context.Context, act *app.Actor, id int64) (*identity.APIToken, error) {
		return identity.SetAPITokenState(ctx, act, id, action)
	}
}

func (s *Server) listManagers(c *Ctx) error {
	return listCall(identity.ManagerListSpec(), identity.ListManagers)(c)
}

func managerStatus(status string) func(context.Context, *app.Actor, int64) error {
	return func(ctx context.Context, act *app.Actor, id int64) error {
		return identity.SetManagerStatus(ctx, act, id, status)
	}
}

type rolesReq struct {
	RoleIDs []int64 `json:"role_ids"`
}

func (s *Server) putManagerRoles(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	var in rolesReq
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := identity.SetManagerRoles(c.R.Context(), c.Actor, id, in.RoleIDs)
	if err != nil {
		return err
	}
	return oneList(c, out)
}

type resetPasswordReq struct {
	Password string `json:"password"`
}

func (s *Server) resetManagerPassword(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	var in resetPasswordReq
	if err := c.Decode(&in); err != nil {
		return err
	}
	pw, err := identity.ResetManagerPassword(c.R.Context(), c.Actor, id, in.Password)
	if err != nil {
		return err
	}
	out := map[string]any{"ok": true}
	if in.Password == "" {
		out["password"] = pw // generated: shown once
	}
	return c.OK(out)
}

func wallet(kind string) func(context.Context, *app.Actor, int64, identity.WalletInput) (*identity.WalletResult, error) {
	return func(ctx context.Context, act *app.Actor, id int64, in identity.WalletInput) (*identity.WalletResult, error) {
		return identity.ManagerWalletOp(ctx, act, id, kind, in)
	}
}

func documents(kind string) func(context.Context, *app.Actor, int64, app.ListQuery) (app.Page[identity.Document], error) {
	return func(ctx context.Context, act *app.Actor, id int64, q app.ListQuery) (app.Page[identity.Document], error) {
		return identity.ManagerDocuments(ctx, act, id, kind, q)
	}
}

func loans(kind string) func(context.Context, *app.Actor, int64, app.ListQuery) (app.Page[identity.LoanEntry], error) {
	return func(ctx context.Context, act *app.Actor, id int64, q app.ListQuery) (app.Page[identity.LoanEntry], error) {
		return identity.ManagerLoans(ctx, act, id, kind, q)
	}
}

func points(sign int64) func(context.Context, *app.Actor, int64, identity.PointsInput) (map[string]int64, error) {
	return func(ctx context.Context, act *app.Actor, id int64, in identity.PointsInput) (map[string]int64, error) {
		after, err := identity.MoveManagerPoints(ctx, act, id, sign, in)
		return map[string]int64{"points_balance": after}, err
	}
}

type groupReq struct {
	GroupID   *int64  `json:"group_id"`
	GroupName string  `json:"group_name"`
	IDs       []int64 `json:"ids"`
}

func (s *Server) managerGroup(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	var in groupReq
	if err := c.Decode(&in); err != nil {
		return err
	}
	if err := identity.SetManagerGroup(c.R.Context(), c.Actor, id, in.GroupID, in.GroupName); err != nil {
		return err
	}
	return c.OK(map[string]any{"ok": true, "id": id})
}

func (s *Server) managersBulkGroup(c *Ctx) error {
	var in groupReq
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := identity.BulkSetManagerGroup(c.R.Context(), c.Actor, in.IDs, in.GroupID, in.GroupName)
	if err != nil {
		return err
	}
	return c.OK(out)
}

type portalPermsReq struct {
	Permissions []string `json:"permissions"`
}

func (s *Server) portalPermissions(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	var in portalPermsReq
	if err := c.Decode(&in); err != nil {
		return err
	}
	r, err := identity.SetPortalPermissions(c.R.Context(), c.Actor, id, in.Permissions)
	if err != nil {
		return err
	}
	return c.OK(r)
}

func (s *Server) license(c *Ctx) error {
	t := c.Tenant
	lic, err := t.CurrentLicense(c.R.Context())
	if err != nil {
		return err
	}
	return c.OK(map[string]any{"license_status": lic.Status, "license_expires_at": lic.ExpiresAt, "max_users": lic.MaxUsers,
		"users_count": lic.UsersCount, "blocked": lic.Blocked, "blocked_reason": lic.BlockedReason, "tier": t.Tier(), "locked": lic.Locked()})
}

func (s *Server) permissionCatalog(c *Ctx) error {
	return c.OK(map[string]any{"permissions": app.Permissions, "portal_permissions": app.PortalPermissions})
}
