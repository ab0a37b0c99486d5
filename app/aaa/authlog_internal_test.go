package aaa

import "testing"

// TestLogDecisionNeverBlocks: with the buffer full a decision is dropped
// and counted, never waited for.
func TestLogDecisionNeverBlocks(t *testing.T) {
	t.Parallel()
	s := &Service{authLog: &authLog{ch: make(chan AuthDecision, 2)}}
	for range 5 {
		s.LogDecision(AuthDecision{Username: "u"})
	}
	if written, dropped := s.AuthLogStats(); written != 0 || dropped != 3 || len(s.authLog.ch) != 2 {
		t.Fatalf("written %d dropped %d queued %d", written, dropped, len(s.authLog.ch))
	}
}
