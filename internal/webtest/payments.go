package webtest

import (
	"encoding/json"

	"github.com/stripe/stripe-go/v84/webhook"

	"xr/app"
)

// PaymentUUID1 to 3 are request ids of payments.
const PaymentUUID1, PaymentUUID2, PaymentUUID3 = "0b9a3f0e-6d1c-4c1e-9f5a-1d2e3f4a5b61", "0b9a3f0e-6d1c-4c1e-9f5a-1d2e3f4a5b62", "0b9a3f0e-6d1c-4c1e-9f5a-1d2e3f4a5b63"

// SignedStripeEvent is a Stripe event about a Checkout Session, signed with secret.
func SignedStripeEvent(secret, evID, typ, csID, ref string, cents int64, cur, status string) ([]byte, string) {
	body, _ := json.Marshal(map[string]any{"id": evID, "object": "event", "type": typ, "api_version": "2099-01-01",
		"data": map[string]any{"object": map[string]any{"id": csID, "object": "checkout.session", "client_reference_id": ref,
			"amount_total": cents, "currency": cur, "payment_status": status}}})
	sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret})
	return body, sp.Header
}

// Balance is the stored balance of a subscriber, in thousandths.
func (s *Acme) Balance(uid int64) string {
	s.T.Helper()
	return app.Money(s.Scalar(`SELECT balance FROM users WHERE id = ?`, uid)).String()
}
