package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"xr/app"
	"xr/app/devgw"
	"xr/app/identity"
	"xr/internal/sshtest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// dgSetup is a kit whose instance may reach loopback (as
// --allow-private-egress), an SSH server there and a NAS at 127.0.0.1 with
// its credentials set through the API.
func dgSetup(t *testing.T) (*webtest.Kit, string, *sshtest.Server, int64) {
	k := webtest.NewWith(t, app.Config{AllowPrivateEgress: true}, nil, nil)
	tok := k.Owner("acme")
	srv := sshtest.Start(t, "admin", "router-pass")
	r := k.Do("POST", "acme", "/api/v1/admin/nas", tok, map[string]any{"name": "core", "ip": "127.0.0.1", "secret": "a-long-shared-secret"})
	if r.Status != 201 {
		t.Fatalf("nas: %d %s", r.Status, r.Body)
	}
	nas := int64(r.Data()["id"].(float64))
	r = k.Do("PUT", "acme", fmt.Sprintf("/api/v1/admin/devgw/credentials/nas/%d", nas), tok,
		map[string]any{"port": srv.Port, "username": "admin", "password": "router-pass"})
	if r.Status != 200 || r.Data()["has_password"] != true || strings.Contains(string(r.Body), "router-pass") {
		t.Fatalf("credentials: %d %s", r.Status, r.Body)
	}
	return k, tok, srv, nas
}

func TestDevgwConsoleOverHTTP(t *testing.T) {
	t.Parallel()
	k, tok, srv, nas := dgSetup(t)
	r := k.Do("POST", "acme", "/api/v1/admin/devgw/tickets", tok, map[string]any{"kind": "nas", "id": nas})
	if r.Status != 201 {
		t.Fatalf("mint: %d %s", r.Status, r.Body)
	}
	url := r.Data()["url"].(string)
	if !strings.HasPrefix(url, "/api/v1/admin/devgw/ssh/ws?ticket=") {
		t.Fatalf("url %q", url)
	}
	tm, _, err := webtest.DialGateway(k, "acme", url)
	if err != nil {
		t.Fatal(err)
	}
	tm.Write(t, websocket.MessageText, `{"type":"resize","cols":90,"rows":20}`)
	sid := int64(tm.WaitControl(t, "opened")["session_id"].(float64))
	tm.Write(t, websocket.MessageBinary, "echo hello\r")
	tm.WaitOut(t, "\r\nhello\r\n")
	tm.Write(t, websocket.MessageBinary, "size\r")
	tm.WaitOut(t, "90x20")

	// The same ticket again: 401 with the error object, no SSH login.
	logins := srv.Logins()
	_, res, err := webtest.DialGateway(k, "acme", url)
	if err == nil || res == nil || res.StatusCode != 401 {
		t.Fatalf("reuse: %v %v", res, err)
	}
	var body map[string]any
	if json.NewDecoder(res.Body).Decode(&body) != nil || (webtest.Resp{JSON: body}).Reason() != "ticket_invalid" || srv.Logins() != logins {
		t.Fatalf("reuse body %v", body)
	}
	if r := k.Do("GET", "acme", "/api/v1/admin/devgw/ssh/ws", "", nil); r.Status != 401 || r.Code() != app.CodeUnauthorized || r.Reason() != "ticket_required" {
		t.Fatalf("no ticket: %d %s", r.Status, r.Body)
	}

	// Listed as live; closing it through the API ends the socket.
	r = k.Do("GET", "acme", "/api/v1/admin/console-sessions?state=live", tok, nil)
	if r.Status != 200 || len(r.List()) != 1 || r.List()[0].(map[string]any)["id"] != float64(sid) {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	r = k.Do("DELETE", "acme", fmt.Sprintf("/api/v1/admin/console-sessions/%d", sid), tok, nil)
	if r.Status != 200 || r.Data()["state"] != "ended" {
		t.Fatalf("close: %d %s", r.Status, r.Body)
	}
	if c := tm.WaitControl(t, "closed"); c["reason"] != "closed_by_staff" {
		t.Fatalf("closed %v", c)
	}
	xrtest.Eventually(t, "socket closed", func() bool {
		select {
		case <-tm.Done():
			return true
		default:
			return false
		}
	})
	var ce websocket.CloseError
	if !errors.As(tm.Err(), &ce) || ce.Code != websocket.StatusNormalClosure {
		t.Fatalf("close frame: %v", tm.Err())
	}
	ten := k.Acquire("acme")
	if n := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM devgw_sessions WHERE id = ? AND state = 'ended' AND end_reason = 'closed_by_staff' AND bytes_in > 0 AND bytes_out > 0`, sid); n != 1 {
		t.Fatal("row not ended with its counters")
	}
	r = k.Do("DELETE", "acme", fmt.Sprintf("/api/v1/admin/console-sessions/%d", sid), tok, nil)
	webtest.ExpectErr(t, r, 409, app.CodeConflict, "session_not_live")

	// The recording: asciicast v2, as an attachment, holding the output.
	r = k.Do("GET", "acme", fmt.Sprintf("/api/v1/admin/console-sessions/%d/recording", sid), tok, nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/x-asciicast" ||
		!strings.HasPrefix(r.Header.Get("Content-Disposition"), "attachment") || !strings.Contains(string(r.Body), `"version":2`) ||
		!strings.Contains(string(r.Body), `hello\r\n`) {
		t.Fatalf("recording: %d %v %s", r.Status, r.Header, r.Body)
	}

	// Every method the spec lists: the gateway's own check, as for a bad
	// upgrade, never 405 or 404. No ticket, a spent one: 401; a valid one
	// without an upgrade: 400 websocket_required, and no console opened.
	for _, m := range []string{"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "QUERY", "TRACE"} {
		t.Run(m, func(t *testing.T) {
			// Minted through the app: ten through the API would spend t_probe.
			act, err := identity.Authenticate(context.Background(), k.App, ten, tok)
			if err != nil {
				t.Fatal(err)
			}
			tk, err := devgw.MintTicket(context.Background(), act, devgw.TicketInput{Kind: "nas", ID: nas})
			if err != nil {
				t.Fatal(err)
			}
			fresh := tk.URL
			for _, c := range []struct {
				path   string
				status int
				code   string
				reason string
			}{
				{"/api/v1/admin/devgw/ssh/ws", 401, app.CodeUnauthorized, "ticket_required"},
				{url, 401, app.CodeUnauthorized, "ticket_invalid"},
				{fresh, 400, app.CodeValidation, "websocket_required"},
				{fresh, 401, app.CodeUnauthorized, "ticket_invalid"}, // spent by the refused request
			} {
				r := gatewayDo(k, m, c.path)
				if r.Status != c.status || r.Header.Get("Allow") != "" || m != "HEAD" && (r.Code() != c.code || r.Reason() != c.reason) {
					t.Fatalf("%s %s: %d %v %s", m, c.path, r.Status, r.Header, r.Body)
				}
			}
		})
	}
	if srv.Logins() != logins {
		t.Fatal("a request without an upgrade logged in to the device")
	}
}

// gatewayDo sends a request of any method to the gateway on acme's host; a
// CONNECT (which an HTTP client sends as a proxy tunnel) is served
// directly.
func gatewayDo(k *webtest.Kit, method, path string) webtest.Resp {
	k.T.Helper()
	if method != "CONNECT" {
		return k.Do(method, "acme", path, "", nil)
	}
	req := httptest.NewRequest(method, path, nil)
	req.Host = "acme.xr.test"
	w := httptest.NewRecorder()
	k.Srv.ServeHTTP(w, req)
	r := webtest.Resp{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
	_ = json.Unmarshal(r.Body, &r.JSON)
	return r
}

func TestDevgwPermissionsAndTenants(t *testing.T) {
	t.Parallel()
	k, tok, _, nas := dgSetup(t)
	webtest.CreateRole(k, "acme", "viewer", "prm_users_index")
	webtest.CreateManager(k, "acme", 0, "clerk", "viewer")
	clerk := k.Login("acme", "clerk", webtest.Password)
	// 403 before validation, on every row of the area.
	for _, c := range []struct {
		m, p string
		body any
	}{
		{"POST", "/api/v1/admin/devgw/tickets", map[string]any{"kind": "bogus"}},
		{"PUT", fmt.Sprintf("/api/v1/admin/devgw/credentials/nas/%d", nas), map[string]any{"port": "x"}},
		{"GET", "/api/v1/admin/console-sessions", nil},
		{"DELETE", "/api/v1/admin/console-sessions", nil},
		{"POST", "/api/v1/admin/console-sessions/bulk-close", map[string]any{}},
	} {
		r := k.Do(c.m, "acme", c.p, clerk, c.body)
		webtest.ExpectErr(t, r, 403, app.CodeForbidden, "insufficient_permissions")
	}
	// Validation for the owner.
	r := k.Do("POST", "acme", "/api/v1/admin/devgw/tickets", tok, map[string]any{"kind": "bogus", "id": nas})
	webtest.ExpectErr(t, r, 400, app.CodeValidation, "invalid_kind")
	r = k.Do("POST", "acme", "/api/v1/admin/console-sessions/bulk-close", tok, map[string]any{"ids": []int64{99}})
	if r.Status != 200 || len(r.Data()["failed"].([]any)) != 1 {
		t.Fatalf("bulk: %d %s", r.Status, r.Body)
	}
	// Another tenant's NAS answers like a missing one; so does its ticket.
	k.Tenant("beta")
	other := k.Owner("beta")
	r = k.Do("POST", "beta", "/api/v1/admin/devgw/tickets", other, map[string]any{"kind": "nas", "id": nas})
	webtest.ExpectErr(t, r, 404, app.CodeNotFound, "not_found")
	r = k.Do("GET", "beta", fmt.Sprintf("/api/v1/admin/devgw/credentials/nas/%d", nas), other, nil)
	webtest.ExpectErr(t, r, 404, app.CodeNotFound, "not_found")
	r = k.Do("POST", "acme", "/api/v1/admin/devgw/tickets", tok, map[string]any{"kind": "nas", "id": nas})
	if r.Status != 201 {
		t.Fatalf("mint: %d %s", r.Status, r.Body)
	}
	if _, res, err := webtest.DialGateway(k, "beta", r.Data()["url"].(string)); err == nil || res == nil || res.StatusCode != 401 {
		t.Fatalf("foreign ticket: %v %v", res, err)
	}
}
