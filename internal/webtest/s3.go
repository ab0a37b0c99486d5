package webtest

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// S3SecretKey is a secret key the tests give S3 destinations.
const S3SecretKey = "s3-secret-never-shown-42"

// FakeS3 is an in-memory S3-compatible server (gofakes3) on loopback.
func FakeS3(t *testing.T) string {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket("xr-backups"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(be).Server())
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}
