package identity_test

import (
	"testing"

	"xr/app/identity"
	"xr/app/subs"
)

// TestForeignPermsMatch: the groups permission identity names again,
// because subs imports identity, is subs's constant.
func TestForeignPermsMatch(t *testing.T) {
	t.Parallel()
	if identity.PermGroupsAssign != subs.PermGroupsAssign {
		t.Fatalf("identity names %q, subs declares %q", identity.PermGroupsAssign, subs.PermGroupsAssign)
	}
}
