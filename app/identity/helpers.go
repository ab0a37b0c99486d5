package identity

import (
	"encoding/base32"
	"encoding/json"
	"fmt"
	"regexp"
)

// jsonStrings decodes a JSON array of strings stored in a column. A corrupt
// value is an error, not an empty list.
func jsonStrings(s string) ([]string, error) {
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("stored JSON list %.40q: %w", s, err)
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

var jsonMarshal = json.Marshal

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func base32NoPad(b []byte) string {
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
}

// The same shapes as the tenant owner's (app) and a subscriber's (subs).
var (
	usernameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$`)
	emailRe    = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
)
