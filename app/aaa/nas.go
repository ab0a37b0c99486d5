package aaa

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"xr/app"
	"xr/app/egress"
	"xr/db"
)

// NASTypes are the vendors xr shapes RADIUS replies for.
var NASTypes = []string{"mikrotik", "cisco", "juniper", "huawei", "ubiquiti", "generic"}

// NASRecord is a RADIUS client of the tenant. The secret is write-only.
type NASRecord struct {
	ID                          int64    `json:"id"`
	Name                        string   `json:"name"`
	IP                          string   `json:"ip"`
	Type                        string   `json:"type"`
	CoAPort                     int      `json:"coa_port"`
	RequireMessageAuthenticator bool     `json:"require_message_authenticator"`
	Description                 string   `json:"description"`
	CreatedAt                   app.Time `json:"created_at"`
	UpdatedAt                   app.Time `json:"updated_at"`
	// Warnings tells the operator about weak settings (a short secret).
	Warnings []string `json:"warnings,omitempty"`
}

// NASType is a JSON enum of NASTypes.
type NASType string

func (n *NASType) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, NASTypes...)
	*n = NASType(s)
	return err
}

// NASInput creates or patches a NAS.
type NASInput struct {
	Name                        app.Opt[string]  `json:"name"`
	IP                          app.Opt[string]  `json:"ip"`
	Secret                      app.Opt[string]  `json:"secret"`
	Type                        app.Opt[NASType] `json:"type"`
	CoAPort                     app.Opt[int]     `json:"coa_port"`
	RequireMessageAuthenticator app.Opt[bool]    `json:"require_message_authenticator"`
	Description                 app.Opt[string]  `json:"description"`
}

// ShortSecretLen: shared secrets this short are weak against offline
// guessing of captured packets; xr warns but accepts (RFC 2865 §3).
const ShortSecretLen = 12

func normIP(s string) (string, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return "", app.ErrValidation("invalid_ip", "ip")
	}
	return a.Unmap().String(), nil
}

// checkNASAddress applies the Device egress guard to a NAS address: xr
// sends it CoA/Disconnect packets, probes and consoles, so it may not be
// loopback, link-local (a cloud metadata endpoint), reserved or one of
// the host's own addresses unless the operator allowed private egress;
// 400 ip_address_not_allowed with the address and its class, the reasons
// a webhook URL gets.
func checkNASAddress(a *app.App, in *NASInput) error {
	if !in.IP.Set {
		return nil
	}
	ip, err := netip.ParseAddr(in.IP.V)
	if err != nil {
		return app.ErrValidation("invalid_ip", "ip")
	}
	if c := egress.For(a, egress.Device).Refusal(ip); c != "" {
		return app.ErrValidation("ip_address_not_allowed", "ip").With("address", in.IP.V).With("class", c)
	}
	return nil
}

func (in *NASInput) validate(create bool) error {
	if create {
		if !in.Name.Set || strings.TrimSpace(in.Name.V) == "" {
			return app.ErrValidation("name_required", "name")
		}
		if !in.IP.Set || in.IP.V == "" {
			return app.ErrValidation("ip_required", "ip")
		}
		if !in.Secret.Set || in.Secret.V == "" {
			return app.ErrValidation("secret_required", "secret")
		}
	}
	if in.Name.Set && (in.Name.Null || strings.TrimSpace(in.Name.V) == "" || len(in.Name.V) > 128) {
		return app.ErrValidation("invalid_name", "name")
	}
	if in.Secret.Set && (in.Secret.Null || in.Secret.V == "" || len(in.Secret.V) > 128) {
		return app.ErrValidation("invalid_secret", "secret")
	}
	if in.CoAPort.Set && (in.CoAPort.V < 1 || in.CoAPort.V > 65535) {
		return app.ErrValidation("invalid_port", "coa_port")
	}
	if in.IP.Set {
		ip, err := normIP(in.IP.V)
		if err != nil {
			return err
		}
		in.IP.V = ip
	}
	return nil
}

const nasCols = `id, name, ip, type, coa_port, require_message_authenticator, description, created_at, updated_at`

func scanNAS(row interface{ Scan(...any) error }) (*NASRecord, error) {
	n := &NASRecord{}
	err := row.Scan(&n.ID, &n.Name, &n.IP, &n.Type, &n.CoAPort, &n.RequireMessageAuthenticator, &n.Description, &n.CreatedAt, &n.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return n, err
}

// CreateNAS adds a NAS to the tenant and to the instance index. The two
// files cannot share a transaction: the index row is claimed first (so the
// IP is unique instance-wide) and released again if the tenant write fails.
func CreateNAS(ctx context.Context, act *app.Actor, in NASInput) (*NASRecord, error) {
	if err := act.Require(PermNasManage); err != nil {
		return nil, err
	}
	t := act.Tenant
	a := t.App
	if err := in.validate(true); err != nil {
		return nil, err
	}
	if err := checkNASAddress(a, &in); err != nil {
		return nil, err
	}
	typ := "mikrotik"
	if in.Type.Set {
		typ = string(in.Type.V)
	}
	port := 3799
	if in.CoAPort.Set {
		port = in.CoAPort.V
	}
	requireMA := true
	if in.RequireMessageAuthenticator.Set {
		requireMA = in.RequireMessageAuthenticator.V
	}
	var n *NASRecord
	err := t.Write(ctx, func(tx *sql.Tx) error {
		now := t.NowText()
		r, err := tx.ExecContext(ctx, `INSERT INTO nas(name, ip, secret_sealed, type, coa_port, require_message_authenticator, description, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)`,
			strings.TrimSpace(in.Name.V), in.IP.V, a.Keys.Seal([]byte(in.Secret.V)), typ, port, requireMA, in.Description.V, now, now)
		if db.IsUnique(err) {
			return app.ErrConflict("ip_taken").With("field", "ip")
		}
		if err != nil {
			return err
		}
		id, _ := r.LastInsertId()
		if err := indexNAS(ctx, t, tx, id); err != nil {
			return err // the tenant transaction rolls back
		}
		n, err = scanNAS(tx.QueryRowContext(ctx, `SELECT `+nasCols+` FROM nas WHERE id = ?`, id))
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(in.Secret.V) <= ShortSecretLen {
		n.Warnings = append(n.Warnings, "short_secret")
	}
	// Read-your-writes: RADIUS must know the NAS once this answers 2xx.
	if err := a.Reload(ctx); err != nil {
		return nil, fmt.Errorf("nas saved, reload registry: %w", err)
	}
	return n, nil
}

// ListNAS returns every NAS of the tenant (one page).
func ListNAS(ctx context.Context, act *app.Actor) ([]*NASRecord, error) {
	if err := act.Require(PermNasIndex); err != nil {
		return nil, err
	}
	t := act.Tenant
	rows, err := t.DB.R.QueryContext(ctx, `SELECT `+nasCols+` FROM nas ORDER BY name, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*NASRecord{}
	for rows.Next() {
		n, err := scanNAS(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// GetNAS reads one NAS.
func GetNAS(ctx context.Context, act *app.Actor, id int64) (*NASRecord, error) {
	if err := act.Require(PermNasIndex); err != nil {
		return nil, err
	}
	t := act.Tenant
	return scanNAS(t.DB.R.QueryRowContext(ctx, `SELECT `+nasCols+` FROM nas WHERE id = ?`, id))
}

// UpdateNAS patches a NAS; a new IP moves its index row in the same step.
func UpdateNAS(ctx context.Context, act *app.Actor, id int64, in NASInput) (*NASRecord, error) {
	if err := act.Require(PermNasManage); err != nil {
		return nil, err
	}
	t := act.Tenant
	a := t.App
	if err := in.validate(false); err != nil {
		return nil, err
	}
	if err := checkNASAddress(a, &in); err != nil {
		return nil, err
	}
	var n *NASRecord
	err := t.Write(ctx, func(tx *sql.Tx) error {
		old, err := scanNAS(tx.QueryRowContext(ctx, `SELECT `+nasCols+` FROM nas WHERE id = ?`, id))
		if err != nil {
			return err
		}
		var p app.Patch
		if in.Name.Set {
			p.Set("name", strings.TrimSpace(in.Name.V))
		}
		if in.Secret.Set {
			p.Set("secret_sealed", a.Keys.Seal([]byte(in.Secret.V)))
		}
		if in.Type.Set {
			p.Set("type", string(in.Type.V))
		}
		if in.CoAPort.Set {
			p.Set("coa_port", in.CoAPort.V)
		}
		if in.RequireMessageAuthenticator.Set {
			p.Set("require_message_authenticator", in.RequireMessageAuthenticator.V)
		}
		if in.Description.Set {
			p.Set("description", in.Description.V)
		}
		if in.IP.Set && in.IP.V != old.IP {
			p.Set("ip", in.IP.V)
		}
		if _, err := p.Exec(ctx, tx, "nas", id, t.NowText()); db.IsUnique(err) {
			return app.ErrConflict("ip_taken").With("field", "ip")
		} else if err != nil {
			return err
		}
		if err := indexNAS(ctx, t, tx, id); err != nil {
			return err
		}
		n, err = scanNAS(tx.QueryRowContext(ctx, `SELECT `+nasCols+` FROM nas WHERE id = ?`, id))
		return err
	})
	if err != nil {
		return nil, err
	}
	if in.Secret.Set && len(in.Secret.V) <= ShortSecretLen {
		n.Warnings = append(n.Warnings, "short_secret")
	}
	// Read-your-writes: RADIUS must know the NAS once this answers 2xx.
	if err := a.Reload(ctx); err != nil {
		return nil, fmt.Errorf("nas saved, reload registry: %w", err)
	}
	return n, nil
}

// DeleteNAS removes a NAS and its index row.
func DeleteNAS(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermNasManage); err != nil {
		return err
	}
	t := act.Tenant
	a := t.App
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var ip string
		if err := tx.QueryRowContext(ctx, `SELECT ip FROM nas WHERE id = ?`, id).Scan(&ip); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return app.ErrNotFound()
			}
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM nas WHERE id = ?`, id); err != nil {
			return err
		}
		nasChanged(ctx, tx, t)
		return a.Inst.Write(ctx, func(itx *sql.Tx) error {
			if _, err := itx.ExecContext(ctx, `DELETE FROM nas_index WHERE ip = ? AND tenant_id = ?`, ip, t.ID); err != nil {
				return err
			}
			// Its RadSec certificate goes with it (a later NAS may get its id).
			return revokeNASCerts(ctx, itx, t.ID, id, t.NowText())
		})
	})
	if err != nil {
		return err
	}
	// Read-your-writes: RADIUS must forget the NAS once this answers 2xx.
	if err := a.Reload(ctx); err != nil {
		return fmt.Errorf("nas deleted, reload registry: %w", err)
	}
	return nil
}

// NASSecret decrypts a NAS's shared secret (for the RADIUS directory).
func NASSecret(ctx context.Context, a *app.App, t *app.Tenant, id int64) ([]byte, error) {
	var sealed []byte
	if err := t.DB.R.QueryRowContext(ctx, `SELECT secret_sealed FROM nas WHERE id = ?`, id).Scan(&sealed); err != nil {
		return nil, err
	}
	return a.Keys.Open(sealed)
}

// nasRow is a NAS as the instance directory keeps it: every field RADIUS
// needs to answer a packet without the tenant's file.
type nasRow struct {
	id                          int64
	name, ip, typ               string
	radsecFingerprint           string
	sealed                      []byte
	coaPort                     int
	requireMessageAuthenticator bool
}

func readNASRow(ctx context.Context, q app.Querier, id int64) (nasRow, error) {
	r := nasRow{id: id}
	err := q.QueryRowContext(ctx, `SELECT name, ip, secret_sealed, type, coa_port, require_message_authenticator, radsec_fingerprint FROM nas WHERE id = ?`, id).
		Scan(&r.name, &r.ip, &r.sealed, &r.typ, &r.coaPort, &r.requireMessageAuthenticator, &r.radsecFingerprint)
	return r, err
}

// index writes r as the directory row of tenant tenantID in itx (an
// instance.db transaction): the address is unique instance-wide.
func (r nasRow) index(ctx context.Context, itx *sql.Tx, tenantID int64) error {
	_, err := itx.ExecContext(ctx, `INSERT INTO nas_index(ip, tenant_id, nas_id, name, secret_sealed, type, coa_port, require_message_authenticator, radsec_fingerprint)
		VALUES (?,?,?,?,?,?,?,?,?)
		ON CONFLICT(ip) DO UPDATE SET name = excluded.name, secret_sealed = excluded.secret_sealed, type = excluded.type,
		  coa_port = excluded.coa_port, require_message_authenticator = excluded.require_message_authenticator,
		  radsec_fingerprint = excluded.radsec_fingerprint
		WHERE nas_index.tenant_id = excluded.tenant_id AND nas_index.nas_id = excluded.nas_id`,
		r.ip, tenantID, r.id, r.name, r.sealed, r.typ, r.coaPort, r.requireMessageAuthenticator, r.radsecFingerprint)
	return err
}

// indexNAS makes the instance directory follow NAS id of t as tx (the
// tenant transaction that changed it) has it, before tx commits: the row
// moves with a new address, and an address another NAS holds is 409
// ip_taken (tx then rolls back). It tells the areas that watch NASes.
func indexNAS(ctx context.Context, t *app.Tenant, tx *sql.Tx, id int64) error {
	r, err := readNASRow(ctx, tx, id)
	if err != nil {
		return err
	}
	nasChanged(ctx, tx, t)
	return t.App.Inst.Write(ctx, func(itx *sql.Tx) error {
		if _, err := itx.ExecContext(ctx, `DELETE FROM nas_index WHERE tenant_id = ? AND nas_id = ? AND ip <> ?`, t.ID, id, r.ip); err != nil {
			return err
		}
		var owner sql.NullInt64
		err := itx.QueryRowContext(ctx, `SELECT tenant_id FROM nas_index WHERE ip = ? AND NOT (tenant_id = ? AND nas_id = ?)`, r.ip, t.ID, id).Scan(&owner)
		if err == nil {
			return app.ErrConflict("ip_taken").With("field", "ip")
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return r.index(ctx, itx, t.ID)
	})
}

// NASChangedPoint is the extension point of areas that must know, in the
// transaction, that a NAS of the tenant was added, changed or removed
// (the monitoring poller: every NAS is a monitored device).
const NASChangedPoint = "aaa.nas_changed"

// NASChanged runs in the tenant transaction that changed a NAS.
type NASChanged func(ctx context.Context, tx *sql.Tx, t *app.Tenant)

// NASChangedExtension is an area's contribution to NASChangedPoint.
func NASChangedExtension(name string, fn NASChanged) app.Extension {
	return app.Extension{Point: NASChangedPoint, Name: name, Value: fn}
}

func nasChanged(ctx context.Context, tx *sql.Tx, t *app.Tenant) {
	for _, fn := range app.Extensions[NASChanged](t.App, NASChangedPoint) {
		fn(ctx, tx, t)
	}
}
