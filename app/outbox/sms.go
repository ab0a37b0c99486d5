package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/egress"
)

// SMSGateway is a tenant's SMS gateway: an HTTP call per message. URL and
// Body are templates with {to} (E.164) and {text}, escaped for where they
// stand (query escaping in the URL and in a form body, JSON string escaping
// in a JSON body). The auth header's value is sealed at rest and never
// answered back (AuthSet tells whether one is stored). The egress rules of
// webhooks apply (no loopback, private or other non-public address unless
// --allow-private-egress, checked on save and at connect time); redirects
// are not followed.
type SMSGateway struct {
	URL         string   `json:"url"`
	Method      string   `json:"method"`
	Body        string   `json:"body"`
	ContentType string   `json:"content_type"`
	AuthHeader  string   `json:"auth_header"`
	AuthSet     bool     `json:"auth_set"`
	UpdatedAt   app.Time `json:"updated_at"`
}

// SMSGatewayInput sets the gateway. AuthValue unset keeps the stored value,
// null (or "") removes it.
type SMSGatewayInput struct {
	URL         string          `json:"url"`
	Method      string          `json:"method"`
	Body        string          `json:"body"`
	ContentType string          `json:"content_type"`
	AuthHeader  string          `json:"auth_header"`
	AuthValue   app.Opt[string] `json:"auth_value"`
}

// MaxSMSLen bounds an SMS text in characters (about ten concatenated parts).
const MaxSMSLen = 1600

var (
	strictClient  = smsClient(false)
	privateClient = smsClient(true)
)

func smsClient(allowPrivate bool) *http.Client {
	tr := &http.Transport{
		Proxy:                  nil, // the connect-time check must see the real destination
		DialContext:            egress.SafeDialer(allowPrivate).DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        60 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func clientFor(a *app.App) *http.Client {
	if a.Cfg.AllowPrivateEgress {
		return privateClient
	}
	return strictClient
}

// GetSMSGateway reads the tenant's gateway (404 when none is set).
func GetSMSGateway(ctx context.Context, act *app.Actor) (*SMSGateway, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return nil, err
	}
	g, _, err := loadGateway(ctx, act.Tenant.DB.R)
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, app.ErrNotFound()
	}
	return g, nil
}

func loadGateway(ctx context.Context, q app.Querier) (*SMSGateway, []byte, error) {
	var g SMSGateway
	var sealed []byte
	err := q.QueryRowContext(ctx, `SELECT url, method, body, content_type, auth_header, auth_value_sealed, updated_at FROM outbox_sms_gateway WHERE id = 1`).
		Scan(&g.URL, &g.Method, &g.Body, &g.ContentType, &g.AuthHeader, &sealed, &g.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read sms gateway: %w", err)
	}
	g.AuthSet = len(sealed) > 0
	return &g, sealed, nil
}

// smsSample fills a template's placeholders for the save-time URL check.
var smsSample = map[string]string{"to": "+10000000000", "text": "x"}

// SetSMSGateway validates and stores the tenant's gateway.
func SetSMSGateway(ctx context.Context, act *app.Actor, in SMSGatewayInput) (*SMSGateway, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return nil, err
	}
	t := act.Tenant
	in.Method = strings.ToUpper(strings.TrimSpace(in.Method))
	if in.Method == "" {
		in.Method = http.MethodPost
	}
	if in.Method != http.MethodGet && in.Method != http.MethodPost {
		return nil, app.ErrValidation("invalid_enum", "method").With("allowed", []string{"GET", "POST"})
	}
	in.URL = strings.TrimSpace(in.URL)
	if err := ValidateText(in.URL, "url", []string{"to", "text"}); err != nil {
		return nil, err
	}
	if err := ValidateText(in.Body, "body", []string{"to", "text"}); err != nil {
		return nil, err
	}
	if len(in.Body) > 8<<10 {
		return nil, app.ErrValidation("body_too_long", "body")
	}
	if _, err := egress.ValidateURL(ctx, Render(in.URL, smsSample), t.App.Cfg.AllowPrivateEgress); err != nil {
		return nil, err
	}
	if pu, err := url.Parse(in.URL); err != nil || strings.Contains(pu.Host, "{") {
		return nil, app.ErrValidation("invalid_url", "url") // the host is fixed, not a variable
	}
	in.ContentType = strings.TrimSpace(in.ContentType)
	if in.ContentType == "" {
		in.ContentType = "application/x-www-form-urlencoded"
	}
	if len(in.ContentType) > 100 || strings.ContainsAny(in.ContentType, "\r\n") {
		return nil, app.ErrValidation("invalid_content_type", "content_type")
	}
	in.AuthHeader = strings.TrimSpace(in.AuthHeader)
	if in.AuthHeader == "" {
		in.AuthHeader = "Authorization"
	}
	if !validHeaderName(in.AuthHeader) {
		return nil, app.ErrValidation("invalid_header", "auth_header")
	}
	if in.AuthValue.Set && !in.AuthValue.Null && (strings.ContainsAny(in.AuthValue.V, "\r\n") || len(in.AuthValue.V) > 4096) {
		return nil, app.ErrValidation("invalid_header", "auth_value")
	}
	now := t.NowText()
	err := t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO outbox_sms_gateway(id, url, method, body, content_type, auth_header, updated_at) VALUES (1,?,?,?,?,?,?)
			ON CONFLICT(id) DO UPDATE SET url = excluded.url, method = excluded.method, body = excluded.body,
			content_type = excluded.content_type, auth_header = excluded.auth_header, updated_at = excluded.updated_at`,
			in.URL, in.Method, in.Body, in.ContentType, in.AuthHeader, now)
		if err != nil {
			return err
		}
		if in.AuthValue.Set {
			var sealed any
			if !in.AuthValue.Null && in.AuthValue.V != "" {
				sealed = t.App.Keys.Seal([]byte(in.AuthValue.V))
			}
			if _, err := tx.ExecContext(ctx, `UPDATE outbox_sms_gateway SET auth_value_sealed = ? WHERE id = 1`, sealed); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	g, _, err := loadGateway(ctx, t.DB.R)
	return g, err
}

// DeleteSMSGateway removes the tenant's gateway (SMS then fail with
// sms_gateway_not_configured).
func DeleteSMSGateway(ctx context.Context, act *app.Actor) error {
	if err := act.Require(app.PermSettings); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM outbox_sms_gateway WHERE id = 1`)
		return err
	})
}

func validHeaderName(h string) bool {
	if h == "" || len(h) > 100 {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b[1 : len(b)-1])
}

func (s *state) sendSMS(ctx context.Context, t *app.Tenant, m claimedMsg) outcome {
	g, sealed, err := loadGateway(ctx, t.DB.R)
	if err != nil {
		return outcome{reason: "sms_gateway_error", detail: err.Error()}
	}
	if g == nil {
		return outcome{permanent: true, reason: "sms_gateway_not_configured", detail: "no SMS gateway is set for this tenant"}
	}
	text := m.body
	if r := []rune(text); len(r) > MaxSMSLen {
		text = string(r[:MaxSMSLen])
	}
	vq := map[string]string{"to": url.QueryEscape(m.to), "text": url.QueryEscape(text)}
	u := Render(g.URL, vq)
	var body io.Reader
	if g.Method == http.MethodPost {
		vb := vq
		switch {
		case strings.Contains(g.ContentType, "json"):
			vb = map[string]string{"to": jsonEscape(m.to), "text": jsonEscape(text)}
		case !strings.Contains(g.ContentType, "x-www-form-urlencoded"):
			vb = map[string]string{"to": m.to, "text": text}
		}
		body = strings.NewReader(Render(g.Body, vb))
	}
	req, err := http.NewRequestWithContext(ctx, g.Method, u, body)
	if err != nil {
		return outcome{permanent: true, reason: "sms_gateway_error", detail: "bad gateway URL"}
	}
	if body != nil {
		req.Header.Set("Content-Type", g.ContentType)
	}
	req.Header.Set("User-Agent", "xr-outbox/"+app.Version)
	req.Header.Set("Idempotency-Key", fmt.Sprintf("xr-%s-%d", t.Slug, m.id))
	if len(sealed) > 0 {
		v, err := t.App.Keys.Open(sealed)
		if err != nil {
			return outcome{permanent: true, reason: "sms_gateway_error", detail: "the gateway's auth value cannot be opened"}
		}
		req.Header.Set(g.AuthHeader, string(v))
	}
	resp, err := clientFor(t.App).Do(req)
	if err != nil {
		var re *egress.RefusedError
		if errors.As(err, &re) {
			return outcome{permanent: true, reason: "sms_address_not_allowed", detail: re.Error()}
		}
		return outcome{reason: "sms_gateway_unreachable", detail: trimDetail(err.Error())}
	}
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512)) // only a hint for the log
	_ = resp.Body.Close()
	detail := "HTTP " + strconv.Itoa(resp.StatusCode) + ": " + trimDetail(string(snippet))
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return outcome{ok: true, detail: detail}
	case c == http.StatusTooManyRequests || c >= 500 || c == http.StatusRequestTimeout:
		return outcome{reason: "sms_gateway_error", detail: detail}
	case c >= 300 && c < 400:
		return outcome{permanent: true, reason: "sms_gateway_redirect", detail: detail}
	default:
		return outcome{permanent: true, reason: "sms_rejected", detail: detail}
	}
}

func trimDetail(s string) string {
	s = strings.ToValidUTF8(strings.TrimSpace(s), "?")
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}
