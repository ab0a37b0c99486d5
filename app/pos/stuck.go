package pos

import (
	"context"

	"xr/app"
	"xr/app/cards"
)

// StuckCards is GET /pos/stuck-cards (beyond the spec): the cards held by
// a till sale that never completed (disposition stuck; each series'
// stuck_sale counts them), owned within the caller's subtree. Nothing
// reclaims them; staff decide (redeem at the counter, or revoke).
func StuckCards(ctx context.Context, act *app.Actor) ([]cards.StuckCard, error) {
	if _, err := cashier(act, PermPosVoid); err != nil {
		return nil, err
	}
	return cards.StuckCards(ctx, act)
}
