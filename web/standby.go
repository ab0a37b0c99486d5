package web

import (
	"github.com/prometheus/client_golang/prometheus"

	"xr/app"
)

// standbyState is what /readyz says of a standby (nil on a primary): the
// replica it follows and how far behind the primary it is.
func (s *Server) standbyState() map[string]any {
	r, ok := s.app.Replication()
	if !ok {
		return nil
	}
	out := map[string]any{"of": r.Of, "lag_seconds": r.Lag.Seconds()}
	if !r.LastCommit.IsZero() {
		out["last_commit"] = r.LastCommit.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	if r.SilenceKnown {
		out["primary_silent_seconds"] = r.PrimarySilent.Seconds()
	}
	if r.PromoteAfter > 0 {
		out["promote_after_seconds"] = r.PromoteAfter.Seconds()
	}
	if r.Err != nil {
		out["follower_error"] = r.Err.Error()
	}
	return out
}

// standbyCollector exports a standby's replication lag (nothing on a
// primary), and xr_replication_fenced on a fenced box.
type standbyCollector struct{ a *app.App }

var (
	descStandbyLag = prometheus.NewDesc("xr_replication_lag_seconds",
		"On a standby: age of the oldest transaction of the replica not applied yet (0 when caught up with the replica).", nil, nil)
	descStandbyLastCommit = prometheus.NewDesc("xr_replication_last_commit_timestamp_seconds",
		"On a standby: when the primary committed the newest transaction applied here (Unix time).", nil, nil)
	descStandbyFollower = prometheus.NewDesc("xr_replication_follower_up",
		"On a standby: 1 while the follower's status is readable.", nil, nil)
	descPrimarySilent = prometheus.NewDesc("xr_replication_primary_silent_seconds",
		"On a standby: how long the primary's heartbeat in the replica has not changed (absent while the replica is out of reach).", nil, nil)
	descFenced = prometheus.NewDesc("xr_replication_fenced",
		"1 when another box holds the replica (a standby was promoted): this one refuses every write.", nil, nil)
)

func (standbyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descStandbyLag
	ch <- descStandbyLastCommit
	ch <- descStandbyFollower
	ch <- descPrimarySilent
	ch <- descFenced
}

func (sc standbyCollector) Collect(ch chan<- prometheus.Metric) {
	if _, fenced := sc.a.Fenced(); fenced {
		ch <- prometheus.MustNewConstMetric(descFenced, prometheus.GaugeValue, 1)
	}
	r, ok := sc.a.Replication()
	if !ok {
		return
	}
	up := 1.0
	if r.Err != nil {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(descStandbyFollower, prometheus.GaugeValue, up)
	ch <- prometheus.MustNewConstMetric(descStandbyLag, prometheus.GaugeValue, r.Lag.Seconds())
	if r.SilenceKnown {
		ch <- prometheus.MustNewConstMetric(descPrimarySilent, prometheus.GaugeValue, r.PrimarySilent.Seconds())
	}
	if !r.LastCommit.IsZero() {
		ch <- prometheus.MustNewConstMetric(descStandbyLastCommit, prometheus.GaugeValue, float64(r.LastCommit.UnixMilli())/1000)
	}
}
