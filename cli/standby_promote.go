package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"xr/app/replica"
)

// errPromoted ends runServe of a standby just promoted: serve then
// re-executes itself (reexec) and comes back as the primary.
var errPromoted = errors.New("promoted: serving again as the primary")

// standby is what xr serve --standby-of runs beside the server: the
// follower and the control socket xr promote talks to.
type standby struct {
	g      *globals
	bin    string
	target replica.Target
	fol    *follower
	ctl    *controlListener
	done   chan struct{} // closed by stop
}

func startStandby(ctx context.Context, g *globals, bin string, target replica.Target, promoteAfter time.Duration) (*standby, error) {
	fol, err := startFollower(ctx, g, bin, target)
	if err != nil {
		return nil, err
	}
	ctl, err := listenControl(g.data)
	if err != nil {
		fol.stop()
		return nil, err
	}
	sb := &standby{g: g, bin: bin, target: target, fol: fol, ctl: ctl, done: make(chan struct{})}
	if promoteAfter > 0 {
		go sb.promoteWhenSilent(promoteAfter)
	}
	return sb, nil
}

// requests are the promote requests (none on a primary: sb is nil).
func (sb *standby) requests() chan chan controlReply {
	if sb == nil {
		return nil
	}
	return sb.ctl.requests
}

// promote stops the follower after its last catch-up and takes the
// replica over; true once done (the server then shuts down and comes back
// as the primary). On a refusal the follower starts again and the box
// stays a standby.
func (sb *standby) promote(ctx context.Context, reply chan controlReply) bool {
	log := sb.g.logger()
	sb.fol.stop()
	p, err := replica.Promote(ctx, sb.target, sb.g.data)
	if err != nil {
		reply <- controlReply{Error: err.Error()}
		log.Error("promotion refused", "err", err)
		if sb.fol, err = startFollower(ctx, sb.g, sb.bin, sb.target); err != nil {
			log.Error("the follower did not start again after a refused promotion", "err", err)
		}
		return false
	}
	log.Info("promoted: took the replica over; serving again as the primary", "replica", sb.target.URL, "generation", p.Gen)
	reply <- controlReply{Generation: p.Gen}
	return true
}

func (sb *standby) stop() {
	close(sb.done)
	sb.ctl.close()
	if sb.fol != nil {
		sb.fol.stop()
	}
}

// finishPromotion applies a promoted standby's accounting journal (once:
// see aaa.ApplyJournal) and records that the box is the primary.
func finishPromotion(ctx context.Context, dataDir string, p replica.Promotion, rad *radius) error {
	rep, err := rad.svc.ApplyJournal(ctx, dataDir, fmt.Sprintf("g%d", p.Gen))
	if err != nil {
		return fmt.Errorf("promotion: %w", err)
	}
	p.Primary, p.Journal = time.Now().UTC(), rep
	return replica.WritePromotion(dataDir, p)
}

// minPromoteAfter: the primary beats each second and the follower polls
// each second, so a shorter silence could be a beat merely late.
const minPromoteAfter = 3 * time.Second

func (o serveOpts) checkPromoteAfter() error {
	switch {
	case o.promoteAfter == 0:
		return nil
	case o.standbyOf == "":
		return errors.New("--promote-after: only a standby (--standby-of) promotes itself")
	case o.promoteAfter < minPromoteAfter:
		return fmt.Errorf("--promote-after %s: at least %s (the primary's heartbeat comes each second)", o.promoteAfter, minPromoteAfter)
	}
	return nil
}

// promoteWhenSilent asks for this standby's promotion, as xr promote
// does, once the follower has seen no heartbeat of the primary for after
// while it reads the replica (replica.Status.Silent). A refused promotion
// (another box took the replica over) is logged; the follower then starts
// again and the silence is counted afresh.
func (sb *standby) promoteWhenSilent(after time.Duration) {
	log := sb.g.logger()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-sb.done:
			return
		case <-tick.C:
		}
		st, err := replica.ReadStatus(sb.g.data)
		if err != nil {
			continue
		}
		silent, ok := st.Silent(time.Now())
		if !ok || silent < after {
			continue
		}
		log.Warn("the primary's heartbeat has been silent: promoting this standby", "silent", silent.Round(time.Second), "promote_after", after)
		reply := make(chan controlReply, 1)
		select {
		case sb.ctl.requests <- reply:
		case <-sb.done:
			return
		}
		if r := <-reply; r.Error == "" {
			return
		}
	}
}
