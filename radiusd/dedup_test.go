package radiusd

import (
	"net/netip"
	"testing"
)

func key(i int) dedupKey {
	p := make([]byte, 20)
	p[0], p[1], p[4] = 1, byte(i), byte(i>>8)
	return newDedupKey(netip.MustParseAddrPort("127.0.0.1:5000"), kindAuth, p)
}

func TestDedupBoundedAndExpiring(t *testing.T) {
	t.Parallel()
	const ttl = 100
	c := newDedupCache(ttl, 4)
	now := int64(1000)
	for i := range 6 {
		if _, st := c.begin(key(i), now); st != dedupNew {
			t.Fatalf("key %d: state %v", i, st)
		}
		c.complete(key(i), []byte{byte(i)}, now)
	}
	if n := c.len(); n != 4 {
		t.Fatalf("%d entries, bound is 4", n)
	}
	if c.evict != 2 {
		t.Fatalf("evictions %d", c.evict)
	}
	if r, st := c.begin(key(5), now+1); st != dedupCached || r[0] != 5 {
		t.Fatalf("recent key: %v %v", st, r)
	}
	if _, st := c.begin(key(0), now+1); st != dedupNew {
		t.Fatal("evicted key still cached")
	}
	// Everything expires after the TTL; expired entries go with their
	// generation, all of them two TTLs after the last generation began.
	if _, st := c.begin(key(5), now+ttl+10); st != dedupNew {
		t.Fatal("expired reply served")
	}
	if _, st := c.begin(key(1), now+4*ttl); st != dedupNew {
		t.Fatal("expired request still in flight")
	}
	if n := c.len(); n != 1 {
		t.Fatalf("%d entries after two TTLs", n)
	}
}

func TestDedupInFlightAndAbort(t *testing.T) {
	t.Parallel()
	c := newDedupCache(100, 3)
	k := key(1)
	c.begin(k, 0)
	if _, st := c.begin(k, 1); st != dedupInFlight {
		t.Fatal("in-flight duplicate not detected")
	}
	c.abort(k)
	if _, st := c.begin(k, 2); st != dedupNew {
		t.Fatal("aborted request not released")
	}
	// The stale queue slot of the aborted copy must not evict the new one.
	c.begin(key(2), 3)
	c.begin(key(3), 4) // ring full: the stale slot goes first
	if _, st := c.begin(k, 5); st != dedupInFlight {
		t.Fatal("re-registered request lost to a stale slot")
	}
	// complete after expiry/eviction is ignored rather than re-inserted.
	c.complete(key(99), []byte{1}, 6)
	if c.len() > 3 {
		t.Fatal("complete grew the cache")
	}
}
