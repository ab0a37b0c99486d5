package aaa

import (
	"testing"
	"time"
)

func TestParentalBlockWindows(t *testing.T) {
	t.Parallel()
	loc, err := time.LoadLocation("Asia/Riyadh") // UTC+3, no DST
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// 2026-11-23 is a Monday. School nights: sun..thu 21:00-07:00 (crosses
	// midnight), and a Friday afternoon 14:00-16:00 that meets a 16:00-17:00.
	schoolNights := 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<4
	p := &Parental{Windows: []ParentalWindow{{Mask: schoolNights, Start: 21 * 60, End: 7 * 60},
		{Mask: 1 << 5, Start: 14 * 60, End: 16 * 60}, {Mask: 1 << 5, Start: 16 * 60, End: 17 * 60}}}
	cases := []struct {
		now     string
		blocked bool
		until   string
		next    string
	}{
		{"2026-11-23 20:59", false, "", "2026-11-23 21:00"},
		{"2026-11-23 21:00", true, "2026-11-24 07:00", "2026-11-24 21:00"},
		{"2026-11-24 06:59", true, "2026-11-24 07:00", "2026-11-24 21:00"},
		{"2026-11-24 07:00", false, "", "2026-11-24 21:00"},
		{"2026-11-27 06:00", true, "2026-11-27 07:00", "2026-11-27 14:00"}, // Friday morning: Thursday's night
		{"2026-11-27 15:00", true, "2026-11-27 17:00", "2026-11-27 16:00"}, // meeting windows are one block
		{"2026-11-27 22:00", false, "", "2026-11-29 21:00"},                // no Friday night window
	}
	for _, c := range cases {
		blocked, until := p.Block(at(c.now), loc)
		if blocked != c.blocked || (c.blocked && !until.Equal(at(c.until))) {
			t.Errorf("%s: blocked %v until %v, want %v %s", c.now, blocked, until.In(loc), c.blocked, c.until)
		}
		if next := p.NextStart(at(c.now), loc); !next.Equal(at(c.next)) {
			t.Errorf("%s: next %v, want %s", c.now, next.In(loc), c.next)
		}
	}
	// An unlock lifts the block until its end only.
	p.UnlockedUntil = at("2026-11-24 07:00")
	if b, _ := p.Block(at("2026-11-23 23:00"), loc); b {
		t.Fatal("unlocked window still blocks")
	}
	if b, _ := p.Block(at("2026-11-24 21:00"), loc); !b {
		t.Fatal("the next window is not blocked after an unlock")
	}
	// A pause blocks outside windows; it extends a window it outlasts.
	p = &Parental{Windows: []ParentalWindow{{Mask: 127, Start: 21 * 60, End: 22 * 60}}, PausedUntil: at("2026-11-23 22:30")}
	if b, until := p.Block(at("2026-11-23 20:00"), loc); !b || !until.Equal(at("2026-11-23 22:30")) {
		t.Fatalf("pause: %v %v", b, until)
	}
	if b, _ := p.Block(at("2026-11-23 22:30"), loc); b {
		t.Fatal("blocked after the pause")
	}
	// start = end: the whole day.
	p = &Parental{Windows: []ParentalWindow{{Mask: 1 << 0, Start: 0, End: 0}}}
	if b, until := p.Block(at("2026-11-29 12:00"), loc); !b || !until.Equal(at("2026-11-30 00:00")) {
		t.Fatalf("whole Sunday: %v %v", b, until)
	}
}

// BenchmarkParentalCheckNone is the hot path's cost of the parental step
// for a subscriber without parental state (map lookup; no allocation).
func BenchmarkParentalCheckNone(b *testing.B) {
	ti := &tenantIndex{parental: map[int64]*Parental{7: {Windows: []ParentalWindow{{Mask: 127, Start: 60, End: 120}}}}, loc: time.UTC}
	r := &record{id: 1}
	a := &Answer{}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if ti.checkParental(r, a, now, nil) {
			b.Fatal("blocked")
		}
	}
}

// BenchmarkParentalCheckWindows is the parental step for a subscriber with
// two windows, outside them (the Session-Timeout cap is computed).
func BenchmarkParentalCheckWindows(b *testing.B) {
	p := &Parental{Windows: []ParentalWindow{{Mask: 31, Start: 21 * 60, End: 7 * 60}, {Mask: 96, Start: 23 * 60, End: 8 * 60}}}
	ti := &tenantIndex{parental: map[int64]*Parental{1: p}, loc: time.UTC}
	r := &record{id: 1}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		a := Answer{}
		if ti.checkParental(r, &a, now, nil) {
			b.Fatal("blocked")
		}
	}
}
