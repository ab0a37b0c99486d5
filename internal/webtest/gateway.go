package webtest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"xr/internal/xrtest"
)

// GatewayTerm is a WebSocket client of the gateway over the kit's real HTTP.
type GatewayTerm struct {
	c    *websocket.Conn
	mu   sync.Mutex
	out  strings.Builder
	ctrl []map[string]any
	done chan struct{}
	err  error
}

// DialGateway opens the gateway's URL (a path with its ticket) on slug's host.
func DialGateway(k *Kit, slug, path string) (*GatewayTerm, *http.Response, error) {
	k.T.Helper()
	c, res, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(k.TS.URL, "http")+path,
		&websocket.DialOptions{Host: slug + ".xr.test"})
	if err != nil {
		return nil, res, err
	}
	k.T.Cleanup(func() { _ = c.CloseNow() })
	tm := &GatewayTerm{c: c, done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		for {
			typ, b, err := c.Read(context.Background())
			tm.mu.Lock()
			if err != nil {
				tm.err = err
				tm.mu.Unlock()
				return
			}
			if typ == websocket.MessageBinary {
				tm.out.Write(b)
			} else {
				var m map[string]any
				if json.Unmarshal(b, &m) == nil {
					tm.ctrl = append(tm.ctrl, m)
				}
			}
			tm.mu.Unlock()
		}
	}()
	return tm, res, nil
}

// Write sends a frame of type typ.
func (tm *GatewayTerm) Write(t testing.TB, typ websocket.MessageType, s string) {
	t.Helper()
	if err := tm.c.Write(context.Background(), typ, []byte(s)); err != nil {
		t.Fatal(err)
	}
}

// WaitOut waits until the terminal output holds s.
func (tm *GatewayTerm) WaitOut(t testing.TB, s string) {
	t.Helper()
	xrtest.Eventually(t, "output "+s, func() bool { tm.mu.Lock(); defer tm.mu.Unlock(); return strings.Contains(tm.out.String(), s) })
}

// WaitControl waits for a control message of type typ and returns it.
func (tm *GatewayTerm) WaitControl(t testing.TB, typ string) map[string]any {
	t.Helper()
	var got map[string]any
	xrtest.Eventually(t, "control "+typ, func() bool {
		tm.mu.Lock()
		defer tm.mu.Unlock()
		for _, m := range tm.ctrl {
			if m["type"] == typ {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// Done is closed once the socket has closed.
func (tm *GatewayTerm) Done() <-chan struct{} { return tm.done }

// Err is why the socket closed (read after Done).
func (tm *GatewayTerm) Err() error { return tm.err }
