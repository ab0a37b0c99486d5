package console_test

// Report filters by name: a plan typed by its name selects the rows its id
// selects; a name no record has is refused beside its field; a caller who
// may not list plans gets no plan field (never a bare number field).

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"xr/app"
	"xr/app/identity"
	"xr/internal/webtest"
)

// crnRows is the report table's body of a page.
func crnRows(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tbody>(.*?)</tbody>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no report table in %s", page)
	}
	return m[1]
}

func TestReportFilterByName(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	k := s.Kit
	plans := map[string]int64{"Basic": webtest.CreatePlan(t, k, "Basic"), "Gold": webtest.CreatePlan(t, k, "Gold")}
	for name, plan := range map[string]string{"ada": "Basic", "bob": "Gold"} {
		id := s.User("", map[string]any{"username": name, "profile_id": plans[plan]})
		s.Call("POST", fmt.Sprintf("/users/%d/deposit", id), s.Tok, map[string]any{"amount": 10, "request_id": "dep-" + name})
		if r := s.Call("POST", fmt.Sprintf("/users/%d/activation", id), s.Tok, map[string]any{"request_id": "act-" + name}); r.Status != 200 {
			t.Fatalf("activation: %d %s", r.Status, r.Body)
		}
	}
	p := cdgSignIn(t, k, "owner")
	for _, report := range []string{"activations", "activation-stats", "users"} {
		t.Run(report, func(t *testing.T) {
			st, _, byID := p.do("GET", fmt.Sprintf("/reports/%s?profile_id=%d", report, plans["Basic"]), nil)
			st2, _, byName := p.do("GET", "/reports/"+report+"?profile_id=basic", nil)
			if st != http.StatusOK || st2 != http.StatusOK {
				t.Fatalf("by id %d, by name %d", st, st2)
			}
			rows := crnRows(t, byName)
			if rows != crnRows(t, byID) || !strings.Contains(rows, "Basic") || strings.Contains(rows, "Gold") {
				t.Fatalf("by name:\n%s\nby id:\n%s", rows, crnRows(t, byID))
			}
			// The field shows the name, and offers every plan by name.
			for _, want := range []string{`name="profile_id" type="search" list="l-profile_id"`, `value="Basic"`, `<option value="Gold">`} {
				if !strings.Contains(byID, want) {
					t.Fatalf("page lacks %s", want)
				}
			}
			if strings.Contains(byID, `name="profile_id" type="number"`) {
				t.Fatal("the plan filter is a number field")
			}
		})
	}
	st, _, page := p.do("GET", "/reports/activations?profile_id=Platinum", nil)
	if st != http.StatusBadRequest || !strings.Contains(page, `id="e-profile_id"`) {
		t.Fatalf("unknown plan: %d", st)
	}

	// A clerk who may read the activations report but list neither plans
	// nor managers gets neither filter.
	sys := k.System("acme")
	role, err := identity.CreateRole(context.Background(), sys, identity.RoleInput{Name: app.Opt[string]{Set: true, V: "sales"},
		Permissions: app.Opt[[]string]{Set: true, V: []string{"prm_report_activations"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := identity.CreateManager(context.Background(), sys, identity.ManagerInput{Username: app.Opt[string]{Set: true, V: "clerk"},
		Password: app.Opt[string]{Set: true, V: webtest.Password}, RoleIDs: app.Opt[[]int64]{Set: true, V: []int64{role.ID}}}); err != nil {
		t.Fatal(err)
	}
	st, _, page = cdgSignIn(t, k, "clerk").do("GET", "/reports/activations", nil)
	if st != http.StatusOK || strings.Contains(page, `id="f-profile_id"`) || strings.Contains(page, `id="f-manager_id"`) {
		t.Fatalf("clerk's page: %d, plan field %v, manager field %v", st, strings.Contains(page, `id="f-profile_id"`), strings.Contains(page, `id="f-manager_id"`))
	}
}
