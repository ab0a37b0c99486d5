package console

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/backups"
	"xr/web"
)

// Backup pages: the list (verification and copy states, download through
// a ticket, restore with a confirmation, delete), "Back up now" with the
// job's progress, the upload form, the schedule form; and the factory
// reset with its preview and the caller's password. Each calls the
// app/backups function of its API row in web/backups_routes.go, with that
// row's permission and buckets.
func (s *site) backupPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/backups", Access: web.Staff, API: "GET /admin/tools/backup", H: s.pageBackups, Menu: "backups"},
		{M: "POST", P: "/backups", Access: web.Staff, API: "POST /admin/tools/backup", H: s.pageBackupNow},
		{M: "POST", P: "/backups/upload", Access: web.Staff, API: "POST /admin/tools/backup/upload", File: true, H: s.pageBackupUpload},
		{M: "POST", P: "/backups/schedule", Access: web.Staff, API: "PUT /admin/tools/backup/schedule", H: s.pageBackupSchedule},
		{M: "POST", P: "/backups/{id}/download", Access: web.Staff, API: "POST /admin/tools/backup/{id}/download-ticket", H: s.pageBackupDownload},
		{M: "POST", P: "/backups/{id}/restore", Access: web.Staff, API: "POST /admin/tools/backup/{id}/restore", H: s.pageBackupRestore},
		{M: "POST", P: "/backups/{id}/delete", Access: web.Staff, API: "DELETE /admin/tools/backup/{id}", H: s.pageBackupDelete},
		{M: "GET", P: "/factory-reset", Access: web.Staff, API: "GET /admin/tools/factory-reset/preview", H: s.pageFactoryReset, Menu: "factory_reset"},
		{M: "POST", P: "/factory-reset", Access: web.Staff, API: "POST /admin/tools/factory-reset", H: s.pageFactoryResetPost},
	}
}

// backupsView is the data of the backups page.
type backupsView struct {
	Backups     []*backups.Backup
	Schedule    *backups.ScheduleView
	Weekdays    []string
	Checked     map[string]bool
	ProgressURL string
	RequestID   string
	// Destinations are offered as checkboxes to a caller who may list
	// them; anyone else types ids.
	Destinations []backups.Destination
	CanListDest  bool
	DestChecked  map[string]bool
}

func (s *site) backupsPage(c *web.Ctx, status int, v *web.View, err error) error {
	list, lerr := backups.List(c.R.Context(), c.Actor)
	if lerr != nil {
		return lerr
	}
	sched, serr := backups.GetSchedule(c.R.Context(), c.Actor)
	if serr != nil {
		return serr
	}
	d := &backupsView{Backups: list, Schedule: sched, Weekdays: app.Weekdays, Checked: map[string]bool{}, RequestID: app.NewUUID(),
		DestChecked: map[string]bool{}}
	if c.Actor.Can(app.PermSettings) {
		dl, derr := backups.ListDestinations(c.R.Context(), c.Actor)
		if derr != nil {
			return derr
		}
		d.Destinations, d.CanListDest = dl.Destinations, true
	}
	if len(v.Form) == 0 {
		v.Form.Set("frequency", sched.Frequency)
		v.Form.Set("time", sched.Time)
		v.Form.Set("keep_daily", strconv.Itoa(sched.KeepDaily))
		v.Form.Set("keep_weekly", strconv.Itoa(sched.KeepWeekly))
		if sched.Enabled {
			v.Form.Set("enabled", "1")
		}
		if sched.ExcludeClosedSessions {
			v.Form.Set("exclude_closed_sessions", "1")
		}
		v.Form["weekdays"] = sched.Weekdays
		for _, id := range sched.DestinationIDs {
			v.Form.Add("destination_ids", strconv.FormatInt(id, 10))
		}
	}
	for _, w := range v.Form["weekdays"] {
		d.Checked[w] = true
	}
	for _, id := range v.Form["destination_ids"] {
		d.DestChecked[id] = true
	}
	if j, jerr := strconv.ParseInt(c.Query().Get("job"), 10, 64); jerr == nil && j > 0 {
		d.ProgressURL = jobProgressURL(j, "/backups", "backup.show_list")
	}
	v.Data = d
	if err != nil {
		return s.FormError(c, "backups", v, err)
	}
	return s.Render(c, status, "backups", v)
}

func (s *site) pageBackups(c *web.Ctx) error {
	return s.backupsPage(c, http.StatusOK, s.NewView(c, "backups", "menu.backups"), nil)
}

func (s *site) pageBackupNow(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	out, err := backups.Create(c.R.Context(), c.Actor, backups.CreateInput{ExcludeClosedSessions: f.Get("exclude_closed_sessions") != "",
		RequestID: f.Get("request_id")})
	if err != nil {
		v := s.NewView(c, "backups", "menu.backups")
		return s.backupsPage(c, http.StatusOK, v, err)
	}
	return web.Redirect(c, fmt.Sprintf("/backups?job=%d", out.JobID))
}

func (s *site) pageBackupUpload(c *web.Ctx) error {
	if err := backups.CanManage(c.Actor); err != nil {
		return err
	}
	c.R.Body = http.MaxBytesReader(c.W, c.R.Body, backups.MaxUpload+1<<20)
	v := s.NewView(c, "backups", "menu.backups")
	fail := func(err error) error { return s.backupsPage(c, http.StatusOK, v, err) }
	ct, _, _ := mime.ParseMediaType(c.R.Header.Get("Content-Type"))
	if !strings.HasPrefix(ct, "multipart/") {
		return fail(app.ErrValidation("file_required", "file"))
	}
	mr, err := c.R.MultipartReader()
	if err != nil {
		return fail(app.ErrValidation("malformed_multipart", "file"))
	}
	var passphrase string
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return fail(app.ErrValidation("file_required", "file"))
		}
		if err != nil {
			return fail(web.UploadReadError(err))
		}
		if p.FormName() == "passphrase" {
			if passphrase, err = web.ReadSmallPart(p); err != nil {
				return fail(err)
			}
			continue
		}
		if p.FormName() != "file" {
			continue
		}
		if p.FileName() == "" {
			return fail(app.ErrValidation("file_required", "file"))
		}
		b, err := backups.Upload(c.R.Context(), c.Actor, p, backups.MaxUpload, passphrase)
		if err != nil {
			return fail(err)
		}
		s.SetFlash(c, fmt.Sprintf("%s (%s)", v.T("backup.uploaded"), b.File), false)
		return web.Redirect(c, "/backups")
	}
}

func (s *site) pageBackupSchedule(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "backups", "menu.backups")
	v.Form = f
	in := backups.ScheduleConfig{Enabled: f.Get("enabled") != "", Frequency: f.Get("frequency"), Weekdays: f["weekdays"], Time: f.Get("time"),
		ExcludeClosedSessions: f.Get("exclude_closed_sessions") != "", DestinationIDs: []int64{}}
	if in.Weekdays == nil {
		in.Weekdays = []string{}
	}
	var err error
	if in.KeepDaily, err = strconv.Atoi(strings.TrimSpace(f.Get("keep_daily"))); err != nil {
		return s.backupsPage(c, http.StatusOK, v, app.ErrValidation("invalid_retention", "keep_daily"))
	}
	if in.KeepWeekly, err = strconv.Atoi(strings.TrimSpace(f.Get("keep_weekly"))); err != nil {
		return s.backupsPage(c, http.StatusOK, v, app.ErrValidation("invalid_retention", "keep_weekly"))
	}
	var parts []string
	for _, val := range f["destination_ids"] {
		parts = append(parts, strings.FieldsFunc(val, func(r rune) bool { return r == ',' || r == ' ' })...)
	}
	for _, part := range parts {
		id, err := strconv.ParseInt(part, 10, 64)
		if err != nil {
			return s.backupsPage(c, http.StatusOK, v, app.ErrValidation("backup_destination_unknown", "destination_ids"))
		}
		in.DestinationIDs = append(in.DestinationIDs, id)
	}
	if _, err := backups.PutSchedule(c.R.Context(), c.Actor, in); err != nil {
		return s.backupsPage(c, http.StatusOK, v, err)
	}
	s.SetFlash(c, v.T("backup.schedule_saved"), false)
	return web.Redirect(c, "/backups")
}

// pageBackupDownload mints a download ticket and sends the browser to it:
// the download itself needs no credential, and the ticket works once.
func (s *site) pageBackupDownload(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	tk, err := backups.CreateTicket(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	return web.Redirect(c, tk.URL)
}

func (s *site) pageBackupRestore(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "backups", "menu.backups")
	res, err := backups.Restore(c.R.Context(), c.Actor, id, backups.RestoreInput{RequestID: c.R.PostForm.Get("request_id")})
	if err != nil {
		return s.backupsPage(c, http.StatusOK, v, err)
	}
	s.SetFlash(c, fmt.Sprintf(v.T("backup.restored"), res.RestoredBackupID, res.SafetyBackupID), false)
	return web.Redirect(c, "/backups")
}

func (s *site) pageBackupDelete(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := backups.Delete(c.R.Context(), c.Actor, id); err != nil {
		return err
	}
	s.SetFlash(c, s.NewView(c, "backups", "").T("backup.deleted"), false)
	return web.Redirect(c, "/backups")
}

func (s *site) resetPage(c *web.Ctx, status int, v *web.View, err error) error {
	p, perr := backups.ResetPreviewOf(c.R.Context(), c.Actor)
	if perr != nil {
		return perr
	}
	v.Data = map[string]any{"Preview": p, "Erased": resetWords(p.Deleted), "RequestID": app.NewUUID()}
	if err != nil {
		return s.FormError(c, "factory_reset", v, err)
	}
	return s.Render(c, status, "factory_reset", v)
}

func (s *site) pageFactoryReset(c *web.Ctx) error {
	return s.resetPage(c, http.StatusOK, s.NewView(c, "factory_reset", "menu.factory_reset"), nil)
}

func (s *site) pageFactoryResetPost(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "factory_reset", "menu.factory_reset")
	res, err := backups.FactoryReset(c.R.Context(), c.Actor, backups.ResetInput{Password: c.R.PostForm.Get("password"),
		RequestID: c.R.PostForm.Get("request_id")})
	if err != nil {
		return s.resetPage(c, http.StatusOK, v, err)
	}
	s.SetFlash(c, fmt.Sprintf(v.T("reset.done"), res.Total, res.SafetyBackupID), false)
	return web.Redirect(c, "/backups")
}
