package aaa_test

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"net"
	"net/netip"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2869"

	"xr/app"
	"xr/app/aaa"
	"xr/app/modules"
	"xr/internal/xrtest"
	"xr/radiusd"
)

// RADIUS for closed tenants: the NAS directory comes from instance.db
// alone (no tenant file opens to build it, rows from before are filled
// once), a packet for a closed tenant opens it and is answered, and the
// tenant's index leaves with its files.
func TestRadiusAnswersForAClosedTenant(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	a := xrtest.Open(t, app.Config{DataDir: dir, AllowPrivateEgress: true}, modules.All()...) // NASes on loopback and private addresses
	xrtest.CreateTenant(t, a, app.NewTenant{Slug: "cold"})
	xrtest.CreateTenant(t, a, app.NewTenant{Slug: "old"})
	for _, n := range []struct{ slug, ip string }{{"cold", "127.0.0.1"}, {"old", "10.20.30.40"}} {
		ten, release, err := a.Acquire(n.slug)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := aaa.CreateNAS(ctx, xrtest.System(t, ten), aaa.NASInput{Name: app.Opt[string]{Set: true, V: "nas-" + n.slug},
			IP: app.Opt[string]{Set: true, V: n.ip}, Secret: app.Opt[string]{Set: true, V: secret}}); err != nil {
			t.Fatal(err)
		}
		if n.slug == "cold" {
			xrtest.Exec(t, ten, `INSERT INTO users(username, password_sealed, parent_id, enabled, expiration, lookup_token, created_at, updated_at) VALUES ('alice', ?, 1, 1, ?, ?, ?, ?)`,
				a.Keys.Seal([]byte("alice-pass")), app.FormatTime(time.Now().Add(72*time.Hour)), app.RandomToken(12), app.StampNow(), app.StampNow())
		}
		release()
	}
	// "old" has a directory row from before the directory held secrets.
	if _, err := a.Inst.W.Exec(`UPDATE nas_index SET secret_sealed = NULL WHERE ip = '10.20.30.40'`); err != nil {
		t.Fatal(err)
	}
	a.Close()

	a = xrtest.Open(t, app.Config{DataDir: dir}, modules.All()...)
	defer a.Close()
	svc := aaa.New(a)
	n, ok := svc.LookupNAS(netip.MustParseAddr("127.0.0.1"))
	if !ok || n.TenantSlug != "cold" || string(n.Secret) != secret {
		t.Fatalf("directory entry %+v %v", n, ok)
	}
	if st := a.TenantStats(); st.Opens != 1 || st.Open > 1 {
		t.Fatalf("building the directory opened tenants: %+v (only the one to fill may open)", st)
	}
	if n, ok := svc.LookupNAS(netip.MustParseAddr("10.20.30.40")); !ok || string(n.Secret) != secret {
		t.Fatal("the old directory row was not filled from its tenant file")
	}
	var filled int
	if err := a.Inst.R.QueryRow(`SELECT COUNT(*) FROM nas_index WHERE secret_sealed IS NOT NULL`).Scan(&filled); err != nil || filled != 2 {
		t.Fatalf("filled rows %d %v", filled, err)
	}
	xrtestCloseAll(t, a)
	opens := a.TenantStats().Opens

	backend := radiusd.NewAppBackend(svc, &radiusd.CoAClient{})
	srv := &radiusd.Server{Directory: backend, Authorizer: backend, Accounter: backend, Logger: a.Log, BatchWait: -1}
	authC, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(authC, nil)
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		svc.Close()
	}()

	p := radius.New(radius.CodeAccessRequest, []byte(secret))
	rfc2865.UserName_SetString(p, "alice")
	rfc2865.UserPassword_SetString(p, "alice-pass")
	rfc2869.MessageAuthenticator_Set(p, make([]byte, 16))
	b, _ := p.Encode()
	h := hmac.New(md5.New, []byte(secret))
	h.Write(b)
	rfc2869.MessageAuthenticator_Set(p, h.Sum(nil))
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := (&radius.Client{Retry: 0}).Exchange(cctx, p, authC.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code != radius.CodeAccessAccept {
		t.Fatalf("closed tenant answered %v (%s)", resp.Code, rfc2865.ReplyMessage_GetString(resp))
	}
	if st := a.TenantStats(); st.Opens != opens+1 {
		t.Fatalf("the packet did not open its tenant: %+v", st)
	}
	if svc.IndexedTenants() != 1 {
		t.Fatalf("%d indexes loaded", svc.IndexedTenants())
	}
	// Closing the tenant takes its index along.
	xrtest.Eventually(t, "the tenant and its index to close", func() bool {
		a.Pool.CloseIdle()
		return a.Pool.OpenCount() == 0 && svc.IndexedTenants() == 0
	})
}

func xrtestCloseAll(t *testing.T, a *app.App) {
	xrtest.Eventually(t, "every tenant to close", func() bool {
		a.Pool.CloseIdle()
		return a.Pool.OpenCount() == 0
	})
}
