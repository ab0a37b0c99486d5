package my_test

import (
	"testing"

	"xr/internal/browsertest"
)

// The browser tests of this package share one Chromium (browsertest.Main).
func TestMain(m *testing.M) { browsertest.Main(m) }
