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

// The primary's silence counts from when the follower last saw its
// heartbeat change, and only while the follower reads the replica.
func TestStatusSilent(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		st     Status
		want   time.Duration
		wantOK bool
	}{
		{"beating", Status{Checked: now, Beat: 7, BeatSeen: now.Add(-time.Second)}, time.Second, true},
		{"silent", Status{Checked: now, Beat: 7, BeatSeen: now.Add(-40 * time.Second)}, 40 * time.Second, true},
		{"replica out of reach", Status{Checked: now, Beat: 7, BeatSeen: now.Add(-40 * time.Second), ReplicaErr: "dial: refused"}, 0, false},
		{"follower stopped", Status{Checked: now.Add(-10 * time.Second), Beat: 7, BeatSeen: now.Add(-40 * time.Second)}, 0, false},
		{"older follower", Status{Checked: now}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.st.Silent(now)
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("Silent = %s %v, want %s %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
