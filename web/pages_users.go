package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/subs"
)

// Subscriber pages: the list (search as you type, filters, pages), the
// record with its money and actions, and the create form. Each calls the
// app function of its API row.
func (s *Server) userPages() []Route {
	return []Route{
		{M: "GET", P: "/users", Access: Staff, Perms: []string{"prm_users_index"}, Buckets: []string{"user_list"}, H: s.pageUsers, Menu: "subscribers"},
		{M: "GET", P: "/users/new", Access: Staff, Perms: []string{"prm_users_create"}, H: s.pageUserNew},
		{M: "POST", P: "/users", Access: Staff, Perms: []string{"prm_users_create"}, H: s.pageUserCreate},
		{M: "GET", P: "/users/{id}", Access: Staff, Perms: []string{"prm_users_index"}, H: s.pageUser},
		{M: "POST", P: "/users/{id}/deposit", Access: Staff, Perms: []string{"prm_users_deposit"}, H: s.pageUserDeposit},
		{M: "POST", P: "/users/{id}/withdraw", Access: Staff, Perms: []string{"prm_users_withdrawal"}, H: s.pageUserWithdraw},
		{M: "POST", P: "/users/{id}/enable", Access: Staff, Perms: []string{"prm_users_enable_disable"}, H: s.pageUserEnable},
		{M: "POST", P: "/users/{id}/disable", Access: Staff, Perms: []string{"prm_users_enable_disable"}, H: s.pageUserDisable},
	}
}

// usersView is the list page's data.
type usersView struct {
	Page    app.Page[subs.User]
	Q       string
	Status  string
	Prev    string // query string of the previous page, "" on the first
	Next    string
	CanNew  bool
	Filters url.Values
}

// userListQuery maps the page's simple form onto the API's list query.
func userListQuery(q url.Values) url.Values {
	out := url.Values{}
	if v := strings.TrimSpace(q.Get("q")); v != "" {
		out.Set("q", v)
	}
	switch q.Get("status") {
	case "enabled":
		out.Set("filter[enabled]", "true")
	case "disabled":
		out.Set("filter[enabled]", "false")
	case "expired":
		out.Set("filter[expired]", "true")
	case "online":
		out.Set("filter[online]", "true")
	}
	for _, k := range []string{"page", "sort", "order"} {
		if v := q.Get(k); v != "" {
			out.Set(k, v)
		}
	}
	out.Set("page_size", "25")
	return out
}

func (s *Server) pageUsers(c *Ctx) error {
	v := s.newView(c, "subscribers", "menu.subscribers")
	q := c.Query()
	lq, err := app.ParseList(userListQuery(q), subs.UserListSpec())
	if err != nil {
		return err
	}
	page, err := subs.ListUsers(c.R.Context(), c.Actor, lq)
	if err != nil {
		return err
	}
	uv := usersView{Page: page, Q: q.Get("q"), Status: q.Get("status"), CanNew: c.Actor.Can("prm_users_create")}
	link := func(p int) string {
		l := url.Values{}
		for _, k := range []string{"q", "status"} {
			if q.Get(k) != "" {
				l.Set(k, q.Get(k))
			}
		}
		l.Set("page", strconv.Itoa(p))
		return "?" + l.Encode()
	}
	if lq.Page > 1 {
		uv.Prev = link(lq.Page - 1)
	}
	if page.Meta.HasNext {
		uv.Next = link(lq.Page + 1)
	}
	v.Data = uv
	return s.render(c, http.StatusOK, "users", v)
}

// userView is the record page's data.
type userView struct {
	User      *subs.UserDetail
	Ledger    []subs.LedgerEntry
	Sessions  int
	RequestID string // a fresh idempotency key for each money form
	Can       map[string]bool
}

func (s *Server) userView(c *Ctx, id int64) (*userView, error) {
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
	can := map[string]bool{}
	for _, p := range []string{"prm_users_deposit", "prm_users_withdrawal", "prm_users_enable_disable", "prm_users_update"} {
		can[p] = c.Actor.Can(p)
	}
	return &userView{User: u, Ledger: led.Rows, RequestID: app.NewUUID(), Can: can}, nil
}

func (s *Server) pageUser(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	uv, err := s.userView(c, id)
	if err != nil {
		return err
	}
	v := s.newView(c, "subscribers", "menu.subscribers")
	v.Title = uv.User.Username
	v.Data = uv
	return s.render(c, http.StatusOK, "user", v)
}

// moneyForm reads the amount, note and request_id of a money form.
func moneyForm(c *Ctx) (*app.Money, string, string, error) {
	if err := parseForm(c); err != nil {
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
func (s *Server) userAction(c *Ctx, run func(id int64) (string, error)) error {
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
		v := s.newView(c, "subscribers", "menu.subscribers")
		v.Title, v.Data = uv.User.Username, uv
		v.Form = c.R.PostForm
		return s.formError(c, "user", v, err)
	}
	s.setFlash(c, msg, false)
	return redirect(c, fmt.Sprintf("/users/%d", id))
}

func (s *Server) pageUserDeposit(c *Ctx) error {
	return s.userAction(c, func(id int64) (string, error) {
		amount, note, rid, err := moneyForm(c)
		if err != nil {
			return "", err
		}
		res, err := subs.Deposit(c.R.Context(), c.Actor, id, subs.DepositInput{Amount: amount, Note: note, RequestID: rid})
		if err != nil {
			return "", err
		}
		return s.newView(c, "", "").T("user.deposited") + " " + res.Amount.String(), nil
	})
}

func (s *Server) pageUserWithdraw(c *Ctx) error {
	return s.userAction(c, func(id int64) (string, error) {
		amount, note, rid, err := moneyForm(c)
		if err != nil {
			return "", err
		}
		res, err := subs.Withdraw(c.R.Context(), c.Actor, id, subs.WithdrawInput{Amount: amount, Note: note, RequestID: rid})
		if err != nil {
			return "", err
		}
		return s.newView(c, "", "").T("user.withdrawn") + " " + res.Amount.String(), nil
	})
}

func (s *Server) pageUserEnable(c *Ctx) error {
	return s.userAction(c, func(id int64) (string, error) {
		if _, err := subs.EnableUser(c.R.Context(), c.Actor, id); err != nil {
			return "", err
		}
		return s.newView(c, "", "").T("user.enabled_done"), nil
	})
}

func (s *Server) pageUserDisable(c *Ctx) error {
	return s.userAction(c, func(id int64) (string, error) {
		if _, err := subs.DisableUser(c.R.Context(), c.Actor, id); err != nil {
			return "", err
		}
		return s.newView(c, "", "").T("user.disabled_done"), nil
	})
}

// newUserView is the create form's data: the plans the caller may assign.
type newUserView struct{ Plans []subs.Profile }

func (s *Server) newUserData(c *Ctx) (*newUserView, error) {
	lq, err := app.ParseList(url.Values{"page_size": {"100"}}, subs.ProfileListSpec())
	if err != nil {
		return nil, err
	}
	plans, err := subs.ListProfiles(c.R.Context(), c.Actor, lq)
	if err != nil {
		return nil, err
	}
	return &newUserView{Plans: plans.Rows}, nil
}

func (s *Server) pageUserNew(c *Ctx) error {
	v := s.newView(c, "subscribers", "user.new")
	d, err := s.newUserData(c)
	if err != nil {
		return err
	}
	v.Data = d
	return s.render(c, http.StatusOK, "user_new", v)
}

func (s *Server) pageUserCreate(c *Ctx) error {
	if err := parseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	in := subs.CreateInput{Username: strings.TrimSpace(f.Get("username")), Password: f.Get("password"),
		Email: strings.TrimSpace(f.Get("email")), Firstname: f.Get("firstname"), Lastname: f.Get("lastname"), Phone: f.Get("phone")}
	v := s.newView(c, "subscribers", "user.new")
	v.Form = f
	d, err := s.newUserData(c)
	if err != nil {
		return err
	}
	v.Data = d
	if p := f.Get("profile_id"); p != "" {
		id, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return s.formError(c, "user_new", v, app.ErrValidation("invalid_type", "profile_id"))
		}
		in.ProfileID = &id
	}
	if e := strings.TrimSpace(f.Get("expiration")); e != "" {
		var d app.DateOrTime
		if err := d.UnmarshalJSON([]byte(strconv.Quote(e))); err != nil {
			return s.formError(c, "user_new", v, app.ErrValidation("invalid_type", "expiration"))
		}
		in.Expiration = &d
	}
	out, err := subs.Create(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.formError(c, "user_new", v, err)
	}
	s.setFlash(c, v.T("user.created"), false)
	return redirect(c, fmt.Sprintf("/users/%d", out.ID))
}
