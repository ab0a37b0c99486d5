package cli

import (
	"testing"

	"xr/internal/browsertest"
)

// The whole-job browser tests share one Chromium (browsertest.Main).
func TestMain(m *testing.M) { browsertest.Main(m) }
