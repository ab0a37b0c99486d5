package webtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"xr/app/webhooks"
)

// WebhookReceiver is a local HTTP receiver recording what it got; status(n)
// answers its n-th request (1-based).
type WebhookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
}

// NewWebhookReceiver starts a receiver answering its n-th request with
// status(n).
func NewWebhookReceiver(t *testing.T, status func(n int) int) *WebhookReceiver {
	rc := &WebhookReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.bodies, rc.heads = append(rc.bodies, b), append(rc.heads, r.Header.Clone())
		n := len(rc.bodies)
		rc.mu.Unlock()
		if status != nil {
			w.WriteHeader(status(n))
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

// Count is how many requests the receiver got.
func (rc *WebhookReceiver) Count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.bodies)
}

// Header is the header of request i (from 0).
func (rc *WebhookReceiver) Header(i int) http.Header {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.heads[i]
}

// Body is the body of request i (from 0).
func (rc *WebhookReceiver) Body(i int) []byte {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.bodies[i]
}

// DeliverWebhooks starts the job runner and the webhook dispatcher of the kit's
// instance, as xr serve does; they stop with the test.
func DeliverWebhooks(t *testing.T, k *Kit) {
	ctx, cancel := context.WithCancel(context.Background())
	if err := k.App.Jobs.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); k.App.Jobs.Run(ctx) }()
	go func() { defer wg.Done(); webhooks.Start(ctx, k.App) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
}
