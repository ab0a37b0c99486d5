// Package storetest is in-process remote storage servers on loopback for
// tests: an SFTP server (pkg/sftp over an x/crypto/ssh server, serving the
// real file system) and an S3-compatible server (gofakes3, in memory),
// used by the backup destinations' and the replicas' tests.
package storetest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// SFTP is a running SFTP server; User/Pass log in, as does ClientKey.
type SFTP struct {
	t      testing.TB
	Addr   string
	User   string
	Pass   string
	signer ssh.Signer
	// ClientKey is the public key accepted besides the password.
	ClientKey ssh.PublicKey

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
	wg    sync.WaitGroup
}

// NewHostKey makes an ed25519 host key.
func NewHostKey(t testing.TB) ssh.Signer {
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

// StartSFTP serves SFTP on a loopback port (addr "" picks one) with the
// host key signer; stopped at cleanup.
func StartSFTP(t testing.TB, addr string, signer ssh.Signer) *SFTP {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	s := &SFTP{t: t, User: "backup", Pass: "s3cret-pass", signer: signer}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s.ln, s.Addr = ln, ln.Addr().String()
	cfg := &ssh.ServerConfig{PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
		if c.User() == s.User && string(pw) == s.Pass {
			return nil, nil
		}
		return nil, errors.New("wrong password")
	}, PublicKeyCallback: func(c ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		s.mu.Lock()
		ok := s.ClientKey != nil && bytes.Equal(s.ClientKey.Marshal(), k.Marshal())
		s.mu.Unlock()
		if c.User() == s.User && ok {
			return nil, nil
		}
		return nil, errors.New("unknown key")
	}}
	cfg.AddHostKey(signer)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serve(c, cfg)
			}()
		}
	}()
	t.Cleanup(s.Stop)
	return s
}

func (s *SFTP) serve(c net.Conn, cfg *ssh.ServerConfig) {
	defer func() { _ = c.Close() }() // the connection ends with the session
	_, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, in, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			for req := range in {
				ok := req.Type == "subsystem" && len(req.Payload) > 4 && string(req.Payload[4:]) == "sftp"
				_ = req.Reply(ok, nil)
				if ok {
					srv, err := sftp.NewServer(ch)
					if err != nil {
						_ = ch.Close() // the session ends
						return
					}
					_ = srv.Serve()
					_ = ch.Close() // the session ends
					return
				}
			}
		}()
	}
}

// Stop closes the listener and every connection (an outage).
func (s *SFTP) Stop() {
	s.mu.Lock()
	if s.ln != nil {
		_ = s.ln.Close() // an outage: nothing to report
		s.ln = nil
	}
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
	s.mu.Unlock()
	s.wg.Wait()
}

// ClientKeyPEM makes a client key the server accepts and returns it as an
// OpenSSH private key.
func (s *SFTP) ClientKeyPEM(t testing.TB) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.ClientKey = signer.PublicKey()
	s.mu.Unlock()
	return string(pem.EncodeToMemory(block))
}

// Host and Port are where the server listens.
func (s *SFTP) Host() string { h, _, _ := net.SplitHostPort(s.Addr); return h }
func (s *SFTP) Port() string { _, p, _ := net.SplitHostPort(s.Addr); return p }

// S3 is gofakes3 behind a small credential check (gofakes3 checks
// none): access key "AKWRITE" may do anything, "AKREAD" only read, any
// other key is refused as S3 refuses an unknown one.
type S3 struct {
	*httptest.Server
	Bucket string
}

// Access keys the S3 server knows, and their secret.
const (
	WriteKey = "AKWRITE"
	ReadKey  = "AKREAD"
	Secret   = "s3-secret-key-for-tests"
)

// StartS3 serves an S3-compatible API with one bucket, "xr-backups".
func StartS3(t testing.TB) *S3 {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket("xr-backups"); err != nil {
		t.Fatal(err)
	}
	fake := gofakes3.New(be).Server()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		key := ""
		if i := strings.Index(auth, "Credential="); i >= 0 {
			key, _, _ = strings.Cut(auth[i+len("Credential="):], "/")
		}
		switch {
		case key == WriteKey:
		case key == ReadKey && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		case key == ReadKey:
			s3Error(w, http.StatusForbidden, "AccessDenied", "Access Denied")
			return
		default:
			s3Error(w, http.StatusForbidden, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
			return
		}
		fake.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &S3{Server: srv, Bucket: "xr-backups"}
}

func s3Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><RequestId>1</RequestId></Error>`, code, msg))
}

// Endpoint is host:port, for clients that take no scheme.
func (s *S3) Endpoint() string { return strings.TrimPrefix(s.URL, "http://") }
