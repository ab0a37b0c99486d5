package console_test

// The factory reset page says in words what it erases: each row is one of
// the reset.w groups, none is a table name, and the counts add up to the
// preview's total.

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"xr/internal/webtest"
	"xr/web"
)

func TestFactoryResetListsWords(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	k := s.Kit
	webtest.CreatePlan(t, k, "Basic")
	s.User("", map[string]any{"username": "ada"})
	webtest.CreateManager(k, "acme", 0, "clerk", "cashier")
	prev := s.Call("GET", "/admin/tools/factory-reset/preview", s.Tok, nil)
	if prev.Status != 200 {
		t.Fatalf("preview: %d %s", prev.Status, prev.Body)
	}
	var total int64
	var tables []string
	data := prev.Data()
	for _, d := range data["deleted"].([]any) {
		row := d.(map[string]any)
		tables = append(tables, row["kind"].(string))
		total += int64(row["count"].(float64))
	}
	if len(tables) < 3 {
		t.Fatalf("the fixture erases too little to test: %v", tables)
	}
	st, _, page := cdgSignIn(t, k, "owner").do("GET", "/factory-reset", nil)
	if st != http.StatusOK {
		t.Fatalf("page: %d", st)
	}
	m := regexp.MustCompile(`(?s)<tbody>(.*?)</tbody>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no table of what is erased")
	}
	words := map[string]bool{}
	for key, text := range web.PageCatalogue()["en"] {
		if strings.HasPrefix(key, "reset.w.") {
			words[text] = true
		}
	}
	var sum int64
	for _, r := range regexp.MustCompile(`<td data-label="[^"]*">([^<]*)</td><td data-label="[^"]*">(\d+)</td>`).FindAllStringSubmatch(m[1], -1) {
		if !words[r[1]] {
			t.Errorf("row %q is not one of the reset words", r[1])
		}
		n, _ := strconv.ParseInt(r[2], 10, 64)
		sum += n
	}
	if sum != total {
		t.Errorf("the rows count %d records, the preview %d", sum, total)
	}
	for _, tb := range tables {
		if strings.Contains(tb, "_") && strings.Contains(page, tb) || strings.Contains(m[1], ">"+tb+"<") {
			t.Errorf("the page shows the table name %s", tb)
		}
	}
}
