package devgw

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/url"
	"time"

	"xr/app"
)

// TicketTTL is how long a minted ticket opens a console.
const TicketTTL = 30 * time.Second

// WSPath is the gateway row's path (the ticket goes in its query string).
const WSPath = "/api/v1/admin/devgw/ssh/ws"

// TicketInput is the body of POST /admin/devgw/tickets.
type TicketInput struct {
	Kind string `json:"kind"`
	ID   int64  `json:"id"`
}

// Ticket is a minted single-use ticket: open URL (a path on the tenant's
// host, ws:// or wss:// as the page was served) with a WebSocket upgrade
// within 30 s.
type Ticket struct {
	Ticket    string   `json:"ticket"`
	ExpiresAt app.Time `json:"expires_at"`
	URL       string   `json:"url"`
	Target    Target   `json:"target"`
}

func ticketHash(tk string) string {
	h := sha256.Sum256([]byte(tk))
	return hex.EncodeToString(h[:])
}

// ready checks what a console needs before anyone dials: a target the
// caller sees, an address the egress rule lets through, credentials with a
// user and a secret.
func ready(ctx context.Context, q app.Querier, act *app.Actor, kind string, id int64) (*Target, *creds, error) {
	tg, err := resolveTarget(ctx, q, act, kind, id)
	if err != nil {
		return nil, nil, err
	}
	if _, err := checkEgress(act.Tenant.App, tg.Address); err != nil {
		return nil, nil, err
	}
	c, err := loadCreds(ctx, q, act.Tenant, kind, id)
	if err != nil {
		return nil, nil, err
	}
	if !c.found || c.username == "" || (len(c.password) == 0 && len(c.key) == 0) {
		return nil, nil, app.ErrConflict("credentials_missing")
	}
	return tg, c, nil
}

// MintTicket answers POST /admin/devgw/tickets: a single-use ticket for a
// console to a NAS (prm_nas_remote) or a monitored device
// (prm_nas_devices_remote), valid 30 s, bound to the caller, the target and
// the tenant (only its SHA-256 is stored, in the tenant's file). The caps
// are checked here too, so a page can say so before opening a socket.
func MintTicket(ctx context.Context, act *app.Actor, in TicketInput) (*Ticket, error) {
	if err := act.Require(PermNasRemote, PermNasDevicesRemote); err != nil {
		return nil, err
	}
	if err := requireKind(act, in.Kind); err != nil {
		return nil, err
	}
	if in.ID <= 0 {
		return nil, app.ErrValidation("id_required", "id")
	}
	if act.ManagerID == 0 {
		return nil, app.ErrForbidden("manager_required")
	}
	t := act.Tenant
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	tk := base64.RawURLEncoding.EncodeToString(b[:])
	now := t.Now()
	exp := now.Add(TicketTTL)
	out := &Ticket{Ticket: tk, ExpiresAt: app.Time{Time: exp.UTC().Truncate(time.Second)}, URL: WSPath + "?ticket=" + url.QueryEscape(tk)}
	err := t.Write(ctx, func(tx *sql.Tx) error {
		tg, _, err := ready(ctx, tx, act, in.Kind, in.ID)
		if err != nil {
			return err
		}
		lim, err := readLimits(ctx, tx)
		if err != nil {
			return err
		}
		if err := lim.check(reg(t.App).counts(t.Slug, act.ManagerID)); err != nil {
			return err
		}
		out.Target = *tg
		if _, err := tx.ExecContext(ctx, `DELETE FROM devgw_tickets WHERE expires_at < ?`, app.FormatTime(now)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO devgw_tickets(hash, manager_id, kind, target_id, expires_at, created_at) VALUES (?,?,?,?,?,?)`,
			ticketHash(tk), act.ManagerID, in.Kind, in.ID, app.FormatTime(exp), app.FormatTime(now))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// spent is a ticket taken from the table.
type spent struct {
	manager  int64
	kind     string
	targetID int64
}

// spend takes a ticket: any attempt spends it. Missing, spent and expired
// tickets are all 401 (ticket_invalid / ticket_expired).
func spend(ctx context.Context, t *app.Tenant, tk string) (*spent, error) {
	if tk == "" {
		return nil, app.ErrUnauthorized("ticket_required")
	}
	if len(tk) > 128 {
		return nil, app.ErrUnauthorized("ticket_invalid")
	}
	var s spent
	var exp string
	err := t.Write(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `DELETE FROM devgw_tickets WHERE hash = ? RETURNING manager_id, kind, target_id, expires_at`,
			ticketHash(tk)).Scan(&s.manager, &s.kind, &s.targetID, &exp)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrUnauthorized("ticket_invalid")
	}
	if err != nil {
		return nil, err
	}
	if exp < t.NowText() {
		return nil, app.ErrUnauthorized("ticket_expired")
	}
	return &s, nil
}
