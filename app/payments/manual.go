package payments

import (
	"context"
	"time"
)

// manual is a bank transfer or cash at an agent: the payer gets the
// reference and the gateway's instructions; staff confirm the money arrived
// (POST /admin/payments/{id}/confirm), which credits it.
type manual struct{}

func (manual) Code() string         { return "manual" }
func (manual) Name() string         { return "Bank transfer / cash" }
func (manual) SecretKeys() []string { return nil }

// Lifetime: three days to pay at the bank or an agent.
func (manual) Lifetime() time.Duration { return 72 * time.Hour }

func (manual) Begin(_ context.Context, _ Env, p *Payment) (*Begun, error) {
	return &Begun{ProviderRef: ""}, nil
}
