// Package sshtest is an in-process SSH server on loopback with a scripted
// shell, for the device gateway's tests: it prints a prompt "$ ", echoes
// keystrokes, runs "echo WORDS" (prints WORDS), "size" (prints COLSxROWS of
// the PTY) and "exit" (ends the shell with status 0), and answers a
// window-change by printing "[size COLSxROWS]".
package sshtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
)

// Server is one listening SSH server.
type Server struct {
	Host string
	Port int
	User string
	Pass string
	// AuthorizedKey, when set, is accepted for User as public-key auth.
	AuthorizedKey ssh.PublicKey

	ln  net.Listener
	mu  sync.Mutex
	key ssh.Signer
	// Logins counts successful authentications.
	logins int
}

// NewSigner makes an ed25519 host or user key.
func NewSigner(t testing.TB) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Start listens on 127.0.0.1 with user/pass, closed when the test ends.
func Start(t testing.TB, user, pass string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, User: user, Pass: pass, ln: ln, key: NewSigner(t)}
	t.Cleanup(func() { _ = ln.Close() })
	go s.serve()
	return s
}

// SetHostKey replaces the server's host key (a reinstalled router).
func (s *Server) SetHostKey(k ssh.Signer) {
	s.mu.Lock()
	s.key = k
	s.mu.Unlock()
}

// Fingerprint is the SHA256 fingerprint of the current host key.
func (s *Server) Fingerprint() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ssh.FingerprintSHA256(s.key.PublicKey())
}

// Logins is how many clients authenticated.
func (s *Server) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

func (s *Server) config() *ssh.ServerConfig {
	cfg := &ssh.ServerConfig{
		PasswordCallback: func(c ssh.ConnMetadata, pass []byte) (*ssh.Permissions, error) {
			if c.User() == s.User && s.Pass != "" && string(pass) == s.Pass {
				return nil, nil
			}
			return nil, fmt.Errorf("denied")
		},
		PublicKeyCallback: func(c ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if c.User() == s.User && s.AuthorizedKey != nil && string(key.Marshal()) == string(s.AuthorizedKey.Marshal()) {
				return nil, nil
			}
			return nil, fmt.Errorf("denied")
		},
	}
	s.mu.Lock()
	cfg.AddHostKey(s.key)
	s.mu.Unlock()
	return cfg
}

func (s *Server) serve() {
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.handle(nc)
	}
}

func (s *Server) handle(nc net.Conn) {
	defer func() { _ = nc.Close() }()
	_, chans, reqs, err := ssh.NewServerConn(nc, s.config())
	if err != nil {
		return
	}
	s.mu.Lock()
	s.logins++
	s.mu.Unlock()
	go ssh.DiscardRequests(reqs)
	for nch := range chans {
		if nch.ChannelType() != "session" {
			_ = nch.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, in, err := nch.Accept()
		if err != nil {
			return
		}
		go session(ch, in)
	}
}

// session runs the scripted shell of one channel.
func session(ch ssh.Channel, in <-chan *ssh.Request) {
	defer func() { _ = ch.Close() }()
	var mu sync.Mutex
	cols, rows := 0, 0
	shell := make(chan struct{})
	started := false
	go func() {
		for req := range in {
			ok := false
			switch req.Type {
			case "pty-req":
				// string term, uint32 cols, uint32 rows, ...
				if len(req.Payload) >= 4 {
					n := binary.BigEndian.Uint32(req.Payload)
					if p := req.Payload[4:]; len(p) >= int(n)+8 {
						mu.Lock()
						cols, rows = int(binary.BigEndian.Uint32(p[n:])), int(binary.BigEndian.Uint32(p[n+4:]))
						mu.Unlock()
						ok = true
					}
				}
			case "window-change":
				if len(req.Payload) >= 8 {
					mu.Lock()
					cols, rows = int(binary.BigEndian.Uint32(req.Payload)), int(binary.BigEndian.Uint32(req.Payload[4:]))
					c, r := cols, rows
					mu.Unlock()
					fmt.Fprintf(ch, "[size %dx%d]\r\n", c, r)
				}
			case "shell":
				ok = !started
				if !started {
					started = true
					close(shell)
				}
			}
			if req.WantReply {
				_ = req.Reply(ok, nil)
			}
		}
	}()
	<-shell
	fmt.Fprint(ch, "$ ")
	var line []byte
	buf := make([]byte, 1024)
	for {
		n, err := ch.Read(buf)
		if err != nil {
			return
		}
		for _, b := range buf[:n] {
			if b != '\r' && b != '\n' {
				line = append(line, b)
				_, _ = ch.Write([]byte{b})
				continue
			}
			_, _ = ch.Write([]byte("\r\n"))
			cmd := strings.TrimSpace(string(line))
			line = line[:0]
			switch {
			case cmd == "exit":
				_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{0}))
				return
			case cmd == "size":
				mu.Lock()
				fmt.Fprintf(ch, "%sx%s\r\n", strconv.Itoa(cols), strconv.Itoa(rows))
				mu.Unlock()
			case strings.HasPrefix(cmd, "echo "):
				fmt.Fprintf(ch, "%s\r\n", strings.TrimPrefix(cmd, "echo "))
			case cmd == "":
			default:
				fmt.Fprintf(ch, "%s: not found\r\n", cmd)
			}
			fmt.Fprint(ch, "$ ")
		}
	}
}
