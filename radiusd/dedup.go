package radiusd

import (
	"net/netip"
	"sync"
)

// RFC 5080 section 2.2.2 duplicate detection. A request is identified by
// its source address and port, the listener, code, Identifier and Request
// Authenticator. While it is being processed a retransmission is dropped
// (answering twice would run the effect twice); once answered, the encoded
// reply is kept for the TTL and a retransmission gets those exact bytes.

// dedupKey is pointer-free (the address as 16 octets rather than a
// netip.Addr) so that hashing is cheap and the GC need not scan keys.
type dedupKey struct {
	ip   [16]byte
	port uint16
	kind listenerKind
	code byte
	id   byte
	auth [16]byte
}

func newDedupKey(src netip.AddrPort, kind listenerKind, p []byte) dedupKey {
	k := dedupKey{ip: src.Addr().As16(), port: src.Port(), kind: kind, code: p[0], id: p[1]}
	copy(k.auth[:], p[4:20])
	return k
}

type dedupState int

const (
	dedupNew      dedupState = iota // caller owns the request now
	dedupInFlight                   // same request still being processed: drop
	dedupCached                     // answered before: resend the cached reply
)

type dedupEntry struct {
	reply   []byte // nil while in flight
	expires int64  // unix nanoseconds
}

// dedupCache keeps two generations of entries: new requests go into cur;
// when cur has lived a TTL or holds half the bound, it becomes old and the
// previous old is dropped whole (its unexpired entries counted as
// evictions). A lookup probes both. Dropping a generation at once instead
// of expiring entry by entry keeps the maps free of deletion tombstones,
// whose probing was a tenth of the server's CPU under load.
type dedupCache struct {
	mu      sync.Mutex
	ttl     int64
	half    int // bound of one generation
	cur     map[dedupKey]dedupEntry
	old     map[dedupKey]dedupEntry
	rotated int64  // when cur began
	evict   uint64 // entries dropped before expiry (cache too small)
}

func newDedupCache(ttlNanos int64, maxEntries int) *dedupCache {
	return &dedupCache{ttl: ttlNanos, half: max(1, (maxEntries+1)/2),
		cur: make(map[dedupKey]dedupEntry, 1024), old: make(map[dedupKey]dedupEntry, 1024)}
}

// find is the live entry of k.
func (c *dedupCache) find(k dedupKey, now int64) (dedupEntry, bool) {
	for _, g := range [2]map[dedupKey]dedupEntry{c.cur, c.old} {
		if e, ok := g[k]; ok {
			if e.expires > now {
				return e, true
			}
			delete(g, k) // expired: its key may be registered again
		}
	}
	return dedupEntry{}, false
}

// rotate starts a new generation when cur is full or a TTL old; after two
// TTLs without traffic both generations are dropped.
func (c *dedupCache) rotate(now int64) {
	age := now - c.rotated
	if len(c.cur) < c.half && age < c.ttl {
		return
	}
	for _, e := range c.old {
		if e.expires > now {
			c.evict++
		}
	}
	clear(c.old)
	c.cur, c.old = c.old, c.cur
	if age >= 2*c.ttl {
		clear(c.old)
	}
	c.rotated = now
}

// begin registers a request. For dedupCached it returns the reply to resend.
func (c *dedupCache) begin(k dedupKey, now int64) ([]byte, dedupState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.find(k, now); ok {
		if e.reply == nil {
			return nil, dedupInFlight
		}
		return e.reply, dedupCached
	}
	c.rotate(now)
	c.cur[k] = dedupEntry{expires: now + c.ttl}
	return nil, dedupNew
}

// complete stores the reply of a request registered with begin; the reply
// is kept a TTL from now, in the current generation.
func (c *dedupCache) complete(k dedupKey, reply []byte, now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.find(k, now)
	if !ok || e.reply != nil {
		return
	}
	e.reply, e.expires = reply, now+c.ttl
	delete(c.old, k) // when it began in the previous generation
	c.cur[k] = e
}

// abort forgets a request that got no answer, so that the NAS's
// retransmission is processed afresh (for example after a failed commit).
func (c *dedupCache) abort(k dedupKey) {
	c.mu.Lock()
	for _, g := range [2]map[dedupKey]dedupEntry{c.cur, c.old} {
		if e, ok := g[k]; ok && e.reply == nil {
			delete(g, k)
		}
	}
	c.mu.Unlock()
}

// len counts the entries held, expired ones included until their
// generation is dropped.
func (c *dedupCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.old)
}
