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
	seq     uint64
}

type dedupRef struct {
	key dedupKey
	seq uint64
}

// dedupCache is bounded in entries: keys are queued in insertion order,
// which is also expiry order because the TTL is constant, and the oldest
// is evicted when the cache is full. The queue stores a sequence number so
// that a key removed early (abort) and inserted again is not evicted by its
// stale queue slot.
type dedupCache struct {
	mu    sync.Mutex
	ttl   int64
	max   int
	m     map[dedupKey]dedupEntry
	ring  []dedupRef
	head  int
	size  int
	seq   uint64
	evict uint64 // entries evicted before expiry (cache too small)
}

func newDedupCache(ttlNanos int64, maxEntries int) *dedupCache {
	return &dedupCache{ttl: ttlNanos, max: maxEntries, m: make(map[dedupKey]dedupEntry, 1024)}
}

// begin registers a request. For dedupCached it returns the reply to resend.
func (c *dedupCache) begin(k dedupKey, now int64) ([]byte, dedupState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		if e.expires > now {
			if e.reply == nil {
				return nil, dedupInFlight
			}
			return e.reply, dedupCached
		}
		delete(c.m, k) // expired but not yet reached by the queue
	}
	c.expire(now)
	if c.size == c.max {
		c.popOldest()
		c.evict++
	}
	c.seq++
	c.m[k] = dedupEntry{expires: now + c.ttl, seq: c.seq}
	c.push(dedupRef{key: k, seq: c.seq})
	return nil, dedupNew
}

// complete stores the reply of a request registered with begin.
func (c *dedupCache) complete(k dedupKey, reply []byte, now int64) {
	c.mu.Lock()
	if e, ok := c.m[k]; ok && e.reply == nil {
		e.reply = reply
		e.expires = now + c.ttl
		c.m[k] = e
	}
	c.mu.Unlock()
}

// abort forgets a request that got no answer, so that the NAS's
// retransmission is processed afresh (for example after a failed commit).
func (c *dedupCache) abort(k dedupKey) {
	c.mu.Lock()
	if e, ok := c.m[k]; ok && e.reply == nil {
		delete(c.m, k)
	}
	c.mu.Unlock()
}

func (c *dedupCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func (c *dedupCache) expire(now int64) {
	for c.size > 0 {
		r := c.ring[c.head]
		e, ok := c.m[r.key]
		if ok && e.seq == r.seq && e.expires > now {
			return
		}
		c.popOldest()
	}
}

func (c *dedupCache) popOldest() {
	r := c.ring[c.head]
	c.ring[c.head] = dedupRef{}
	c.head = (c.head + 1) % len(c.ring)
	c.size--
	if e, ok := c.m[r.key]; ok && e.seq == r.seq {
		delete(c.m, r.key)
	}
}

// push appends to the ring, growing it (up to max) instead of allocating
// the whole bound up front.
func (c *dedupCache) push(r dedupRef) {
	if c.size == len(c.ring) {
		n := min(max(2*len(c.ring), 1024), c.max)
		ring := make([]dedupRef, n)
		for i := 0; i < c.size; i++ {
			ring[i] = c.ring[(c.head+i)%len(c.ring)]
		}
		c.ring, c.head = ring, 0
	}
	c.ring[(c.head+c.size)%len(c.ring)] = r
	c.size++
}
