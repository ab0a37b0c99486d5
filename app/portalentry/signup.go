package portalentry

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"time"

	"xr/app"
	"xr/app/outbox"
	"xr/app/portal"
	"xr/app/subs"
)

// Self sign-up (portal feature "signup"): POST /portal/signup checks the
// captcha, the fields and that the username and email are free, keeps the
// request (sealed: it holds the password) in portal_signups and sends a
// six-digit code by the tenant's verification channel (email or SMS, through
// the outbox). POST /portal/signup/verify with the code creates the
// subscriber — owned by the configured manager, on the configured plan —
// and opens a portal session. A pending sign-up allows five wrong codes
// and lives 15 minutes.
const (
	signupTTL         = 15 * time.Minute
	signupMaxAttempts = 5
	signupTemplate    = "portal.signup_code"
)

// StandardFields are the subscriber fields a tenant may require at sign-up
// (setting signup_required_fields).
var StandardFields = []string{"firstname", "lastname", "email", "phone", "address", "national_id"}

// signupConfig is the tenant's sign-up settings, read together.
type signupConfig struct {
	ProfileID int64
	ManagerID int64 // resolved: the owner when the setting is 0
	Required  []string
	Channel   string
}

func readSignupConfig(ctx context.Context, t *app.Tenant) (*signupConfig, error) {
	q := t.DB.R
	c := &signupConfig{}
	var err error
	if c.ProfileID, err = SettingSignupProfile.Get(ctx, q); err != nil {
		return nil, err
	}
	if c.ManagerID, err = SettingSignupManager.Get(ctx, q); err != nil {
		return nil, err
	}
	req, err := SettingSignupRequired.Get(ctx, q)
	if err != nil {
		return nil, err
	}
	c.Required = splitList(req)
	if c.Channel, err = SettingSignupVerification.Get(ctx, q); err != nil {
		return nil, err
	}
	if c.Channel != outbox.ChannelSMS {
		c.Channel = outbox.ChannelEmail
	}
	if c.ManagerID == 0 {
		err = q.QueryRowContext(ctx, `SELECT id FROM managers WHERE parent_id IS NULL`).Scan(&c.ManagerID)
	} else {
		var one int
		err = q.QueryRowContext(ctx, `SELECT 1 FROM managers WHERE id = ?`, c.ManagerID).Scan(&one)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrConflict("signup_not_configured")
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// SignupPlan is the plan a new subscriber gets.
type SignupPlan struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// SignupSchema is GET /portal/signup/schema: what the sign-up form asks.
type SignupSchema struct {
	Plan *SignupPlan `json:"plan"` // null: none
	// Required are the standard fields the tenant requires (besides
	// username and password, always required).
	Required []string `json:"required"`
	// Fields are the custom fields of the subscriber form (custom_fields).
	Fields          []subs.FormField `json:"fields"`
	Verification    string           `json:"verification"` // email or sms: where the code goes
	CaptchaRequired bool             `json:"captcha_required"`
}

// GetSignupSchema answers 403 feature_disabled while sign-up is off.
func GetSignupSchema(ctx context.Context, t *app.Tenant) (*SignupSchema, error) {
	if err := requireTenantFeature(ctx, t, portal.FeatureSignup); err != nil {
		return nil, err
	}
	c, err := readSignupConfig(ctx, t)
	if err != nil {
		return nil, err
	}
	out := &SignupSchema{Required: append([]string{}, c.Required...), Verification: c.Channel, CaptchaRequired: true}
	if c.ProfileID != 0 {
		p := &SignupPlan{ID: c.ProfileID}
		err := t.DB.R.QueryRowContext(ctx, `SELECT name FROM profiles WHERE id = ?`, c.ProfileID).Scan(&p.Name)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		if err == nil {
			out.Plan = p
		}
	}
	act, err := app.SystemActor(ctx, t)
	if err != nil {
		return nil, err
	}
	fs, err := subs.GetFormSchema(ctx, act, "user")
	if err != nil {
		return nil, err
	}
	out.Fields = fs.Fields
	return out, nil
}

// SignupInput is POST /portal/signup.
type SignupInput struct {
	Username      string                     `json:"username"`
	Password      string                     `json:"password"` // portal and RADIUS password
	Email         string                     `json:"email"`
	Phone         string                     `json:"phone"` // E.164 (+9647...) when codes go by SMS
	Firstname     string                     `json:"firstname"`
	Lastname      string                     `json:"lastname"`
	Address       string                     `json:"address"`
	NationalID    string                     `json:"national_id"`
	CustomFields  map[string]json.RawMessage `json:"custom_fields"`
	CaptchaID     string                     `json:"captcha_id"`
	CaptchaAnswer string                     `json:"captcha_answer"`
	IP            string                     `json:"-"`
}

// SignupPending is the answer of POST /portal/signup (202): where the code
// went and the id to verify it with.
type SignupPending struct {
	SignupID  string   `json:"signup_id"`
	Channel   string   `json:"channel"`
	To        string   `json:"to"` // the address, partly masked
	ExpiresAt app.Time `json:"expires_at"`
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

func (in *SignupInput) field(name string) string {
	switch name {
	case "firstname":
		return in.Firstname
	case "lastname":
		return in.Lastname
	case "email":
		return in.Email
	case "phone":
		return in.Phone
	case "address":
		return in.Address
	case "national_id":
		return in.NationalID
	}
	return ""
}

func (in *SignupInput) newUser(c *signupConfig) subs.NewUser {
	return subs.NewUser{Username: in.Username, Password: in.Password, PortalPassword: in.Password, ParentID: c.ManagerID,
		ProfileID: c.ProfileID, Email: in.Email, Phone: in.Phone, Firstname: in.Firstname, Lastname: in.Lastname,
		Address: in.Address, NationalID: in.NationalID, CustomFields: in.CustomFields}
}

// Signup starts a self sign-up. Order: feature, configuration, captcha (it
// is spent), fields, then duplicates: 409 username_taken, 409 email_taken.
func Signup(ctx context.Context, t *app.Tenant, in SignupInput) (*SignupPending, error) {
	if err := requireTenantFeature(ctx, t, portal.FeatureSignup); err != nil {
		return nil, err
	}
	c, err := readSignupConfig(ctx, t)
	if err != nil {
		return nil, err
	}
	if err := VerifyCaptcha(ctx, t, in.CaptchaID, in.CaptchaAnswer, in.IP); err != nil {
		return nil, err
	}
	in.Username, in.Email, in.Phone = strings.TrimSpace(in.Username), strings.TrimSpace(in.Email), strings.TrimSpace(in.Phone)
	if in.Username == "" {
		return nil, app.ErrValidation("username_required", "username")
	}
	if !subs.ValidUsername(in.Username) {
		return nil, app.ErrValidation("invalid_username", "username")
	}
	if in.Password == "" {
		return nil, app.ErrValidation("password_required", "password")
	}
	if err := app.CheckPasswordStrength(in.Password, "password"); err != nil {
		return nil, err
	}
	for _, f := range c.Required {
		if strings.TrimSpace(in.field(f)) == "" {
			return nil, app.ErrValidation("required", f)
		}
	}
	to := in.Email
	if c.Channel == outbox.ChannelSMS {
		to = in.Phone
		if to == "" {
			return nil, app.ErrValidation("phone_required", "phone")
		}
		if !e164.MatchString(to) {
			return nil, app.ErrValidation("invalid_phone", "phone")
		}
	} else if to == "" {
		return nil, app.ErrValidation("email_required", "email")
	}
	// Everything CreateUser will check, now, so the code is only sent for
	// a request that can succeed.
	if _, err := subs.ValidateCustomFields(ctx, t.DB.R, "user", in.CustomFields, nil); err != nil {
		return nil, err
	}
	if err := signupDuplicates(ctx, t.DB.R, in.Username, in.Email); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(in)
	if err != nil {
		return nil, app.ErrInternal(err)
	}
	id := app.RandomToken(18)
	code := randomDigits(6)
	now := t.Now()
	exp := now.Add(signupTTL)
	err = t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM portal_signups WHERE expires_at < ?`, app.FormatTime(now.Add(-24*time.Hour))); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO portal_signups(id, username, email, phone, channel, code_hash, payload_sealed, client_ip, created_at, expires_at)
			VALUES (?,?,?,?,?,?,?,?,?,?)`, id, in.Username, in.Email, in.Phone, c.Channel, app.SHA256(id+":"+code),
			t.App.Keys.Seal(payload), in.IP, app.FormatTime(now), app.FormatTime(exp)); err != nil {
			return err
		}
		_, err := outbox.Enqueue(ctx, tx, t, outbox.Message{Channel: c.Channel, To: to, Template: signupTemplate,
			Vars: map[string]string{"code": code}, Cause: "signup:" + id})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &SignupPending{SignupID: id, Channel: c.Channel, To: mask(to), ExpiresAt: app.T(exp)}, nil
}

// signupDuplicates refuses a username or email another subscriber has.
func signupDuplicates(ctx context.Context, q app.Querier, username, email string) error {
	if taken, err := subs.UsernameTaken(ctx, q, username); err != nil {
		return err
	} else if taken {
		return app.ErrConflict("username_taken").With("field", "username")
	}
	if email != "" {
		if taken, err := subs.EmailTaken(ctx, q, email); err != nil {
			return err
		} else if taken {
			return app.ErrConflict("email_taken").With("field", "email")
		}
	}
	return nil
}

func randomDigits(n int) string {
	var b strings.Builder
	for range n {
		d, err := rand.Int(rand.Reader, big.NewInt(10))
		if err != nil {
			panic(err)
		}
		b.WriteByte(byte('0' + d.Int64()))
	}
	return b.String()
}

// mask shows the first and last characters of an address.
func mask(s string) string {
	r := []rune(s)
	if len(r) <= 4 {
		return strings.Repeat("*", len(r))
	}
	return string(r[:2]) + strings.Repeat("*", len(r)-4) + string(r[len(r)-2:])
}

// SignupVerifyInput is POST /portal/signup/verify.
type SignupVerifyInput struct {
	SignupID  string `json:"signup_id"`
	Code      string `json:"code"`
	Refresh   bool   `json:"refresh"`
	IP        string `json:"-"`
	UserAgent string `json:"-"`
}

// SignupDone is the answer of POST /portal/signup/verify: the new
// subscriber and its first portal session.
type SignupDone struct {
	UserID   int64           `json:"user_id"`
	Username string          `json:"username"`
	Session  *portal.Session `json:"session"`
}

// VerifySignup checks the code of a pending sign-up and creates the
// subscriber. Unknown, expired, finished and wrong answer alike (400
// invalid_code); a wrong code counts, the fifth spends the sign-up. A
// verified sign-up is deleted (its sealed request holds the password).
func VerifySignup(ctx context.Context, t *app.Tenant, in SignupVerifyInput) (*SignupDone, error) {
	if err := requireTenantFeature(ctx, t, portal.FeatureSignup); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Code) == "" {
		return nil, app.ErrValidation("code_required", "code")
	}
	c, err := readSignupConfig(ctx, t)
	if err != nil {
		return nil, err
	}
	var out *SignupDone
	wrong := false
	err = t.Write(ctx, func(tx *sql.Tx) error {
		var hash, sealed []byte
		var attempts int
		var exp string
		err := tx.QueryRowContext(ctx, `SELECT code_hash, payload_sealed, attempts, expires_at FROM portal_signups WHERE id = ?`, in.SignupID).
			Scan(&hash, &sealed, &attempts, &exp)
		if errors.Is(err, sql.ErrNoRows) {
			wrong = true
			return nil
		}
		if err != nil {
			return err
		}
		if exp <= t.NowText() || attempts >= signupMaxAttempts {
			wrong = true
			return nil
		}
		if subtle.ConstantTimeCompare(hash, app.SHA256(in.SignupID+":"+strings.TrimSpace(in.Code))) != 1 {
			wrong = true
			_, err := tx.ExecContext(ctx, `UPDATE portal_signups SET attempts = attempts + 1 WHERE id = ?`, in.SignupID)
			return err
		}
		plain, err := t.App.Keys.Open(sealed)
		if err != nil {
			return app.ErrInternal(fmt.Errorf("portal sign-up %s: %w", in.SignupID, err))
		}
		var req SignupInput
		if err := json.Unmarshal(plain, &req); err != nil {
			return app.ErrInternal(err)
		}
		if err := signupDuplicates(ctx, tx, req.Username, req.Email); err != nil {
			return err
		}
		created, err := subs.CreateUser(ctx, tx, t, req.newUser(c))
		if err != nil {
			return err
		}
		// Done: the request (with its password) is not kept.
		if _, err := tx.ExecContext(ctx, `DELETE FROM portal_signups WHERE id = ?`, in.SignupID); err != nil {
			return err
		}
		out = &SignupDone{UserID: created.ID, Username: created.Username}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if wrong {
		return nil, errInvalidCode
	}
	if out.Session, err = portal.OpenSessionFor(ctx, t, out.UserID, 0, in.Refresh, in.IP, in.UserAgent); err != nil {
		return nil, err
	}
	return out, nil
}
