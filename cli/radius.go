package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/app/egress"
	"xr/radiusd"
)

// radius is the RADIUS side of a running instance: the data service, the
// wire backend with its CoA client, and the metrics they share. The API
// uses the service (sessions, disconnects) with or without listeners.
type radius struct {
	svc     *aaa.Service
	backend *radiusd.AppBackend
	metrics *radiusd.Metrics
	srv     *radiusd.Server
	served  chan struct{}
}

func newRadius(a *app.App) *radius {
	r := &radius{svc: aaa.New(a), metrics: radiusd.NewMetrics()}
	r.backend = radiusd.NewAppBackend(r.svc, &radiusd.CoAClient{Metrics: r.metrics, Refusal: egress.For(a, egress.Device).Refusal})
	wireRadius(a, r.svc)
	return r
}

// listen binds the RADIUS sockets (so a taken port fails serve at once),
// then serves them until stop.
func (r *radius) listen(a *app.App, socks *sockets, authAddr, acctAddr string, tlsOpts radiusTLSOpts) error {
	var auth, acct net.PacketConn
	var err error
	if authAddr != "" {
		if auth, err = socks.listenPacket(authAddr); err != nil {
			return fmt.Errorf("auth listener: %w", err)
		}
	}
	if acctAddr != "" {
		if acct, err = socks.listenPacket(acctAddr); err != nil {
			err = fmt.Errorf("accounting listener: %w", err)
			if auth != nil {
				err = errors.Join(err, auth.Close())
			}
			return err
		}
	}
	r.srv = &radiusd.Server{Directory: r.backend, Authorizer: r.backend, Accounter: r.backend, Logger: a.Log, Metrics: r.metrics}
	radsec, err := r.configureTLS(context.Background(), a, r.srv, socks, tlsOpts)
	if err != nil {
		for _, c := range []net.PacketConn{auth, acct} {
			if c != nil {
				err = errors.Join(err, c.Close())
			}
		}
		return err
	}
	r.served = make(chan struct{})
	go func() {
		defer close(r.served)
		if err := r.srv.ServeListeners(radiusd.Listeners{Auth: auth, Acct: acct, RadSec: radsec}); err != nil && err != radiusd.ErrServerClosed {
			a.Log.Error("radius server", "err", err)
		}
	}()
	rsAddr := ""
	if radsec != nil {
		rsAddr = radsec.Addr().String()
	}
	a.Log.Info("radius serving", "auth", addrOf(auth), "acct", addrOf(acct), "radsec", rsAddr)
	return nil
}

// stop drains the listeners and flushes the pending accounting batch. The
// error is a drain cut short by ctx (the sockets were closed at once).
func (r *radius) stop(ctx context.Context) error {
	var err error
	if r.srv != nil {
		if err = r.srv.Shutdown(ctx); err != nil {
			err = fmt.Errorf("radius shutdown: %w", err)
		}
		select {
		case <-r.served:
		case <-time.After(5 * time.Second):
		}
	}
	r.svc.Close()
	return err
}

func addrOf(c net.PacketConn) string {
	if c == nil {
		return ""
	}
	return c.LocalAddr().String()
}
