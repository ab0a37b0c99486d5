package shop

import (
	"crypto/sha256"
	"encoding/hex"
	"net/mail"
	"regexp"
	"strings"

	"xr/app"
	"xr/app/outbox"
)

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// normalizeContact answers a buyer's contact in its stored form and the
// channel the codes go by: an email address (lower-cased) or an E.164
// phone number (spaces, dashes, dots and parentheses dropped).
func normalizeContact(s string) (contact, channel string, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", "", app.ErrValidation("contact_required", "contact")
	}
	if strings.Contains(s, "@") {
		s = strings.ToLower(s)
		a, err := mail.ParseAddress(s)
		if err != nil || a.Address != s || len(s) > 254 {
			return "", "", app.ErrValidation("contact_invalid", "contact")
		}
		return s, outbox.ChannelEmail, nil
	}
	p := strings.NewReplacer(" ", "", "-", "", ".", "", "(", "", ")", "").Replace(s)
	if strings.HasPrefix(p, "00") {
		p = "+" + p[2:]
	}
	if !e164.MatchString(p) {
		return "", "", app.ErrValidation("contact_invalid", "contact")
	}
	return p, outbox.ChannelSMS, nil
}

// maskContact shows enough of a contact to recognise it in a list:
// "j***@example.com", "+96*****4567".
func maskContact(contact, channel string) string {
	switch channel {
	case outbox.ChannelEmail:
		at := strings.LastIndexByte(contact, '@')
		if at < 0 {
			return "***"
		}
		local := contact[:at]
		keep := 1
		if len(local) <= 1 {
			keep = 0
		}
		return local[:keep] + "***" + contact[at:]
	case outbox.ChannelSMS:
		if len(contact) < 8 {
			return "***"
		}
		return contact[:3] + strings.Repeat("*", len(contact)-7) + contact[len(contact)-4:]
	}
	return ""
}

// returnToken is the secret of a buyer's return page: derived from the
// payer's key and request_id (so a retried purchase gets the same page)
// under the instance's signing key (so nobody else can compute it).
func returnToken(t *app.Tenant, payerKey, requestID string) string {
	m := t.App.Keys.MAC([]byte("shop-return|" + t.Slug + "|" + payerKey + "|" + requestID))
	return hex.EncodeToString(m[:16])
}

func tokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// payerKey scopes a public buyer's request_id to its contact.
func payerKey(contact string) string { return "shop:" + contact }
