package webtest

import (
	"encoding/base64"
	"regexp"
	"testing"

	"xr/app/portalentry"
)

// PortalLogin signs a subscriber in on the portal and returns its token.
func PortalLogin(t *testing.T, s *Acme, username, password string) string {
	t.Helper()
	r := s.Call("POST", "/portal/login", "", map[string]any{"username": username, "password": password})
	if r.Status != 200 {
		t.Fatalf("portal login %s: %d %s", username, r.Status, r.Body)
	}
	return r.Data()["token"].(string)
}

// NewAcmeFixedCaptcha is a kit whose captchas always show 1 2 3 4 5 6.
func NewAcmeFixedCaptcha(t *testing.T) *Acme {
	t.Helper()
	s := NewAcme(t)
	portalentry.SetCaptchaDigits(s.App, func() []byte { return []byte{1, 2, 3, 4, 5, 6} })
	return s
}

// Captcha fetches a captcha under prefix and returns its id.
func Captcha(t *testing.T, s *Acme, prefix string) string {
	t.Helper()
	r := s.Call("GET", prefix+"/captcha", "", nil)
	if r.Status != 200 {
		t.Fatalf("captcha: %d %s", r.Status, r.Body)
	}
	id, _ := r.Data()["captcha_id"].(string)
	img, _ := base64.StdEncoding.DecodeString(r.Data()["image"].(string))
	if id == "" || len(img) < 8 || string(img[1:4]) != "PNG" || r.Data()["content_type"] != "image/png" {
		t.Fatalf("captcha: %s", r.Body)
	}
	return id
}

// SetPortalEntry writes the portal entry settings through the staff row.
func SetPortalEntry(t *testing.T, s *Acme, body map[string]any) {
	t.Helper()
	base := map[string]any{"join": true, "exchange": true, "signup_verification": "email"}
	for k, v := range body {
		base[k] = v
	}
	if r := s.Call("PUT", "/admin/portal-entry/settings", s.Tok, base); r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
}

// SolveCaptcha is a solved captcha's fields for a body.
func SolveCaptcha(t *testing.T, s *Acme, prefix string, body map[string]any) map[string]any {
	t.Helper()
	body["captcha_id"] = Captcha(t, s, prefix)
	body["captcha_answer"] = "123456"
	return body
}

// CodeRe finds the six-digit code in a message sent to a subscriber.
var CodeRe = regexp.MustCompile(`code is ([0-9]{6})`)
