package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/subs"
	"xr/app/tools"
	"xr/web"
)

// Operator tools pages: announcements (compose with a live recipient count,
// send, follow the fan-out) and bulk changes (select, one operation,
// preview the before/after sample, apply, follow the job and its per-row
// log). Each page calls the app/tools function of the API row of the same
// action, with the same permission.
func (s *site) toolsPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/tools/announcements", Access: web.Staff, API: "GET /admin/tools/announcements", H: s.pageAnnouncements, Menu: "announcements"},
		{M: "POST", P: "/tools/announcements", Access: web.Staff, API: "POST /admin/tools/announcements", H: s.pageAnnouncementCreate},
		{M: "GET", P: "/tools/announcements/{id}", Access: web.Staff, API: "GET /admin/tools/announcements/{id}", H: s.pageAnnouncement},
		{M: "GET", P: "/tools/bulk", Access: web.Staff, API: "GET /admin/tools/bulk/jobs", H: s.pageBulk, Menu: "bulk_changes"},
		{M: "POST", P: "/tools/bulk", Access: web.Staff, API: "POST /admin/tools/bulk/apply", H: s.pageBulkPost},
		{M: "GET", P: "/tools/bulk/{id}", Access: web.Staff, API: "GET /admin/tools/bulk/jobs/{id}", H: s.pageBulkJob},
	}
}

// toolsTargetFilters are the selection filters the tools forms offer.
var toolsTargetFilters = []string{"enabled", "profile_id", "group_id", "expiring_within_days", "online", "nas_id"}

// toolsFormSelection reads a selection from a tools form: ids (comma or space
// separated), q and the target filters.
func toolsFormSelection(f url.Values) (subs.Selection, error) {
	sel := subs.Selection{Q: strings.TrimSpace(f.Get("q")), Filter: map[string]string{}}
	for _, k := range toolsTargetFilters {
		if v := strings.TrimSpace(f.Get(k)); v != "" {
			sel.Filter[k] = v
		}
	}
	for _, p := range strings.FieldsFunc(f.Get("ids"), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' }) {
		id, err := strconv.ParseInt(p, 10, 64)
		if err != nil || id <= 0 {
			return sel, app.ErrValidation("invalid_id", "ids")
		}
		sel.IDs = append(sel.IDs, id)
	}
	return sel, nil
}

// toolsField names the form field of an app error field.
func toolsField(e *app.Error) {
	if e == nil {
		return
	}
	switch {
	case strings.HasPrefix(e.Field, "filter[") && strings.HasSuffix(e.Field, "]"):
		e.Field = strings.TrimSuffix(strings.TrimPrefix(e.Field, "filter["), "]")
	case strings.HasPrefix(e.Field, "operations["):
		if i := strings.Index(e.Field, "]."); i > 0 {
			e.Field = e.Field[i+2:]
			if e.Field == "profile_id" || e.Field == "group_id" {
				e.Field = "op_" + e.Field
			}
		} else {
			e.Field = "op"
		}
	case e.Field == "target":
		e.Field = ""
	}
}

// announcementsView is the announcements page.
type announcementsView struct {
	Page     app.Page[tools.Announcement]
	Channels []string
	Filters  []string
	Reach    *tools.Reach
	Vars     []string
	Checked  map[string]bool // channels ticked
}

func (s *site) announcementsPage(c *web.Ctx, v *web.View, status int, reach *tools.Reach, err error) error {
	lq, lerr := app.ParseList(url.Values{"page_size": {"20"}}, tools.AnnouncementListSpec)
	if lerr != nil {
		return lerr
	}
	page, lerr := tools.ListAnnouncements(c.R.Context(), c.Actor, lq)
	if lerr != nil {
		return lerr
	}
	v.Data = &announcementsView{Page: page, Channels: []string{"email", "sms", "inbox"}, Filters: toolsTargetFilters, Reach: reach, Vars: tools.AnnouncementVars}
	if len(v.Form) == 0 {
		v.Form = url.Values{"channels": {"inbox"}, "enabled": {"true"}}
	}
	d := v.Data.(*announcementsView)
	d.Checked = map[string]bool{}
	for _, ch := range v.Form["channels"] {
		d.Checked[ch] = true
	}
	if err != nil {
		toolsField(app.AsError(err))
		return s.FormError(c, "announcements", v, err)
	}
	return s.Render(c, status, "announcements", v)
}

func (s *site) pageAnnouncements(c *web.Ctx) error {
	return s.announcementsPage(c, s.NewView(c, "announcements", "menu.announcements"), http.StatusOK, nil, nil)
}

// pageAnnouncementCreate counts the recipients (action=count) or sends the
// announcement.
func (s *site) pageAnnouncementCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "announcements", "menu.announcements")
	f := c.R.PostForm
	v.Form = f
	sel, err := toolsFormSelection(f)
	if err != nil {
		return s.announcementsPage(c, v, 0, nil, err)
	}
	if f.Get("action") == "count" {
		r, err := tools.PreviewAnnouncementCount(c.R.Context(), c.Actor, tools.PreviewCountInput{Channels: f["channels"], Target: sel})
		return s.announcementsPage(c, v, http.StatusOK, r, err)
	}
	in := tools.AnnouncementInput{Title: f.Get("title"), Body: f.Get("body"), Channels: f["channels"], Target: sel}
	if e := strings.TrimSpace(f.Get("expires_at")); e != "" {
		var d app.DateOrTime
		if err := json.Unmarshal([]byte(strconv.Quote(e)), &d); err != nil {
			return s.announcementsPage(c, v, 0, nil, app.ErrValidation("invalid_value", "expires_at"))
		}
		in.ExpiresAt = &d
	}
	a, err := tools.CreateAnnouncement(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.announcementsPage(c, v, 0, nil, err)
	}
	s.SetFlash(c, fmt.Sprintf("%s (#%d)", v.T("tools.announcement_queued"), a.ID), false)
	return web.Redirect(c, fmt.Sprintf("/tools/announcements/%d", a.ID))
}

// announcementView is one announcement's page.
type announcementView struct {
	A           *tools.Announcement
	ProgressURL string
	States      []string
}

func (s *site) pageAnnouncement(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	a, err := tools.GetAnnouncement(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "announcements", "tools.announcement")
	d := &announcementView{A: a, States: []string{"queued", "sending", "sent", "failed", "dead"}}
	if a.JobID != nil && a.State != "done" {
		d.ProgressURL = jobProgressURL(*a.JobID, fmt.Sprintf("/tools/announcements/%d", id), "tools.refresh")
	}
	v.Data = d
	return s.Render(c, http.StatusOK, "announcement", v)
}

// toolsBulkView is the bulk changes page.
type toolsBulkView struct {
	Page    app.Page[tools.BulkJob]
	Filters []string
	Ops     []string
	Preview *tools.BulkPreview
	lang    string
}

// Why is a preview row's reason in words.
func (d toolsBulkView) Why(reason string) string { return web.Message(d.lang, reason, "") }

// Line is a row state in one line (the preview's before and after).
func (toolsBulkView) Line(st *subs.RowState) string { return toolsStateLine(st) }

var toolsBulkOps = []string{subs.OpAddDays, subs.OpSetExpiration, subs.OpAddTraffic, subs.OpEnable, subs.OpDisable, subs.OpResetQuota,
	subs.OpSetPlan, subs.OpSetGroup, subs.OpSetParent, subs.OpSetField}

func (s *site) bulkPage(c *web.Ctx, v *web.View, status int, p *tools.BulkPreview, err error) error {
	lq, lerr := app.ParseList(url.Values{"page_size": {"20"}}, tools.BulkJobListSpec)
	if lerr != nil {
		return lerr
	}
	page, lerr := tools.ListBulkJobs(c.R.Context(), c.Actor, lq)
	if lerr != nil {
		return lerr
	}
	v.Data = &toolsBulkView{Page: page, Filters: toolsTargetFilters, Ops: toolsBulkOps, Preview: p, lang: v.Lang}
	if len(v.Form) == 0 {
		v.Form = url.Values{"op": {subs.OpAddDays}}
	}
	if err != nil {
		toolsField(app.AsError(err))
		return s.FormError(c, "bulk", v, err)
	}
	return s.Render(c, status, "bulk", v)
}

func (s *site) pageBulk(c *web.Ctx) error {
	return s.bulkPage(c, s.NewView(c, "bulk_changes", "menu.bulk_changes"), http.StatusOK, nil, nil)
}

// toolsFormChange reads the one operation of the bulk form.
func toolsFormChange(f url.Values) (subs.Change, error) {
	ch := subs.Change{Op: f.Get("op")}
	num := func(name string) (int64, error) {
		s := strings.TrimSpace(f.Get(name))
		if s == "" {
			return 0, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, app.ErrValidation("invalid_value", name)
		}
		return n, nil
	}
	var err error
	switch ch.Op {
	case subs.OpAddDays:
		ch.Days, err = num("days")
	case subs.OpAddTraffic:
		ch.Bytes, err = num("bytes")
	case subs.OpSetParent:
		ch.ParentID, err = num("parent_id")
	case subs.OpSetPlan, subs.OpSetGroup:
		name := map[string]string{subs.OpSetPlan: "op_profile_id", subs.OpSetGroup: "op_group_id"}[ch.Op]
		var n int64
		if n, err = num(name); err == nil && n > 0 {
			if ch.Op == subs.OpSetPlan {
				ch.ProfileID = &n
			} else {
				ch.GroupID = &n
			}
		}
	case subs.OpSetExpiration:
		if e := strings.TrimSpace(f.Get("expiration")); e != "" {
			var d app.DateOrTime
			if json.Unmarshal([]byte(strconv.Quote(e)), &d) != nil {
				return ch, app.ErrValidation("invalid_value", "expiration")
			}
			ch.Expiration = &d
		}
	case subs.OpSetField:
		ch.Field = strings.TrimSpace(f.Get("field"))
		if v := f.Get("value"); v != "" {
			b, merr := json.Marshal(v)
			if merr != nil {
				return ch, merr
			}
			ch.Value = b
		}
	}
	return ch, err
}

// pageBulkPost previews (action=preview) or applies the bulk change.
func (s *site) pageBulkPost(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "bulk_changes", "menu.bulk_changes")
	f := c.R.PostForm
	v.Form = f
	sel, err := toolsFormSelection(f)
	if err != nil {
		return s.bulkPage(c, v, 0, nil, err)
	}
	ch, err := toolsFormChange(f)
	if err != nil {
		return s.bulkPage(c, v, 0, nil, err)
	}
	in := tools.BulkInput{Selection: sel, Operations: []subs.Change{ch}}
	if f.Get("action") == "preview" {
		p, err := tools.PreviewBulk(c.R.Context(), c.Actor, in)
		return s.bulkPage(c, v, http.StatusOK, p, err)
	}
	b, err := tools.ApplyBulk(c.R.Context(), c.Actor, in)
	if ae := app.AsError(err); ae != nil && ae.Status == http.StatusForbidden && ae.Reason == "operation_not_permitted" {
		v.Flash, v.FlashBad = web.Message(v.Lang, ae.Reason, ae.Code), true
		return s.bulkPage(c, v, http.StatusForbidden, nil, nil)
	}
	if err != nil {
		return s.bulkPage(c, v, 0, nil, err)
	}
	s.SetFlash(c, fmt.Sprintf("%s (#%d)", v.T("tools.bulk_queued"), b.ID), false)
	return web.Redirect(c, fmt.Sprintf("/tools/bulk/%d", b.ID))
}

// toolsBulkJobView is one bulk change's page.
type toolsBulkJobView struct {
	B           *tools.BulkJob
	ProgressURL string
	Rows        []toolsLogRow
}

// toolsLogRow is a row of the log with the changed columns in words.
type toolsLogRow struct {
	tools.BulkRow
	Reason string
	Before string
	After  string
}

func (s *site) pageBulkJob(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	b, err := tools.GetBulkJob(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "bulk_changes", "tools.bulk_job")
	d := &toolsBulkJobView{B: b}
	if b.JobID != nil && b.State != "done" {
		d.ProgressURL = jobProgressURL(*b.JobID, fmt.Sprintf("/tools/bulk/%d", id), "tools.refresh")
	}
	for _, r := range b.Rows {
		row := toolsLogRow{BulkRow: r, Before: toolsStateSummary(r.Before), After: toolsStateSummary(r.After)}
		if r.Reason != "" {
			row.Reason = web.Message(v.Lang, r.Reason, "")
		}
		d.Rows = append(d.Rows, row)
	}
	v.Data = d
	return s.Render(c, http.StatusOK, "bulk_job", v)
}

// toolsStateSummary is a row state in one line (expiration, enabled, plan,
// group).
func toolsStateSummary(raw json.RawMessage) string {
	var st *subs.RowState
	if len(raw) == 0 || json.Unmarshal(raw, &st) != nil || st == nil {
		return "—"
	}
	return toolsStateLine(st)
}

func toolsStateLine(st *subs.RowState) string {
	if st == nil {
		return "—"
	}
	parts := []string{"exp " + app.FormatTime(st.Expiration.Time), fmt.Sprintf("enabled %v", st.Enabled)}
	if st.Expiration.IsZero() {
		parts[0] = "exp —"
	}
	if st.ProfileID != nil {
		parts = append(parts, fmt.Sprintf("plan #%d", *st.ProfileID))
	}
	if st.GroupID != nil {
		parts = append(parts, fmt.Sprintf("group #%d", *st.GroupID))
	}
	parts = append(parts, fmt.Sprintf("quota %d/%d", st.UsedBytes, st.BytesLimit))
	return strings.Join(parts, " · ")
}
