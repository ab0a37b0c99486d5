package xrtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// PDFText is the text Debian's pdftotext (poppler-utils, installed by
// .ci/run) extracts from a PDF, without the bidi marks it puts around
// right-to-left runs: no Go extractor reads ToUnicode and orders
// right-to-left text. Without pdftotext the test is skipped, saying so,
// except under CI=true, where that is a failure.
func PDFText(t testing.TB, pdf []byte) string {
	t.Helper()
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("pdftotext (Debian poppler-utils) is missing; .ci/run installs it")
		}
		t.Skip("pdftotext (apt-get install poppler-utils) is not installed: the PDF's text is not checked")
	}
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-enc", "UTF-8", path, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v: %s", err, out)
	}
	return bidiMarks.Replace(string(out))
}

var bidiMarks = strings.NewReplacer("\u202a", "", "\u202b", "", "\u202c", "", "\u202d", "", "\u202e", "", "\u200e", "", "\u200f", "")
