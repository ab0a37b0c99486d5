package outbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	mail "github.com/wneessen/go-mail"

	"xr/app"
)

// SMTP TLS modes of --smtp-tls.
const (
	SMTPTLSOpportunistic = "opportunistic" // STARTTLS when the relay offers it (default)
	SMTPTLSStartTLS      = "starttls"      // STARTTLS required
	SMTPTLSImplicit      = "tls"           // TLS from the first byte (port 465)
	SMTPTLSNone          = "none"          // plain text
)

// SMTP authentication mechanisms of --smtp-auth ("" picks the strongest the
// relay offers).
var smtpAuths = map[string]mail.SMTPAuthType{
	"": mail.SMTPAuthAutoDiscover, "plain": mail.SMTPAuthPlain, "login": mail.SMTPAuthLogin, "cram-md5": mail.SMTPAuthCramMD5,
}

// CheckSMTPConfig validates the relay settings of an instance (xr serve
// calls it before starting).
func CheckSMTPConfig(cfg app.Config) error {
	if cfg.SMTPAddr == "" {
		return nil
	}
	if _, _, err := splitHostPort(cfg.SMTPAddr); err != nil {
		return fmt.Errorf("--smtp-addr %q: want host:port", cfg.SMTPAddr)
	}
	switch cfg.SMTPTLS {
	case "", SMTPTLSOpportunistic, SMTPTLSStartTLS, SMTPTLSImplicit, SMTPTLSNone:
	default:
		return fmt.Errorf("--smtp-tls %q: want opportunistic, starttls, tls or none", cfg.SMTPTLS)
	}
	if _, ok := smtpAuths[strings.ToLower(cfg.SMTPAuth)]; !ok {
		return fmt.Errorf("--smtp-auth %q: want plain, login or cram-md5 (empty: what the relay offers)", cfg.SMTPAuth)
	}
	return nil
}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 || host == "" {
		return "", 0, errors.New("bad port")
	}
	return host, port, nil
}

// fromAddress is the tenant's sender: its settings, else the relay's
// --smtp-from, else xr@<relay host>.
func fromAddress(ctx context.Context, t *app.Tenant) (name, addr string, err error) {
	if name, err = SettingMailFromName.Get(ctx, t.DB.R); err != nil {
		return "", "", err
	}
	if addr, err = SettingMailFromAddress.Get(ctx, t.DB.R); err != nil {
		return "", "", err
	}
	if name == "" {
		name = t.Name
	}
	if addr == "" {
		addr = t.App.Cfg.SMTPFrom
	}
	if addr == "" {
		host, _, _ := splitHostPort(t.App.Cfg.SMTPAddr)
		addr = "xr@" + host
	}
	return name, addr, nil
}

func (s *state) sendEmail(ctx context.Context, t *app.Tenant, m claimedMsg) outcome {
	cfg := t.App.Cfg
	if cfg.SMTPAddr == "" {
		return outcome{permanent: true, reason: "smtp_not_configured", detail: "xr serve runs without --smtp-addr"}
	}
	host, port, err := splitHostPort(cfg.SMTPAddr)
	if err != nil {
		return outcome{permanent: true, reason: "smtp_not_configured", detail: "bad --smtp-addr"}
	}
	name, from, err := fromAddress(ctx, t)
	if err != nil {
		return outcome{reason: "smtp_error", detail: err.Error()}
	}
	msg := mail.NewMsg()
	if err := msg.FromFormat(name, from); err != nil {
		return outcome{permanent: true, reason: "invalid_from", detail: err.Error()}
	}
	if err := msg.To(m.to); err != nil {
		return outcome{permanent: true, reason: "invalid_email", detail: err.Error()}
	}
	msg.Subject(m.subject)
	msg.SetBodyString(mail.TypeTextPlain, m.body)
	// Stable across attempts: a receiver can drop the rare duplicate of a
	// crash between the relay's acceptance and our record of it.
	msg.SetMessageIDWithValue(fmt.Sprintf("xr.%s.%d@%s", t.Slug, m.id, messageIDDomain(cfg, host)))

	opts := []mail.Option{mail.WithPort(port), mail.WithTimeout(s.sendTO)}
	switch cfg.SMTPTLS {
	case SMTPTLSStartTLS:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	case SMTPTLSImplicit:
		opts = append(opts, mail.WithSSL())
	case SMTPTLSNone:
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	}
	if cfg.SMTPUser != "" {
		opts = append(opts, mail.WithSMTPAuth(smtpAuths[strings.ToLower(cfg.SMTPAuth)]),
			mail.WithUsername(cfg.SMTPUser), mail.WithPassword(cfg.SMTPPassword))
	}
	c, err := mail.NewClient(host, opts...)
	if err != nil {
		return outcome{permanent: true, reason: "smtp_not_configured", detail: err.Error()}
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return smtpOutcome(err)
	}
	return outcome{ok: true}
}

func messageIDDomain(cfg app.Config, host string) string {
	if cfg.Domain != "" {
		return cfg.Domain
	}
	return host
}

// smtpOutcome classifies a send error: a permanent (5xx) refusal is dead at
// once; a temporary one, a dropped connection or a timeout is retried.
func smtpOutcome(err error) outcome {
	detail := err.Error()
	if len(detail) > 500 {
		detail = detail[:500]
	}
	var se *mail.SendError
	if errors.As(err, &se) {
		if se.IsTemp() {
			return outcome{reason: "smtp_temporary_failure", detail: detail}
		}
		if code := se.ErrorCode(); code >= 500 && code < 600 {
			return outcome{permanent: true, reason: "smtp_rejected", detail: detail}
		}
		return outcome{reason: "smtp_temporary_failure", detail: detail}
	}
	return outcome{reason: "smtp_unreachable", detail: detail}
}
