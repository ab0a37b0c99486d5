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
}

func startStandby(ctx context.Context, g *globals, bin string, target replica.Target) (*standby, error) {
	fol, err := startFollower(ctx, g, bin, target)
	if err != nil {
		return nil, err
	}
	ctl, err := listenControl(g.data)
	if err != nil {
		fol.stop()
		return nil, err
	}
	return &standby{g: g, bin: bin, target: target, fol: fol, ctl: ctl}, nil
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
