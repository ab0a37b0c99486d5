package console

import (
	"archive/zip"
	"bytes"
	"fmt"
	"mime"
	"net/http"

	"xr/app"
	"xr/app/aaa"
	"xr/web"
)

// The NAS's RadSec page (issue 37): its client certificate (issue,
// download once as a zip of client.pem, client.key and ca.pem, revoke,
// re-issue) and its RadSec setup, over the app functions of the
// /admin/nas/{id}/radsec-cert rows with their permissions.
func (s *site) radsecPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/nas/{id}/radsec", Access: web.Staff, API: "GET /admin/nas/{id}/radsec-cert", H: s.pageNASRadSec},
		{M: "POST", P: "/nas/{id}/radsec/issue", Access: web.Staff, API: "POST /admin/nas/{id}/radsec-cert", H: s.pageNASRadSecIssue},
		{M: "POST", P: "/nas/{id}/radsec/revoke", Access: web.Staff, API: "POST /admin/nas/{id}/radsec-cert/revoke", H: s.pageNASRadSecRevoke},
		{M: "POST", P: "/nas/{id}/radsec/download", Access: web.Staff, API: "POST /admin/nas/{id}/radsec-cert/download", File: true, H: s.pageNASRadSecDownload},
	}
}

type radsecView struct {
	NAS       *aaa.NASRecord
	Cert      *aaa.RadSecCert // nil: never had one
	Current   bool            // Cert is current (not revoked)
	Setup     *aaa.NASSetup
	CanManage bool
}

func (s *site) pageNASRadSec(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	ctx := c.R.Context()
	n, err := aaa.GetNAS(ctx, c.Actor, id)
	if err != nil {
		return err
	}
	d := &radsecView{NAS: n, CanManage: c.Actor.Can(aaa.PermNasManage)}
	d.Cert, err = aaa.GetRadSecCert(ctx, c.Actor, id)
	if e := app.AsError(err); e != nil && e.Reason == "radsec_cert_none" {
		d.Cert, err = nil, nil
	}
	if err != nil {
		return err
	}
	d.Current = d.Cert != nil && d.Cert.State != aaa.CertRevoked
	if d.Setup, err = aaa.NASSetupScript(ctx, s.Server().Radius, c.Actor, id, aaa.NASSetupInput{Host: c.R.Host, Transport: "radsec"}); err != nil {
		return err
	}
	v := s.NewView(c, "nas", "radsec.title")
	v.Title = fmt.Sprintf("%s: %s", v.T("radsec.title"), n.Name)
	v.Data = d
	return s.Render(c, http.StatusOK, "nas_radsec", v)
}

// radsecAction runs an issue or revoke from the page and goes back to it
// with the outcome as the flash.
func (s *site) radsecAction(c *web.Ctx, act func(id int64) (string, error)) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "", "")
	key, err := act(id)
	// The certificate's own refusals (radsec_cert_exists, radsec_cert_none)
	// are said on the page; a missing NAS or a refusal of the caller is the
	// error page.
	if e := app.AsError(err); e != nil && e.Status < 500 && e.Status != http.StatusForbidden && e.Reason != "not_found" {
		s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
		return web.Redirect(c, fmt.Sprintf("/nas/%d/radsec", id))
	}
	if err != nil {
		return err
	}
	s.SetFlash(c, v.T(key), false)
	return web.Redirect(c, fmt.Sprintf("/nas/%d/radsec", id))
}

func (s *site) pageNASRadSecIssue(c *web.Ctx) error {
	return s.radsecAction(c, func(id int64) (string, error) {
		issue := aaa.IssueRadSecCert
		if c.R.PostForm.Get("reissue") != "" {
			issue = aaa.ReissueRadSecCert
		}
		_, err := issue(c.R.Context(), c.Actor, id)
		return "radsec.issued", err
	})
}

func (s *site) pageNASRadSecRevoke(c *web.Ctx) error {
	return s.radsecAction(c, func(id int64) (string, error) {
		_, err := aaa.RevokeRadSecCert(c.R.Context(), c.Actor, id)
		return "radsec.revoked", err
	})
}

// pageNASRadSecDownload hands out the key once, as a zip of the three
// files a NAS (or radsecproxy) needs.
func (s *site) pageNASRadSecDownload(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	b, err := aaa.DownloadRadSecCert(c.R.Context(), c.Actor, id)
	if e := app.AsError(err); e != nil && e.Status == http.StatusConflict {
		s.SetFlash(c, web.Message(s.NewView(c, "", "").Lang, e.Reason, e.Code), true)
		return web.Redirect(c, fmt.Sprintf("/nas/%d/radsec", id))
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, f := range []struct{ name, text string }{{"client.pem", b.ClientPEM}, {"client.key", b.ClientKey}, {"ca.pem", b.CAPEM}} {
		w, err := z.Create(f.name)
		if err != nil {
			return err
		}
		if _, err := w.Write([]byte(f.text)); err != nil {
			return err
		}
	}
	if err := z.Close(); err != nil {
		return err
	}
	h := c.W.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": fmt.Sprintf("nas-%d-radsec.zip", id)}))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Cache-Control", "private, no-store")
	c.W.WriteHeader(http.StatusOK)
	_, err = c.W.Write(buf.Bytes())
	return err
}
