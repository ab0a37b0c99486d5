package portalentry

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/portal"
)

// The messenger link (portal feature "messenger"). A signed-in subscriber
// asks GET /portal/messenger/link for a short code and sends it to the
// tenant's bot; the bot calls POST /portal/messenger-exchange with the
// messaging account id and the code, signed with the tenant's messenger
// secret, which links the account to the subscriber. Later the bot calls it
// without a code to get a one-time exchange code (a deep link) that opens a
// portal session for the linked subscriber.
//
// The signature is hex(HMAC-SHA256(secret, timestamp "\n" account "\n"
// code)), timestamp in Unix seconds within 5 minutes of the server's clock.
// The secret is made and rotated by staff (POST
// /admin/portal-entry/messenger-secret, answered once) and kept sealed.
const messengerSkew = 5 * time.Minute

// MessengerLink is GET /portal/messenger/link.
type MessengerLink struct {
	Code      string   `json:"code"`
	ExpiresAt app.Time `json:"expires_at"`
	// Linked counts the messaging accounts already linked to the subscriber.
	Linked int `json:"linked"`
}

// NewMessengerLink makes a link code for the signed-in subscriber; an
// earlier unused one stops working.
func NewMessengerLink(ctx context.Context, act *app.Actor) (*MessengerLink, error) {
	t := act.Tenant
	if err := portal.RequireFeature(ctx, t, portal.FeatureMessenger); err != nil {
		return nil, err
	}
	if act.Kind != app.CredSubscriber || act.SubscriberID == 0 {
		return nil, app.ErrForbidden("")
	}
	now := t.Now()
	code := shortCode(8)
	out := &MessengerLink{Code: code, ExpiresAt: app.T(now.Add(messengerLinkTTL))}
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE portal_codes SET used_at = ? WHERE user_id = ? AND kind = ? AND used_at IS NULL`,
			app.FormatTime(now), act.SubscriberID, kindMessengerLink); err != nil {
			return err
		}
		if err := insertCode(ctx, tx, kindMessengerLink, code, act.SubscriberID, 0, "portal", now, messengerLinkTTL); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM messenger_accounts WHERE user_id = ?`, act.SubscriberID).Scan(&out.Linked)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MessengerExchangeInput is POST /portal/messenger-exchange (the bot).
type MessengerExchangeInput struct {
	Account   string `json:"account"`   // the messaging service's account id
	Code      string `json:"code"`      // the link code; empty once linked
	Timestamp int64  `json:"timestamp"` // Unix seconds
	Signature string `json:"signature"` // hex HMAC-SHA256, see the package doc
}

// MessengerExchange is the bot's answer: whom the account is linked to and
// a one-time exchange code for a portal session.
type MessengerExchange struct {
	UserID   int64  `json:"user_id"`
	Username string `json:"username"`
	Linked   bool   `json:"linked"` // true when this call made the link
	ExchangeCode
}

// MessengerSign is the signature of a messenger exchange under secret.
func MessengerSign(secret []byte, timestamp int64, account, code string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(strconv.FormatInt(timestamp, 10) + "\n" + account + "\n" + code))
	return hex.EncodeToString(m.Sum(nil))
}

// ExchangeMessenger checks the signature (401 signature_invalid: no secret,
// a wrong one; 401 signature_stale: timestamp too far off), then links by
// code (400 invalid_code) or finds the linked subscriber (404
// messenger_not_linked), and issues an exchange code.
func ExchangeMessenger(ctx context.Context, t *app.Tenant, in MessengerExchangeInput) (*MessengerExchange, error) {
	if err := requireTenantFeature(ctx, t, portal.FeatureMessenger); err != nil {
		return nil, err
	}
	in.Account = strings.TrimSpace(in.Account)
	if in.Account == "" || len(in.Account) > 200 {
		return nil, app.ErrValidation("account_required", "account")
	}
	secret, err := messengerSecret(ctx, t)
	if err != nil {
		return nil, err
	}
	want := MessengerSign(secret, in.Timestamp, in.Account, in.Code)
	if secret == nil || !hmac.Equal([]byte(want), []byte(strings.ToLower(in.Signature))) {
		return nil, app.ErrUnauthorized("signature_invalid")
	}
	if d := t.Now().Sub(time.Unix(in.Timestamp, 0)); d > messengerSkew || d < -messengerSkew {
		return nil, app.ErrUnauthorized("signature_stale")
	}
	out := &MessengerExchange{}
	err = t.Write(ctx, func(tx *sql.Tx) error {
		if in.Code != "" {
			c, err := useCode(ctx, tx, kindMessengerLink, in.Code, t.NowText())
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO messenger_accounts(account, user_id, linked_at) VALUES (?,?,?)
				ON CONFLICT(account) DO UPDATE SET user_id = excluded.user_id, linked_at = excluded.linked_at`, in.Account, c.UserID, t.NowText()); err != nil {
				return err
			}
			out.Linked = true
		}
		err := tx.QueryRowContext(ctx, `SELECT u.id, u.username FROM messenger_accounts m JOIN users u ON u.id = m.user_id
			WHERE m.account = ? AND u.enabled = 1 AND u.deleted_at IS NULL`, in.Account).Scan(&out.UserID, &out.Username)
		if errors.Is(err, sql.ErrNoRows) {
			e := app.ErrNotFound()
			e.Reason = "messenger_not_linked"
			return e
		}
		if err != nil {
			return err
		}
		code, err := newExchangeCode(ctx, tx, t, out.UserID, 0, "messenger")
		if err != nil {
			return err
		}
		out.ExchangeCode = *code
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// messengerSecret is the tenant's opened secret, nil when none was made.
func messengerSecret(ctx context.Context, t *app.Tenant) ([]byte, error) {
	var sealed []byte
	err := t.DB.R.QueryRowContext(ctx, `SELECT secret_sealed FROM messenger_secret WHERE id = 1`).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s, err := t.App.Keys.Open(sealed)
	if err != nil {
		return nil, app.ErrInternal(err)
	}
	return s, nil
}

// MessengerSecret is POST /admin/portal-entry/messenger-secret: the new
// secret, shown this once.
type MessengerSecret struct {
	Secret    string   `json:"secret"`
	RotatedAt app.Time `json:"rotated_at"`
}

// RotateMessengerSecret makes a new messenger secret (prm_settings); the
// old one stops working at once.
func RotateMessengerSecret(ctx context.Context, act *app.Actor) (*MessengerSecret, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return nil, err
	}
	t := act.Tenant
	secret := hex.EncodeToString(app.RandomBytes(32))
	now := t.Now()
	err := t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO messenger_secret(id, secret_sealed, rotated_at) VALUES (1,?,?)
			ON CONFLICT(id) DO UPDATE SET secret_sealed = excluded.secret_sealed, rotated_at = excluded.rotated_at`,
			t.App.Keys.Seal([]byte(secret)), app.FormatTime(now))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &MessengerSecret{Secret: secret, RotatedAt: app.T(now)}, nil
}
