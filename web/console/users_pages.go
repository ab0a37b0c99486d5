package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/app/portal"
	"xr/app/reports"
	"xr/app/subs"
	"xr/web"
)

// Subscriber pages: the list (search as you type, filters, pages, bulk
// actions with a confirmation), the record with its money, actions,
// sessions and usage chart, the edit and create forms. Each calls the app
// function of its API row, under the same permission.
func (s *site) userPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/users", Access: web.Staff, API: "GET /users", H: s.pageUsers, Menu: "subscribers"},
		{M: "GET", P: "/users/new", Access: web.Staff, Perms: []app.Perm{subs.PermUsersCreate}, H: s.pageUserNew},
		{M: "POST", P: "/users", Access: web.Staff, API: "POST /users", H: s.pageUserCreate},
		{M: "POST", P: "/users/bulk-enable", Access: web.Staff, API: "POST /users/bulk-enable", H: s.pageUsersBulk("enable")},
		{M: "POST", P: "/users/bulk-disable", Access: web.Staff, API: "POST /users/bulk-disable", H: s.pageUsersBulk("disable")},
		{M: "POST", P: "/users/bulk-disconnect", Access: web.Staff, API: "POST /users/bulk-disconnect", H: s.pageUsersBulk("disconnect")},
		{M: "GET", P: "/users/{id}", Access: web.Staff, API: "GET /users/{id}", H: s.pageUser},
		{M: "GET", P: "/users/{id}/edit", Access: web.Staff, Perms: []app.Perm{subs.PermUsersUpdate}, H: s.pageUserEdit},
		{M: "POST", P: "/users/{id}/edit", Access: web.Staff, API: "PATCH /users/{id}", H: s.pageUserUpdate},
		{M: "POST", P: "/users/{id}/deposit", Access: web.Staff, API: "POST /users/{id}/deposit", H: s.pageUserDeposit},
		{M: "POST", P: "/users/{id}/withdraw", Access: web.Staff, API: "POST /users/{id}/withdraw", H: s.pageUserWithdraw},
		{M: "POST", P: "/users/{id}/enable", Access: web.Staff, API: "POST /users/{id}/enable", H: s.pageUserEnable},
		{M: "POST", P: "/users/{id}/disable", Access: web.Staff, API: "POST /users/{id}/disable", H: s.pageUserDisable},
		{M: "POST", P: "/users/{id}/activation", Access: web.Staff, API: "POST /users/{id}/activation", H: s.pageUserActivate},
		{M: "POST", P: "/users/{id}/addons", Access: web.Staff, API: "POST /users/{id}/addons", H: s.pageUserAddon},
		{M: "POST", P: "/users/{id}/reset-quota", Access: web.Staff, API: "POST /users/bulk-reset-quota", H: s.pageUserResetQuota},
		{M: "POST", P: "/users/{id}/disconnect", Access: web.Staff, Perms: []app.Perm{subs.PermUsersLiveTraffic}, H: s.pageUserDisconnect},
		{M: "POST", P: "/users/{id}/login-as", Access: web.Staff, API: "POST /users/{id}/login-as", H: s.pageUserLoginAs},
	}
}

// usersView is the list page's data.
type usersView struct {
	Page     app.Page[subs.User]
	Q        string
	Status   string
	Plan     string
	Reseller string
	Expiring string
	Query    string // the list's query string, for "back" links
	Prev     string // query string of the previous page, "" on the first
	Next     string
	CanNew   bool
	Plans    []subs.ProfileOption
	Parents  []subs.ParentOption
	Bulk     []string // the bulk actions the caller may run
	Statuses []subs.Figure
	Contacts map[int64]subs.ListContact // name and phone of the page's rows
}

// userStatuses are the status choices of the list: the subscriber
// figures the dashboard shows (a tile links to /users?status=<figure>).
var userStatuses = []subs.Figure{subs.FigureActive, subs.FigureExpired, subs.FigureNeverActivated, subs.FigureExpiring7d,
	subs.FigureEnabled, subs.FigureDisabled, subs.FigureOnline, subs.FigureInDebt}

// listParams are the page's own query parameters.
var listParams = []string{"q", "status", "plan", "reseller", "expiring"}

// userListQuery maps the page's simple form onto the API's list query.
func userListQuery(q url.Values) url.Values {
	out := url.Values{}
	if v := strings.TrimSpace(q.Get("q")); v != "" {
		out.Set("q", v)
	}
	// A status is a subscriber figure: the list a dashboard tile counts.
	if st := subs.Figure(q.Get("status")); slices.Contains(userStatuses, st) {
		for k, v := range st.Filters() {
			out[k] = v
		}
	}
	for page, api := range map[string]string{"plan": "profile_id", "reseller": "parent_id", "expiring": "expiring_within_days"} {
		if v := strings.TrimSpace(q.Get(page)); v != "" {
			out.Set("filter["+api+"]", v)
		}
	}
	for _, k := range []string{"page", "sort", "order"} {
		if v := q.Get(k); v != "" {
			out.Set(k, v)
		}
	}
	out.Set("page_size", "25")
	return out
}

// listFieldOf names the page's form field of an API list filter.
func listFieldOf(apiField string) string {
	switch apiField {
	case "filter[profile_id]":
		return "plan"
	case "filter[parent_id]":
		return "reseller"
	case "filter[expiring_within_days]":
		return "expiring"
	}
	return "q"
}

func (s *site) pageUsers(c *web.Ctx) error {
	v := s.NewView(c, "subscribers", "menu.subscribers")
	q := c.Query()
	uv := usersView{Q: q.Get("q"), Status: q.Get("status"), Plan: q.Get("plan"), Reseller: q.Get("reseller"),
		Expiring: q.Get("expiring"), CanNew: c.Actor.Can(subs.PermUsersCreate), Statuses: userStatuses}
	keep := url.Values{}
	for _, k := range listParams {
		if q.Get(k) != "" {
			keep.Set(k, q.Get(k))
		}
	}
	uv.Query = keep.Encode()
	for _, a := range []string{"enable", "disable", "disconnect"} {
		if c.Actor.Can(bulkActions[a].perm) {
			uv.Bulk = append(uv.Bulk, a)
		}
	}
	// The filter choices; an htmx swap of the results needs none.
	if c.R.Header.Get("HX-Target") != "results" {
		oc, err := subs.FormChoices(c.R.Context(), c.Actor)
		if err != nil {
			return err
		}
		uv.Plans = oc.Profiles
		if len(oc.Parents) > 1 {
			uv.Parents = oc.Parents
		}
	}
	v.Data = &uv
	lq, err := app.ParseList(userListQuery(q), subs.UserListSpec())
	if err == nil {
		uv.Page, err = subs.ListUsers(c.R.Context(), c.Actor, lq)
	}
	if e := app.AsError(err); e != nil && e.Status == http.StatusBadRequest {
		// A filter the list refuses: say so beside its field, no rows.
		v.Errors[listFieldOf(e.Field)] = web.Message(v.Lang, e.Reason, e.Code)
		return s.Render(c, refusedStatus(c), "users", v)
	}
	if err != nil {
		return err
	}
	ids := make([]int64, len(uv.Page.Rows))
	for i, u := range uv.Page.Rows {
		ids[i] = u.ID
	}
	if uv.Contacts, err = subs.ContactsOf(c.R.Context(), c.Actor, ids); err != nil {
		return err
	}
	uv.Prev, uv.Next = web.Pager("", keep, uv.Page.Meta)
	return s.Render(c, http.StatusOK, "users", v)
}

// refusedStatus is the status of a list page whose filter was refused:
// 400, except for an htmx swap (htmx swaps no 4xx answer, and the block
// carries the message).
func refusedStatus(c *web.Ctx) int {
	if c.R.Header.Get("HX-Request") == "true" {
		return http.StatusOK
	}
	return http.StatusBadRequest
}

// bulkActions are the list's bulk actions: the API's bulk app functions
// and the permission of their rows.
var bulkActions = map[string]struct {
	perm app.Perm
	run  func(context.Context, *app.Actor, app.BulkIDs) (app.BulkResult, error)
}{
	"enable":     {subs.PermUsersEnableDisable, subs.BulkEnable},
	"disable":    {subs.PermUsersEnableDisable, subs.BulkDisable},
	"disconnect": {subs.PermUsersLiveTraffic, subs.BulkDisconnect},
}

// bulkView is the confirmation page of a bulk action.
type bulkView struct {
	Action string
	Users  []*subs.Ref
	Count  int
	Back   string
}

// backTo is the list page a bulk form came from (this host only).
func backTo(raw, def string) string {
	if raw == "" || !strings.HasPrefix(raw, "/") {
		return def
	}
	return localNext(raw)
}

// pageUsersBulk is a bulk action in two steps: the selection posts here
// and the page shows how many subscribers (and which) will change; the
// confirmation posts again with confirm=1 and runs the API's bulk
// function on exactly those.
func (s *site) pageUsersBulk(action string) web.HandlerFunc {
	return func(c *web.Ctx) error {
		if err := web.ParseForm(c); err != nil {
			return err
		}
		f := c.R.PostForm
		back := backTo(f.Get("back"), "/users")
		v := s.NewView(c, "subscribers", "users.bulk_"+action)
		var ids []int64
		for _, raw := range f["ids"] {
			id, err := strconv.ParseInt(raw, 10, 64)
			if err != nil || id <= 0 {
				return app.ErrValidation("invalid_id", "ids")
			}
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			s.SetFlash(c, web.Message(v.Lang, "ids_required", app.CodeValidation), true)
			return web.Redirect(c, back)
		}
		if len(ids) > app.MaxBulkIDs {
			return app.ErrValidation("too_many_ids", "ids")
		}
		if f.Get("confirm") != "1" {
			bv := &bulkView{Action: action, Back: back}
			for _, id := range ids {
				u, err := subs.Lookup(c.R.Context(), c.Tenant.DB.R, c.Actor, id)
				if e := app.AsError(err); e != nil && e.Status == http.StatusNotFound {
					continue // gone, or not the caller's: not counted
				}
				if err != nil {
					return err
				}
				bv.Users = append(bv.Users, u)
			}
			bv.Count = len(bv.Users)
			v.Data = bv
			return s.Render(c, http.StatusOK, "users_bulk", v)
		}
		res, err := bulkActions[action].run(c.R.Context(), c.Actor, app.BulkIDs{IDs: ids})
		if err != nil {
			return err
		}
		msg := fmt.Sprintf(v.T("users.bulk_done"), len(res.Updated))
		if len(res.Failed) > 0 {
			reasons := map[string]int{}
			var order []string
			for _, fl := range res.Failed {
				m := web.Message(v.Lang, failureReason(fl), "")
				if reasons[m] == 0 {
					order = append(order, m)
				}
				reasons[m]++
			}
			parts := make([]string, len(order))
			for i, m := range order {
				parts[i] = fmt.Sprintf("%s (%d)", m, reasons[m])
			}
			msg += " " + fmt.Sprintf(v.T("users.bulk_failed"), len(res.Failed)) + " " + strings.Join(parts, "; ")
		}
		s.SetFlash(c, msg, len(res.Updated) == 0)
		return web.Redirect(c, back)
	}
}

// userView is the record page's data.
type userView struct {
	User           *subs.UserDetail
	Ledger         []subs.LedgerEntry
	Live           []aaa.Session       // open RADIUS sessions (prm_report_sessions)
	Closed         []aaa.ClosedSession // the latest closed ones
	UsageDays      []usageDay          // the days with traffic, for the table
	UsageJSON      string              // the chart's data, read by console.js
	UsageTot       int64
	Plans          []subs.ProfileOption // the plans an activation may choose
	Addons         []subs.Addon
	LoginAs        *portal.Session // shown once, right after login-as
	LoginAsExpires app.Time
	PortalAPI      string
	RequestID      string // a fresh idempotency key for each money form
	Can            map[string]bool
}

// usageDay is a row of the usage table: a UTC day with traffic.
type usageDay struct {
	Day string
	aaa.UsageBucket
}

// userPerms are the permissions the record page asks about.
var userPerms = []app.Perm{subs.PermUsersDeposit, subs.PermUsersWithdrawal, subs.PermUsersEnableDisable, subs.PermUsersUpdate,
	subs.PermUsersActivate, subs.PermUsersAddon, subs.PermUsersResetQuota, subs.PermUsersLiveTraffic, subs.PermUsersMacLock,
	subs.PermUsersLoginAs, reports.PermReportSessions, subs.PermUsersChangeProfile}

func (s *site) userView(c *web.Ctx, id int64) (*userView, error) {
	ctx := c.R.Context()
	u, err := subs.GetUser(ctx, c.Actor, id)
	if err != nil {
		return nil, err
	}
	lq, err := app.ParseList(url.Values{"page_size": {"10"}}, subs.LedgerListSpec())
	if err != nil {
		return nil, err
	}
	led, err := subs.Ledger(ctx, c.Actor, id, lq)
	if err != nil {
		return nil, err
	}
	uv := &userView{User: u, Ledger: led.Rows, RequestID: app.NewUUID(), Can: web.CanMap(c.Actor, userPerms...)}
	if c.Actor.Can(reports.PermReportSessions) {
		lq, err := app.ParseList(url.Values{"filter[user_id]": {strconv.FormatInt(id, 10)}, "page_size": {"20"}}, aaa.SessionListSpec)
		if err != nil {
			return nil, err
		}
		live, err := aaa.ListSessions(ctx, c.Actor, lq)
		if err != nil {
			return nil, err
		}
		uv.Live = live.Rows
	}
	lq, err = app.ParseList(url.Values{"page_size": {"10"}}, aaa.UserSessionSpec)
	if err != nil {
		return nil, err
	}
	closed, err := aaa.ListUserSessions(ctx, c.Actor, id, lq)
	if err != nil {
		return nil, err
	}
	uv.Closed = closed.Rows
	lq, err = app.ParseList(url.Values{"granularity": {"day"}}, aaa.UsageSpec)
	if err != nil {
		return nil, err
	}
	usage, err := aaa.UserUsage(ctx, c.Actor, id, lq)
	if err != nil {
		return nil, err
	}
	chart := struct {
		T      []int64           `json:"t"`
		In     []int64           `json:"in"`
		Out    []int64           `json:"out"`
		Labels map[string]string `json:"labels"`
	}{T: []int64{}, In: []int64{}, Out: []int64{}}
	for _, b := range usage.Rows {
		chart.T = append(chart.T, b.Bucket.Unix())
		chart.In = append(chart.In, b.InputOctets)
		chart.Out = append(chart.Out, b.OutputOctets)
		uv.UsageTot += b.TotalBytes
		if b.TotalBytes > 0 {
			uv.UsageDays = append(uv.UsageDays, usageDay{Day: b.Bucket.Format("2006-01-02"), UsageBucket: b})
		}
	}
	chart.Labels = map[string]string{"in": s.Text(c, "user.usage_up"), "out": s.Text(c, "user.usage_down")}
	b, err := json.Marshal(chart)
	if err != nil {
		return nil, err
	}
	uv.UsageJSON = string(b)
	if c.Actor.Can(subs.PermUsersActivate) {
		if c.Actor.Can(subs.PermUsersChangeProfile) {
			oc, err := subs.FormChoices(ctx, c.Actor)
			if err != nil {
				return nil, err
			}
			uv.Plans = oc.Profiles
		}
	}
	if c.Actor.Can(subs.PermUsersAddon) {
		if uv.Addons, err = subs.PurchasableAddons(ctx, c.Actor, id); err != nil {
			return nil, err
		}
	}
	return uv, nil
}

func (s *site) pageUser(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	uv, err := s.userView(c, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "subscribers", "menu.subscribers")
	v.Title = uv.User.Username
	v.Data = uv
	return s.Render(c, http.StatusOK, "user", v)
}

// moneyForm reads the amount, note and request_id of a money form.
func moneyForm(c *web.Ctx) (*app.Money, string, string, error) {
	if err := web.ParseForm(c); err != nil {
		return nil, "", "", err
	}
	raw := strings.TrimSpace(c.R.PostFormValue("amount"))
	if raw == "" {
		return nil, "", "", app.ErrValidation("amount_required", "amount")
	}
	m, err := app.ParseMoney(raw)
	switch {
	case errors.Is(err, app.ErrMoneyPrecision):
		return nil, "", "", app.ErrValidation("too_many_decimals", "amount")
	case errors.Is(err, app.ErrMoneyRange):
		return nil, "", "", app.ErrValidation("amount_out_of_range", "amount")
	case err != nil:
		return nil, "", "", app.ErrValidation("invalid_type", "amount")
	}
	return &m, c.R.PostFormValue("note"), c.R.PostFormValue("request_id"), nil
}

// userAction runs a money or state action of the record page and goes
// back to it, with the outcome as a flash; a refusal re-renders the page
// with the message beside its field.
func (s *site) userAction(c *web.Ctx, run func(id int64) (string, error)) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	msg, err := run(id)
	if err != nil {
		uv, verr := s.userView(c, id)
		if verr != nil {
			return verr
		}
		v := s.NewView(c, "subscribers", "menu.subscribers")
		v.Title, v.Data = uv.User.Username, uv
		v.Form = c.R.PostForm
		return s.FormError(c, "user", v, err)
	}
	s.SetFlash(c, msg, false)
	return web.Redirect(c, fmt.Sprintf("/users/%d", id))
}

func (s *site) pageUserDeposit(c *web.Ctx) error {
	return s.userAction(c, func(id int64) (string, error) {
		amount, note, rid, err := moneyForm(c)
		if err != nil {
			return "", err
		}
		res, err := subs.Deposit(c.R.Context(), c.Actor, id, subs.DepositInput{Amount: amount, Note: note, RequestID: rid})
		if err != nil {
			return "", err
		}
		return s.Text(c, "user.deposited") + " " + res.Amount.String(), nil
	})
}

func (s *site) pageUserWithdraw(c *web.Ctx) error {
	return s.userAction(c, func(id int64) (string, error) {
		amount, note, rid, err := moneyForm(c)
		if err != nil {
			return "", err
		}
		res, err := subs.Withdraw(c.R.Context(), c.Actor, id, subs.WithdrawInput{Amount: amount, Note: note, RequestID: rid})
		if err != nil {
			return "", err
		}
		return s.Text(c, "user.withdrawn") + " " + res.Amount.String(), nil
	})
}

func (s *site) pageUserEnable(c *web.Ctx) error {
	return s.userAction(c, func(id int64) (string, error) {
		if _, err := subs.EnableUser(c.R.Context(), c.Actor, id); err != nil {
			return "", err
		}
		return s.Text(c, "user.enabled_done"), nil
	})
}

func (s *site) pageUserDisable(c *web.Ctx) error {
	return s.userAction(c, func(id int64) (string, error) {
		if _, err := subs.DisableUser(c.R.Context(), c.Actor, id); err != nil {
			return "", err
		}
		return s.Text(c, "user.disabled_done"), nil
	})
}

// pageUserActivate is POST /users/{id}/activation's function: the plan
// (default the bound one) charged and the period started or extended.
func (s *site) pageUserActivate(c *web.Ctx) error {
	return s.userAction(c, func(id int64) (string, error) {
		if err := web.ParseForm(c); err != nil {
			return "", err
		}
		in := subs.ActivationInput{RequestID: c.R.PostFormValue("request_id"), Note: c.R.PostFormValue("note")}
		if p := c.R.PostFormValue("profile_id"); p != "" {
			pid, err := strconv.ParseInt(p, 10, 64)
			if err != nil {
				return "", app.ErrValidation("invalid_type", "profile_id")
			}
			in.ProfileID = &pid
		}
		res, err := subs.Activate(c.R.Context(), c.Actor, id, in)
		if err != nil {
			return "", err
		}
		v := s.NewView(c, "", "") // before setFlash: taking the flash is harmless here
		return v.T("user.activated") + " " + v.When(res.Expiration), nil
	})
}

// pageUserAddon is POST /users/{id}/addons' function.
func (s *site) pageUserAddon(c *web.Ctx) error {
	return s.userAction(c, func(id int64) (string, error) {
		if err := web.ParseForm(c); err != nil {
			return "", err
		}
		in := subs.AddonPurchaseInput{RequestID: c.R.PostFormValue("request_id"), Quantity: 1}
		aid, err := strconv.ParseInt(c.R.PostFormValue("addon_id"), 10, 64)
		if err != nil {
			return "", app.ErrValidation("addon_id_required", "addon_id")
		}
		in.AddonID = aid
		if q := strings.TrimSpace(c.R.PostFormValue("quantity")); q != "" {
			if in.Quantity, err = strconv.ParseInt(q, 10, 64); err != nil {
				return "", app.ErrValidation("invalid_type", "quantity")
			}
		}
		res, err := subs.BuyAddon(c.R.Context(), c.Actor, id, in)
		if err != nil {
			return "", err
		}
		return s.Text(c, "user.addon_bought") + " " + res.Price.String(), nil
	})
}

// pageUserResetQuota zeroes the period's used data and time with the API's
// bulk-reset-quota function on this one subscriber.
func (s *site) pageUserResetQuota(c *web.Ctx) error {
	return s.userAction(c, func(id int64) (string, error) {
		res, err := subs.BulkResetQuota(c.R.Context(), c.Actor, app.BulkIDs{IDs: []int64{id}})
		if err != nil {
			return "", err
		}
		if len(res.Failed) > 0 {
			return "", bulkFailure(res.Failed[0])
		}
		return s.Text(c, "user.quota_reset"), nil
	})
}

// failureReason is the reason of a failed bulk row: not_found,
// not_authorized, or the refusal's own reason (carried as its message).
func failureReason(f app.BulkFailure) string {
	if f.Reason == "error" && f.Message != "" && !strings.Contains(f.Message, " ") {
		return f.Message
	}
	return f.Reason
}

// bulkFailure turns the failed row of a one-id bulk call back into an
// error: out of scope or missing is the record's 404.
func bulkFailure(f app.BulkFailure) error {
	switch r := failureReason(f); r {
	case "not_found", "not_authorized":
		return app.ErrNotFound()
	case "error":
		return app.ErrInternal(errors.New(f.Message))
	default:
		return app.ErrConflict(r)
	}
}

// pageUserDisconnect asks the NAS of each open session of the subscriber
// to end it (the RADIUS service's DisconnectUser, as bulk-disconnect does).
func (s *site) pageUserDisconnect(c *web.Ctx) error {
	return s.userAction(c, func(id int64) (string, error) {
		if _, err := subs.Lookup(c.R.Context(), c.Tenant.DB.R, c.Actor, id); err != nil {
			return "", err
		}
		if s.Server().Radius == nil {
			return "", app.ErrUnavailable("disconnect_unavailable")
		}
		n, err := s.Server().Radius.DisconnectUser(c.R.Context(), c.Actor.Tenant, id)
		if err != nil {
			return "", err
		}
		if n == 0 {
			return "", app.ErrConflict("not_online")
		}
		return fmt.Sprintf(s.Text(c, "user.disconnected"), n), nil
	})
}

// pageUserLoginAs opens a borrowed portal session and shows its token
// once, on this answer only (never stored in the console session).
func (s *site) pageUserLoginAs(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	ps, err := portal.LoginAs(c.R.Context(), c.Actor, id, c.IP, c.R.UserAgent())
	if err != nil {
		return s.userAction(c, func(int64) (string, error) { return "", err })
	}
	uv, err := s.userView(c, id)
	if err != nil {
		return err
	}
	uv.LoginAs = ps
	uv.LoginAsExpires = app.T(time.Unix(ps.ExpiresAt, 0))
	uv.PortalAPI = web.RequestOrigin(c.R) + "/api/v1/portal/me"
	v := s.NewView(c, "subscribers", "menu.subscribers")
	v.Title, v.Data = uv.User.Username, uv
	return s.Render(c, http.StatusOK, "user", v)
}

// editView is the edit form's data.
type editView struct {
	User  *subs.UserDetail
	Plans []subs.ProfileOption
	Can   map[string]bool
}

// localInput formats a time for a datetime-local input in loc.
func localInput(t app.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.Time.In(loc).Format("2006-01-02T15:04")
}

func (s *site) editData(c *web.Ctx, id int64, v *web.View) (*editView, error) {
	u, err := subs.GetUser(c.R.Context(), c.Actor, id)
	if err != nil {
		return nil, err
	}
	ev := &editView{User: u, Can: web.CanMap(c.Actor, subs.PermUsersChangeProfile, subs.PermUsersExtend)}
	if c.Actor.Can(subs.PermUsersChangeProfile) {
		oc, err := subs.FormChoices(c.R.Context(), c.Actor)
		if err != nil {
			return nil, err
		}
		ev.Plans = oc.Profiles
	}
	v.Title = v.T("user.edit") + " " + u.Username
	return ev, nil
}

// editForm fills the form with the record's values.
func editForm(u *subs.UserDetail, loc *time.Location) url.Values {
	f := url.Values{}
	f.Set("firstname", u.Firstname)
	f.Set("lastname", u.Lastname)
	f.Set("email", u.Email)
	f.Set("phone", u.Phone)
	f.Set("static_ip", u.StaticIP)
	f.Set("notes", u.Notes)
	f.Set("expiration", localInput(u.Expiration, loc))
	if u.ProfileID != nil {
		f.Set("profile_id", strconv.FormatInt(*u.ProfileID, 10))
	}
	return f
}

func (s *site) pageUserEdit(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v := s.NewView(c, "subscribers", "user.edit")
	ev, err := s.editData(c, id, v)
	if err != nil {
		return err
	}
	v.Data = ev
	v.Form = editForm(ev.User, v.Loc)
	return s.Render(c, http.StatusOK, "user_edit", v)
}

// pageUserUpdate sends PATCH /users/{id}'s function the fields the form
// changed (only those: an unchanged plan or expiration needs no permission).
func (s *site) pageUserUpdate(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "subscribers", "user.edit")
	ev, err := s.editData(c, id, v)
	if err != nil {
		return err
	}
	v.Data = ev
	f := c.R.PostForm
	v.Form = f
	cur := editForm(ev.User, v.Loc)
	var p subs.UserPatch
	text := func(name string, o *app.Opt[string]) {
		if _, sent := f[name]; sent && f.Get(name) != cur.Get(name) {
			*o = app.Opt[string]{Set: true, V: strings.TrimSpace(f.Get(name))}
		}
	}
	text("firstname", &p.Firstname)
	text("lastname", &p.Lastname)
	text("email", &p.Email)
	text("phone", &p.Phone)
	text("static_ip", &p.StaticIP)
	if _, sent := f["notes"]; sent && f.Get("notes") != cur.Get("notes") {
		p.Notes = app.Opt[string]{Set: true, V: f.Get("notes")}
	}
	if _, sent := f["profile_id"]; sent && f.Get("profile_id") != cur.Get("profile_id") {
		if f.Get("profile_id") == "" {
			p.ProfileID = app.Opt[int64]{Set: true, Null: true}
		} else {
			pid, err := strconv.ParseInt(f.Get("profile_id"), 10, 64)
			if err != nil {
				return s.FormError(c, "user_edit", v, app.ErrValidation("invalid_type", "profile_id"))
			}
			p.ProfileID = app.Opt[int64]{Set: true, V: pid}
		}
	}
	if e := strings.TrimSpace(f.Get("expiration")); e != "" && e != cur.Get("expiration") {
		t, err := time.ParseInLocation("2006-01-02T15:04", e, v.Loc)
		if err != nil {
			return s.FormError(c, "user_edit", v, app.ErrValidation("invalid_type", "expiration"))
		}
		p.Expiration = app.Opt[app.DateOrTime]{Set: true, V: app.DateOrTime{Time: app.T(t)}}
	}
	// Plan and expiration are disabled (not sent) for a caller who may not
	// change them; UpdateUser refuses them with 403 all the same.
	if _, err := subs.UpdateUser(c.R.Context(), c.Actor, id, p); err != nil {
		return s.FormError(c, "user_edit", v, err)
	}
	s.SetFlash(c, v.T("user.saved"), false)
	return web.Redirect(c, fmt.Sprintf("/users/%d", id))
}

// newUserView is the create form's data: the plans the caller may assign.
type newUserView struct{ Plans []subs.ProfileOption }

func (s *site) newUserData(c *web.Ctx) (*newUserView, error) {
	oc, err := subs.FormChoices(c.R.Context(), c.Actor)
	if err != nil {
		return nil, err
	}
	return &newUserView{Plans: oc.Profiles}, nil
}

func (s *site) pageUserNew(c *web.Ctx) error {
	v := s.NewView(c, "subscribers", "user.new")
	d, err := s.newUserData(c)
	if err != nil {
		return err
	}
	v.Data = d
	return s.Render(c, http.StatusOK, "user_new", v)
}

func (s *site) pageUserCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	in := subs.CreateInput{Username: strings.TrimSpace(f.Get("username")), Password: f.Get("password"),
		Email: strings.TrimSpace(f.Get("email")), Firstname: f.Get("firstname"), Lastname: f.Get("lastname"), Phone: f.Get("phone")}
	v := s.NewView(c, "subscribers", "user.new")
	v.Form = f
	d, err := s.newUserData(c)
	if err != nil {
		return err
	}
	v.Data = d
	if p := f.Get("profile_id"); p != "" {
		id, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return s.FormError(c, "user_new", v, app.ErrValidation("invalid_type", "profile_id"))
		}
		in.ProfileID = &id
	}
	if e := strings.TrimSpace(f.Get("expiration")); e != "" {
		var d app.DateOrTime
		if err := d.UnmarshalJSON([]byte(strconv.Quote(e))); err != nil {
			return s.FormError(c, "user_new", v, app.ErrValidation("invalid_type", "expiration"))
		}
		in.Expiration = &d
	}
	out, err := subs.Create(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.FormError(c, "user_new", v, err)
	}
	s.SetFlash(c, v.T("user.created"), false)
	return web.Redirect(c, fmt.Sprintf("/users/%d", out.ID))
}
