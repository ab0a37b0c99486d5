package app

import (
	"testing"

	"github.com/google/uuid"
)

// TestNewUUIDIsRandomV4: NewUUID mints canonical lower-case v4 UUIDs
// (RFC 9562 variant), each one new.
func TestNewUUIDIsRandomV4(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		s := NewUUID()
		u, err := uuid.Parse(s)
		if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != s || seen[s] {
			t.Fatalf("%q: %v v%d %v", s, err, u.Version(), u.Variant())
		}
		seen[s] = true
	}
}
