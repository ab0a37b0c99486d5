package console_test

import (
	"archive/zip"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"xr/internal/webtest"
)

func TestRadSecPage(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	n := k.Do("POST", "acme", "/api/v1/admin/nas", tok, map[string]any{"name": "tower", "ip": "192.0.2.31", "secret": "a-long-shared-secret"})
	page := fmt.Sprintf("/nas/%v/radsec", n.Data()["id"])
	p := cdgSignIn(t, k, "owner")
	if st, _, body := p.do("GET", page, nil); st != 200 || !strings.Contains(body, `id="radsec-issue"`) || !strings.Contains(body, "protocol=radsec") {
		t.Fatalf("page: %d", st)
	}
	if st, loc, _ := p.do("POST", page+"/issue", url.Values{}); st != http.StatusSeeOther || loc != page {
		t.Fatalf("issue: %d %s", st, loc)
	}
	if _, _, body := p.do("GET", page, nil); !strings.Contains(body, `id="radsec-download"`) || !strings.Contains(body, `id="radsec-revoke"`) {
		t.Fatal("issued certificate not offered for download")
	}
	// The one download: a zip of the three files.
	st, _, body := p.do("POST", page+"/download", url.Values{})
	if st != 200 {
		t.Fatalf("download: %d", st)
	}
	z, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range z.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = string(b)
	}
	if _, err := tls.X509KeyPair([]byte(files["client.pem"]), []byte(files["client.key"])); err != nil || files["ca.pem"] == "" {
		t.Fatalf("zip %v: %v", len(files), err)
	}
	// A second download says why on the page.
	if st, loc, _ := p.do("POST", page+"/download", url.Values{}); st != http.StatusSeeOther || loc != page {
		t.Fatalf("second download: %d %s", st, loc)
	}
	if _, _, body := p.do("GET", page, nil); !strings.Contains(body, "already downloaded") {
		t.Fatal("the refusal is not shown")
	}
	if st, _, _ := p.do("POST", page+"/revoke", url.Values{}); st != http.StatusSeeOther {
		t.Fatalf("revoke: %d", st)
	}
	if _, _, body := p.do("GET", page, nil); !strings.Contains(body, `id="radsec-issue"`) {
		t.Fatal("revoked certificate still offered")
	}
	// The NAS page links here.
	if _, _, body := p.do("GET", fmt.Sprintf("/nas/%v", n.Data()["id"]), nil); !strings.Contains(body, `href="`+page+`"`) {
		t.Fatal("no link from the NAS page")
	}
}
