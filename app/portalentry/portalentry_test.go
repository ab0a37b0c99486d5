package portalentry

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"xr/internal/xrtest"
)

func TestCaptchaSingleUseBoundAndExpiring(t *testing.T) {
	t.Parallel()
	a := xrtest.TenantApp(t, "acme", Module)
	ten := xrtest.Acquire(t, a, "acme")
	SetCaptchaDigits(a, func() []byte { return []byte{9, 8, 7, 6, 5, 4} })
	ctx := context.Background()
	c, err := NewCaptcha(ctx, ten, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.PNG) < 100 || string(c.PNG[1:4]) != "PNG" || c.ID == "" {
		t.Fatalf("captcha: %+v", c.ID)
	}
	xrtest.WantReason(t, VerifyCaptcha(ctx, ten, c.ID, "987654", "192.0.2.2"), 400, "captcha_invalid") // another client
	xrtest.WantReason(t, VerifyCaptcha(ctx, ten, c.ID, "987654", "192.0.2.1"), 400, "captcha_invalid") // spent by the try above
	c, _ = NewCaptcha(ctx, ten, "192.0.2.1")
	if err := VerifyCaptcha(ctx, ten, c.ID, " 987654 ", "192.0.2.1"); err != nil {
		t.Fatalf("right answer: %v", err)
	}
	xrtest.WantReason(t, VerifyCaptcha(ctx, ten, c.ID, "987654", "192.0.2.1"), 400, "captcha_invalid")
	c, _ = NewCaptcha(ctx, ten, "192.0.2.1")
	a.SetClock(func() time.Time { return time.Now().Add(captchaTTL + time.Second) })
	xrtest.WantReason(t, VerifyCaptcha(ctx, ten, c.ID, "987654", "192.0.2.1"), 400, "captcha_invalid")
	a.SetClock(nil)
	xrtest.WantReason(t, VerifyCaptcha(ctx, ten, "", "987654", "192.0.2.1"), 400, "captcha_required")
	if n := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM portal_captchas WHERE used_at IS NULL`); n != 0 {
		t.Fatalf("unspent captchas: %d", n)
	}
}

func TestCodesAndRanges(t *testing.T) {
	t.Parallel()
	for range 50 {
		c := shortCode(10)
		if len(c) != 10 || strings.ContainsAny(c, "01OIL") {
			t.Fatalf("code %q", c)
		}
	}
	if normCode(kindInvite, " abcde-fghij ") != "ABCDEFGHIJ" || normCode(kindExchange, " Ab-c ") != "Ab-c" {
		t.Fatal("normCode")
	}
	ip := netip.MustParseAddr("10.1.2.3")
	if !inRanges("192.168.0.0/16, 10.0.0.0/8", ip) || inRanges("10.2.0.0/16", ip) || inRanges("bogus", ip) || inRanges("", ip) {
		t.Fatal("inRanges")
	}
	if a, ok := parseClientIP("::ffff:10.1.2.3"); !ok || a != ip {
		t.Fatalf("mapped address: %v", a)
	}
	if mask("alice@example.com") != "al*************om" || mask("abc") != "***" {
		t.Fatalf("mask: %q", mask("alice@example.com"))
	}
}
