package identity

import (
	"context"
	"strconv"
	"testing"

	"xr/app"
	"xr/internal/xrtest"
)

// A corrupt JSON column is an error, not an empty value.
func TestCorruptStoredJSONIsAnError(t *testing.T) {
	t.Parallel()
	a := xrtest.TenantApp(t, "json")
	tt := xrtest.Acquire(t, a, "json")
	ctx := context.Background()
	owner, err := app.SystemActor(ctx, tt)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := CreateAPIToken(ctx, owner, APITokenInput{Name: "ci", Scopes: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Authenticate(ctx, a, tt, tok.Token); err != nil {
		t.Fatalf("healthy token: %v", err)
	}
	if _, err := ListRoles(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if _, err := GetMe(ctx, owner); err != nil {
		t.Fatal(err)
	}

	xrtest.Exec(t, tt, `UPDATE api_tokens SET scopes = '["users.read"' WHERE id = `+strconv.FormatInt(tok.ID, 10))
	if _, err := Authenticate(ctx, a, tt, tok.Token); err == nil || app.AsError(err) != nil {
		t.Fatalf("token with corrupt scopes: want a server fault, got %v", err)
	}
	if _, err := ListAPITokens(ctx, owner); err == nil {
		t.Fatal("token list with corrupt scopes: no error")
	}

	xrtest.Exec(t, tt, `UPDATE roles SET portal_permissions = 'not json'`)
	if _, err := ListRoles(ctx, owner); err == nil {
		t.Fatal("roles with corrupt portal_permissions: no error")
	}

	xrtest.Exec(t, tt, `UPDATE settings SET value = '"US' WHERE key = 'currency'`)
	if _, err := GetMe(ctx, owner); err == nil {
		t.Fatal("GET /me with a corrupt currency setting: no error")
	}
}
