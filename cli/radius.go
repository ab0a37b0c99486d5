package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/app/subs"
	"xr/radiusd"
)

func init() {
	RadiusStarter = startRadius
}

// radiusHooks let areas extend the RADIUS service before it serves (the
// cards area answers prepaid-card usernames through svc.Vouchers).
var radiusHooks []func(a *app.App, svc *aaa.Service)

// startRadius binds the RADIUS sockets (so a taken port fails serve at
// once), then serves them with the app's backend until stop is called.
func startRadius(ctx context.Context, a *app.App, authAddr, acctAddr string) (func(context.Context), func(io.Writer), error) {
	var auth, acct net.PacketConn
	var err error
	if authAddr != "" {
		if auth, err = net.ListenPacket("udp", authAddr); err != nil {
			return nil, nil, fmt.Errorf("auth listener: %w", err)
		}
	}
	if acctAddr != "" {
		if acct, err = net.ListenPacket("udp", acctAddr); err != nil {
			if auth != nil {
				auth.Close()
			}
			return nil, nil, fmt.Errorf("accounting listener: %w", err)
		}
	}
	svc := aaa.New(a)
	subs.Disconnect = svc.DisconnectUser
	for _, h := range radiusHooks {
		h(a, svc)
	}
	metrics := radiusd.NewMetrics()
	backend := radiusd.NewAppBackend(svc, &radiusd.CoAClient{Metrics: metrics})
	srv := &radiusd.Server{Directory: backend, Authorizer: backend, Accounter: backend, Logger: a.Log, Metrics: metrics}
	runCtx, cancel := context.WithCancel(context.Background())
	go svc.Run(runCtx)
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(auth, acct); err != nil && err != radiusd.ErrServerClosed {
			a.Log.Error("radius server", "err", err)
		}
	}()
	a.Log.Info("radius serving", "auth", addrOf(auth), "acct", addrOf(acct))
	stop := func(sctx context.Context) {
		srv.Shutdown(sctx)
		select {
		case <-served:
		case <-time.After(5 * time.Second):
		}
		cancel()
		svc.Close()
	}
	return stop, metrics.WritePrometheus, nil
}

func addrOf(c net.PacketConn) string {
	if c == nil {
		return ""
	}
	return c.LocalAddr().String()
}
