package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/webhooks"
	"xr/web"
)

// Webhook pages: the endpoints, the create and edit forms (events of the
// catalogue as checkboxes grouped by category), the signing secret shown
// once on create and on rotation, delete and the test delivery; an
// endpoint's deliveries (filter by state, pages), a delivery's record as
// the API stores it, and replay. Each calls the app/webhooks function of
// its API row in web/webhooks_routes.go, with that row's permission and
// buckets.
func (s *site) webhookPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/webhooks", Access: web.Staff, API: "GET /admin/webhooks/endpoints", H: s.pageWebhooks, Menu: "webhooks"},
		{M: "GET", P: "/webhooks/new", Access: web.Staff, API: "GET /admin/webhooks/event-catalog", H: s.pageWebhookNew},
		{M: "POST", P: "/webhooks", Access: web.Staff, API: "POST /admin/webhooks/endpoints", H: s.pageWebhookCreate},
		{M: "GET", P: "/webhooks/{id}", Access: web.Staff, API: "GET /admin/webhooks/deliveries", H: s.pageWebhook},
		{M: "GET", P: "/webhooks/{id}/edit", Access: web.Staff, API: "GET /admin/webhooks/endpoints", H: s.pageWebhookEdit},
		{M: "POST", P: "/webhooks/{id}/edit", Access: web.Staff, API: "PATCH /admin/webhooks/endpoints/{id}", H: s.pageWebhookUpdate},
		{M: "POST", P: "/webhooks/{id}/rotate-secret", Access: web.Staff, API: "POST /admin/webhooks/endpoints/{id}/rotate-secret", H: s.pageWebhookRotate},
		{M: "POST", P: "/webhooks/{id}/test", Access: web.Staff, API: "POST /admin/webhooks/endpoints/{id}/test", H: s.pageWebhookTest},
		{M: "POST", P: "/webhooks/{id}/delete", Access: web.Staff, API: "DELETE /admin/webhooks/endpoints/{id}", H: s.pageWebhookDelete},
		{M: "GET", P: "/webhook-deliveries/{id}", Access: web.Staff, API: "GET /admin/webhooks/deliveries", H: s.pageWebhookDelivery},
		{M: "POST", P: "/webhook-deliveries/{id}/replay", Access: web.Staff, API: "POST /admin/webhooks/deliveries/{id}/replay", H: s.pageWebhookReplay},
	}
}

func (s *site) pageWebhooks(c *web.Ctx) error {
	v := s.NewView(c, "webhooks", "menu.webhooks")
	eps, err := webhooks.ListEndpoints(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	v.Data = eps.Rows
	return s.Render(c, http.StatusOK, "webhooks", v)
}

// webhookEndpoint finds one endpoint among the tenant's (at most
// webhooks.MaxEndpoints): 404 when there is none with that id.
func webhookEndpoint(c *web.Ctx, id int64) (*webhooks.Endpoint, error) {
	eps, err := webhooks.ListEndpoints(c.R.Context(), c.Actor)
	if err != nil {
		return nil, err
	}
	for i := range eps.Rows {
		if eps.Rows[i].ID == id {
			return &eps.Rows[i], nil
		}
	}
	return nil, app.ErrNotFound()
}

// eventGroup is one category of the event catalogue with its keys.
type eventGroup struct {
	Category string
	Keys     []string
}

// eventGroups is the catalogue by category, in catalogue order.
func eventGroups(a *app.App) []eventGroup {
	var out []eventGroup
	at := map[string]int{}
	for _, e := range webhooks.Catalog(a) {
		i, ok := at[e.Category]
		if !ok {
			i = len(out)
			at[e.Category] = i
			out = append(out, eventGroup{Category: e.Category})
		}
		out[i].Keys = append(out[i].Keys, e.Key)
	}
	return out
}

// webhookFormView is the create / edit form's data.
type webhookFormView struct {
	Action  string
	Edit    bool
	ID      int64
	Groups  []eventGroup
	Checked map[string]bool
}

func (s *site) webhookForm(c *web.Ctx, status int, v *web.View, d *webhookFormView, err error) error {
	d.Groups = eventGroups(s.App())
	d.Checked = map[string]bool{}
	for _, k := range v.Form["events"] {
		d.Checked[k] = true
	}
	v.Data = d
	if err != nil {
		return s.FormError(c, "webhook_form", v, err)
	}
	return s.Render(c, status, "webhook_form", v)
}

func (s *site) pageWebhookNew(c *web.Ctx) error {
	v := s.NewView(c, "webhooks", "webhook.new")
	v.Form = url.Values{"enabled": {"1"}}
	return s.webhookForm(c, http.StatusOK, v, &webhookFormView{Action: "/webhooks"}, nil)
}

// webhookInput maps the form onto the API's input: every field present, as
// a PUT-like PATCH (events and all_events are replaced outright).
func webhookInput(f url.Values) webhooks.EndpointInput {
	events := f["events"]
	if events == nil {
		events = []string{}
	}
	in := webhooks.EndpointInput{
		Name:      app.Opt[string]{Set: true, V: f.Get("name")},
		Events:    app.Opt[[]string]{Set: true, V: events},
		AllEvents: app.Opt[bool]{Set: true, V: f.Get("all_events") != ""},
		Enabled:   app.Opt[bool]{Set: true, V: f.Get("enabled") != ""},
	}
	if u := strings.TrimSpace(f.Get("url")); u != "" {
		in.URL = app.Opt[string]{Set: true, V: u}
	}
	return in
}

// webhookSecretView is the page that shows a signing secret, once.
type webhookSecretView struct {
	Endpoint        *webhooks.Endpoint
	Secret          string
	Rotated         bool
	PreviousExpires app.Time
}

func (s *site) pageWebhookCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "webhooks", "webhook.new")
	v.Form = c.R.PostForm
	out, err := webhooks.CreateEndpoint(c.R.Context(), c.Actor, webhookInput(c.R.PostForm))
	if err != nil {
		return s.webhookForm(c, 0, v, &webhookFormView{Action: "/webhooks"}, err)
	}
	v.Title = v.T("webhook.created")
	v.Data = &webhookSecretView{Endpoint: &out.Endpoint, Secret: out.Secret}
	return s.Render(c, http.StatusOK, "webhook_secret", v)
}

// webhookEditForm is an endpoint as the edit form's values.
func webhookEditForm(e *webhooks.Endpoint) url.Values {
	f := url.Values{"name": {e.Name}, "url": {e.URL}, "events": e.Events}
	if e.AllEvents {
		f.Set("all_events", "1")
	}
	if e.Enabled {
		f.Set("enabled", "1")
	}
	return f
}

func (s *site) pageWebhookEdit(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	e, err := webhookEndpoint(c, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "webhooks", "webhook.edit")
	v.Title = v.T("webhook.edit") + " · " + e.Name
	v.Form = webhookEditForm(e)
	return s.webhookForm(c, http.StatusOK, v, &webhookFormView{Action: fmt.Sprintf("/webhooks/%d/edit", id), Edit: true, ID: id}, nil)
}

func (s *site) pageWebhookUpdate(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "webhooks", "webhook.edit")
	v.Form = c.R.PostForm
	in := webhookInput(c.R.PostForm)
	if !in.URL.Set {
		in.URL = app.Opt[string]{Set: true, Null: true} // cleared: the API's url_required
	}
	if _, err := webhooks.UpdateEndpoint(c.R.Context(), c.Actor, id, in); err != nil {
		return s.webhookForm(c, 0, v, &webhookFormView{Action: fmt.Sprintf("/webhooks/%d/edit", id), Edit: true, ID: id}, err)
	}
	s.SetFlash(c, v.T("webhook.saved"), false)
	return web.Redirect(c, fmt.Sprintf("/webhooks/%d", id))
}

// webhookView is an endpoint's record: the endpoint, its deliveries.
type webhookView struct {
	Endpoint   *webhooks.Endpoint
	Deliveries app.Page[webhooks.Delivery]
	States     []string
	State      string
	Prev, Next string
	Graces     []int // rotation grace choices, seconds
}

// rotationGraces are the grace periods offered on rotation (seconds): none,
// an hour, a day (the API's default), a week (its maximum).
var rotationGraces = []int{0, 3600, 86400, 604800}

func (s *site) pageWebhook(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	e, err := webhookEndpoint(c, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "webhooks", "menu.webhooks")
	v.Title = e.Name
	q := c.Query()
	d := &webhookView{Endpoint: e, States: webhooks.States, State: q.Get("state"), Graces: rotationGraces}
	v.Data = d
	lv := url.Values{"filter[endpoint_id]": {strconv.FormatInt(id, 10)}, "page_size": {"25"}}
	if d.State != "" {
		lv.Set("filter[state]", d.State)
	}
	if p, err := strconv.Atoi(q.Get("page")); err == nil && p > 1 {
		lv.Set("page", strconv.Itoa(p))
	}
	d.Deliveries, err = webhooks.ListDeliveries(c.R.Context(), c.Actor, lv)
	if e := app.AsError(err); e != nil && e.Status == http.StatusBadRequest {
		v.Errors["state"] = web.Message(v.Lang, e.Reason, e.Code)
		return s.Render(c, refusedStatus(c), "webhook", v)
	}
	if err != nil {
		return err
	}
	d.Prev, d.Next = web.Pager(fmt.Sprintf("/webhooks/%d", id), web.NonEmpty("state", d.State), d.Deliveries.Meta)
	return s.Render(c, http.StatusOK, "webhook", v)
}

func (s *site) pageWebhookRotate(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	e, err := webhookEndpoint(c, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "webhooks", "webhook.rotated")
	var in webhooks.RotateInput
	if g := strings.TrimSpace(c.R.PostFormValue("grace_seconds")); g != "" {
		n, err := strconv.Atoi(g)
		if err != nil {
			n = -1 // the API's invalid_grace_seconds
		}
		in.GraceSeconds = app.Opt[int]{Set: true, V: n}
	}
	out, err := webhooks.RotateSecret(c.R.Context(), c.Actor, id, in)
	if ae := app.AsError(err); ae != nil && ae.Status == http.StatusBadRequest {
		s.SetFlash(c, web.Message(v.Lang, ae.Reason, ae.Code), true)
		return web.Redirect(c, fmt.Sprintf("/webhooks/%d", id))
	}
	if err != nil {
		return err
	}
	v.Data = &webhookSecretView{Endpoint: e, Secret: out.Secret, Rotated: true, PreviousExpires: out.PreviousSecretExpiresAt}
	return s.Render(c, http.StatusOK, "webhook_secret", v)
}

func (s *site) pageWebhookTest(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v := s.NewView(c, "", "")
	out, err := webhooks.TestEndpoint(c.R.Context(), c.Actor, id)
	if ae := app.AsError(err); ae != nil && ae.Status == http.StatusConflict {
		s.SetFlash(c, web.Message(v.Lang, ae.Reason, ae.Code), true)
		return web.Redirect(c, fmt.Sprintf("/webhooks/%d", id))
	}
	if err != nil {
		return err
	}
	s.SetFlash(c, fmt.Sprintf("%s (#%d)", v.T("webhook.test_queued"), out.DeliveryID), false)
	return web.Redirect(c, fmt.Sprintf("/webhooks/%d", id))
}

func (s *site) pageWebhookDelete(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := webhooks.DeleteEndpoint(c.R.Context(), c.Actor, id); err != nil {
		return err
	}
	s.SetFlash(c, s.NewView(c, "", "").T("webhook.deleted"), false)
	return web.Redirect(c, "/webhooks")
}

// webhookDeliveryView is a delivery's record and its endpoint (nil once
// the endpoint was deleted).
type webhookDeliveryView struct {
	Delivery *webhooks.Delivery
	Endpoint *webhooks.Endpoint
}

func (s *site) pageWebhookDelivery(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	d, err := webhooks.GetDelivery(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	e, err := webhookEndpoint(c, d.EndpointID)
	if ae := app.AsError(err); ae != nil && ae.Status == http.StatusNotFound {
		e, err = nil, nil
	}
	if err != nil {
		return err
	}
	v := s.NewView(c, "webhooks", "webhook.delivery")
	v.Title = fmt.Sprintf("%s #%d", v.T("webhook.delivery"), d.ID)
	v.Data = &webhookDeliveryView{Delivery: d, Endpoint: e}
	return s.Render(c, http.StatusOK, "webhook_delivery", v)
}

func (s *site) pageWebhookReplay(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v := s.NewView(c, "", "")
	back := fmt.Sprintf("/webhook-deliveries/%d", id)
	_, err = webhooks.ReplayDelivery(c.R.Context(), c.Actor, id)
	if ae := app.AsError(err); ae != nil && ae.Status == http.StatusConflict {
		s.SetFlash(c, web.Message(v.Lang, ae.Reason, ae.Code), true)
		return web.Redirect(c, back)
	}
	if err != nil {
		return err
	}
	s.SetFlash(c, v.T("webhook.replayed"), false)
	return web.Redirect(c, back)
}
