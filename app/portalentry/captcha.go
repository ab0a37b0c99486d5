package portalentry

import (
	"bytes"
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/dchest/captcha"

	"xr/app"
)

// The image captcha (GET /portal/captcha): six digits drawn by
// github.com/dchest/captcha. Only a hash of the answer is kept, in the
// tenant table portal_captchas, with the client address it was shown to and
// its expiry. A captcha is single use: the first verification attempt
// consumes it whether it succeeds or not, so an answer cannot be guessed
// over several tries.
const (
	captchaDigits = 6
	captchaTTL    = 5 * time.Minute
	captchaWidth  = 240
	captchaHeight = 80
)

// Captcha is GET /portal/captcha: the id to send back with the answer and
// the picture as a base64 PNG.
type Captcha struct {
	ID          string   `json:"captcha_id"`
	Image       string   `json:"image"` // base64 of the PNG bytes
	ContentType string   `json:"content_type"`
	ExpiresAt   app.Time `json:"expires_at"`
	PNG         []byte   `json:"-"`
}

type captchaDigitsKey struct{}

// SetCaptchaDigits makes every captcha of this App show the digits fn
// returns (each 0..9), so a test can answer it; nil restores random digits.
func SetCaptchaDigits(a *app.App, fn func() []byte) { a.SetValue(captchaDigitsKey{}, fn) }

func newDigits(a *app.App) []byte {
	if fn, _ := a.Value(captchaDigitsKey{}).(func() []byte); fn != nil {
		return fn()
	}
	return captcha.RandomDigits(captchaDigits)
}

func captchaHash(id string, answer string) []byte { return app.SHA256(id + ":" + answer) }

// NewCaptcha draws a captcha for the client at clientIP on tenant t. It
// answers on every tenant host, whichever portal features are on.
func NewCaptcha(ctx context.Context, t *app.Tenant, clientIP string) (*Captcha, error) {
	if t == nil {
		return nil, app.ErrNotFound()
	}
	digits := newDigits(t.App)
	answer := make([]byte, len(digits))
	for i, d := range digits {
		answer[i] = '0' + d
	}
	id := app.RandomToken(18)
	var png bytes.Buffer
	if _, err := captcha.NewImage(id, digits, captchaWidth, captchaHeight).WriteTo(&png); err != nil {
		return nil, app.ErrInternal(err)
	}
	now := t.Now()
	exp := now.Add(captchaTTL)
	err := t.Write(ctx, func(tx *sql.Tx) error {
		// Forget captchas expired for a day (nothing can use them any more).
		if _, err := tx.ExecContext(ctx, `DELETE FROM portal_captchas WHERE expires_at < ?`, app.FormatTime(now.Add(-24*time.Hour))); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO portal_captchas(id, answer_hash, client_ip, created_at, expires_at) VALUES (?,?,?,?,?)`,
			id, captchaHash(id, string(answer)), clientIP, app.FormatTime(now), app.FormatTime(exp))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Captcha{ID: id, Image: base64.StdEncoding.EncodeToString(png.Bytes()), ContentType: "image/png",
		ExpiresAt: app.T(exp), PNG: png.Bytes()}, nil
}

// VerifyCaptcha checks and consumes captcha id: 400 captcha_required (field
// captcha_id) when id is empty, 400 captcha_invalid (field captcha_answer)
// when the answer is wrong, the captcha is unknown, expired, already used
// or was shown to another client. The comparison is constant-time.
func VerifyCaptcha(ctx context.Context, t *app.Tenant, id, answer, clientIP string) error {
	if t == nil {
		return app.ErrNotFound()
	}
	id = strings.TrimSpace(id)
	if id == "" {
		return app.ErrValidation("captcha_required", "captcha_id")
	}
	answer = strings.TrimSpace(answer)
	invalid := app.ErrValidation("captcha_invalid", "captcha_answer")
	ok := false
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var hash []byte
		var ip, exp string
		var used sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT answer_hash, client_ip, expires_at, used_at FROM portal_captchas WHERE id = ?`, id).
			Scan(&hash, &ip, &exp, &used)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if used.Valid {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE portal_captchas SET used_at = ? WHERE id = ?`, t.NowText(), id); err != nil {
			return err
		}
		match := subtle.ConstantTimeCompare(hash, captchaHash(id, answer)) == 1
		ok = match && ip == clientIP && exp > t.NowText()
		return nil
	})
	if err != nil {
		return err
	}
	if !ok {
		return invalid
	}
	return nil
}
