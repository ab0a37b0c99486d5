package identity

import (
	"time"

	"xr/app"
)

// Subscriber-portal session tokens: the same signed shape as a manager
// session token with audience "portal" and the subscriber's id as subject.
// The staff authentication refuses them (aud), the portal refuses staff
// tokens; the portal area (app/portal) keeps their session rows.

// SignPortalToken signs a portal token for subscriber userID of tenant t.
func SignPortalToken(a *app.App, t *app.Tenant, userID int64, jti string, exp time.Time) string {
	return signToken(a.Keys, sessionClaims{Tid: t.ID, Sub: userID, Jti: jti, Aud: "portal", Exp: exp.Unix()})
}

// ParsePortalToken verifies a portal token of tenant t: signature,
// audience, tenant and expiry. Anything else is 401 invalid_token.
func ParsePortalToken(a *app.App, t *app.Tenant, tok string) (userID int64, jti string, err error) {
	if t == nil || !IsSessionTokenShape(tok) {
		return 0, "", app.ErrUnauthorized("invalid_token")
	}
	c, ok := parseToken(a, tok, "portal")
	if !ok || c.Tid != t.ID || c.Jti == "" || c.Sub <= 0 {
		return 0, "", app.ErrUnauthorized("invalid_token")
	}
	return c.Sub, c.Jti, nil
}
