package outbox

import (
	"errors"
	"io"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// mailServer is a real SMTP server on loopback (go-smtp) that keeps what it
// accepts. With user set it offers AUTH PLAIN and refuses mail from
// unauthenticated sessions; fail, when set, answers every DATA with it.
type mailServer struct {
	addr string
	user string
	pass string

	mu     sync.Mutex
	got    []*mail.Message
	raw    []string
	fail   *smtp.SMTPError
	authed int
}

func newMailServer(t *testing.T, user, pass string) *mailServer {
	t.Helper()
	ms := &mailServer{user: user, pass: pass}
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &mailSession{ms: ms}, nil }))
	s.Domain = "localhost"
	s.AllowInsecureAuth = true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ms.addr = ln.Addr().String()
	go s.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { s.Close() })
	return ms
}

func (ms *mailServer) setFail(e *smtp.SMTPError) {
	ms.mu.Lock()
	ms.fail = e
	ms.mu.Unlock()
}

func (ms *mailServer) count() int {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return len(ms.got)
}

// byMessageID counts the accepted mail per Message-ID.
func (ms *mailServer) byMessageID() map[string]int {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	out := map[string]int{}
	for _, m := range ms.got {
		out[m.Header.Get("Message-Id")]++
	}
	return out
}

type mailSession struct {
	ms     *mailServer
	authed bool
}

func (s *mailSession) AuthMechanisms() []string {
	if s.ms.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *mailSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != s.ms.user || password != s.ms.pass {
			return errors.New("bad credentials")
		}
		s.authed = true
		s.ms.mu.Lock()
		s.ms.authed++
		s.ms.mu.Unlock()
		return nil
	}), nil
}

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.ms.user != "" && !s.authed {
		return smtp.ErrAuthRequired
	}
	return nil
}

func (s *mailSession) Rcpt(string, *smtp.RcptOptions) error { return nil }

func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.ms.mu.Lock()
	defer s.ms.mu.Unlock()
	if s.ms.fail != nil {
		return s.ms.fail
	}
	m, err := mail.ReadMessage(strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	s.ms.got = append(s.ms.got, m)
	s.ms.raw = append(s.ms.raw, string(b))
	return nil
}

func (s *mailSession) Reset()        {}
func (s *mailSession) Logout() error { return nil }
