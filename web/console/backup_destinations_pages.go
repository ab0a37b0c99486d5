package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"xr/app"
	"xr/app/backups"
	"xr/web"
)

// Backup destination pages: the list (state, pinned host key, test with
// the failed step shown, delete with confirm), the add and edit forms with
// the fields of the kind (GET /admin/backup/remote-types), and the
// encryption passphrase. Each calls the app/backups function of its API
// row in web/backup_destinations_routes.go, with that row's permission and
// buckets.
func (s *site) backupDestinationPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/backup-destinations", Access: web.Staff, API: "GET /admin/backup/destinations", H: s.pageBackupDestinations, Menu: "backup_destinations"},
		{M: "GET", P: "/backup-destinations/new", Access: web.Staff, API: "GET /admin/backup/remote-types", H: s.pageBackupDestinationNew},
		{M: "POST", P: "/backup-destinations", Access: web.Staff, API: "POST /admin/backup/destinations", H: s.pageBackupDestinationCreate},
		{M: "GET", P: "/backup-destinations/{provider}/edit", Access: web.Staff, API: "GET /admin/backup/remote-types", H: s.pageBackupDestinationEdit},
		{M: "POST", P: "/backup-destinations/{provider}/edit", Access: web.Staff, API: "PATCH /admin/backup/destinations", H: s.pageBackupDestinationUpdate},
		{M: "POST", P: "/backup-destinations/{provider}/test", Access: web.Staff, API: "POST /admin/backup/destinations/{provider}/test", H: s.pageBackupDestinationTest},
		{M: "POST", P: "/backup-destinations/{provider}/delete", Access: web.Staff, API: "DELETE /admin/backup/destinations/{provider}", H: s.pageBackupDestinationDelete},
		{M: "POST", P: "/backup-destinations/encryption", Access: web.Staff, API: "PATCH /admin/backup/destinations", H: s.pageBackupEncryption},
	}
}

// bdListView is the list page's data.
type bdListView struct {
	List backups.DestinationList
	Min  int
}

func (s *site) pageBackupDestinations(c *web.Ctx) error {
	v := s.NewView(c, "backup_destinations", "menu.backup_destinations")
	return s.bdRenderList(c, http.StatusOK, v, nil)
}

func (s *site) bdRenderList(c *web.Ctx, status int, v *web.View, err error) error {
	list, lerr := backups.ListDestinations(c.R.Context(), c.Actor)
	if lerr != nil {
		return lerr
	}
	v.Data = &bdListView{List: list, Min: backups.MinPassphraseLen}
	if err != nil {
		return s.FormError(c, "backup_destinations", v, err)
	}
	return s.Render(c, status, "backup_destinations", v)
}

// bdFormView is the add / edit form's data.
type bdFormView struct {
	Action string
	Edit   bool
	Kind   backups.RemoteType
	Kinds  []backups.RemoteType
	Dest   *backups.Destination
	Secret map[string]bool // secret fields already set (edit)
}

func (s *site) bdForm(c *web.Ctx, status int, v *web.View, d *bdFormView, err error) error {
	kinds, kerr := backups.RemoteTypes(c.R.Context(), c.Actor)
	if kerr != nil {
		return kerr
	}
	d.Kinds = kinds
	if d.Kind.Kind == "" {
		d.Kind = kinds[0]
	}
	for _, k := range kinds {
		if k.Kind == v.Form.Get("kind") {
			d.Kind = k
		}
	}
	d.Secret = map[string]bool{}
	if d.Dest != nil {
		for _, k := range d.Dest.SecretsSet {
			d.Secret[k] = true
		}
	}
	v.Data = d
	if err != nil {
		return s.FormError(c, "backup_destination_form", v, err)
	}
	return s.Render(c, status, "backup_destination_form", v)
}

func (s *site) pageBackupDestinationNew(c *web.Ctx) error {
	v := s.NewView(c, "backup_destinations", "backup_dest.new")
	kind := c.Query().Get("kind")
	if kind == "" {
		kind = "s3"
	}
	v.Form = url.Values{"kind": {kind}, "config.use_tls": {"1"}, "config.port": {"22"}}
	return s.bdForm(c, http.StatusOK, v, &bdFormView{Action: "/backup-destinations"}, nil)
}

// bdConfig maps the form's config.* fields onto the kind's config; a
// secret left blank is left out (kept on edit, required on create).
func bdConfig(kind string, f url.Values) map[string]any {
	cfg := map[string]any{}
	if rt, ok := backups.RemoteTypeOf(kind); ok {
		for _, fd := range rt.Fields {
			val := f.Get("config." + fd.Name)
			switch fd.Type {
			case "bool":
				cfg[fd.Name] = val != ""
			case "secret", "text_secret":
				if val != "" {
					cfg[fd.Name] = val
				}
			default:
				cfg[fd.Name] = val
			}
		}
	}
	return cfg
}

func (s *site) pageBackupDestinationCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "backup_destinations", "backup_dest.new")
	v.Form = bdRefill(f)
	in := backups.DestinationInput{Name: f.Get("name"), Kind: f.Get("kind"), Config: bdConfig(f.Get("kind"), f)}
	d, err := backups.CreateDestination(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.bdForm(c, 0, v, &bdFormView{Action: "/backup-destinations"}, err)
	}
	s.SetFlash(c, fmt.Sprintf("%s: %s", v.T("backup_dest.created"), d.Name), false)
	return web.Redirect(c, "/backup-destinations")
}

// bdRefill is the posted form without its secrets (never echoed back).
func bdRefill(f url.Values) url.Values {
	out := url.Values{}
	for k, vs := range f {
		switch k {
		case "config.password", "config.private_key", "config.access_key", "config.secret_key":
			continue
		}
		out[k] = vs
	}
	return out
}

// bdEditForm is a destination as the edit form's values.
func bdEditForm(d *backups.Destination) url.Values {
	f := url.Values{"name": {d.Name}, "kind": {d.Kind}}
	for k, val := range d.Config {
		switch x := val.(type) {
		case bool:
			if x {
				f.Set("config."+k, "1")
			}
		case float64:
			f.Set("config."+k, strconv.FormatInt(int64(x), 10))
		case string:
			f.Set("config."+k, x)
		}
	}
	if d.Enabled {
		f.Set("enabled", "1")
	}
	return f
}

func (s *site) pageBackupDestinationEdit(c *web.Ctx) error {
	d, err := backups.GetDestination(c.R.Context(), c.Actor, c.R.PathValue("provider"))
	if err != nil {
		return err
	}
	v := s.NewView(c, "backup_destinations", "backup_dest.edit")
	v.Title = v.T("backup_dest.edit") + " · " + d.Name
	v.Form = bdEditForm(&d)
	return s.bdForm(c, http.StatusOK, v, &bdFormView{Action: fmt.Sprintf("/backup-destinations/%d/edit", d.ID), Edit: true, Dest: &d}, nil)
}

func (s *site) pageBackupDestinationUpdate(c *web.Ctx) error {
	d, err := backups.GetDestination(c.R.Context(), c.Actor, c.R.PathValue("provider"))
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "backup_destinations", "backup_dest.edit")
	v.Form = bdRefill(f)
	v.Form.Set("kind", d.Kind)
	in := backups.DestinationPatch{
		Provider:     strconv.FormatInt(d.ID, 10),
		Name:         app.Opt[string]{Set: true, V: f.Get("name")},
		Config:       bdConfig(d.Kind, f),
		Enabled:      app.Opt[bool]{Set: true, V: f.Get("enabled") != ""},
		ResetHostKey: f.Get("reset_host_key") != "",
	}
	if _, err := backups.PatchDestinations(c.R.Context(), c.Actor, in); err != nil {
		return s.bdForm(c, 0, v, &bdFormView{Action: fmt.Sprintf("/backup-destinations/%d/edit", d.ID), Edit: true, Dest: &d}, err)
	}
	s.SetFlash(c, v.T("backup_dest.saved"), false)
	return web.Redirect(c, "/backup-destinations")
}

// pageBackupDestinationTest runs the probe and shows, in the flash, either
// success or the step that failed with its message.
func (s *site) pageBackupDestinationTest(c *web.Ctx) error {
	v := s.NewView(c, "", "")
	res, err := backups.TestDestination(c.R.Context(), c.Actor, c.R.PathValue("provider"))
	if ae := app.AsError(err); ae != nil && ae.Status == http.StatusBadGateway {
		step, _ := ae.Details["step"].(string)
		s.SetFlash(c, fmt.Sprintf("%s %s: %s", v.T("backup_dest.test_failed"), v.T("backup_dest.step_"+step), web.Message(v.Lang, ae.Reason, ae.Code)), true)
		return web.Redirect(c, "/backup-destinations")
	}
	if err != nil {
		return err
	}
	s.SetFlash(c, fmt.Sprintf("%s: %s", res.Destination.Name, v.T("backup_dest.test_ok")), false)
	return web.Redirect(c, "/backup-destinations")
}

func (s *site) pageBackupDestinationDelete(c *web.Ctx) error {
	if err := backups.DeleteDestination(c.R.Context(), c.Actor, c.R.PathValue("provider")); err != nil {
		return err
	}
	s.SetFlash(c, s.NewView(c, "", "").T("backup_dest.deleted"), false)
	return web.Redirect(c, "/backup-destinations")
}

// pageBackupEncryption sets (or with "remove" clears) the passphrase.
func (s *site) pageBackupEncryption(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "backup_destinations", "menu.backup_destinations")
	in := backups.DestinationPatch{EncryptionPassphrase: app.Opt[string]{Set: true, V: c.R.PostForm.Get("encryption_passphrase")}}
	if c.R.PostForm.Get("remove") != "" {
		in.EncryptionPassphrase = app.Opt[string]{Set: true, Null: true}
	} else if in.EncryptionPassphrase.V == "" {
		return s.bdRenderList(c, 0, v, app.ErrValidation("backup_passphrase_required", "encryption_passphrase"))
	}
	if _, err := backups.PatchDestinations(c.R.Context(), c.Actor, in); err != nil {
		return s.bdRenderList(c, 0, v, err)
	}
	msg := "backup_dest.encryption_set"
	if in.EncryptionPassphrase.Null {
		msg = "backup_dest.encryption_removed"
	}
	s.SetFlash(c, v.T(msg), false)
	return web.Redirect(c, "/backup-destinations")
}
