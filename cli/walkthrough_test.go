package cli

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestAPIWalkthrough runs the walkthrough of docs/api.md as written (its
// sh blocks, in order, in one shell) against a fresh demo, with only the
// demo's addresses put in place of the doc's: a reader who starts
// `go run . demo` and pastes the blocks gets these answers.
func TestAPIWalkthrough(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"curl", "jq", "radclient", "uuidgen"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing: .ci/run installs it", tool)
			}
			t.Skipf("*** SKIPPING the walkthrough: %s is missing ***", tool)
		}
	}
	doc, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	start := strings.Index(section, "## Walkthrough")
	if start < 0 {
		t.Fatal("docs/api.md has no walkthrough")
	}
	section = section[start:]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	var script strings.Builder
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		script.WriteString(m[1])
	}
	if script.Len() == 0 {
		t.Fatal("the walkthrough has no sh block")
	}

	s, _ := startDemo(t, t.TempDir(), true)
	_, port, _ := strings.Cut(s.Banner.HTTP, ":")
	run := strings.NewReplacer("demo.localhost:8080", "demo.localhost:"+port,
		"127.0.0.1:1812", s.Auth, "127.0.0.1:1813", s.Acct).Replace(script.String())
	out, err := exec.Command("bash", "-c", run).CombinedOutput()
	text := string(out)
	if err != nil {
		t.Fatalf("the walkthrough failed: %v\n%s", err, text)
	}
	if strings.Contains(text, `"error"`) {
		t.Fatalf("an API call of the walkthrough was refused:\n%s", text)
	}
	// What the doc says each step answers, in order.
	rest := text
	for _, want := range []string{`"expired":true`, `"can_connect":false`, "Access-Reject", "not active yet",
		`"balance":30`, `"expiration"`, "Access-Accept", `Mikrotik-Rate-Limit = "20000k/100000k"`,
		`"framed_ip":"10.0.0.7"`, `user_request`, `"aggregates"`} {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("the walkthrough's output lacks %s (in order):\n%s", want, text)
		}
		rest = rest[i+len(want):]
	}
}
