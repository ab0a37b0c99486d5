package app

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
)

// Registration limits.
const (
	registrationTTL      = 30 * time.Minute
	registrationAttempts = 5
	registrationSends    = 5
)

// RegistrationStart is the answer of /auth/register/start and /resend.
type RegistrationStart struct {
	RegistrationID string `json:"registration_id"`
	ExpiresAt      Time   `json:"expires_at"`
}

func (a *App) signupAllowed() error {
	if !a.Cfg.AllowSignup {
		return ErrForbidden("signup_disabled")
	}
	return nil
}

func verificationCode() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(1_000_000))
	return fmt.Sprintf("%06d", n.Int64())
}

// StartRegistration records a sign-up and mails a verification code.
func (a *App) StartRegistration(ctx context.Context, email string) (*RegistrationStart, error) {
	if err := a.signupAllowed(); err != nil {
		return nil, err
	}
	email = strings.TrimSpace(strings.ToLower(email))
	if !emailRe.MatchString(email) {
		return nil, ErrValidation("invalid_email", "email")
	}
	id, code := NewUUID(), verificationCode()
	exp := Now().Add(registrationTTL)
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO registrations(id, email, code_hash, expires_at, created_at) VALUES (?,?,?,?,?)`,
			id, email, SHA256(code), FormatTime(exp), NowText()); err != nil {
			return err
		}
		return queueMail(ctx, tx, email, "Your xr verification code", "Your verification code is "+code+". It expires in 30 minutes.")
	})
	if err != nil {
		return nil, err
	}
	a.flushMail(ctx)
	return &RegistrationStart{RegistrationID: id, ExpiresAt: T(exp)}, nil
}

type registration struct {
	email               string
	codeHash            []byte
	attempts, sends     int
	verified, completed bool
	expires             string
}

func loadRegistration(ctx context.Context, tx *sql.Tx, id string) (*registration, error) {
	r := &registration{}
	var v, c sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT email, code_hash, attempts, sends, verified_at, completed_at, expires_at FROM registrations WHERE id = ?`, id).
		Scan(&r.email, &r.codeHash, &r.attempts, &r.sends, &v, &c, &r.expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	r.verified, r.completed = v.Valid, c.Valid
	if r.completed {
		return nil, ErrConflict("registration_completed")
	}
	if r.expires <= NowText() {
		return nil, ErrValidation("registration_expired", "registration_id")
	}
	return r, nil
}

// VerifyRegistration checks the mailed code (a bounded number of tries).
func (a *App) VerifyRegistration(ctx context.Context, id, code string) error {
	if err := a.signupAllowed(); err != nil {
		return err
	}
	var wrong bool
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		r, err := loadRegistration(ctx, tx, id)
		if err != nil {
			return err
		}
		if r.verified {
			return nil
		}
		if r.attempts >= registrationAttempts {
			return ErrConflict("too_many_attempts")
		}
		if subtle.ConstantTimeCompare(SHA256(strings.TrimSpace(code)), r.codeHash) != 1 {
			wrong = true
			_, err := tx.ExecContext(ctx, `UPDATE registrations SET attempts = attempts + 1 WHERE id = ?`, id)
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE registrations SET verified_at = ? WHERE id = ?`, NowText(), id)
		return err
	})
	if err == nil && wrong {
		return ErrValidation("invalid_code", "code")
	}
	return err
}

// ResendRegistration mails a fresh code (a bounded number of times).
func (a *App) ResendRegistration(ctx context.Context, id string) (*RegistrationStart, error) {
	if err := a.signupAllowed(); err != nil {
		return nil, err
	}
	code := verificationCode()
	exp := Now().Add(registrationTTL)
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		r, err := loadRegistration(ctx, tx, id)
		if err != nil {
			return err
		}
		if r.verified {
			return ErrConflict("already_verified")
		}
		if r.sends >= registrationSends {
			return ErrConflict("too_many_resends")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE registrations SET code_hash = ?, attempts = 0, sends = sends + 1, expires_at = ? WHERE id = ?`,
			SHA256(code), FormatTime(exp), id); err != nil {
			return err
		}
		return queueMail(ctx, tx, r.email, "Your xr verification code", "Your verification code is "+code+". It expires in 30 minutes.")
	})
	if err != nil {
		return nil, err
	}
	a.flushMail(ctx)
	return &RegistrationStart{RegistrationID: id, ExpiresAt: T(exp)}, nil
}

// CompleteRegistration is the last step: the verified email becomes the
// owner of a new tenant.
type CompleteRegistration struct {
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
func (a *App) CompleteRegistration(ctx context.Context, in CompleteRegistration) (*RegistrationDone, error) {
	if err := a.signupAllowed(); err != nil {
		return nil, err
	}
	var email string
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		r, err := loadRegistration(ctx, tx, in.RegistrationID)
		if err != nil {
			return err
		}
		if !r.verified {
			return ErrConflict("registration_not_verified")
		}
		email = r.email
		return nil
	})
	if err != nil {
		return nil, err
	}
	ti, owner, err := a.CreateTenant(ctx, NewTenant{Slug: in.Slug, Name: in.Name, AdminUsername: in.Username, AdminEmail: email,
		AdminPassword: in.Password, MaxUsers: signupMaxUsers()})
	if err != nil {
		return nil, err
	}
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE registrations SET completed_at = ?, tenant_id = ? WHERE id = ?`, NowText(), ti.ID, in.RegistrationID)
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
func (a *App) SlugAvailable(slug string) (bool, string) {
	if err := ValidateSlug(slug); err != nil {
		return false, AsError(err).Reason
	}
	if _, taken := a.TenantBySlug(slug); taken {
		return false, "slug_taken"
	}
	return true, ""
}

func queueMail(ctx context.Context, tx *sql.Tx, to, subject, body string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO mail_outbox(to_addr, subject, body, created_at) VALUES (?,?,?,?)`, to, subject, body, NowText())
	return err
}

// flushMail sends queued mail through the configured relay, or logs it
// (the outbox keeps it either way).
func (a *App) flushMail(ctx context.Context) {
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
			sendErr = a.sendSMTP(m.to, m.subject, m.body)
		}
		err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
			if sendErr != nil {
				_, err := tx.ExecContext(ctx, `UPDATE mail_outbox SET error = ? WHERE id = ?`, sendErr.Error(), m.id)
				return err
			}
			_, err := tx.ExecContext(ctx, `UPDATE mail_outbox SET sent_at = ? WHERE id = ?`, NowText(), m.id)
			return err
		})
		if err != nil {
			// The mail stays pending: the next flush sends it again.
			a.Log.Error("record mail outcome", "mail", m.id, "err", err)
		}
	}
}

func (a *App) sendSMTP(to, subject, body string) error {
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
