package cards

import (
	"strings"
	"testing"

	"xr/app"
)

// A corrupt event detail is an error, not an event without detail.
func TestCorruptCardEventDetailIsAnError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.series(e.owner, CreateInput{Type: "refill", Quantity: 1, CodeCharset: "numeric", CodeLength: 6})
	id := e.cardID(e.codes(b.ID)[0])
	if _, err := RevokeCard(e.ctx, e.owner, id); err != nil { // an event of the card's own
		t.Fatal(err)
	}
	if _, err := CardTimeline(e.ctx, e.owner, id); err != nil {
		t.Fatal(err)
	}
	e.exec(`UPDATE card_events SET detail = '{"x":' WHERE card_id = ?`, id)
	_, err := CardTimeline(e.ctx, e.owner, id)
	if err == nil || app.AsError(err) != nil || !strings.Contains(err.Error(), "detail") {
		t.Fatalf("want a server fault naming the column, got %v", err)
	}
}
