package console_test

// Browser test of the outbound message pages. Helpers carry the prefix cob.

import (
	"io"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/emersion/go-smtp"

	"xr/app"
	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// cobRelay is a real SMTP server on loopback that keeps what it accepts,
// or refuses every message with reject while it is set.
type cobRelay struct {
	addr   string
	mu     sync.Mutex
	got    []*mail.Message
	reject *smtp.SMTPError
}

func newCobRelay(t *testing.T) *cobRelay {
	t.Helper()
	r := &cobRelay{}
	s := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &cobSession{r: r}, nil }))
	s.Domain = "localhost"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	go s.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { s.Close() })
	return r
}

func (r *cobRelay) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.got) }

func (r *cobRelay) setReject(e *smtp.SMTPError) { r.mu.Lock(); r.reject = e; r.mu.Unlock() }

type cobSession struct{ r *cobRelay }

func (s *cobSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *cobSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *cobSession) Reset()                               {}
func (s *cobSession) Logout() error                        { return nil }
func (s *cobSession) Data(rd io.Reader) error {
	b, err := io.ReadAll(rd)
	if err != nil {
		return err
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if s.r.reject != nil {
		return s.r.reject
	}
	m, err := mail.ReadMessage(strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	s.r.got = append(s.r.got, m)
	return nil
}

// TestConsoleOutboxInBrowser: the messaging settings are saved from the
// page (a refused sender address beside its field first); an SMS gateway
// on a private address is refused with nothing stored; a test email the
// relay refuses shows as dead in the message log with its reason, the
// state filter finds it, and Retry sends it through the relay from the
// sender set on the page.
func TestConsoleOutboxInBrowser(t *testing.T) {
	t.Parallel()
	relay := newCobRelay(t)
	k := webtest.NewWith(t, app.Config{SMTPAddr: relay.addr, SMTPFrom: "noreply@relay.test"}, nil, nil)
	webtest.DeliverWebhooks(t, k) // the job runner sends the outbox
	b := browsertest.New(t, k)
	b.SignIn("owner")

	b.Run("settings", chromedp.Navigate(b.Base+"/messages/settings"), chromedp.WaitVisible("#sender-form", chromedp.ByQuery))
	if got := b.Text("#smtp-status"); !strings.Contains(got, "SMTP relay") {
		t.Fatalf("relay status %q", got)
	}
	b.Axe("messaging settings")

	// A refused sender address: beside its field, nothing stored.
	b.Run("bad from", ccgType("#f-from_name", "Acme Billing"), ccgType("#f-from_address", "not-an-address"))
	ccgEnter(b, "#save-sender", chromedp.WaitVisible("#e-from_address", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM settings WHERE key = 'mail_from_address'`); n != 0 {
		t.Fatal("a refused address was stored")
	}
	b.Axe("refused sender")
	b.Run("good from", ccgType("#f-from_address", "billing@acme.test"), ccgType("#f-rate", "30"), ccgNoFlash)
	ccgEnter(b, "#save-sender", chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM settings WHERE (key = 'mail_from_address' AND value = '"billing@acme.test"')
		OR (key = 'mail_from_name' AND value = '"Acme Billing"') OR (key = 'messages_per_minute' AND value = '30')`); n != 3 {
		t.Fatalf("%d of 3 settings stored", n)
	}

	// An SMS gateway on a private address is refused (SSRF rules).
	b.Run("gateway", ccgType("#f-gw_url", "http://10.0.0.7/send?to={to}&text={text}"), ccgType("#f-auth_value", "tok-1"))
	ccgEnter(b, "#save-gateway", chromedp.WaitVisible("#e-gw_url", chromedp.ByQuery))
	if got := b.Text("#e-gw_url"); !strings.Contains(got, "private") {
		t.Fatalf("gateway error %q", got)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM outbox_sms_gateway`); n != 0 {
		t.Fatal("a refused gateway was stored")
	}
	b.Axe("refused gateway")
	var rate string
	b.Run("rate kept", chromedp.Value("#f-rate", &rate, chromedp.ByQuery))
	if rate != "30" {
		t.Fatalf("the sender form shows rate %q after the gateway refusal", rate)
	}
	b.Shot("messaging-settings")

	// A test email the relay refuses: dead, with its reason in the log.
	relay.setReject(&smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "relaying denied"})
	b.Run("test to", ccgType("#f-test_to", "ops@example.net"), ccgNoFlash)
	ccgEnter(b, "#send-test", chromedp.WaitVisible("#messages", chromedp.ByQuery))
	var id int64
	if err := k.Acquire("acme").DB.R.QueryRow(`SELECT id FROM outbox_messages WHERE recipient = 'ops@example.net'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	xrtest.Eventually(t, "the refused mail is dead", func() bool {
		return ccgScalar(t, k, `SELECT COUNT(*) FROM outbox_messages WHERE id = ? AND state = 'dead' AND last_error = 'smtp_rejected'`, id) == 1
	})
	b.Run("log", chromedp.Navigate(b.Base+"/messages"), chromedp.WaitVisible("#messages", chromedp.ByQuery))
	b.Run("filter dead", chromedp.SetValue("#f-state", "dead", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#f-state").dispatchEvent(new Event("change", {bubbles: true}))`, nil),
		chromedp.WaitVisible(`#messages tr[data-state="dead"]`, chromedp.ByQuery), cwhSettled)
	if got := b.Text("#messages tbody"); !strings.Contains(got, "ops@example.net") || !strings.Contains(got, "refused the message") || !strings.Contains(got, "1 / 6") {
		t.Fatalf("dead row %q", got)
	}
	b.Axe("message log")
	b.Shot("messages")

	// Retry: sent through the relay, from the sender set above.
	relay.setReject(nil)
	b.Run("no flash", ccgNoFlash)
	ccgEnter(b, "#retry-"+webtest.Itoa(id), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	xrtest.Eventually(t, "the retried mail", func() bool { return relay.count() == 1 })
	xrtest.Eventually(t, "recorded sent", func() bool {
		return ccgScalar(t, k, `SELECT COUNT(*) FROM outbox_messages WHERE id = ? AND state = 'sent' AND attempts = 1`, id) == 1
	})
	relay.mu.Lock()
	from := relay.got[0].Header.Get("From")
	relay.mu.Unlock()
	if !strings.Contains(from, "Acme Billing") || !strings.Contains(from, "billing@acme.test") {
		t.Fatalf("From %q", from)
	}
	b.Run("sent", chromedp.Navigate(b.Base+"/messages?state=sent"), chromedp.WaitVisible(`#messages tr[data-state="sent"]`, chromedp.ByQuery))
}
