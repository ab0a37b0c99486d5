package radiusd

// collectSessionTruth emits the counters of the session sweep (app/aaa
// truth.go): ACKed Disconnects that no Accounting-Stop followed within two
// interim intervals, by tenant.
func (m *Metrics) collectSessionTruth(e emitter) {
	if m.SessionTruth == nil {
		return
	}
	for slug, n := range m.SessionTruth() {
		e.counter("radius_disconnect_unconfirmed_total",
			"ACKed Disconnects (operator, quota cut, zombie cleanup) not followed by an Accounting-Stop within two interim intervals, by tenant.",
			float64(n), "tenant", slug)
	}
}
