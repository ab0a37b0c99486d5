package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"xr/app"
	"xr/app/aaa"
)

// Live sessions: the accounting rows with no stop time, their counters,
// and the actions an operator takes on them (disconnect, lock MAC, ping).

func (s *Server) disconnectSession(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	out, err := s.Radius.DisconnectSession(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	return c.OK(out)
}

// bulkDisconnectSessions sends a Disconnect-Request per id; the report says
// which were accepted. A 200 does not mean every one was sent.
func (s *Server) bulkDisconnectSessions(c *Ctx) error {
	return bulkCall(func(ctx context.Context, act *app.Actor, id int64) error {
		_, err := s.Radius.DisconnectSession(ctx, act, id)
		return err
	})(c)
}

func lockMACAction(ctx context.Context, act *app.Actor, id int64) error {
	_, err := aaa.LockSessionMAC(ctx, act, id)
	return err
}

func pingAction(ctx context.Context, act *app.Actor, id int64) error {
	r, err := aaa.PingSession(ctx, act, id)
	if err != nil {
		return err
	}
	if r.Received == 0 {
		return app.ErrBadGateway("no_reply")
	}
	return nil
}

// liveTrafficStream pushes the session's live-traffic snapshot as
// server-sent events every two seconds, for up to ten minutes or until
// the client leaves: `event: traffic` with the JSON of live-traffic.
func (s *Server) liveTrafficStream(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	ctx := c.R.Context()
	first, err := aaa.SessionLiveTraffic(ctx, c.Actor, id)
	if err != nil {
		return err
	}
	flusher, ok := c.W.(http.Flusher)
	if !ok {
		return app.ErrInternal(fmt.Errorf("response writer cannot stream"))
	}
	h := c.W.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	c.W.WriteHeader(http.StatusOK)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(c.W, "event: traffic\ndata: %s\n\n", b)
		flusher.Flush()
	}
	send(first)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	end := time.After(10 * time.Minute)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-end:
			return nil
		case <-tick.C:
			lt, err := aaa.SessionLiveTraffic(ctx, c.Actor, id)
			if err != nil {
				fmt.Fprintf(c.W, "event: end\ndata: {}\n\n")
				flusher.Flush()
				return nil
			}
			send(lt)
		}
	}
}
