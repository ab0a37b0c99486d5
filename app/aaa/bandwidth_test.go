package aaa

import (
	"testing"
	"time"
)

// TestRateRuleWindows: a window crossing midnight is in force from its
// start on its weekdays to its end the next morning, in the tenant's zone;
// PickRate prefers an override, then the narrower target, then the newer.
func TestRateRuleWindows(t *testing.T) {
	t.Parallel()
	loc, err := time.LoadLocation("Asia/Baghdad") // UTC+3, no DST
	if err != nil {
		t.Skip("no tz data:", err)
	}
	night := RateRule{ID: 1, Kind: "window", TargetKind: "plan", Targets: map[int64]bool{7: true}, Down: 50, Up: 10,
		Weekdays: 1 << time.Monday, StartMin: 22 * 60, EndMin: 6 * 60}
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for s, want := range map[string]bool{
		"2026-11-23 21:59": false, "2026-11-23 22:00": true, "2026-11-24 05:59": true, "2026-11-24 06:00": false,
		"2026-11-24 23:00": false, // Tuesday night is not a window night
		"2026-11-23 03:00": false, // Monday early morning belongs to Sunday's night
	} {
		if got := night.InForce(at(s), loc); got != want {
			t.Errorf("%s: in force %v, want %v", s, got, want)
		}
	}
	// 19:30 UTC on Monday is 22:30 in Baghdad.
	if !night.InForce(time.Date(2026, 11, 23, 19, 30, 0, 0, time.UTC), loc) {
		t.Error("the window is in the tenant's zone")
	}
	over := RateRule{ID: 2, Kind: "override", TargetKind: "plan", Targets: map[int64]bool{7: true}, Down: 1, Up: 1,
		StartsAt: at("2026-11-23 00:00"), EndsAt: at("2026-11-24 00:00")}
	users := RateRule{ID: 3, Kind: "window", TargetKind: "users", Targets: map[int64]bool{42: true}, Down: 2, Up: 2,
		Weekdays: 127, StartMin: 0, EndMin: 0}
	rules := []RateRule{night, over, users}
	if r := PickRate(rules, 7, 0, 1, 42, at("2026-11-23 23:00"), loc); r == nil || r.ID != 2 {
		t.Fatalf("override first: %+v", r)
	}
	if r := PickRate(rules, 7, 0, 1, 42, at("2026-11-24 01:00"), loc); r == nil || r.ID != 3 {
		t.Fatalf("narrower target next: %+v", r)
	}
	if r := PickRate(rules, 7, 0, 1, 43, at("2026-11-24 01:00"), loc); r == nil || r.ID != 1 {
		t.Fatalf("plan window: %+v", r)
	}
	if r := PickRate(rules, 8, 0, 1, 43, at("2026-11-24 01:00"), loc); r != nil {
		t.Fatalf("no rule for another plan: %+v", r)
	}
}
