package web_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/internal/webtest"
	"xr/web"
)

// The wrap: 9e15 then 9.2e15 used to answer 200 and leave a
// balance of -246744073709551.616. Both are now refused as amounts, a
// deposit past the maximum balance is 409, and nothing is written.
func TestDepositCannotWrap(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	u := s.User("", map[string]any{"username": "rich"})
	path := fmt.Sprintf("/users/%d/deposit", u)
	ledger := func() int64 { return s.Scalar(`SELECT COUNT(*) FROM user_ledger WHERE user_id = ?`, u) }
	balance := func() int64 { return s.Scalar(`SELECT balance FROM users WHERE id = ?`, u) }

	for i, body := range []string{`{"amount": 9e15, "request_id": "big-1"}`, `{"amount": 9.2e15, "request_id": "big-2"}`,
		`{"amount": 9000000000000000, "request_id": "big-3"}`, `{"amount": 1000000000000.001, "request_id": "big-4"}`} {
		r := s.Call("POST", path, s.Tok, body)
		webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "amount_out_of_range")
		if r.Field() != "amount" {
			t.Fatalf("%d: field %q", i, r.Field())
		}
	}
	// Twelve deposits of 1e15: each refused, none wraps.
	for i := 0; i < 12; i++ {
		webtest.ExpectErr(t, s.Call("POST", path, s.Tok, map[string]any{"amount": 1e15, "request_id": fmt.Sprintf("e15-%d", i)}), 400, "ERR_VALIDATION", "amount_out_of_range")
	}
	if ledger() != 0 || balance() != 0 {
		t.Fatalf("refused deposits wrote: %d rows, balance %d", ledger(), balance())
	}

	// Within the amount, past the balance: 409 and nothing written.
	if r := s.Call("POST", path, s.Tok, map[string]any{"amount": 6e11, "request_id": "half-1"}); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	r := s.Call("POST", path, s.Tok, map[string]any{"amount": 6e11, "request_id": "half-2"})
	webtest.ExpectErr(t, r, 409, "ERR_CONFLICT", "balance_out_of_range")
	if bal := balance(); bal != 6e11*app.Scale || ledger() != 1 {
		t.Fatalf("after the refusal: balance %d, %d ledger rows", bal, ledger())
	}
	if n := s.Scalar(`SELECT COUNT(*) FROM idempotency WHERE key IN ('half-2', 'big-1', 'big-2')`); n != 0 {
		t.Fatalf("refusals stored %d keys", n)
	}
	// The same key is evaluated again (a refusal stores nothing): still 409.
	webtest.ExpectErr(t, s.Call("POST", path, s.Tok, map[string]any{"amount": 6e11, "request_id": "half-2"}), 409, "ERR_CONFLICT", "balance_out_of_range")
	// Up to exactly the maximum is fine.
	if r := s.Call("POST", path, s.Tok, map[string]any{"amount": 4e11, "request_id": "half-3"}); r.Status != 200 || r.Data()["balance"] != 1e12 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	// Preview of a bulk deposit says which rows would be refused.
	p := s.Call("POST", "/users/bulk-deposit/preview", s.Tok, map[string]any{"ids": []int64{u}, "amount": 1})
	rows, _ := p.Data()["rows"].([]any)
	if p.Status != 200 || len(rows) != 1 || rows[0].(map[string]any)["reason"] != "balance_out_of_range" {
		t.Fatalf("preview: %d %s", p.Status, p.Body)
	}
}

// The shared decoder refuses invalid UTF-8 and lone surrogate escapes in
// any field (Go's decoder would store U+FFFD), naming the field.
func TestDecodeRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	type inner struct {
		Tags []string `json:"tags"`
	}
	type body struct {
		Name   string           `json:"name"`
		Note   string           `json:"note"`
		Nested inner            `json:"nested"`
		Custom map[string]any   `json:"custom"`
		Raw    json.RawMessage  `json:"raw"`
		Opt    app.Opt[string]  `json:"opt"`
		Amount *app.Money       `json:"amount"`
		More   []map[string]int `json:"more"`
	}
	bad := map[string]string{
		"name":   "{\"name\": \"a\xffb\"}",
		"note":   "{\"name\": \"ok\", \"note\": \"\xc3\x28\"}",
		"nested": "{\"nested\": {\"tags\": [\"x\", \"\xed\xa0\x80\"]}}",
		"custom": "{\"custom\": {\"k\": \"\\udc00\"}}",
		"raw":    "{\"raw\": \"\\ud800\"}",
		"opt":    "{\"opt\": \"\\ud800x\"}",
		"more":   "{\"more\": [{\"\xff\": 1}]}",
		"":       "{\"\xfe\": 1, \"name\": \"fine\"}",
	}
	for field, in := range bad {
		var b body
		err := web.DecodeJSON([]byte(in), &b)
		e := app.AsError(err)
		if e == nil || e.Status != 400 || e.Reason != "invalid_utf8" || e.Field != field {
			t.Errorf("%q: %v, want 400 invalid_utf8 field %q", in, err, field)
		}
	}
	// Valid text, escaped or not, including a surrogate pair and escaped
	// backslashes before a u, is decoded unchanged.
	var b body
	in := `{"name": "Zoë \u00e9 \ud83d\ude00 😀 \\ud800 \\\\", "note": "سلام", "nested": {"tags": ["\"\\u"]}}`
	if err := web.DecodeJSON([]byte(in), &b); err != nil {
		t.Fatalf("valid text refused: %v", err)
	}
	if b.Name != `Zoë é 😀 😀 \ud800 \\` || b.Note != "سلام" || b.Nested.Tags[0] != `"\u` {
		t.Fatalf("decoded %+v", b)
	}
	// Another bad value still reports its own reason first.
	var m body
	if e := app.AsError(web.DecodeJSON([]byte(`{"amount": 9e15}`), &m)); e == nil || e.Reason != "amount_out_of_range" || e.Field != "amount" {
		t.Fatalf("amount: %v", e)
	}
}

// Over HTTP: a JSON body and a query string with invalid UTF-8 are 400
// invalid_utf8 naming the field; nothing is stored.
func TestHTTPRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	r := s.Call("POST", "/users", s.Tok, "{\"username\": \"bad\", \"password\": \"secret-bad1\", \"firstname\": \"Jo\xffe\"}")
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "invalid_utf8")
	if r.Field() != "firstname" {
		t.Fatalf("field %q", r.Field())
	}
	if n := s.Scalar(`SELECT COUNT(*) FROM users WHERE username = 'bad'`); n != 0 {
		t.Fatal("stored")
	}
	r = s.Call("GET", "/users?q=%ff", s.Tok, nil)
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "invalid_utf8")
	if r.Field() != "q" {
		t.Fatalf("field %q", r.Field())
	}
	if r := s.Call("GET", "/users?q=%C3%A9", s.Tok, nil); r.Status != 200 {
		t.Fatalf("valid query: %d %s", r.Status, r.Body)
	}
}

// A body sent a byte at a time is cut off at the body deadline: the client
// gets 408 request_timeout, the connection is closed, and the server keeps
// answering everyone else.
func TestTricklingBodyIsCutOff(t *testing.T) {
	t.Parallel()
	k := newPfKit(t, "", func(s *web.Server) { s.BodyTimeout = 300 * time.Millisecond })
	conn, err := net.Dial("tcp", k.TS.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"email": "owner", "password": "` + webtest.Password + `"}`
	fmt.Fprintf(conn, "POST /api/v1/auth/login HTTP/1.1\r\nHost: acme.xr.test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body)+1000)
	stop := make(chan struct{})
	trickled := make(chan struct{})
	go func() {
		defer close(trickled)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{body[i%len(body)]}); err != nil {
				return // closed by the server: the point of the test
			}
		}
	}()
	defer func() { close(stop); <-trickled }()

	// Give up after 20 s (the deadline is far shorter; no speed asserted).
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a trickling body: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var e web.ErrorBody
	json.Unmarshal(b, &e)
	if res.StatusCode != http.StatusRequestTimeout || e.Error.Details["reason"] != "request_timeout" || !res.Close {
		t.Fatalf("got %d close=%v %s", res.StatusCode, res.Close, b)
	}
	// The server closes the connection: reads end (EOF or reset), never
	// the 20 s give-up.
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("connection still open after the answer")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("connection still open after the answer (gave up waiting)")
	}
	// Everyone else is still served, including a prompt body.
	if r := k.Do("POST", "acme", "/api/v1/auth/login", "", map[string]any{"email": "owner", "password": webtest.Password}); r.Status != 200 {
		t.Fatalf("server stopped answering: %d %s", r.Status, r.Body)
	}
}

// A slow reader of a response is cut off at the write deadline, except on
// stream rows; rows without a body get no read deadline at all.
func TestDeadlinesFollowTheRow(t *testing.T) {
	t.Parallel()
	k := newPfKit(t, "", nil)
	s := k.Srv
	if s.BodyTimeout != web.DefaultBodyTimeout || s.WriteTimeout != web.DefaultWriteTimeout || s.FileTimeout != web.DefaultFileTimeout {
		t.Fatalf("defaults: %v %v %v", s.BodyTimeout, s.WriteTimeout, s.FileTimeout)
	}
	var stream, file int
	for _, r := range s.Routes() {
		if r.Streaming() {
			stream++
			if r.M != "GET" {
				t.Errorf("stream row %s %s is not a GET", r.M, r.P)
			}
		}
		if r.File {
			file++
		}
	}
	if stream == 0 || file == 0 {
		t.Fatalf("%d stream rows, %d file rows", stream, file)
	}
	if !pfRow(t, s, "GET", "/admin/sessions/{id}/live-traffic/stream").Streaming() || !pfRow(t, s, "POST", "/auth/account/avatar").File ||
		!pfRow(t, s, "GET", "/exports/{id}/download").File {
		t.Fatal("rows not marked")
	}
	// The write deadline is armed when the response starts, per row.
	sw := &web.StatusWriter{ResponseWriter: httptest.NewRecorder()}
	s.SetDeadlines(sw.ResponseWriter, httptest.NewRequest("GET", "/x", nil), pfRow(t, s, "GET", "/admin/sessions/{id}/live-traffic/stream"), sw)
	if sw.WriteTimeout() != 0 {
		t.Fatal("a stream row has a write deadline")
	}
	s.SetDeadlines(sw.ResponseWriter, httptest.NewRequest("GET", "/x", nil), pfRow(t, s, "GET", "/exports/{id}/download"), sw)
	if sw.WriteTimeout() != web.DefaultFileTimeout {
		t.Fatalf("file row write deadline %v", sw.WriteTimeout())
	}
	s.SetDeadlines(sw.ResponseWriter, httptest.NewRequest("GET", "/x", nil), pfRow(t, s, "GET", "/users"), sw)
	if sw.WriteTimeout() != web.DefaultWriteTimeout {
		t.Fatalf("JSON row write deadline %v", sw.WriteTimeout())
	}
	// Through the wrapper, ResponseController reaches the real writer.
	if got := (&web.StatusWriter{ResponseWriter: httptest.NewRecorder()}).Unwrap(); got == nil {
		t.Fatal("no Unwrap")
	}
}

// net/http's own pre-handler answers come out in the JSON error shape
// through JSONErrorListener.
func TestServerErrorsAreJSON(t *testing.T) {
	t.Parallel()
	k := newPfKit(t, "", nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: k.Srv, MaxHeaderBytes: 1 << 10, ReadHeaderTimeout: 20 * time.Second}
	go hs.Serve(web.JSONErrorListener(ln))
	t.Cleanup(func() { hs.Close() })

	send := func(raw string) (*http.Response, map[string]any) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		io.WriteString(c, raw)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v", raw[:min(len(raw), 40)], err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var body struct {
			Error struct {
				Code    string         `json:"code"`
				Message string         `json:"message"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &body); err != nil || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%d %q is not the JSON error shape: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
		}
		if body.Error.Code == "" || body.Error.Message == "" {
			t.Fatalf("shape: %s", b)
		}
		return res, body.Error.Details
	}
	res, d := send("GET /api/v1/auth/me HTTP/1.1\r\nHost: acme.xr.test\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n")
	if res.StatusCode != 431 || d["reason"] != "headers_too_large" {
		t.Fatalf("431: %d %v", res.StatusCode, d)
	}
	res, d = send("GET /api/v1/auth/me HTTP/1.1\r\n\r\n")
	if res.StatusCode != 400 || d["reason"] != "malformed_request" || d["detail"] != "missing required Host header" {
		t.Fatalf("no host: %d %v", res.StatusCode, d)
	}
	res, d = send("this is not http\r\n\r\n")
	if res.StatusCode != 400 || d["reason"] != "malformed_request" {
		t.Fatalf("garbage: %d %v", res.StatusCode, d)
	}
	res, d = send("POST /api/v1/auth/login HTTP/1.1\r\nHost: acme.xr.test\r\nTransfer-Encoding: gzip\r\n\r\n")
	if res.StatusCode != 501 || d["reason"] != "unsupported_transfer_encoding" {
		t.Fatalf("TE: %d %v", res.StatusCode, d)
	}
	// Ordinary answers pass through untouched.
	res, d = send("GET /api/v1/nope HTTP/1.1\r\nHost: acme.xr.test\r\nConnection: close\r\n\r\n")
	if res.StatusCode != 404 || d["reason"] != "route_not_found" || res.Header.Get("X-Request-Id") == "" {
		t.Fatalf("404: %d %v", res.StatusCode, d)
	}
}

func TestRewriteServerErrorMatchesOnlyGoAnswers(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"HTTP/1.1 200 OK" + web.GoErrorHeaders + "200 OK",
		"HTTP/1.1 400 Bad Request" + web.GoErrorHeaders + "something else",
		"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nDate: x\r\nConnection: close\r\n\r\n400 Bad Request",
		"HTTP/1.1 431 Request Header Fields Too Large" + web.GoErrorHeaders + "431 Request Header Fields Too Large and more",
		"HTTP/1.1 999 Nope" + web.GoErrorHeaders + "999 Nope",
		"hello",
	} {
		if out, ok := web.RewriteServerError([]byte(in)); ok {
			t.Errorf("%q rewritten to %q", in, out)
		}
	}
}
