package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// table is the figures for a person: docs/ha.md copies it.
func (f figures) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "date %s; %s; load average at the end %s\n", f.Date, f.Config, f.Load)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
	if s := f.Steady; s != nil {
		fmt.Fprintf(&b, "\n| steady load | without --replicate-to | with --replicate-to (and a standby) |\n|---|---|---|\n")
		fmt.Fprintf(&b, "| acknowledged writes (failed) | %d (%d) | %d (%d) |\n", s.Writes[0], s.Failed[0], s.Writes[1], s.Failed[1])
		fmt.Fprintf(&b, "| writes/s | %.0f | %.0f |\n", s.Rate[0], s.Rate[1])
		fmt.Fprintf(&b, "| primary CPU per write | %.3f ms | %.3f ms |\n", s.CPUPerWrite[0], s.CPUPerWrite[1])
		fmt.Fprintf(&b, "| primary CPU | %.0f %% of a core | %.0f %% of a core |\n", s.CPUCore[0], s.CPUCore[1])
		fmt.Fprintf(&b, "| bytes written to the replica | — | %.0f kB/s (%.0f B per write) |\n", s.ShippedPerS/1000, s.ShippedPerS/max(s.Rate[1], 1))
		fmt.Fprintf(&b, "| lag the standby reports in /readyz (replica → standby only), every 250 ms | — | p50 %s, p99 %s, max %s |\n", ms(s.ReadyzP50), ms(s.ReadyzP99), ms(s.ReadyzMax))
		fmt.Fprintf(&b, "| standby CPU (server and follower, lag polls included) | — | %.0f %% of a core |\n", s.StandbyCore)
		fmt.Fprintf(&b, "| replication lag (ack on the primary → seen on the standby's API) | — | p50 %s, p99 %s, max %s (%d writes timed, %d never seen) |\n",
			ms(s.LagP50), ms(s.LagP99), ms(s.LagMax), s.LagN, s.LagUnseen)
	}
	if len(f.Trials) > 0 {
		fmt.Fprintf(&b, "\n| trial | killed after | acked writes | lost (RPO) | lost span | kill → promoted | RADIUS sent | lost | 2nd round | by standby | longest gap | max wait |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		var lost, spans, gaps []time.Duration
		var sent, rlost, later int
		for i, t := range f.Trials {
			fmt.Fprintf(&b, "| %d | %s | %d | %d | %s | %s | %d | %d | %d | %d | %s | %s |\n", i+1, ms(t.KilledAfter), t.Acked, t.Lost, ms(t.LostSpan),
				ms(t.PromoteTook), t.Radius.Sent, t.Radius.Lost, t.Radius.LaterRound, t.Radius.ByServer[1], ms(t.Radius.LongestGap), ms(t.Radius.MaxWait))
			lost = append(lost, time.Duration(t.Lost))
			spans = append(spans, t.LostSpan)
			gaps = append(gaps, t.Radius.LongestGap)
			sent += t.Radius.Sent
			rlost += t.Radius.Lost
			later += t.Radius.LaterRound
		}
		slices.Sort(lost)
		slices.Sort(spans)
		slices.Sort(gaps)
		fmt.Fprintf(&b, "\nRPO over %d trials: lost acknowledged writes min %d, median %d, max %d; span median %s, max %s\n",
			len(f.Trials), lost[0], quantile(lost, 0.5), lost[len(lost)-1], ms(quantile(spans, 0.5)), ms(spans[len(spans)-1]))
		fmt.Fprintf(&b, "RADIUS over %d trials: %d Access-Requests, %d without an answer from any server after %d rounds, %d answered only in a later round; longest gap median %s, max %s\n",
			len(f.Trials), sent, rlost, f.Rounds, later, ms(quantile(gaps, 0.5)), ms(gaps[len(gaps)-1]))
	}
	return b.String()
}
