package console_test

// Browser test of the device gateway pages: the remote console of a NAS
// and the console sessions list. Helpers carry the prefix cdg.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"xr/app"
	"xr/app/devgw"
	"xr/internal/browsertest"
	"xr/internal/sshtest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// cdgRows is the text the terminal shows, one line per row, trailing
// blanks cut (xterm.js renders rows as DOM text).
const cdgRows = `Array.from(document.querySelectorAll("#devgw-terminal .xterm-rows > div")).map(d => d.textContent.replace(/\s+$/, "")).join("\n")`

// cdgType types text into the terminal, then Enter. Chromium's "keyDown
// with text" plus "char" (what SendKeys dispatches) would type each
// character twice into xterm.js; insertText is one input event, like a
// paste or an IME, and Enter is a plain key press.
func cdgType(text string) chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.Focus("#devgw-terminal textarea", chromedp.ByQuery),
		input.InsertText(text),
		input.DispatchKeyEvent(input.KeyDown).WithKey("Enter").WithCode("Enter").WithWindowsVirtualKeyCode(13).WithText("\r"),
		input.DispatchKeyEvent(input.KeyUp).WithKey("Enter").WithCode("Enter").WithWindowsVirtualKeyCode(13),
	}
}

// TestConsoleDevgwInBrowser: the owner opens the remote console of a NAS
// (an in-process SSH server on loopback) from its page, is told no SSH
// access is stored, saves it through the form, gets a connected terminal,
// runs "echo hello" and sees hello; from the sessions page, in a second
// browser, closes that console: the row shows it ended by staff, the
// terminal says so, and the recording replays the output. Connect and
// Disconnect on the page open and end a second console. A manager without
// the remote codes sees no action and gets 403 on the pages.
func TestConsoleDevgwInBrowser(t *testing.T) {
	t.Parallel()
	// The SSH server listens on loopback, which the gateway reaches only
	// on an instance that allows private egress (as in a lab).
	k := webtest.NewWith(t, app.Config{AllowPrivateEgress: true}, nil, nil)
	srv := sshtest.Start(t, "admin", "router-pass")
	tok := k.Owner("acme")
	r := k.Do("POST", "acme", "/api/v1/admin/nas", tok, map[string]any{"name": "core-router", "ip": "127.0.0.1", "secret": "a-long-shared-secret"})
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("create NAS: %d %s", r.Status, r.Body)
	}
	nasID := int64(r.Data()["id"].(float64))
	consolePage := fmt.Sprintf("/remote/nas/%d", nasID)

	b := browsertest.New(t, k)
	b.SignIn("owner")
	b.Run("NAS page", chromedp.Navigate(fmt.Sprintf("%s/nas/%d", b.Base, nasID)), chromedp.WaitVisible("#remote-console", chromedp.ByQuery))
	b.Run("open the console", chromedp.Click("#remote-console", chromedp.ByQuery), chromedp.WaitVisible("#devgw-mint-error", chromedp.ByQuery),
		chromedp.WaitReady(`#devgw-terminal[data-state="idle"]`, chromedp.ByQuery))
	if got := b.Text("#devgw-mint-error"); !strings.Contains(got, "no SSH user name") {
		t.Fatalf("refused mint shown as %q", got)
	}
	if got := b.Text("#devgw-hostkey"); !strings.Contains(got, "None yet") {
		t.Fatalf("host key before the first connection: %q", got)
	}
	b.Axe("remote console, no SSH access")

	// Save the SSH access: the page comes back, mints a ticket and connects.
	b.Run("save SSH access", chromedp.SetValue("#f-port", strconv.Itoa(srv.Port), chromedp.ByQuery),
		chromedp.SetValue("#f-username", "admin", chromedp.ByQuery), chromedp.SendKeys("#f-password", "router-pass", chromedp.ByQuery),
		chromedp.Click("#devgw-cred-save", chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery),
		chromedp.WaitReady(`#devgw-terminal[data-state="open"]`, chromedp.ByQuery))
	cv, err := devgw.GetCredentials(t.Context(), k.System("acme"), devgw.KindNAS, nasID)
	if err != nil || cv.Port != srv.Port || cv.Username != "admin" || !cv.HasPassword {
		t.Fatalf("stored SSH access %+v %v", cv, err)
	}
	if got := b.Text("#devgw-state"); got != "Connected" {
		t.Fatalf("state shown %q", got)
	}
	var pw string
	b.Run("password not refilled", chromedp.Value("#f-password", &pw, chromedp.ByQuery))
	if pw != "" {
		t.Fatalf("the password field was refilled: %q", pw)
	}

	// Type a command; its output appears in the terminal.
	var rows string
	b.Run("echo hello", cdgType("echo hello"),
		chromedp.Poll(cdgRows+`.split("\n").includes("hello")`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Evaluate(cdgRows, &rows))
	if !strings.Contains(rows, "echo hello\nhello") {
		t.Fatalf("terminal shows:\n%s", rows)
	}
	var sidText string
	var ok bool
	b.Run("session id", chromedp.AttributeValue("#devgw-terminal", "data-session", &sidText, &ok, chromedp.ByQuery))
	sid, err := strconv.ParseInt(sidText, 10, 64)
	if err != nil {
		t.Fatalf("no session id on the terminal: %q", sidText)
	}
	s, err := devgw.GetSession(t.Context(), k.System("acme"), sid)
	if err != nil || s.State != devgw.StateLive || s.Kind != devgw.KindNAS || s.TargetID != nasID {
		t.Fatalf("console row %+v %v", s, err)
	}
	if cv, err := devgw.GetCredentials(t.Context(), k.System("acme"), devgw.KindNAS, nasID); err != nil || cv.HostKey != srv.Fingerprint() {
		t.Fatalf("host key not recorded on first use: %+v %v", cv, err)
	}
	b.Axe("remote console, connected")
	b.Shot("devgw-console")

	// Close it from the sessions page, in a second browser signed in as
	// the owner too, while the terminal stays open in the first.
	b2 := browsertest.New(t, k)
	b2.SignIn("owner")
	row := fmt.Sprintf(`#devgw-sessions tr[data-session="%d"]`, sid)
	b2.Run("sessions page", chromedp.Navigate(b2.Base+"/console-sessions"), chromedp.WaitVisible(row+`[data-state="live"]`, chromedp.ByQuery))
	b2.Axe("console sessions, one live")
	b2.Run("close it", chromedp.Evaluate(`window.confirm = () => true; void 0`, nil), chromedp.Click(fmt.Sprintf("#close-%d", sid), chromedp.ByQuery),
		chromedp.WaitVisible(".flash.ok", chromedp.ByQuery), chromedp.WaitVisible(row+`[data-state="ended"]`, chromedp.ByQuery))
	var reason, state string
	b2.Run("end reason", chromedp.Text(row+" .end-reason", &reason, chromedp.ByQuery))
	if reason != "closed by staff" {
		t.Fatalf("end reason shown %q", reason)
	}
	if s, err := devgw.GetSession(t.Context(), k.System("acme"), sid); err != nil || s.State != devgw.StateEnded || s.EndReason != devgw.ReasonClosedByStaff {
		t.Fatalf("closed console row %+v %v", s, err)
	}
	// The recording replays what the device printed.
	var cast string
	b2.Run("recording", chromedp.WaitVisible(fmt.Sprintf("#rec-%d", sid), chromedp.ByQuery),
		chromedp.Evaluate(fmt.Sprintf(`fetch("/console-sessions/%d/recording").then(r => r.text())`, sid), &cast, cdgAwait))
	if first, _, _ := strings.Cut(cast, "\n"); !strings.Contains(first, `"version":2`) || !strings.Contains(cdgCastOutput(t, cast), "\r\nhello\r\n") {
		t.Fatalf("recording:\n%s", cast)
	}
	// The terminal, meanwhile, said why it ended.
	b.Run("terminal closed", chromedp.WaitReady(`#devgw-terminal[data-state="closed"]`, chromedp.ByQuery), chromedp.Text("#devgw-state", &state, chromedp.ByQuery))
	if !strings.Contains(state, "closed by staff") {
		t.Fatalf("terminal state after the close %q", state)
	}
	// Connect again (a fresh ticket from the page), then Disconnect: the
	// console ends as the person's own close.
	var sid2Text string
	b.Run("connect again", chromedp.Click("#devgw-reconnect", chromedp.ByQuery),
		chromedp.WaitReady(`#devgw-terminal[data-state="open"]`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#devgw-terminal").dataset.session !== "`+sidText+`"`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.AttributeValue("#devgw-terminal", "data-session", &sid2Text, &ok, chromedp.ByQuery),
		chromedp.Click("#devgw-disconnect", chromedp.ByQuery),
		chromedp.WaitReady(`#devgw-terminal[data-state="closed"]`, chromedp.ByQuery), chromedp.Text("#devgw-state", &state, chromedp.ByQuery))
	sid2, err := strconv.ParseInt(sid2Text, 10, 64)
	if err != nil || sid2 == sid {
		t.Fatalf("second console's id %q (first %d)", sid2Text, sid)
	}
	if !strings.HasPrefix(state, "Disconnected") {
		t.Fatalf("terminal state after Disconnect %q", state)
	}
	xrtest.Eventually(t, "the second console to end after Disconnect", func() bool {
		s, err := devgw.GetSession(t.Context(), k.System("acme"), sid2)
		if err != nil {
			t.Fatal(err)
		}
		if s.State == devgw.StateEnded && s.EndReason != devgw.ReasonClientClosed {
			t.Fatalf("second console ended with %q, want client_closed", s.EndReason)
		}
		return s.State == devgw.StateEnded
	})
	row2 := fmt.Sprintf(`#devgw-sessions tr[data-session="%d"]`, sid2)
	b.Run("ended consoles", chromedp.Navigate(b.Base+"/console-sessions?state=ended"), chromedp.WaitVisible(row2+`[data-state="ended"]`, chromedp.ByQuery),
		chromedp.Text(row2+" .end-reason", &reason, chromedp.ByQuery))
	if reason != "you disconnected" {
		t.Fatalf("second console's end reason shown %q", reason)
	}
	b.Axe("console sessions")
	b.Shot("devgw-sessions")

	// A manager holding the NAS pages but no remote code: no action, 403.
	webtest.CreateRole(k, "acme", "nas viewer", "prm_nas_index")
	webtest.CreateManager(k, "acme", 0, "viewer", "nas viewer")
	b.Run("sign out", chromedp.Submit(`form[action="/logout"]`, chromedp.ByQuery), chromedp.WaitVisible("#f-email", chromedp.ByQuery))
	b.SignIn("viewer")
	b.Run("NAS page as viewer", chromedp.Navigate(fmt.Sprintf("%s/nas/%d", b.Base, nasID)), chromedp.WaitVisible("#nas-form", chromedp.ByQuery))
	if html := ccgHTML(b); strings.Contains(html, `id="remote-console"`) || strings.Contains(html, `href="/console-sessions"`) {
		t.Fatal("a manager without the remote codes sees the console action or menu")
	}
	for _, p := range []string{consolePage, "/console-sessions"} {
		b.Run("viewer "+p, chromedp.Navigate(b.Base+p), chromedp.WaitVisible("main h1", chromedp.ByQuery))
		if st := ccgStatus(b); st != 403 {
			t.Fatalf("%s as a manager without the codes: %d, want 403", p, st)
		}
	}
}

// cdgAwait makes an Evaluate wait for the promise it returns.
func cdgAwait(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// cdgCastOutput is what an asciicast v2 recording printed: its output
// events joined (the device's output arrives in chunks the timing decides).
func cdgCastOutput(t *testing.T, cast string) string {
	t.Helper()
	var out strings.Builder
	for i, line := range strings.Split(strings.TrimSpace(cast), "\n") {
		if i == 0 {
			continue // the header
		}
		var ev []any
		if err := json.Unmarshal([]byte(line), &ev); err != nil || len(ev) != 3 {
			t.Fatalf("recording line %d: %q %v", i+1, line, err)
		}
		if ev[1] == "o" {
			out.WriteString(ev[2].(string))
		}
	}
	return out.String()
}
