package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"net/smtp"
	"strings"
	"time"

	"xr/app"
)

// Registration limits.
const (
	registrationTTL      = 30 * time.Minute
	registrationAttempts = 5
	registrationSends    = 5
)

// RegistrationStart is the answer of /auth/register/start and /resend.
type RegistrationStart struct {
	RegistrationID string   `json:"registration_id"`
	ExpiresAt      app.Time `json:"expires_at"`
}

func signupAllowed(a *app.App) error {
	if !a.Cfg.AllowSignup {
		return app.ErrForbidden("signup_disabled")
	}
	return nil
}

func verificationCode() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(1_000_000))
	return fmt.Sprintf("%06d", n.Int64())
}

// StartRegistration records a sign-up and mails a verification code.
func StartRegistration(ctx context.Context, a *app.App, email string) (*RegistrationStart, error) {
	if err := signupAllowed(a); err != nil {
		return nil, err
	}
	email = strings.TrimSpace(strings.ToLower(email))
	if !emailRe.MatchString(email) {
		return nil, app.ErrValidation("invalid_email", "email")
	}
	id, code := app.NewUUID(), verificationCode()
	exp := a.Now().Add(registrationTTL)
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO registrations(id, email, code_hash, expires_at, created_at) VALUES (?,?,?,?,?)`,
			id, email, app.SHA256(code), app.FormatTime(exp), a.NowText()); err != nil {
			return err
		}
		return queueMail(ctx, tx, email, "Your xr verification code", "Your verification code is "+code+". It expires in 30 minutes.")
	})
	if err != nil {
		return nil, err
	}
	flushMail(ctx, a)
	return &RegistrationStart{RegistrationID: id, ExpiresAt: app.T(exp)}, nil
}

type registration struct {
	email               string
	codeHash            []byte
	attempts, sends     int
	verified, completed bool
	expires             string
}

func loadRegistration(ctx context.Context, tx *sql.Tx, now string, id string) (*registration, error) {
	r := &registration{}
	var v, c sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT email, code_hash, attempts, sends, verified_at, completed_at, expires_at FROM registrations WHERE id = ?`, id).
		Scan(&r.email, &r.codeHash, &r.attempts, &r.sends, &v, &c, &r.expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	r.verified, r.completed = v.Valid, c.Valid
	if r.completed {
		return nil, app.ErrConflict("registration_completed")
	}
	if r.expires <= now {
		return nil, app.ErrValidation("registration_expired", "registration_id")
	}
	return r, nil
}

// VerifyRegistration checks the mailed code (a bounded number of tries).
func VerifyRegistration(ctx context.Context, a *app.App, id, code string) error {
	if err := signupAllowed(a); err != nil {
		return err
	}
	var wrong bool
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		r, err := loadRegistration(ctx, tx, a.NowText(), id)
		if err != nil {
			return err
		}
		if r.verified {
			return nil
		}
		if r.attempts >= registrationAttempts {
			return app.ErrConflict("too_many_attempts")
		}
		if subtle.ConstantTimeCompare(app.SHA256(strings.TrimSpace(code)), r.codeHash) != 1 {
			wrong = true
			_, err := tx.ExecContext(ctx, `UPDATE registrations SET attempts = attempts + 1 WHERE id = ?`, id)
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE registrations SET verified_at = ? WHERE id = ?`, a.NowText(), id)
		return err
	})
	if err == nil && wrong {
		return app.ErrValidation("invalid_code", "code")
	}
	return err
}

// ResendRegistration mails a fresh code (a bounded number of times).
func ResendRegistration(ctx context.Context, a *app.App, id string) (*RegistrationStart, error) {
	if err := signupAllowed(a); err != nil {
		return nil, err
	}
	code := verificationCode()
	exp := a.Now().Add(registrationTTL)
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		r, err := loadRegistration(ctx, tx, a.NowText(), id)
		if err != nil {
			return err
		}
		if r.verified {
			return app.ErrConflict("already_verified")
		}
		if r.sends >= registrationSends {
			return app.ErrConflict("too_many_resends")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE registrations SET code_hash = ?, attempts = 0, sends = sends + 1, expires_at = ? WHERE id = ?`,
			app.SHA256(code), app.FormatTime(exp), id); err != nil {
			return err
		}
		return queueMail(ctx, tx, r.email, "Your xr verification code", "Your verification code is "+code+". It expires in 30 minutes.")
	})
	if err != nil {
		return nil, err
	}
	flushMail(ctx, a)
	return &RegistrationStart{RegistrationID: id, ExpiresAt: app.T(exp)}, nil
}

// CompleteRegistrationInput is the last step: the verified email becomes the
// owner of a new tenant.
type CompleteRegistrationInput struct {
	RegistrationID string `json:"registration_id"`
	Slug           string `json:"slug"`
	Name           string `json:"name"`
	Username       string `json:"username"`
	Password       string `json:"password"`
}

// RegistrationDone is the answer of /auth/register/complete.
type RegistrationDone struct {
	TenantID   int64  `json:"tenant_id"`
	TenantSlug string `json:"tenant_slug"`
	OwnerID    int64  `json:"owner_id"`
}

// CompleteRegistration creates the tenant and its owner.
func CompleteRegistration(ctx context.Context, a *app.App, in CompleteRegistrationInput) (*RegistrationDone, error) {
	if err := signupAllowed(a); err != nil {
		return nil, err
	}
	var email string
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		r, err := loadRegistration(ctx, tx, a.NowText(), in.RegistrationID)
		if err != nil {
			return err
		}
		if !r.verified {
			return app.ErrConflict("registration_not_verified")
		}
		email = r.email
		return nil
	})
	if err != nil {
		return nil, err
	}
	ti, owner, err := a.CreateTenant(ctx, app.NewTenant{Slug: in.Slug, Name: in.Name, AdminUsername: in.Username, AdminEmail: email,
		AdminPassword: in.Password, MaxUsers: signupMaxUsers()})
	if err != nil {
		return nil, err
	}
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE registrations SET completed_at = ?, tenant_id = ? WHERE id = ?`, a.NowText(), ti.ID, in.RegistrationID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("tenant %s created, mark registration %s completed: %w", ti.Slug, in.RegistrationID, err)
	}
	return &RegistrationDone{TenantID: ti.ID, TenantSlug: ti.Slug, OwnerID: owner}, nil
}

// A self-registered tenant starts on a small trial licence.
func signupMaxUsers() *int64 { n := int64(100); return &n }

// SlugAvailable tells a sign-up page whether a slug can be taken.
func SlugAvailable(a *app.App, slug string) (bool, string) {
	if err := app.ValidateSlug(slug); err != nil {
		return false, app.AsError(err).Reason
	}
	if _, taken := a.TenantBySlug(slug); taken {
		return false, "slug_taken"
	}
	return true, ""
}

func queueMail(ctx context.Context, tx *sql.Tx, to, subject, body string) error {
	// the stamp of the row; the sender reads it only to order the queue
	_, err := tx.ExecContext(ctx, `INSERT INTO mail_outbox(to_addr, subject, body, created_at) VALUES (?,?,?,?)`, to, subject, body, app.StampNow())
	return err
}

// flushMail sends queued mail through the configured relay, or logs it
// (the outbox keeps it either way).
func flushMail(ctx context.Context, a *app.App) {
	// Background work with no caller: failures are logged and the outbox
	// keeps the mail for the next flush.
	rows, err := a.Inst.R.QueryContext(ctx, `SELECT id, to_addr, subject, body FROM mail_outbox WHERE sent_at IS NULL AND error = '' ORDER BY id LIMIT 20`)
	if err != nil {
		a.Log.Error("read mail outbox", "err", err)
		return
	}
	type mail struct {
		id                int64
		to, subject, body string
	}
	var pending []mail
	for rows.Next() {
		var m mail
		if err := rows.Scan(&m.id, &m.to, &m.subject, &m.body); err != nil {
			rows.Close()
			a.Log.Error("read mail outbox", "err", err)
			return
		}
		pending = append(pending, m)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		a.Log.Error("read mail outbox", "err", err)
		return
	}
	rows.Close()
	for _, m := range pending {
		var sendErr error
		if a.Cfg.SMTPAddr == "" {
			a.Log.Info("mail (no SMTP relay configured)", "to", m.to, "subject", m.subject, "body", m.body)
		} else {
			sendErr = sendSMTP(a, m.to, m.subject, m.body)
		}
		err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
			if sendErr != nil {
				_, err := tx.ExecContext(ctx, `UPDATE mail_outbox SET error = ? WHERE id = ?`, sendErr.Error(), m.id)
				return err
			}
			_, err := tx.ExecContext(ctx, `UPDATE mail_outbox SET sent_at = ? WHERE id = ?`, a.NowText(), m.id)
			return err
		})
		if err != nil {
			// The mail stays pending: the next flush sends it again.
			a.Log.Error("record mail outcome", "mail", m.id, "err", err)
		}
	}
}

func sendSMTP(a *app.App, to, subject, body string) error {
	host := a.Cfg.SMTPAddr
	if i := strings.LastIndexByte(host, ':'); i > 0 {
		host = host[:i]
	}
	var auth smtp.Auth
	if a.Cfg.SMTPUser != "" {
		auth = smtp.PlainAuth("", a.Cfg.SMTPUser, a.Cfg.SMTPPassword, host)
	}
	from := a.Cfg.SMTPFrom
	if from == "" {
		from = "xr@" + host
	}
	msg := "From: " + from + "\r\nTo: " + to + "\r\nSubject: " + subject + "\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n"
	return smtp.SendMail(a.Cfg.SMTPAddr, auth, from, []string{to}, []byte(msg))
}
