package webhooks

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"xr/app"
)

// A corrupt events column is an error, not an endpoint that subscribes to
// nothing.
func TestCorruptEndpointEventsIsAnError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ep := e.endpoint("crm", "http://127.0.0.1:9/hook", []string{"user.created"}, false)
	ctx := context.Background()
	if _, err := ListEndpoints(ctx, e.Act); err != nil {
		t.Fatal(err)
	}
	err := e.T.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE webhook_endpoints SET events = '["user.cre' WHERE id = ?`, ep.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ListEndpoints(ctx, e.Act)
	if err == nil || app.AsError(err) != nil || !strings.Contains(err.Error(), "events") {
		t.Fatalf("want a server fault naming the column, got %v", err)
	}
}
