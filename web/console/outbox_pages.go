package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/outbox"
	"xr/web"
)

// Outbound message pages: the message log (filter by state and channel,
// retry a failed or dead message) and the messaging settings (sender name
// and address, send rate, the SMS gateway, a test message). The spec has no
// API rows for them; each page calls the app/outbox function that holds the
// rule, with prm_settings.
func (s *site) outboxPages() []web.Route {
	p := []app.Perm{app.PermSettings}
	return []web.Route{
		{M: "GET", P: "/messages", Access: web.Staff, Perms: p, H: s.pageMessages, Menu: "messages"},
		{M: "POST", P: "/messages/{id}/retry", Access: web.Staff, Perms: p, H: s.pageMessageRetry},
		{M: "GET", P: "/messages/settings", Access: web.Staff, Perms: p, H: s.pageMessagingSettings},
		{M: "POST", P: "/messages/settings", Access: web.Staff, Perms: p, H: s.pageMessagingSettingsSave},
		{M: "POST", P: "/messages/sms-gateway", Access: web.Staff, Perms: p, H: s.pageSMSGatewaySave},
		{M: "POST", P: "/messages/sms-gateway/delete", Access: web.Staff, Perms: p, H: s.pageSMSGatewayDelete},
		{M: "POST", P: "/messages/test", Access: web.Staff, Perms: p, Buckets: []string{app.BucketEgress}, H: s.pageMessageTest},
	}
}

// messagesView is the message log page.
type messagesView struct {
	Page             app.Page[outbox.Record]
	Rows             []messageRow
	States, Channels []string
	State, Channel   string
	Prev, Next       string
}

func (s *site) pageMessages(c *web.Ctx) error {
	v := s.NewView(c, "messages", "menu.messages")
	q := c.Query()
	d := &messagesView{States: outbox.States, Channels: []string{outbox.ChannelEmail, outbox.ChannelSMS, outbox.ChannelInbox},
		State: q.Get("state"), Channel: q.Get("channel")}
	v.Data = d
	lv := url.Values{"page_size": {"25"}}
	if d.State != "" {
		lv.Set("filter[state]", d.State)
	}
	if d.Channel != "" {
		lv.Set("filter[channel]", d.Channel)
	}
	if p, err := strconv.Atoi(q.Get("page")); err == nil && p > 1 {
		lv.Set("page", strconv.Itoa(p))
	}
	lq, err := app.ParseList(lv, outbox.ListSpec)
	if err != nil {
		return err
	}
	if d.Page, err = outbox.List(c.R.Context(), c.Actor, lq); err != nil {
		return err
	}
	for _, r := range d.Page.Rows {
		row := messageRow{Record: r}
		if r.LastError != "" {
			row.Reason = web.Message(v.Lang, r.LastError, "")
		}
		d.Rows = append(d.Rows, row)
	}
	keep := web.NonEmpty("state", d.State)
	if d.Channel != "" {
		keep.Set("channel", d.Channel)
	}
	d.Prev, d.Next = web.Pager("/messages", keep, d.Page.Meta)
	return s.Render(c, http.StatusOK, "messages", v)
}

// messageRow is a message of the log with its last error in words.
type messageRow struct {
	outbox.Record
	Reason string
}

func (s *site) pageMessageRetry(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v := s.NewView(c, "", "")
	_, err = outbox.Retry(c.R.Context(), c.Actor, id)
	if ae := app.AsError(err); ae != nil && ae.Status == http.StatusConflict {
		s.SetFlash(c, web.Message(v.Lang, ae.Reason, ae.Code), true)
		return web.Redirect(c, "/messages")
	}
	if err != nil {
		return err
	}
	s.SetFlash(c, fmt.Sprintf("%s (#%d)", v.T("outbox.retried"), id), false)
	return web.Redirect(c, "/messages")
}

// messagingView is the settings page.
type messagingView struct {
	Settings *outbox.Settings
}

func (s *site) messagingPage(c *web.Ctx, v *web.View, status int, err error) error {
	st, gerr := outbox.GetSettings(c.R.Context(), c.Actor)
	if gerr != nil {
		return gerr
	}
	v.Data = &messagingView{Settings: st}
	// The stored values, under what the refused form posted.
	f := messagingForm(st)
	for k, vals := range v.Form {
		f[k] = vals
	}
	v.Form = f
	if err != nil {
		return s.FormError(c, "messaging_settings", v, err)
	}
	return s.Render(c, status, "messaging_settings", v)
}

// messagingForm is the stored settings as the forms' values (the auth
// value is never shown).
func messagingForm(st *outbox.Settings) url.Values {
	f := url.Values{"from_name": {st.FromName}, "from_address": {st.FromAddress},
		"messages_per_minute": {strconv.FormatInt(st.MessagesPerMinute, 10)}, "method": {"POST"},
		"content_type": {"application/x-www-form-urlencoded"}, "auth_header": {"Authorization"}, "test_channel": {"email"}}
	if g := st.Gateway; g != nil {
		f.Set("gw_url", g.URL)
		f.Set("method", g.Method)
		f.Set("gw_body", g.Body)
		f.Set("content_type", g.ContentType)
		f.Set("auth_header", g.AuthHeader)
	}
	return f
}

func (s *site) pageMessagingSettings(c *web.Ctx) error {
	return s.messagingPage(c, s.NewView(c, "messages", "outbox.settings"), http.StatusOK, nil)
}

func (s *site) pageMessagingSettingsSave(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "messages", "outbox.settings")
	f := c.R.PostForm
	rate, err := strconv.ParseInt(strings.TrimSpace(f.Get("messages_per_minute")), 10, 64)
	if err != nil {
		rate = 0 // the app's out_of_range
	}
	_, err = outbox.UpdateSettings(c.R.Context(), c.Actor, outbox.SettingsInput{FromName: f.Get("from_name"), FromAddress: f.Get("from_address"), MessagesPerMinute: rate})
	if err != nil {
		v.Form = f
		return s.messagingPage(c, v, 0, err)
	}
	s.SetFlash(c, v.T("outbox.saved"), false)
	return web.Redirect(c, "/messages/settings")
}

func (s *site) pageSMSGatewaySave(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "messages", "outbox.settings")
	f := c.R.PostForm
	in := outbox.SMSGatewayInput{URL: f.Get("gw_url"), Method: f.Get("method"), Body: f.Get("gw_body"), ContentType: f.Get("content_type"), AuthHeader: f.Get("auth_header")}
	if av := f.Get("auth_value"); av != "" {
		in.AuthValue = app.Opt[string]{Set: true, V: av}
	} else if f.Get("auth_clear") != "" {
		in.AuthValue = app.Opt[string]{Set: true, Null: true}
	}
	if _, err := outbox.SetSMSGateway(c.R.Context(), c.Actor, in); err != nil {
		f.Del("auth_value")
		v.Form = f
		if ae := app.AsError(err); ae != nil && ae.Field != "" {
			ae.Field = gatewayField(ae.Field)
		}
		return s.messagingPage(c, v, 0, err)
	}
	s.SetFlash(c, v.T("outbox.gateway_saved"), false)
	return web.Redirect(c, "/messages/settings")
}

// gatewayField names the form field of an SMSGatewayInput field.
func gatewayField(f string) string {
	switch f {
	case "url":
		return "gw_url"
	case "body":
		return "gw_body"
	}
	return f
}

func (s *site) pageSMSGatewayDelete(c *web.Ctx) error {
	if err := outbox.DeleteSMSGateway(c.R.Context(), c.Actor); err != nil {
		return err
	}
	s.SetFlash(c, s.NewView(c, "", "").T("outbox.gateway_deleted"), false)
	return web.Redirect(c, "/messages/settings")
}

func (s *site) pageMessageTest(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "messages", "outbox.settings")
	f := c.R.PostForm
	r, err := outbox.SendTest(c.R.Context(), c.Actor, outbox.TestInput{Channel: f.Get("test_channel"), To: f.Get("test_to")})
	if err != nil {
		if ae := app.AsError(err); ae != nil && ae.Field != "" {
			ae.Field = "test_" + ae.Field
		}
		v.Form = f
		return s.messagingPage(c, v, 0, err)
	}
	s.SetFlash(c, fmt.Sprintf("%s (#%d)", v.T("outbox.test_queued"), r.ID), false)
	return web.Redirect(c, fmt.Sprintf("/messages?channel=%s", url.QueryEscape(r.Channel)))
}
