package console

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/identity"
	"xr/web"
)

// Identity pages: the managers tree and record (wallet, journal, roles,
// suspend/activate), the create form, roles with the permission
// catalogue, the caller's API tokens, two-factor and sessions on the
// account page, and the licence page. Each calls the app function of its
// API row, under the same permission codes.
func (s *site) identityPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/managers", Access: web.Staff, API: "GET /managers", H: s.pageManagers, Menu: "managers"},
		{M: "GET", P: "/managers/new", Access: web.Staff, Perms: []app.Perm{identity.PermManagersCreate}, H: s.pageManagerNew},
		{M: "POST", P: "/managers", Access: web.Staff, API: "POST /managers", H: s.pageManagerCreate},
		{M: "GET", P: "/managers/{id}", Access: web.Staff, API: "GET /managers/{id}", H: s.pageManager},
		{M: "POST", P: "/managers/{id}/wallet/deposit", Access: web.Staff, API: "POST /managers/{id}/wallet/deposit", H: s.pageManagerWallet(identity.WalletDeposit)},
		{M: "POST", P: "/managers/{id}/wallet/withdraw", Access: web.Staff, API: "POST /managers/{id}/wallet/withdraw", H: s.pageManagerWallet(identity.WalletWithdraw)},
		{M: "POST", P: "/managers/{id}/wallet/topup", Access: web.Staff, API: "POST /managers/{id}/wallet/topup", H: s.pageManagerWallet(identity.WalletTopup)},
		{M: "POST", P: "/managers/{id}/wallet/pay-debt", Access: web.Staff, API: "POST /managers/{id}/wallet/pay-debt", H: s.pageManagerWallet(identity.WalletPayDebt)},
		{M: "POST", P: "/managers/{id}/roles", Access: web.Staff, API: "PUT /managers/{id}/roles", H: s.pageManagerRoles},
		{M: "POST", P: "/managers/{id}/suspend", Access: web.Staff, API: "POST /managers/{id}/suspend", H: s.pageManagerStatus("suspended")},
		{M: "POST", P: "/managers/{id}/activate", Access: web.Staff, API: "POST /managers/{id}/activate", H: s.pageManagerStatus("active")},

		{M: "GET", P: "/roles", Access: web.Staff, API: "GET /roles", H: s.pageRoles, Menu: "roles"},
		{M: "GET", P: "/roles/new", Access: web.Staff, Perms: []app.Perm{identity.PermRolesManage}, H: s.pageRoleNew},
		{M: "POST", P: "/roles", Access: web.Staff, API: "POST /roles", H: s.pageRoleCreate},
		{M: "GET", P: "/roles/{id}", Access: web.Staff, API: "GET /roles/{id}", H: s.pageRole},
		{M: "POST", P: "/roles/{id}", Access: web.Staff, API: "PATCH /roles/{id}", H: s.pageRoleUpdate},
		{M: "POST", P: "/roles/{id}/delete", Access: web.Staff, API: "DELETE /roles/{id}", H: s.pageRoleDelete},

		{M: "GET", P: "/license", Access: web.Staff, API: "GET /admin/license", H: s.pageLicense, Menu: "license"},

		{M: "POST", P: "/account/2fa/setup", Access: web.Staff, API: "POST /auth/account/2fa/setup", H: s.pageTOTPSetup},
		{M: "POST", P: "/account/2fa/enable", Access: web.Staff, API: "POST /auth/account/2fa/enable", H: s.pageTOTPEnable},
		{M: "POST", P: "/account/2fa/disable", Access: web.Staff, API: "POST /auth/account/2fa/disable", H: s.pageTOTPDisable},
		{M: "POST", P: "/account/2fa/recovery-codes", Access: web.Staff, API: "POST /auth/account/2fa/recovery-codes", H: s.pageRecoveryCodes},
		{M: "POST", P: "/account/sessions/{jti}/revoke", Access: web.Staff, API: "DELETE /auth/account/sessions/{jti}", H: s.pageSessionRevoke},
		{M: "GET", P: "/account/tokens", Access: web.Staff, API: "GET /developer/api-tokens", H: s.pageTokens},
		{M: "POST", P: "/account/tokens", Access: web.Staff, API: "POST /developer/api-tokens", H: s.pageTokenCreate},
		{M: "POST", P: "/account/tokens/{id}/revoke", Access: web.Staff, API: "POST /developer/api-tokens/{id}/revoke", H: s.pageTokenRevoke},
	}
}

// identityFormError is formError, except that a refusal the API answers
// 403 with a reason of its own (a code the caller may not grant, its own
// wallet, itself) is shown on the form; a missing permission stays the
// 403 page. A conflict naming its field in details goes beside the field.
func (s *site) identityFormError(c *web.Ctx, page string, v *web.View, err error) error {
	e := app.AsError(err)
	if e == nil {
		return err
	}
	if e.Status == http.StatusForbidden && e.Reason != "insufficient_permissions" && e.Reason != "license_locked" {
		v.Flash, v.FlashBad = web.Message(v.Lang, e.Reason, e.Code), true
		if p, ok := e.Details["permission"].(string); ok {
			v.Flash += " (" + p + ")"
		}
		return s.Render(c, e.Status, page, v)
	}
	if e.Field == "request_id" && e.Status < 500 { // a hidden field: shown on top
		v.Flash, v.FlashBad = web.Message(v.Lang, e.Reason, e.Code), true
		return s.Render(c, e.Status, page, v)
	}
	if f, ok := e.Details["field"].(string); ok && e.Field == "" && e.Status < 500 {
		v.Errors[f] = web.Message(v.Lang, e.Reason, e.Code)
		return s.Render(c, e.Status, page, v)
	}
	return s.FormError(c, page, v, err)
}

// managerName is how a manager is shown: username, else email, else #id.
func managerName(m *identity.Manager) string {
	switch {
	case m.Username != nil && *m.Username != "":
		return *m.Username
	case m.Email != nil && *m.Email != "":
		return *m.Email
	}
	return "#" + strconv.FormatInt(m.ID, 10)
}

// ---- managers tree ----

// mgrNode is one manager of the tree with its sub-managers.
type mgrNode struct {
	Row      identity.ManagerRow
	Name     string
	Self     bool
	Children []*mgrNode
}

type managersView struct {
	Tree      []*mgrNode
	Count     int
	Truncated bool
	CanNew    bool
}

// treeMaxPages bounds the tree page: 20 pages of 200 managers.
const treeMaxPages = 20

func (s *site) pageManagers(c *web.Ctx) error {
	ctx := c.R.Context()
	act := c.Actor
	self, err := identity.GetManager(ctx, act, act.ManagerID)
	if err != nil {
		return err
	}
	// The caller's own row as the list shows the others (debt included).
	over, err := identity.ManagerOverview(ctx, act, act.ManagerID)
	if err != nil {
		return err
	}
	rows := []identity.ManagerRow{{Manager: *self, Debt: over.Debt}}
	mv := managersView{CanNew: act.Can(identity.PermManagersCreate)}
	for p := 1; ; p++ {
		lq, err := app.ParseList(url.Values{"page": {strconv.Itoa(p)}, "page_size": {strconv.Itoa(app.MaxPageSize)}, "order": {"asc"}}, identity.ManagerListSpec())
		if err != nil {
			return err
		}
		page, err := identity.ListManagers(ctx, act, lq)
		if err != nil {
			return err
		}
		rows = append(rows, page.Rows...)
		if !page.Meta.HasNext {
			break
		}
		if p == treeMaxPages {
			mv.Truncated = true
			break
		}
	}
	nodes := make(map[int64]*mgrNode, len(rows))
	for i := range rows {
		m := &rows[i].Manager
		nodes[m.ID] = &mgrNode{Row: rows[i], Name: managerName(m), Self: m.ID == act.ManagerID}
	}
	for i := range rows {
		n := nodes[rows[i].ID]
		if p := rows[i].ParentManagerID; p != nil && nodes[*p] != nil && !n.Self {
			nodes[*p].Children = append(nodes[*p].Children, n)
		} else {
			mv.Tree = append(mv.Tree, n)
		}
	}
	// The caller first, then the rest of the roots.
	sort.SliceStable(mv.Tree, func(i, j int) bool { return mv.Tree[i].Self && !mv.Tree[j].Self })
	mv.Count = len(rows)
	v := s.NewView(c, "managers", "menu.managers")
	v.Data = mv
	return s.Render(c, http.StatusOK, "managers", v)
}

// ---- manager record ----

type managerView struct {
	M         *identity.Manager
	Name      string
	Parent    string
	Debt      *identity.DebtInfo
	Self      bool
	Journal   *app.Page[identity.JournalEntry]
	JPrev     string
	JNext     string
	Roles     []identity.Role
	AllRoles  []identity.Role
	Assigned  map[int64]bool
	RequestID string
	Can       map[string]bool
}

func (s *site) managerData(c *web.Ctx, id int64) (*managerView, error) {
	ctx := c.R.Context()
	act := c.Actor
	m, err := identity.GetManager(ctx, act, id)
	if err != nil {
		return nil, err
	}
	mv := &managerView{M: m, Name: managerName(m), Self: id == act.ManagerID, RequestID: app.NewUUID(), Assigned: map[int64]bool{},
		Can: web.CanMap(act, identity.PermManagersDeposit, identity.PermManagersWithdraw, identity.PermManagersJournal, identity.PermManagersUpdate, identity.PermRolesManage)}
	if m.ParentManagerID != nil {
		if pm, err := identity.GetManager(ctx, act, *m.ParentManagerID); err == nil {
			mv.Parent = managerName(pm)
		} else if e := app.AsError(err); e == nil || e.Status != http.StatusNotFound {
			return nil, err
		}
	}
	over, err := identity.ManagerOverview(ctx, act, id)
	if err != nil {
		return nil, err
	}
	mv.Debt = over.DebtInfo()
	if mv.Roles, err = identity.ManagerRoles(ctx, act, id); err != nil {
		return nil, err
	}
	for _, r := range mv.Roles {
		mv.Assigned[r.ID] = true
	}
	if act.Can(identity.PermRolesManage) {
		if mv.AllRoles, err = identity.ListRoles(ctx, act); err != nil {
			return nil, err
		}
	}
	if act.Can(identity.PermManagersJournal) {
		jp := c.Query().Get("jpage")
		lq, err := app.ParseList(url.Values{"page": {jp}, "page_size": {"20"}}, identity.JournalSpec)
		if err != nil {
			return nil, err
		}
		j, err := identity.ManagerJournal(ctx, act, id, lq)
		if err != nil {
			return nil, err
		}
		mv.Journal = &j
		if lq.Page > 1 {
			mv.JPrev = fmt.Sprintf("/managers/%d?jpage=%d", id, lq.Page-1)
		}
		if j.Meta.HasNext {
			mv.JNext = fmt.Sprintf("/managers/%d?jpage=%d", id, lq.Page+1)
		}
	}
	return mv, nil
}

func (s *site) renderManager(c *web.Ctx, id int64, status int, form url.Values, err error) error {
	mv, derr := s.managerData(c, id)
	if derr != nil {
		return derr
	}
	v := s.NewView(c, "managers", "menu.managers")
	v.Title, v.Data = mv.Name, mv
	if form != nil {
		v.Form = form
	}
	if err != nil {
		return s.identityFormError(c, "manager", v, err)
	}
	return s.Render(c, status, "manager", v)
}

func (s *site) pageManager(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	return s.renderManager(c, id, http.StatusOK, nil, nil)
}

// managerAction runs an action of the record page: on success a flash and
// back to the record, on a refusal the record with the message.
func (s *site) managerAction(c *web.Ctx, run func(id int64, v *web.View) (string, error)) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	msg, err := run(id, s.NewView(c, "", ""))
	if err != nil {
		return s.renderManager(c, id, 0, c.R.PostForm, err)
	}
	s.SetFlash(c, msg, false)
	return web.Redirect(c, fmt.Sprintf("/managers/%d", id))
}

func (s *site) pageManagerWallet(kind string) web.HandlerFunc {
	return func(c *web.Ctx) error {
		return s.managerAction(c, func(id int64, v *web.View) (string, error) {
			amount, note, rid, err := moneyForm(c)
			if err != nil {
				return "", err
			}
			res, err := identity.ManagerWalletOp(c.R.Context(), c.Actor, id, kind, identity.WalletInput{Amount: *amount, Note: note, RequestID: rid})
			if err != nil {
				return "", err
			}
			msg := v.T("manager.done_"+kind) + " " + res.Amount.String()
			if res.DocumentNo != "" {
				msg += " · " + res.DocumentNo
			}
			return msg, nil
		})
	}
}

func (s *site) pageManagerRoles(c *web.Ctx) error {
	return s.managerAction(c, func(id int64, v *web.View) (string, error) {
		ids := []int64{}
		for _, raw := range c.R.PostForm["role_ids"] {
			rid, err := strconv.ParseInt(raw, 10, 64)
			if err != nil {
				return "", app.ErrValidation("invalid_type", "role_ids")
			}
			ids = append(ids, rid)
		}
		if _, err := identity.SetManagerRoles(c.R.Context(), c.Actor, id, ids); err != nil {
			return "", err
		}
		return v.T("manager.roles_saved"), nil
	})
}

func (s *site) pageManagerStatus(status string) web.HandlerFunc {
	return func(c *web.Ctx) error {
		return s.managerAction(c, func(id int64, v *web.View) (string, error) {
			if err := identity.SetManagerStatus(c.R.Context(), c.Actor, id, status); err != nil {
				return "", err
			}
			return v.T("manager.status_" + status), nil
		})
	}
}

// ---- create a manager ----

type newManagerView struct {
	Parents []identity.ManagerName
	Roles   []identity.Role
	Checked map[string]bool // role ids ticked in a refused form
}

func (s *site) newManagerData(c *web.Ctx, form url.Values) (*newManagerView, error) {
	ctx := c.R.Context()
	parents, err := identity.ParentChoices(ctx, c.Actor)
	if err != nil {
		return nil, err
	}
	d := &newManagerView{Parents: parents, Checked: map[string]bool{}}
	if c.Actor.Can(identity.PermRolesManage) {
		if d.Roles, err = identity.ListRoles(ctx, c.Actor); err != nil {
			return nil, err
		}
	}
	for _, r := range form["role_ids"] {
		d.Checked[r] = true
	}
	return d, nil
}

func (s *site) pageManagerNew(c *web.Ctx) error {
	v := s.NewView(c, "managers", "manager.new")
	d, err := s.newManagerData(c, nil)
	if err != nil {
		return err
	}
	v.Data = d
	v.Form.Set("parent_manager_id", strconv.FormatInt(c.Actor.ManagerID, 10))
	return s.Render(c, http.StatusOK, "manager_new", v)
}

func (s *site) pageManagerCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "managers", "manager.new")
	v.Form = f
	d, err := s.newManagerData(c, f)
	if err != nil {
		return err
	}
	v.Data = d
	str := func(name string) app.Opt[string] {
		if x := strings.TrimSpace(f.Get(name)); x != "" {
			return app.Opt[string]{Set: true, V: x}
		}
		return app.Opt[string]{}
	}
	in := identity.ManagerInput{Username: str("username"), Email: str("email"), Firstname: str("firstname"), Lastname: str("lastname")}
	if pw := f.Get("password"); pw != "" {
		in.Password = app.Opt[string]{Set: true, V: pw}
	}
	if p := f.Get("parent_manager_id"); p != "" {
		pid, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return s.FormError(c, "manager_new", v, app.ErrValidation("invalid_type", "parent_manager_id"))
		}
		in.ParentManagerID = app.Opt[int64]{Set: true, V: pid}
	}
	if raw := f["role_ids"]; len(raw) > 0 {
		ids := make([]int64, 0, len(raw))
		for _, r := range raw {
			rid, err := strconv.ParseInt(r, 10, 64)
			if err != nil {
				return s.FormError(c, "manager_new", v, app.ErrValidation("invalid_type", "role_ids"))
			}
			ids = append(ids, rid)
		}
		in.RoleIDs = app.Opt[[]int64]{Set: true, V: ids}
	}
	m, err := identity.CreateManager(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.identityFormError(c, "manager_new", v, err)
	}
	s.SetFlash(c, v.T("manager.created"), false)
	return web.Redirect(c, fmt.Sprintf("/managers/%d", m.ID))
}

// ---- roles ----

// permBox is one code of the catalogue on a form: ticked, and whether the
// caller may grant it (it holds it).
type permBox struct {
	Code      string
	Checked   bool
	Grantable bool
}

type permGroup struct {
	Area  string
	Perms []permBox
}

// permGroups lays the catalogue out by area. With onlyHeld, codes the
// caller does not hold are left out (token scopes); otherwise they are
// shown, not grantable.
func permGroups(act *app.Actor, checked map[string]bool, onlyHeld bool) []permGroup {
	var out []permGroup
	idx := map[string]int{}
	for _, p := range act.Tenant.App.Permissions() {
		held := act.Perms[p.Code]
		if onlyHeld && !held {
			continue
		}
		i, ok := idx[p.Area]
		if !ok {
			i = len(out)
			idx[p.Area] = i
			out = append(out, permGroup{Area: p.Area})
		}
		out[i].Perms = append(out[i].Perms, permBox{Code: string(p.Code), Checked: checked[string(p.Code)], Grantable: held})
	}
	return out
}

type rolesView struct {
	Roles []identity.Role
}

func (s *site) renderRoles(c *web.Ctx, status int, err error) error {
	roles, lerr := identity.ListRoles(c.R.Context(), c.Actor)
	if lerr != nil {
		return lerr
	}
	v := s.NewView(c, "roles", "menu.roles")
	v.Data = rolesView{Roles: roles}
	if err != nil {
		return s.identityFormError(c, "roles", v, err)
	}
	return s.Render(c, status, "roles", v)
}

func (s *site) pageRoles(c *web.Ctx) error { return s.renderRoles(c, http.StatusOK, nil) }

type roleView struct {
	Role   *identity.Role // nil for a new role
	Groups []permGroup
}

func checkedSet(codes []string) map[string]bool {
	m := map[string]bool{}
	for _, c := range codes {
		m[c] = true
	}
	return m
}

func (s *site) pageRoleNew(c *web.Ctx) error {
	v := s.NewView(c, "roles", "role.new")
	v.Data = roleView{Groups: permGroups(c.Actor, nil, false)}
	return s.Render(c, http.StatusOK, "role", v)
}

func (s *site) pageRoleCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "roles", "role.new")
	v.Form = f
	v.Data = roleView{Groups: permGroups(c.Actor, checkedSet(f["permissions"]), false)}
	codes := f["permissions"]
	if codes == nil {
		codes = []string{}
	}
	r, err := identity.CreateRole(c.R.Context(), c.Actor, roleInput(f, codes))
	if err != nil {
		return s.identityFormError(c, "role", v, err)
	}
	s.SetFlash(c, v.T("role.created"), false)
	return web.Redirect(c, fmt.Sprintf("/roles/%d", r.ID))
}

// roleInput is the role form as the roles API's input.
func roleInput(f url.Values, codes []string) identity.RoleInput {
	return identity.RoleInput{Name: app.Opt[string]{Set: true, V: f.Get("name")},
		Description: app.Opt[string]{Set: true, V: f.Get("description")}, Permissions: app.Opt[[]string]{Set: true, V: codes},
		TenantWide: app.Opt[bool]{Set: true, V: f.Get("tenant_wide") == "1"}}
}

func (s *site) pageRole(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	r, err := identity.GetRole(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "roles", "menu.roles")
	v.Title = r.Name
	v.Form.Set("name", r.Name)
	v.Form.Set("description", r.Description)
	if r.TenantWide {
		v.Form.Set("tenant_wide", "1")
	}
	v.Data = roleView{Role: r, Groups: permGroups(c.Actor, checkedSet(r.Permissions), false)}
	return s.Render(c, http.StatusOK, "role", v)
}

func (s *site) pageRoleUpdate(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	r, err := identity.GetRole(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	f := c.R.PostForm
	codes := f["permissions"]
	if codes == nil {
		codes = []string{}
	}
	out, err := identity.UpdateRole(c.R.Context(), c.Actor, id, roleInput(f, codes))
	if err != nil {
		v := s.NewView(c, "roles", "menu.roles")
		v.Title, v.Form = r.Name, f
		v.Data = roleView{Role: r, Groups: permGroups(c.Actor, checkedSet(codes), false)}
		return s.identityFormError(c, "role", v, err)
	}
	s.SetFlash(c, s.NewView(c, "", "").T("role.saved"), false)
	return web.Redirect(c, fmt.Sprintf("/roles/%d", out.ID))
}

func (s *site) pageRoleDelete(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	if err := identity.DeleteRole(c.R.Context(), c.Actor, id); err != nil {
		return s.renderRoles(c, 0, err)
	}
	s.SetFlash(c, s.NewView(c, "", "").T("role.deleted"), false)
	return web.Redirect(c, "/roles")
}

// ---- licence ----

func (s *site) pageLicense(c *web.Ctx) error {
	t := c.Tenant
	v := s.NewView(c, "license", "menu.license")
	lic, err := t.CurrentLicense(c.R.Context())
	if err != nil {
		return err
	}
	v.Data = map[string]any{"L": lic, "Tier": t.Tier()}
	return s.Render(c, http.StatusOK, "license", v)
}

// ---- account: two-factor and sessions ----

type accountView struct {
	Account    *identity.Manager
	Sessions   []identity.SessionInfo
	Setup      *identity.TOTPSetup
	QR         template.URL // the setup's PNG data URL, made here
	ShowEnable bool         // the enable form after a refused code
	Recovery   []string     // shown once
}

func (s *site) accountData(c *web.Ctx) (*accountView, error) {
	ctx := c.R.Context()
	m, err := identity.GetAccount(ctx, c.Actor)
	if err != nil {
		return nil, err
	}
	sess, err := identity.ListSessions(ctx, c.Actor)
	if err != nil {
		return nil, err
	}
	return &accountView{Account: m, Sessions: sess}, nil
}

// accountPage renders the account page with what an action adds to it
// (a setup, recovery codes) or its refusal.
func (s *site) accountPage(c *web.Ctx, status int, fill func(*accountView), err error) error {
	d, derr := s.accountData(c)
	if derr != nil {
		return derr
	}
	if fill != nil {
		fill(d)
	}
	v := s.NewView(c, "account", "menu.account")
	v.Data = d
	if err != nil {
		return s.identityFormError(c, "account", v, err)
	}
	return s.Render(c, status, "account", v)
}

func (s *site) pageTOTPSetup(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	setup, err := identity.SetupTOTP(c.R.Context(), c.Actor)
	if err != nil {
		return s.accountPage(c, 0, nil, err)
	}
	return s.accountPage(c, http.StatusOK, func(d *accountView) {
		d.Setup = setup
		// SetupTOTP encodes the PNG itself; html/template would refuse a data URL.
		if strings.HasPrefix(setup.QRPNG, "data:image/png;base64,") {
			d.QR = template.URL(setup.QRPNG)
		}
	}, nil)
}

func (s *site) pageTOTPEnable(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	st, err := identity.EnableTOTP(c.R.Context(), c.Actor, identity.TOTPCode{Code: c.R.PostFormValue("code")})
	if err != nil {
		return s.accountPage(c, 0, func(d *accountView) { d.ShowEnable = true }, err)
	}
	return s.accountPage(c, http.StatusOK, func(d *accountView) { d.Recovery = st.RecoveryCodes }, nil)
}

func (s *site) pageTOTPDisable(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	if _, err := identity.DisableTOTP(c.R.Context(), c.Actor, identity.Reauth{Password: c.R.PostFormValue("password")}); err != nil {
		return s.accountPage(c, 0, nil, err)
	}
	s.SetFlash(c, s.NewView(c, "", "").T("twofa.disabled_done"), false)
	return web.Redirect(c, "/account")
}

func (s *site) pageRecoveryCodes(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	rc, err := identity.NewRecoveryCodes(c.R.Context(), c.Actor, identity.Reauth{Password: c.R.PostFormValue("password")})
	if err != nil {
		return s.accountPage(c, 0, nil, err)
	}
	return s.accountPage(c, http.StatusOK, func(d *accountView) { d.Recovery = rc.RecoveryCodes }, nil)
}

// pageSessionRevoke signs out one session; the console's own session
// signs this browser out.
func (s *site) pageSessionRevoke(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	jti := c.R.PathValue("jti")
	if err := identity.RevokeSession(c.R.Context(), c.Actor, jti); err != nil {
		return err
	}
	if jti == c.Actor.JTI {
		if err := s.Session().Destroy(c.R.Context()); err != nil {
			return err
		}
		return web.Redirect(c, "/login")
	}
	s.SetFlash(c, s.NewView(c, "", "").T("apisess.revoked"), false)
	return web.Redirect(c, "/account")
}

// ---- API tokens ----

type tokensView struct {
	Tokens []*identity.APIToken
	Groups []permGroup
	New    *identity.APIToken // just created: its plaintext is shown once
}

func (s *site) tokensPage(c *web.Ctx, status int, form url.Values, created *identity.APIToken, err error) error {
	toks, lerr := identity.ListAPITokens(c.R.Context(), c.Actor)
	if lerr != nil {
		return lerr
	}
	v := s.NewView(c, "account", "tokens.title")
	var checked map[string]bool
	if form != nil {
		v.Form = form
		checked = checkedSet(form["scopes"])
	}
	v.Data = tokensView{Tokens: toks, Groups: permGroups(c.Actor, checked, true), New: created}
	if err != nil {
		return s.identityFormError(c, "tokens", v, err)
	}
	return s.Render(c, status, "tokens", v)
}

func (s *site) pageTokens(c *web.Ctx) error { return s.tokensPage(c, http.StatusOK, nil, nil, nil) }

func (s *site) pageTokenCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	in := identity.APITokenInput{Name: f.Get("name"), Scopes: f["scopes"], FullAccess: f.Get("full_access") == "1"}
	if in.Scopes == nil {
		in.Scopes = []string{}
	}
	if e := strings.TrimSpace(f.Get("expires_at")); e != "" {
		if err := in.ExpiresAt.UnmarshalJSON([]byte(strconv.Quote(e))); err != nil {
			return s.tokensPage(c, 0, f, nil, app.ErrValidation("invalid_type", "expires_at"))
		}
	}
	k, err := identity.CreateAPIToken(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.tokensPage(c, 0, f, nil, err)
	}
	return s.tokensPage(c, http.StatusOK, nil, k, nil)
}

func (s *site) pageTokenRevoke(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	if _, err := identity.SetAPITokenState(c.R.Context(), c.Actor, id, "revoke"); err != nil {
		return err
	}
	s.SetFlash(c, s.NewView(c, "", "").T("tokens.revoked"), false)
	return web.Redirect(c, "/account/tokens")
}
