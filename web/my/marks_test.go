package my_test

import (
	"testing"

	"xr/internal/webtest"
)

// ownMarks are the subscriber pages that state their buckets by hand:
// they call no single API row.
var ownMarks = map[string]string{
	"GET /my/login": "form of POST /portal/login",
	"GET /my/enter": "form of POST /portal/exchange",
}

// TestPageRowsTakeTheirMarksFromAPIRows: every subscriber page takes its
// buckets from the API row it names, except the listed.
func TestPageRowsTakeTheirMarksFromAPIRows(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webtest.PageMarks(t, k.Srv, k.Srv.Site("my").Routes(), ownMarks)
}
