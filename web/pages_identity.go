package web

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
)

// Identity pages: the managers tree and record (wallet, journal, roles,
// suspend/activate), the create form, roles with the permission
// catalogue, the caller's API tokens, two-factor and sessions on the
// account page, and the licence page. Each calls the app function of its
// API row, under the same permission codes.
func (s *Server) identityPages() []Route {
	return []Route{
		{M: "GET", P: "/managers", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: s.pageManagers, Menu: "managers"},
		{M: "GET", P: "/managers/new", Access: Staff, Perms: []app.Perm{app.PermManagersCreate}, H: s.pageManagerNew},
		{M: "POST", P: "/managers", Access: Staff, Perms: []app.Perm{app.PermManagersCreate}, H: s.pageManagerCreate},
		{M: "GET", P: "/managers/{id}", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: s.pageManager},
		{M: "POST", P: "/managers/{id}/wallet/deposit", Access: Staff, Perms: []app.Perm{app.PermManagersDeposit}, H: s.pageManagerWallet(identity.WalletDeposit)},
		{M: "POST", P: "/managers/{id}/wallet/withdraw", Access: Staff, Perms: []app.Perm{app.PermManagersWithdraw}, H: s.pageManagerWallet(identity.WalletWithdraw)},
		{M: "POST", P: "/managers/{id}/wallet/topup", Access: Staff, Perms: []app.Perm{app.PermManagersDeposit}, H: s.pageManagerWallet(identity.WalletTopup)},
		{M: "POST", P: "/managers/{id}/wallet/pay-debt", Access: Staff, Perms: []app.Perm{app.PermManagersDeposit}, H: s.pageManagerWallet(identity.WalletPayDebt)},
		{M: "POST", P: "/managers/{id}/roles", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, NoImpersonation: true, H: s.pageManagerRoles},
		{M: "POST", P: "/managers/{id}/suspend", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, H: s.pageManagerStatus("suspended")},
		{M: "POST", P: "/managers/{id}/activate", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, H: s.pageManagerStatus("active")},

		{M: "GET", P: "/roles", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: s.pageRoles, Menu: "roles"},
		{M: "GET", P: "/roles/new", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: s.pageRoleNew},
		{M: "POST", P: "/roles", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: s.pageRoleCreate},
		{M: "GET", P: "/roles/{id}", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: s.pageRole},
		{M: "POST", P: "/roles/{id}", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: s.pageRoleUpdate},
		{M: "POST", P: "/roles/{id}/delete", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: s.pageRoleDelete},

		{M: "GET", P: "/license", Access: Staff, AnyStaff: true, LicenseExempt: true, H: s.pageLicense, Menu: "license"},

		{M: "POST", P: "/account/2fa/setup", Access: Staff, AnyStaff: true, LicenseExempt: true, SessionOnly: true, H: s.pageTOTPSetup},
		{M: "POST", P: "/account/2fa/enable", Access: Staff, AnyStaff: true, LicenseExempt: true, SessionOnly: true, H: s.pageTOTPEnable},
		{M: "POST", P: "/account/2fa/disable", Access: Staff, AnyStaff: true, LicenseExempt: true, SessionOnly: true, Buckets: []string{"account_reauth"}, H: s.pageTOTPDisable},
		{M: "POST", P: "/account/2fa/recovery-codes", Access: Staff, AnyStaff: true, LicenseExempt: true, SessionOnly: true, Buckets: []string{"account_reauth"}, H: s.pageRecoveryCodes},
		{M: "POST", P: "/account/sessions/{jti}/revoke", Access: Staff, AnyStaff: true, LicenseExempt: true, SessionOnly: true, H: s.pageSessionRevoke},
		{M: "GET", P: "/account/tokens", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.pageTokens},
		{M: "POST", P: "/account/tokens", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.pageTokenCreate},
		{M: "POST", P: "/account/tokens/{id}/revoke", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.pageTokenRevoke},
	}
}

// identityFormError is formError, except that a refusal the API answers
// 403 with a reason of its own (a code the caller may not grant, its own
// wallet, itself) is shown on the form; a missing permission stays the
// 403 page. A conflict naming its field in details goes beside the field.
func (s *Server) identityFormError(c *Ctx, page string, v *view, err error) error {
	e := app.AsError(err)
	if e == nil {
		return err
	}
	if e.Status == http.StatusForbidden && e.Reason != "insufficient_permissions" && e.Reason != "license_locked" {
		v.Flash, v.FlashBad = message(v.Lang, e.Reason, e.Code), true
		if p, ok := e.Details["permission"].(string); ok {
			v.Flash += " (" + p + ")"
		}
		return s.render(c, e.Status, page, v)
	}
	if e.Field == "request_id" && e.Status < 500 { // a hidden field: shown on top
		v.Flash, v.FlashBad = message(v.Lang, e.Reason, e.Code), true
		return s.render(c, e.Status, page, v)
	}
	if f, ok := e.Details["field"].(string); ok && e.Field == "" && e.Status < 500 {
		v.Errors[f] = message(v.Lang, e.Reason, e.Code)
		return s.render(c, e.Status, page, v)
	}
	return s.formError(c, page, v, err)
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

func (s *Server) pageManagers(c *Ctx) error {
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
	mv := managersView{CanNew: act.Can(app.PermManagersCreate)}
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
	v := s.newView(c, "managers", "menu.managers")
	v.Data = mv
	return s.render(c, http.StatusOK, "managers", v)
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

func (s *Server) managerData(c *Ctx, id int64) (*managerView, error) {
	ctx := c.R.Context()
	act := c.Actor
	m, err := identity.GetManager(ctx, act, id)
	if err != nil {
		return nil, err
	}
	mv := &managerView{M: m, Name: managerName(m), Self: id == act.ManagerID, RequestID: app.NewUUID(), Assigned: map[int64]bool{},
		Can: canMap(act, app.PermManagersDeposit, app.PermManagersWithdraw, app.PermManagersJournal, app.PermManagersUpdate, app.PermRolesManage)}
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
	if act.Can(app.PermRolesManage) {
		if mv.AllRoles, err = identity.ListRoles(ctx, act); err != nil {
			return nil, err
		}
	}
	if act.Can(app.PermManagersJournal) {
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

func (s *Server) renderManager(c *Ctx, id int64, status int, form url.Values, err error) error {
	mv, derr := s.managerData(c, id)
	if derr != nil {
		return derr
	}
	v := s.newView(c, "managers", "menu.managers")
	v.Title, v.Data = mv.Name, mv
	if form != nil {
		v.Form = form
	}
	if err != nil {
		return s.identityFormError(c, "manager", v, err)
	}
	return s.render(c, status, "manager", v)
}

func (s *Server) pageManager(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	return s.renderManager(c, id, http.StatusOK, nil, nil)
}

// managerAction runs an action of the record page: on success a flash and
// back to the record, on a refusal the record with the message.
func (s *Server) managerAction(c *Ctx, run func(id int64, v *view) (string, error)) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := parseForm(c); err != nil {
		return err
	}
	msg, err := run(id, s.newView(c, "", ""))
	if err != nil {
		return s.renderManager(c, id, 0, c.R.PostForm, err)
	}
	s.setFlash(c, msg, false)
	return redirect(c, fmt.Sprintf("/managers/%d", id))
}

func (s *Server) pageManagerWallet(kind string) HandlerFunc {
	return func(c *Ctx) error {
		return s.managerAction(c, func(id int64, v *view) (string, error) {
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

func (s *Server) pageManagerRoles(c *Ctx) error {
	return s.managerAction(c, func(id int64, v *view) (string, error) {
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

func (s *Server) pageManagerStatus(status string) HandlerFunc {
	return func(c *Ctx) error {
		return s.managerAction(c, func(id int64, v *view) (string, error) {
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

func (s *Server) newManagerData(c *Ctx, form url.Values) (*newManagerView, error) {
	ctx := c.R.Context()
	parents, err := identity.ParentChoices(ctx, c.Actor)
	if err != nil {
		return nil, err
	}
	d := &newManagerView{Parents: parents, Checked: map[string]bool{}}
	if c.Actor.Can(app.PermRolesManage) {
		if d.Roles, err = identity.ListRoles(ctx, c.Actor); err != nil {
			return nil, err
		}
	}
	for _, r := range form["role_ids"] {
		d.Checked[r] = true
	}
	return d, nil
}

func (s *Server) pageManagerNew(c *Ctx) error {
	v := s.newView(c, "managers", "manager.new")
	d, err := s.newManagerData(c, nil)
	if err != nil {
		return err
	}
	v.Data = d
	v.Form.Set("parent_manager_id", strconv.FormatInt(c.Actor.ManagerID, 10))
	return s.render(c, http.StatusOK, "manager_new", v)
}

func (s *Server) pageManagerCreate(c *Ctx) error {
	if err := parseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.newView(c, "managers", "manager.new")
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
			return s.formError(c, "manager_new", v, app.ErrValidation("invalid_type", "parent_manager_id"))
		}
		in.ParentManagerID = app.Opt[int64]{Set: true, V: pid}
	}
	if raw := f["role_ids"]; len(raw) > 0 {
		ids := make([]int64, 0, len(raw))
		for _, r := range raw {
			rid, err := strconv.ParseInt(r, 10, 64)
			if err != nil {
				return s.formError(c, "manager_new", v, app.ErrValidation("invalid_type", "role_ids"))
			}
			ids = append(ids, rid)
		}
		in.RoleIDs = app.Opt[[]int64]{Set: true, V: ids}
	}
	m, err := identity.CreateManager(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.identityFormError(c, "manager_new", v, err)
	}
	s.setFlash(c, v.T("manager.created"), false)
	return redirect(c, fmt.Sprintf("/managers/%d", m.ID))
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
	for _, p := range app.Permissions {
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

func (s *Server) renderRoles(c *Ctx, status int, err error) error {
	roles, lerr := identity.ListRoles(c.R.Context(), c.Actor)
	if lerr != nil {
		return lerr
	}
	v := s.newView(c, "roles", "menu.roles")
	v.Data = rolesView{Roles: roles}
	if err != nil {
		return s.identityFormError(c, "roles", v, err)
	}
	return s.render(c, status, "roles", v)
}

func (s *Server) pageRoles(c *Ctx) error { return s.renderRoles(c, http.StatusOK, nil) }

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

func (s *Server) pageRoleNew(c *Ctx) error {
	v := s.newView(c, "roles", "role.new")
	v.Data = roleView{Groups: permGroups(c.Actor, nil, false)}
	return s.render(c, http.StatusOK, "role", v)
}

func (s *Server) pageRoleCreate(c *Ctx) error {
	if err := parseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.newView(c, "roles", "role.new")
	v.Form = f
	v.Data = roleView{Groups: permGroups(c.Actor, checkedSet(f["permissions"]), false)}
	codes := f["permissions"]
	if codes == nil {
		codes = []string{}
	}
	r, err := identity.CreateRole(c.R.Context(), c.Actor, identity.RoleInput{Name: app.Opt[string]{Set: true, V: f.Get("name")},
		Description: app.Opt[string]{Set: true, V: f.Get("description")}, Permissions: app.Opt[[]string]{Set: true, V: codes}})
	if err != nil {
		return s.identityFormError(c, "role", v, err)
	}
	s.setFlash(c, v.T("role.created"), false)
	return redirect(c, fmt.Sprintf("/roles/%d", r.ID))
}

func (s *Server) pageRole(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	r, err := identity.GetRole(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.newView(c, "roles", "menu.roles")
	v.Title = r.Name
	v.Form.Set("name", r.Name)
	v.Form.Set("description", r.Description)
	v.Data = roleView{Role: r, Groups: permGroups(c.Actor, checkedSet(r.Permissions), false)}
	return s.render(c, http.StatusOK, "role", v)
}

func (s *Server) pageRoleUpdate(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := parseForm(c); err != nil {
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
	out, err := identity.UpdateRole(c.R.Context(), c.Actor, id, identity.RoleInput{Name: app.Opt[string]{Set: true, V: f.Get("name")},
		Description: app.Opt[string]{Set: true, V: f.Get("description")}, Permissions: app.Opt[[]string]{Set: true, V: codes}})
	if err != nil {
		v := s.newView(c, "roles", "menu.roles")
		v.Title, v.Form = r.Name, f
		v.Data = roleView{Role: r, Groups: permGroups(c.Actor, checkedSet(codes), false)}
		return s.identityFormError(c, "role", v, err)
	}
	s.setFlash(c, s.newView(c, "", "").T("role.saved"), false)
	return redirect(c, fmt.Sprintf("/roles/%d", out.ID))
}

func (s *Server) pageRoleDelete(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := parseForm(c); err != nil {
		return err
	}
	if err := identity.DeleteRole(c.R.Context(), c.Actor, id); err != nil {
		return s.renderRoles(c, 0, err)
	}
	s.setFlash(c, s.newView(c, "", "").T("role.deleted"), false)
	return redirect(c, "/roles")
}

// ---- licence ----

func (s *Server) pageLicense(c *Ctx) error {
	t := c.Tenant
	v := s.newView(c, "license", "menu.license")
	lic, err := t.CurrentLicense(c.R.Context())
	if err != nil {
		return err
	}
	v.Data = map[string]any{"L": lic, "Tier": t.Tier()}
	return s.render(c, http.StatusOK, "license", v)
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

func (s *Server) accountData(c *Ctx) (*accountView, error) {
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
func (s *Server) accountPage(c *Ctx, status int, fill func(*accountView), err error) error {
	d, derr := s.accountData(c)
	if derr != nil {
		return derr
	}
	if fill != nil {
		fill(d)
	}
	v := s.newView(c, "account", "menu.account")
	v.Data = d
	if err != nil {
		return s.identityFormError(c, "account", v, err)
	}
	return s.render(c, status, "account", v)
}

func (s *Server) pageTOTPSetup(c *Ctx) error {
	if err := parseForm(c); err != nil {
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

func (s *Server) pageTOTPEnable(c *Ctx) error {
	if err := parseForm(c); err != nil {
		return err
	}
	st, err := identity.EnableTOTP(c.R.Context(), c.Actor, identity.TOTPCode{Code: c.R.PostFormValue("code")})
	if err != nil {
		return s.accountPage(c, 0, func(d *accountView) { d.ShowEnable = true }, err)
	}
	return s.accountPage(c, http.StatusOK, func(d *accountView) { d.Recovery = st.RecoveryCodes }, nil)
}

func (s *Server) pageTOTPDisable(c *Ctx) error {
	if err := parseForm(c); err != nil {
		return err
	}
	if _, err := identity.DisableTOTP(c.R.Context(), c.Actor, identity.Reauth{Password: c.R.PostFormValue("password")}); err != nil {
		return s.accountPage(c, 0, nil, err)
	}
	s.setFlash(c, s.newView(c, "", "").T("twofa.disabled_done"), false)
	return redirect(c, "/account")
}

func (s *Server) pageRecoveryCodes(c *Ctx) error {
	if err := parseForm(c); err != nil {
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
func (s *Server) pageSessionRevoke(c *Ctx) error {
	if err := parseForm(c); err != nil {
		return err
	}
	jti := c.R.PathValue("jti")
	if err := identity.RevokeSession(c.R.Context(), c.Actor, jti); err != nil {
		return err
	}
	if jti == c.Actor.JTI {
		if err := s.console.sm.Destroy(c.R.Context()); err != nil {
			return err
		}
		return redirect(c, "/login")
	}
	s.setFlash(c, s.newView(c, "", "").T("apisess.revoked"), false)
	return redirect(c, "/account")
}

// ---- API tokens ----

type tokensView struct {
	Tokens []*identity.APIToken
	Groups []permGroup
	New    *identity.APIToken // just created: its plaintext is shown once
}

func (s *Server) tokensPage(c *Ctx, status int, form url.Values, created *identity.APIToken, err error) error {
	toks, lerr := identity.ListAPITokens(c.R.Context(), c.Actor)
	if lerr != nil {
		return lerr
	}
	v := s.newView(c, "account", "tokens.title")
	var checked map[string]bool
	if form != nil {
		v.Form = form
		checked = checkedSet(form["scopes"])
	}
	v.Data = tokensView{Tokens: toks, Groups: permGroups(c.Actor, checked, true), New: created}
	if err != nil {
		return s.identityFormError(c, "tokens", v, err)
	}
	return s.render(c, status, "tokens", v)
}

func (s *Server) pageTokens(c *Ctx) error { return s.tokensPage(c, http.StatusOK, nil, nil, nil) }

func (s *Server) pageTokenCreate(c *Ctx) error {
	if err := parseForm(c); err != nil {
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

func (s *Server) pageTokenRevoke(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := parseForm(c); err != nil {
		return err
	}
	if _, err := identity.SetAPITokenState(c.R.Context(), c.Actor, id, "revoke"); err != nil {
		return err
	}
	s.setFlash(c, s.newView(c, "", "").T("tokens.revoked"), false)
	return redirect(c, "/account/tokens")
}
