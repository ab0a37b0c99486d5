package console_test

// The Traffic report and the subscriber page read the same bytes in the
// same direction: what the report calls Download (or Upload) over a
// period is what the subscriber page's usage table calls Download (or
// Upload) for those days.

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"xr/app"
	"xr/internal/webtest"
)

func TestTrafficReportMatchesSubscriberPage(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	uid := s.User("", map[string]any{"username": "trafic"})
	// What accounting stores for two finished sessions (app/aaa): RADIUS
	// input octets come from the subscriber (upload), output go to it
	// (download); the sessions for the report, the day rollup for the
	// subscriber page. 90 kB down and 4 kB up in all.
	now := time.Now().UTC()
	start := app.FormatTime(now.Add(-time.Minute))
	for i, x := range []struct{ in, out int64 }{{3_000, 70_000}, {1_000, 20_000}} {
		s.Exec(`INSERT INTO radius_sessions(user_id, nas_id, acct_session_id, username, start_time, stop_time, session_time, input_octets, output_octets)
			VALUES (?, 1, ?, 'trafic', ?, ?, 60, ?, ?)`, uid, fmt.Sprintf("tr-%d", i), start, app.FormatTime(now), x.in, x.out)
	}
	day := now.Unix() - now.Unix()%86400
	s.Exec(`INSERT INTO usage_rollups(user_id, grain, bucket, input_octets, output_octets, seconds, sessions) VALUES (?, 'd', ?, 4000, 90000, 120, 2)`, uid, day)

	p := cdgSignIn(t, s.Kit, "owner")
	st, _, page := p.do("GET", fmt.Sprintf("/users/%d", uid), nil)
	if st != http.StatusOK {
		t.Fatalf("subscriber page: %d", st)
	}
	today := now.Format("2006-01-02")
	st, _, report := p.do("GET", fmt.Sprintf("/reports/traffic?from=%s&to=%s&user_id=%d", today, today, uid), nil)
	if st != http.StatusOK {
		t.Fatalf("traffic report: %d", st)
	}
	for label, want := range map[string]int64{"Download": 90_000, "Upload": 4_000} {
		var onPage int64
		for _, m := range regexp.MustCompile(`data-label="`+label+`" class="num" data-bytes="(\d+)"`).FindAllStringSubmatch(page, -1) {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			onPage += n
		}
		m := regexp.MustCompile(`data-value="(\d+)"><div class="n">[^<]*</div><div class="l">` + label + `</div>`).FindStringSubmatch(report)
		if m == nil {
			t.Fatalf("the traffic report has no %s total", label)
		}
		inReport, _ := strconv.ParseInt(m[1], 10, 64)
		if onPage != want || inReport != want {
			t.Errorf("%s: subscriber page %d, traffic report %d, want %d", label, onPage, inReport, want)
		}
	}
}
