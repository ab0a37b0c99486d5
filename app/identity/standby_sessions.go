package identity

import (
	"sync"
	"time"

	"xr/app"
)

// Sessions signed in on a standby. A standby's files are read-only copies
// of the primary's (docs/ha.md), so a sign-in there cannot write its
// auth_sessions row: the session is kept in the process's memory instead,
// found by authSession and revoked by Logout as a row would be. It ends
// with the process (a promotion re-executes it: staff sign in again on the
// box, now the primary). No refresh token is given: refreshing writes.
type standbySessions struct {
	mu sync.Mutex
	m  map[string]standbySession // by jti
}

type standbySession struct {
	tenantID, managerID int64
	expires             time.Time
	revoked             bool
}

// maxStandbySessions bounds the memory sign-ins can take on a standby;
// expired sessions are dropped first.
const maxStandbySessions = 10_000

type standbySessionsKey struct{}

func standbySessionsOf(a *app.App) *standbySessions {
	return a.ValueOrStore(standbySessionsKey{}, &standbySessions{m: map[string]standbySession{}}).(*standbySessions)
}

// open keeps a new session; false when the store is full of live ones.
func (s *standbySessions) open(jti string, ses standbySession, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= maxStandbySessions {
		for k, v := range s.m {
			if !v.expires.After(now) {
				delete(s.m, k)
			}
		}
		if len(s.m) >= maxStandbySessions {
			return false
		}
	}
	s.m[jti] = ses
	return true
}

// find is the session jti of tenantID; ok is false for none (or one of
// another tenant).
func (s *standbySessions) find(tenantID int64, jti string) (standbySession, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ses, ok := s.m[jti]
	return ses, ok && ses.tenantID == tenantID
}

// revoke marks the session revoked; false when it is not one of these.
func (s *standbySessions) revoke(tenantID int64, jti string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ses, ok := s.m[jti]
	if !ok || ses.tenantID != tenantID {
		return false
	}
	ses.revoked = true
	s.m[jti] = ses
	return true
}
