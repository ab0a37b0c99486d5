package console_test

// Browser test of the monitoring pages (prefix cmon).

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"xr/app"
	"xr/app/monitoring"
	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// TestConsoleMonitoringInBrowser: the owner adds a device outside the
// declared ranges (refused beside the address), adds a TCP listener as a
// device, sees it up after a poll, pings it from its page, sees it down
// after three failed polls, and acknowledges the alert.
func TestConsoleMonitoringInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.NewWith(t, app.Config{AllowPrivateEgress: true}, nil, nil) // the device is a loopback listener
	ten := k.Acquire("acme")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	var mu sync.Mutex
	offset := time.Duration(0)
	k.App.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) })
	poll := func() {
		t.Helper()
		mu.Lock()
		offset += 31 * time.Second
		mu.Unlock()
		if _, err := monitoring.PollDue(t.Context(), ten, ten.Now()); err != nil {
			t.Fatal(err)
		}
	}

	b := browsertest.New(t, k)
	b.SignIn("owner")
	b.Run("monitoring", chromedp.Navigate(b.Base+"/monitoring"), chromedp.WaitVisible("#mon-form", chromedp.ByQuery))
	b.Axe("monitoring, empty")
	// Loopback must be declared before a device there is probed: a bad
	// range is refused beside the field and nothing is stored.
	b.Run("a bad range", chromedp.SetValue("#f-network_ranges", "127.0.0.0/8\n10.0.0/33", chromedp.ByQuery),
		chromedp.Click("#mon-ranges-form button", chromedp.ByQuery), chromedp.WaitVisible("#e-network_ranges", chromedp.ByQuery))
	if got := b.Text("#e-network_ranges"); !strings.Contains(got, "CIDR") {
		t.Fatalf("ranges error %q", got)
	}
	if n := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM settings WHERE key = 'monitoring_network_ranges'`); n != 0 {
		t.Fatalf("a refused range was stored (%d rows)", n)
	}
	b.Axe("monitoring, refused range")
	b.Run("declare loopback", chromedp.SetValue("#f-network_ranges", "127.0.0.0/8", chromedp.ByQuery),
		chromedp.Click("#mon-ranges-form button", chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if got, err := monitoring.GetSettings(t.Context(), k.System("acme")); err != nil || strings.Join(got.NetworkRanges, ",") != "127.0.0.0/8" {
		t.Fatalf("declared ranges %+v %v", got, err)
	}
	b.Run("add outside the ranges", chromedp.SetValue("#f-name", "metadata", chromedp.ByQuery),
		chromedp.SetValue("#f-address", "169.254.169.254", chromedp.ByQuery), chromedp.Click("#mon-form button", chromedp.ByQuery),
		chromedp.WaitVisible("#e-address", chromedp.ByQuery))
	if got := b.Text("#e-address"); !strings.Contains(got, "outside the network ranges") {
		t.Fatalf("address error %q", got)
	}
	b.Axe("monitoring, refused address")
	b.Run("add the listener", chromedp.SetValue("#f-name", "tower-1", chromedp.ByQuery),
		chromedp.SetValue("#f-address", "127.0.0.1", chromedp.ByQuery), chromedp.SetValue("#f-probe_port", fmt.Sprint(port), chromedp.ByQuery),
		chromedp.Click("#mon-form button", chromedp.ByQuery), chromedp.WaitVisible("#mon-status", chromedp.ByQuery))
	id := xrtest.Scalar(t, ten, `SELECT id FROM mon_devices WHERE name = 'tower-1' AND address = '127.0.0.1' AND probe_port = ?`, port)
	if got := b.Text("#mon-status"); got != "Unknown" {
		t.Fatalf("status before a poll %q", got)
	}
	poll()
	b.Run("reload", chromedp.Reload(), chromedp.WaitVisible("#mon-status", chromedp.ByQuery))
	if got := b.Text("#mon-status"); got != "Up" {
		t.Fatalf("status after a poll %q", got)
	}
	b.Run("ping now", chromedp.Click("#mon-ping-form button", chromedp.ByQuery), chromedp.WaitVisible("#mon-ping-result", chromedp.ByQuery))
	if got := b.Text("#mon-ping-result"); !strings.Contains(got, "3 of 3") || !strings.Contains(got, "tcp") {
		t.Fatalf("ping result %q", got)
	}
	b.Axe("device page with a ping")
	ln.Close()
	for range 3 {
		poll()
	}
	b.Run("alerts", chromedp.Navigate(b.Base+"/monitoring/alerts"), chromedp.WaitVisible("#mon-alert-list", chromedp.ByQuery))
	if got := b.Text("#mon-alert-list tbody"); !strings.Contains(got, "tower-1") || !strings.Contains(got, "Critical") || !strings.Contains(got, "Open") {
		t.Fatalf("alert list %q", got)
	}
	b.Axe("alerts")
	b.Run("acknowledge", chromedp.Click("#mon-alert-list form button", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if got := b.Text("#mon-alert-list tbody"); !strings.Contains(got, "Acknowledged") {
		t.Fatalf("after ack %q", got)
	}
	if xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM mon_alerts WHERE device_id = ? AND rule = 'down' AND acked_at IS NOT NULL`, id) != 1 ||
		xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM mon_devices WHERE id = ? AND status = 'down'`, id) != 1 {
		t.Fatal("stored alert or status")
	}
	b.Run("device list", chromedp.Navigate(b.Base+"/monitoring"), chromedp.WaitVisible("#mon-devices", chromedp.ByQuery))
	if got := b.Text("#mon-devices tbody"); !strings.Contains(got, "Down") {
		t.Fatalf("device list %q", got)
	}
	b.Shot("cmon-devices")
}
