package web_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"xr/web"
)

var reasonCall = regexp.MustCompile(`Err(?:Validation|Conflict|Forbidden|Unauthorized|Unavailable|BadGateway)\("([a-z0-9_]*[a-z0-9])"`)

// Every reason the code can answer has an English message, so no client
// ever reads a reason key turned into prose.
func TestEveryReasonHasAnEnglishMessage(t *testing.T) {
	t.Parallel()
	missing := map[string][]string{}
	for _, dir := range []string{"../app", "../web", "../cli"} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range reasonCall.FindAllStringSubmatch(string(b), -1) {
				if _, ok := web.Catalogues["en"][m[1]]; !ok {
					missing[m[1]] = append(missing[m[1]], path)
				}
			}
			return nil
		})
	}
	if len(missing) > 0 {
		var keys []string
		for k, files := range missing {
			keys = append(keys, k+" ("+files[0]+")")
		}
		sort.Strings(keys)
		t.Fatalf("%d reasons without an English message:\n%s", len(keys), strings.Join(keys, "\n"))
	}
}
