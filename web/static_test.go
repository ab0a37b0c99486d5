package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"xr/internal/webtest"
)

// TestConsoleStaticGzip: a browser that accepts gzip gets the compressed
// copy (Content-Encoding, Vary), one that does not gets the file as is;
// both decode to the embedded bytes.
func TestConsoleStaticGzip(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	for name, u := range k.Srv.AssetURLs() {
		file, _, ctype, _ := k.Srv.StaticFile(u)
		tr := &http.Transport{DisableCompression: true} // see the raw answer
		get := func(ae string) (*http.Response, []byte) {
			t.Helper()
			req, _ := http.NewRequest("GET", k.TS.URL+u, nil)
			req.Host = "acme.xr.test"
			if ae != "" {
				req.Header.Set("Accept-Encoding", ae)
			}
			res, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			return res, body
		}
		res, body := get("gzip, deflate, br")
		if len(file) < 512 && res.Header.Get("Content-Encoding") == "" {
			// A file gzip would not shrink (the favicon) goes as it is.
			if res.StatusCode != 200 || !bytes.Equal(body, file) {
				t.Fatalf("%s uncompressed: %d, %d bytes of %d", name, res.StatusCode, len(body), len(file))
			}
			continue
		}
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") ||
			res.Header.Get("Content-Type") != ctype {
			t.Fatalf("%s with gzip: %d %v", name, res.StatusCode, res.Header)
		}
		if len(body) >= len(file) {
			t.Fatalf("%s: compressed %d bytes, plain %d", name, len(body), len(file))
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(plain, file) {
			t.Fatalf("%s: gzip body does not decode to the file (%v)", name, err)
		}
		for _, ae := range []string{"", "identity", "gzip;q=0, br"} {
			res, body = get(ae)
			if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") ||
				!bytes.Equal(body, file) {
				t.Fatalf("%s with Accept-Encoding %q: %d %v (%d bytes, want %d)", name, ae, res.StatusCode, res.Header, len(body), len(file))
			}
		}
	}
}
