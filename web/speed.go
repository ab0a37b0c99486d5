package web

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
)

// Speeds are stored in kbit/s; people read and type them in Mbit/s. This
// is the one place a speed is parsed from a form and shown on a page.

// MaxSpeedKbps bounds a typed speed: 100 Gbit/s.
const MaxSpeedKbps = 100_000_000

// speedUnits are the suffixes a typed speed may carry, in kbit/s (decimal,
// as network rates are).
var speedUnits = []struct {
	suffix string
	kbps   float64
}{{"gbit/s", 1e6}, {"mbit/s", 1e3}, {"kbit/s", 1}, {"gbps", 1e6}, {"mbps", 1e3}, {"kbps", 1}, {"g", 1e6}, {"m", 1e3}, {"k", 1}}

// ParseSpeed reads a typed speed ("20M", "512k", "1.5 Gbit/s"; a bare
// number is kbit/s) as kbit/s: 400 invalid_speed naming field when it is
// not one, or is negative or beyond MaxSpeedKbps.
func ParseSpeed(raw, field string) (int64, error) {
	s := strings.ToLower(strings.TrimSpace(raw))
	unit := 1.0
	for _, u := range speedUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, unit = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.kbps
			break
		}
	}
	if len(s) > 20 {
		return 0, app.ErrValidation("invalid_speed", field)
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(n) || n < 0 || n*unit > MaxSpeedKbps {
		return 0, app.ErrValidation("invalid_speed", field)
	}
	return int64(math.Round(n * unit)), nil
}

// FormSpeed reads a speed field of a form: not set when empty.
func FormSpeed(f url.Values, field string) (app.Opt[int64], error) {
	raw := strings.TrimSpace(f.Get(field))
	if raw == "" {
		return app.Opt[int64]{}, nil
	}
	n, err := ParseSpeed(raw, field)
	if err != nil {
		return app.Opt[int64]{}, err
	}
	return app.Opt[int64]{Set: true, V: n}, nil
}

// SpeedInput is a stored speed as a form shows it for editing ("20M",
// "512k"); ParseSpeed reads it back to the same number.
func SpeedInput(kbps int64) string {
	if kbps != 0 && kbps%1000 == 0 {
		return strconv.FormatInt(kbps/1000, 10) + "M"
	}
	return strconv.FormatInt(kbps, 10) + "k"
}

// HumanSpeed shows a speed in kbit/s as people read it ("20 Mbit/s",
// "512 kbit/s", "1.5 Gbit/s").
func HumanSpeed(kbps int64) string {
	switch {
	case kbps >= 1e6:
		return strconv.FormatFloat(float64(kbps)/1e6, 'f', -1, 64) + " Gbit/s"
	case kbps >= 1000:
		return strconv.FormatFloat(float64(kbps)/1e3, 'f', -1, 64) + " Mbit/s"
	}
	return fmt.Sprintf("%d kbit/s", kbps)
}
