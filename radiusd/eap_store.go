package radiusd

import (
	"crypto/rand"
	"sync"
	"time"
)

// The EAP conversations in progress, keyed by the State attribute the
// server hands out (16 random octets: not guessable, so not worth a
// constant-time lookup). A flood of half-finished conversations is bounded
// three ways: a cap on conversations (and a smaller one per NAS, so one
// NAS cannot take them all), an idle timeout between round trips, and a
// lifetime. A new conversation beyond a cap is refused (the request is
// dropped and counted; the NAS retries); existing ones are never evicted
// early, so a flood cannot cut a sign-in in progress short.

// EAP limits and their defaults (Server.EAP fields).
const (
	defaultEAPMaxSessions = 4096
	defaultEAPIdle        = 60 * time.Second  // FreeRADIUS' eap timer_expire
	defaultEAPLifetime    = 180 * time.Second // a Windows certificate prompt fits
	// eapMaxRounds bounds the round trips of one conversation; a PEAP
	// sign-in with a 3 KiB certificate chain takes about 12.
	eapMaxRounds = 48
)

type eapKey [16]byte

type nasRef struct {
	tenant string
	id     int64
}

type eapStore struct {
	mu        sync.Mutex
	m         map[eapKey]*eapSession
	perNAS    map[nasRef]int
	max       int
	maxPerNAS int
	idle      time.Duration
	lifetime  time.Duration
}

func newEAPStore(limit int, idle, lifetime time.Duration) *eapStore {
	return &eapStore{m: map[eapKey]*eapSession{}, perNAS: map[nasRef]int{}, max: limit,
		maxPerNAS: max(1, limit/2), idle: idle, lifetime: lifetime}
}

// create registers a new conversation for a NAS, or returns nil when a cap
// is reached (after dropping the expired ones).
func (st *eapStore) create(nas *NAS, now time.Time) *eapSession {
	ref := nasRef{nas.TenantSlug, nas.ID}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.m) >= st.max || st.perNAS[ref] >= st.maxPerNAS {
		st.expireLocked(now)
		if len(st.m) >= st.max || st.perNAS[ref] >= st.maxPerNAS {
			return nil
		}
	}
	s := &eapSession{nas: ref, created: now, touched: now}
	for {
		rand.Read(s.key[:])
		if _, taken := st.m[s.key]; !taken {
			break
		}
	}
	st.m[s.key] = s
	st.perNAS[ref]++
	return s
}

// get finds the conversation of a State for a NAS. A State of another NAS,
// an expired or an ended conversation is unknown.
func (st *eapStore) get(state []byte, nas *NAS, now time.Time) *eapSession {
	if len(state) != len(eapKey{}) {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.m[eapKey(state)]
	if s == nil || s.nas != (nasRef{nas.TenantSlug, nas.ID}) {
		return nil
	}
	if st.expired(s, now) {
		st.removeLocked(s)
		return nil
	}
	s.touched = now
	return s
}

func (st *eapStore) expired(s *eapSession, now time.Time) bool {
	return now.Sub(s.touched) > st.idle || now.Sub(s.created) > st.lifetime
}

// remove ends a conversation (answered with Accept or Reject, or failed).
func (st *eapStore) remove(s *eapSession) {
	st.mu.Lock()
	st.removeLocked(s)
	st.mu.Unlock()
}

func (st *eapStore) removeLocked(s *eapSession) {
	if st.m[s.key] != s {
		return
	}
	delete(st.m, s.key)
	if st.perNAS[s.nas]--; st.perNAS[s.nas] <= 0 {
		delete(st.perNAS, s.nas)
	}
	s.end() // stops its TLS goroutine; a worker holding it sees the tunnel closed
}

// expire drops the conversations past their idle time or lifetime.
func (st *eapStore) expire(now time.Time) {
	st.mu.Lock()
	st.expireLocked(now)
	st.mu.Unlock()
}

func (st *eapStore) expireLocked(now time.Time) {
	for _, s := range st.m {
		if st.expired(s, now) {
			st.removeLocked(s)
		}
	}
}

func (st *eapStore) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.m)
}

// closeAll ends every conversation (shutdown).
func (st *eapStore) closeAll() {
	st.mu.Lock()
	for _, s := range st.m {
		st.removeLocked(s)
	}
	st.mu.Unlock()
}
