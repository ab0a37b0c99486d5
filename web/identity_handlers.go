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
	return c.OK(map[string]any{"permissions": s.app.Permissions(), "portal_permissions": identity.PortalPermissions})
}

func (s *Server) login(c *Ctx) error {
	var req identity.LoginRequest
	if err := c.Decode(&req); err != nil {
		return err
	}
	req.IP, req.UserAgent = c.IP, c.R.UserAgent()
	// tenant_slug is honoured only on a host that carries no tenant.
	if c.Tenant != nil {
		req.TenantSlug = ""
	}
	res, err := identity.Login(c.R.Context(), s.app, c.Tenant, req)
	if err != nil {
		return err
	}
	return c.OK(res)
}

type refreshReq struct {
	RefreshToken string `json:"refresh_token"`
}

func (s *Server) refresh(c *Ctx) error {
	var req refreshReq
	if err := c.Decode(&req); err != nil {
		return err
	}
	res, err := identity.Refresh(c.R.Context(), s.app, c.Tenant, req.RefreshToken, c.IP, c.R.UserAgent())
	if err != nil {
		return err
	}
	return c.OK(res)
}

// logout answers ok even if the revocation write failed, as the spec says:
// ok is not proof the token is dead.
func (s *Server) logout(c *Ctx) error {
	if err := identity.Logout(c.R.Context(), c.Actor); err != nil {
		s.log.Warn("logout", "request_id", c.ReqID, "err", err)
	}
	return c.OK(map[string]bool{"ok": true})
}

type authContext struct {
	HostKind HostKind               `json:"host_kind"`
	Tenant   *identity.PublicTenant `json:"tenant"`
}

// authContext tells a login page what the host is: always 200.
func (s *Server) authContext(c *Ctx) error {
	out := authContext{HostKind: c.Host.Kind}
	if c.Tenant != nil {
		d := identity.PublicDescriptor(c.R.Context(), c.Tenant)
		out.Tenant = &d
	}
	return c.OK(out)
}

type registerStartReq struct {
	Email string `json:"email"`
}

type registerVerifyReq struct {
	RegistrationID string `json:"registration_id"`
	Code           string `json:"code"`
}

func (s *Server) registerStart(c *Ctx) error {
	var in registerStartReq
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := identity.StartRegistration(c.R.Context(), s.app, in.Email)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) registerVerify(c *Ctx) error {
	var in registerVerifyReq
	if err := c.Decode(&in); err != nil {
		return err
	}
	if err := identity.VerifyRegistration(c.R.Context(), s.app, in.RegistrationID, in.Code); err != nil {
		return err
	}
	return c.OK(map[string]bool{"verified": true})
}

func (s *Server) registerResend(c *Ctx) error {
	var in registerVerifyReq
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := identity.ResendRegistration(c.R.Context(), s.app, in.RegistrationID)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) registerComplete(c *Ctx) error {
	var in identity.CompleteRegistrationInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := identity.CompleteRegistration(c.R.Context(), s.app, in)
	if err != nil {
		return err
	}
	return c.Created(out)
}

func (s *Server) slugAvailable(c *Ctx) error {
	ok, reason := identity.SlugAvailable(s.app, c.Query().Get("slug"))
	return c.OK(map[string]any{"available": ok, "reason": reason})
}
