package identity

import (
	"bytes"
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"image/png"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"xr/app"
)

const totpPeriod = 30

var totpOpts = totp.ValidateOpts{Period: totpPeriod, Skew: 0, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// matchTOTP returns the time step a code matches within ±1 step, or -1.
func matchTOTP(secret, code string, now time.Time) int64 {
	step := now.Unix() / totpPeriod
	for _, d := range []int64{0, -1, 1} {
		s := step + d
		want, err := totp.GenerateCodeCustom(secret, time.Unix(s*totpPeriod, 0), totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return s
		}
	}
	return -1
}

// checkSecondFactor accepts a TOTP code not used before (its time step must
// be newer than the last accepted one) or an unused recovery code.
func checkSecondFactor(ctx context.Context, a *app.App, t *app.Tenant, managerID int64, code string) error {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	bad := app.ErrUnauthorized("invalid_totp_code")
	return t.Write(ctx, func(tx *sql.Tx) error {
		var sealed []byte
		var last int64
		if err := tx.QueryRowContext(ctx, `SELECT totp_secret, totp_last_step FROM managers WHERE id = ?`, managerID).Scan(&sealed, &last); err != nil {
			return err
		}
		if len(code) == 6 && strings.Trim(code, "0123456789") == "" {
			secret, err := a.Keys.Open(sealed)
			if err != nil {
				return err
			}
			step := matchTOTP(string(secret), code, t.Now())
			if step < 0 || step <= last {
				return bad
			}
			_, err = tx.ExecContext(ctx, `UPDATE managers SET totp_last_step = ? WHERE id = ?`, step, managerID)
			return err
		}
		r, err := tx.ExecContext(ctx, `UPDATE recovery_codes SET used_at = ? WHERE manager_id = ? AND code_hash = ? AND used_at IS NULL`,
			t.NowText(), managerID, app.SHA256(strings.ToLower(code)))
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return bad
		}
		return nil
	})
}

// TOTPSetup is the answer of 2fa/setup.
type TOTPSetup struct {
	Secret     string `json:"secret"`
	OTPAuthURL string `json:"otpauth_url"`
	QRPNG      string `json:"qr_png"` // data URL
}

// SetupTOTP makes a new pending secret for the caller; it takes effect when
// EnableTOTP verifies a code from it.
func SetupTOTP(ctx context.Context, act *app.Actor) (*TOTPSetup, error) {
	a := act.Tenant.App
	var account string
	if err := act.Tenant.DB.R.QueryRowContext(ctx, `SELECT COALESCE(username, email) FROM managers WHERE id = ?`, act.ManagerID).Scan(&account); err != nil {
		return nil, err
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: "xr " + act.Tenant.Slug, AccountName: account, Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return nil, err
	}
	img, err := key.Image(200, 200)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	err = act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE managers SET totp_pending = ?, updated_at = ? WHERE id = ?`, a.Keys.Seal([]byte(key.Secret())), act.Tenant.NowText(), act.ManagerID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &TOTPSetup{Secret: key.Secret(), OTPAuthURL: key.URL(), QRPNG: "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())}, nil
}

// TOTPCode is POST /auth/account/2fa/enable.
type TOTPCode struct {
	Code string `json:"code"`
}

// Reauth is the caller's password, re-entered before a sensitive change.
type Reauth struct {
	Password string `json:"password"`
}

// TwoFactorState answers the two-factor rows: whether it is on, and the
// recovery codes when new ones were made (shown once).
type TwoFactorState struct {
	Enabled       bool     `json:"enabled"`
	RecoveryCodes []string `json:"recovery_codes,omitempty"`
}

// RecoveryCodes answers POST /auth/account/2fa/recovery-codes.
type RecoveryCodes struct {
	RecoveryCodes []string `json:"recovery_codes"`
}

// EnableTOTP verifies a code of the pending secret, turns two-factor on and
// returns ten fresh recovery codes (shown once, stored hashed).
func EnableTOTP(ctx context.Context, act *app.Actor, in TOTPCode) (*TwoFactorState, error) {
	a := act.Tenant.App
	code := in.Code
	var codes []string
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		var pending []byte
		var enabled bool
		if err := tx.QueryRowContext(ctx, `SELECT totp_pending, totp_enabled FROM managers WHERE id = ?`, act.ManagerID).Scan(&pending, &enabled); err != nil {
			return err
		}
		if enabled {
			return app.ErrConflict("two_factor_already_enabled")
		}
		if pending == nil {
			return app.ErrConflict("two_factor_not_set_up")
		}
		secret, err := a.Keys.Open(pending)
		if err != nil {
			return err
		}
		step := matchTOTP(string(secret), strings.TrimSpace(code), act.Tenant.Now())
		if step < 0 {
			return app.ErrValidation("invalid_totp_code", "code")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE managers SET totp_secret = totp_pending, totp_pending = NULL, totp_enabled = 1, totp_last_step = ?, updated_at = ? WHERE id = ?`,
			step, act.Tenant.NowText(), act.ManagerID); err != nil {
			return err
		}
		codes, err = replaceRecoveryCodes(ctx, tx, act.ManagerID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &TwoFactorState{Enabled: true, RecoveryCodes: codes}, nil
}

func replaceRecoveryCodes(ctx context.Context, tx *sql.Tx, managerID int64) ([]string, error) {
	if _, err := tx.ExecContext(ctx, `DELETE FROM recovery_codes WHERE manager_id = ?`, managerID); err != nil {
		return nil, err
	}
	codes := make([]string, 10)
	for i := range codes {
		raw := strings.ToLower(strings.TrimRight(base32NoPad(app.RandomBytes(10)), "="))
		codes[i] = raw[:5] + "-" + raw[5:10] + "-" + raw[10:15]
		if _, err := tx.ExecContext(ctx, `INSERT INTO recovery_codes(manager_id, code_hash) VALUES (?,?)`, managerID, app.SHA256(codes[i])); err != nil {
			return nil, err
		}
	}
	return codes, nil
}

// CheckOwnPassword re-verifies the caller's password (re-authentication
// before sensitive account changes).
func CheckOwnPassword(ctx context.Context, a *app.App, act *app.Actor, pw string) error {
	var hash string
	if err := act.Tenant.DB.R.QueryRowContext(ctx, `SELECT password_hash FROM managers WHERE id = ?`, act.ManagerID).Scan(&hash); err != nil {
		return err
	}
	if pw == "" {
		return app.ErrValidation("password_required", "password")
	}
	if !app.VerifyPassword(hash, pw) {
		return app.ErrValidation("invalid_password", "password")
	}
	return nil
}

// DisableTOTP turns two-factor off after password re-entry.
func DisableTOTP(ctx context.Context, act *app.Actor, in Reauth) (*TwoFactorState, error) {
	if err := CheckOwnPassword(ctx, act.Tenant.App, act, in.Password); err != nil {
		return nil, err
	}
	if err := act.Tenant.Write(ctx, func(tx *sql.Tx) error { return clearTOTP(ctx, tx, act.ManagerID) }); err != nil {
		return nil, err
	}
	return &TwoFactorState{Enabled: false}, nil
}

func clearTOTP(ctx context.Context, tx *sql.Tx, managerID int64) error {
	r, err := tx.ExecContext(ctx, `UPDATE managers SET totp_secret = NULL, totp_pending = NULL, totp_enabled = 0, updated_at = ? WHERE id = ?`, app.StampNow(), managerID)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return app.ErrNotFound()
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM recovery_codes WHERE manager_id = ?`, managerID)
	return err
}

// NewRecoveryCodes replaces the recovery codes after password re-entry.
func NewRecoveryCodes(ctx context.Context, act *app.Actor, in Reauth) (*RecoveryCodes, error) {
	if err := CheckOwnPassword(ctx, act.Tenant.App, act, in.Password); err != nil {
		return nil, err
	}
	var codes []string
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		var enabled bool
		if err := tx.QueryRowContext(ctx, `SELECT totp_enabled FROM managers WHERE id = ?`, act.ManagerID).Scan(&enabled); err != nil {
			return err
		}
		if !enabled {
			return app.ErrConflict("two_factor_not_enabled")
		}
		var err error
		codes, err = replaceRecoveryCodes(ctx, tx, act.ManagerID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &RecoveryCodes{RecoveryCodes: codes}, nil
}
