package replica_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"xr/app/replica"
	"xr/internal/xrtest"
)

// While a primary replicates, its heartbeat in the replica changes (one
// object at a time: the previous beat is deleted) and a follower sees the
// primary as beating; once the primary stops, the follower counts its
// silence.
func TestFollowerHearsThePrimarysHeartbeat(t *testing.T) {
	t.Parallel()
	a, target, rep := primary(t, replica.Options{SyncEvery: 50 * time.Millisecond, StampEvery: 20 * time.Millisecond})
	xrtest.Tenant(t, a, "acme")
	dataDir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := replica.Follow(ctx, target, dataDir, replica.FollowOptions{Every: 20 * time.Millisecond}); err != nil {
			t.Error(err)
		}
	}()
	defer func() { cancel(); wg.Wait() }()

	beats := map[uint64]bool{}
	xrtest.Eventually(t, "three heartbeats seen", func() bool {
		st, err := replica.ReadStatus(dataDir)
		if err != nil || st.Beat == 0 {
			return false
		}
		// Beats come every 20 ms; a loaded machine may delay a few.
		if d, ok := st.Silent(time.Now()); ok && d > 5*time.Second {
			t.Fatalf("silence of a beating primary = %s (status %+v)", d, st)
		}
		beats[st.Beat] = true
		return len(beats) >= 3
	})
	kept, err := os.ReadDir(filepath.Join(strings.TrimPrefix(target.URL, "file://"), "g1", "heartbeat", "ltx", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) > 2 { // the newest, and at most one not deleted yet
		t.Fatalf("%d heartbeats kept in the replica, want the newest only", len(kept))
	}

	if err := rep.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	xrtest.Eventually(t, "the primary's silence counted", func() bool {
		st, err := replica.ReadStatus(dataDir)
		if err != nil {
			return false
		}
		d, ok := st.Silent(time.Now())
		return ok && d >= 300*time.Millisecond
	})
}
