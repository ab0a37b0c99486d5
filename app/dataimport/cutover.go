package dataimport

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"xr/app"
	"xr/app/aaa"
)

// The cut-over proof: the last decisions of the legacy server (radpostauth,
// up to maxReplay) replayed through the explainer once the subscribers are
// imported, so the operator sees where xr would decide otherwise before
// switching the routers over.

const maxReplay = 100000

// postAuth is one legacy decision.
type postAuth struct {
	Username string
	Accept   bool
	At       time.Time
}

// Cutover is the outcome of the replay.
type Cutover struct {
	// Skipped says why nothing was replayed: no_postauth, radius_not_running
	// (the process serves no RADIUS: the CLI), no_nas.
	Skipped     string         `json:"skipped,omitempty"`
	Replayed    int            `json:"replayed"`
	Agreements  int            `json:"agreements"`
	Differences int            `json:"differences"`
	ByKind      map[string]int `json:"by_kind"` // "legacy accepted, xr would reject: expired" → count
	// Examples are the first differences, oldest first.
	Examples []CutoverDiff `json:"examples"`
}

// CutoverDiff is one decision xr would make otherwise.
type CutoverDiff struct {
	Username string   `json:"username"`
	At       app.Time `json:"at"`
	Legacy   string   `json:"legacy"` // accept, reject
	XR       string   `json:"xr"`     // accept, reject, dropped
	Reason   string   `json:"reason"`
	Text     string   `json:"text"`
}

// addPostAuth keeps the last maxReplay decisions (a ring).
func (c *catalogue) addPostAuth(p postAuth) {
	if len(c.replay) < maxReplay {
		c.replay = append(c.replay, p)
		return
	}
	c.replay[c.replayNext] = p
	c.replayNext = (c.replayNext + 1) % maxReplay
}

func parseAuthDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) >= 19 {
		s = s[:19]
	}
	t, err := time.Parse("2006-01-02 15:04:05", strings.Replace(s, "T", " ", 1))
	return t, err == nil
}

// replay runs the legacy decisions through the explainer as the caller.
func replay(ctx context.Context, act *app.Actor, c *catalogue) (*Cutover, error) {
	out := &Cutover{ByKind: map[string]int{}, Examples: []CutoverDiff{}}
	if len(c.replay) == 0 {
		out.Skipped = "no_postauth"
		return out, nil
	}
	svc := aaa.ServiceOf(act.Tenant.App)
	if svc == nil {
		out.Skipped = "radius_not_running"
		return out, nil
	}
	var nasID int64
	err := act.Tenant.DB.R.QueryRowContext(ctx, `SELECT id FROM nas ORDER BY id LIMIT 1`).Scan(&nasID)
	if errors.Is(err, sql.ErrNoRows) {
		out.Skipped = "no_nas"
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	rows := append(c.replay[c.replayNext:], c.replay[:c.replayNext]...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].At.Before(rows[j].At) })
	for _, p := range rows {
		ex, err := svc.Explain(ctx, act, aaa.ExplainInput{Username: p.Username, NASID: nasID, At: app.T(p.At)})
		if err != nil {
			if e := app.AsError(err); e != nil && e.Status < 500 {
				continue
			}
			return nil, err
		}
		out.Replayed++
		legacy := "reject"
		if p.Accept {
			legacy = "accept"
		}
		if (ex.Result == "accept") == p.Accept {
			out.Agreements++
			continue
		}
		out.Differences++
		text := fmt.Sprintf("legacy accepted, xr would reject: %s", ex.Reason)
		if !p.Accept {
			text = "legacy rejected, xr would accept"
		}
		out.ByKind[text]++
		if len(out.Examples) < 100 {
			out.Examples = append(out.Examples, CutoverDiff{Username: p.Username, At: app.T(p.At), Legacy: legacy, XR: ex.Result, Reason: ex.Reason, Text: text})
		}
	}
	return out, nil
}
