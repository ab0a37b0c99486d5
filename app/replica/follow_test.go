package replica

import (
	"testing"
	"time"
)

// The lag is the age of the oldest transaction the replica holds and a
// copy has not applied, or how long the follower has been silent.
func TestStatusLag(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		st   Status
		want time.Duration
	}{
		{"caught up", Status{Checked: now, Files: map[string]FileStatus{"instance.db": {TXID: 9, Commit: now.Add(-time.Hour)}}}, 0},
		{"one file behind", Status{Checked: now, Files: map[string]FileStatus{
			"instance.db":     {TXID: 9},
			"tenants/acme.db": {TXID: 3, Pending: now.Add(-7 * time.Second)},
		}}, 7 * time.Second},
		{"follower silent", Status{Checked: now.Add(-32 * time.Second)}, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.st.Lag(now); got != tc.want {
				t.Fatalf("Lag = %s, want %s", got, tc.want)
			}
		})
	}
}
