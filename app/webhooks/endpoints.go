// Package webhooks tells an ISP's other systems what happened: endpoints
// subscribe to event keys of the catalogue; a dispatcher turns the event
// outbox into one delivery per matching endpoint; each delivery is a job
// that sends a signed POST with retries, backoff and an attempt budget.
package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"xr/app"
	"xr/app/egress"
)

// Perm is the permission of every webhook operation.
const Perm = PermNotificationsManage

// MaxEndpoints bounds the endpoints of one tenant (each event fans out to
// every one of them).
const MaxEndpoints = 50

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// Endpoint is a webhook endpoint as the API shows it (never its secret).
type Endpoint struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	AllEvents bool     `json:"all_events"`
	Enabled   bool     `json:"enabled"`
	CreatedAt app.Time `json:"created_at"`
	UpdatedAt app.Time `json:"updated_at"`
}

// wants reports whether the endpoint subscribes to an event type.
func (e *Endpoint) wants(typ string) bool {
	if e.AllEvents {
		return true
	}
	for _, k := range e.Events {
		if k == typ {
			return true
		}
	}
	return false
}

// EndpointCreated is the create answer: the endpoint and its signing
// secret, shown this once.
type EndpointCreated struct {
	Endpoint
	Secret string `json:"secret"`
}

// EndpointInput creates or replaces an endpoint. On create name and url are
// required, enabled defaults to true. On PATCH, name and url are replaced
// when present; events and all_events are replaced outright whenever the
// body carries any of name, url, events, all_events (a missing events
// array clears the subscription, a missing all_events is false); enabled
// is patched only when present.
type EndpointInput struct {
	Name      app.Opt[string]   `json:"name"`
	URL       app.Opt[string]   `json:"url"`
	Events    app.Opt[[]string] `json:"events"`
	AllEvents app.Opt[bool]     `json:"all_events"`
	Enabled   app.Opt[bool]     `json:"enabled"`
}

// Deleted is the answer of a delete.
type Deleted struct {
	ID      int64 `json:"id"`
	Deleted bool  `json:"deleted"`
}

func validName(o app.Opt[string]) (string, error) {
	if !o.Set || o.Null || strings.TrimSpace(o.V) == "" {
		return "", app.ErrValidation("name_required", "name")
	}
	n := strings.TrimSpace(o.V)
	if len(n) > 128 {
		return "", app.ErrValidation("name_too_long", "name")
	}
	return n, nil
}

// validEvents checks keys against the catalogue (400 unknown_event naming
// the key) and drops duplicates. With allEvents the list is ignored.
func validEvents(reg *app.Registry, o app.Opt[[]string], allEvents bool) ([]string, error) {
	out := []string{}
	if allEvents || !o.Set || o.Null {
		return out, nil
	}
	if len(o.V) > len(reg.Events()) {
		return nil, app.ErrValidation("too_many_events", "events")
	}
	seen := map[string]bool{}
	for _, k := range o.V {
		if !reg.KnownEvent(k) {
			return nil, app.ErrValidation("unknown_event", "events").With("key", k)
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, nil
}

func validBool(o app.Opt[bool], field string) error {
	if o.Set && o.Null {
		return app.ErrValidation("invalid_value", field)
	}
	return nil
}

const endpointCols = `id, name, url, events, all_events, enabled, created_at, updated_at`

func scanEndpoint(row interface{ Scan(...any) error }) (*Endpoint, error) {
	e := &Endpoint{}
	var events string
	err := row.Scan(&e.ID, &e.Name, &e.URL, &events, &e.AllEvents, &e.Enabled, &e.CreatedAt, &e.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &e.Events); err != nil {
		return nil, fmt.Errorf("webhook endpoint %d events: %w", e.ID, err)
	}
	if e.Events == nil {
		e.Events = []string{}
	}
	return e, nil
}

func getEndpoint(ctx context.Context, q app.Querier, id int64) (*Endpoint, error) {
	return scanEndpoint(q.QueryRowContext(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints WHERE id = ?`, id))
}

// ListEndpoints lists every endpoint of the tenant in one page.
func ListEndpoints(ctx context.Context, act *app.Actor) (app.Page[Endpoint], error) {
	var p app.Page[Endpoint]
	if err := act.Require(Perm); err != nil {
		return p, err
	}
	rows, err := act.Tenant.DB.R.QueryContext(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints ORDER BY id`)
	if err != nil {
		return p, err
	}
	defer rows.Close()
	p.Rows = []Endpoint{}
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return p, err
		}
		p.Rows = append(p.Rows, *e)
	}
	p.Meta = app.OnePage(len(p.Rows))
	return p, rows.Err()
}

// newSecret mints a signing secret: the whole string is the HMAC key.
func newSecret() string { return SecretPrefix + app.RandomToken(32) }

// CreateEndpoint adds an endpoint; the answer carries its secret once.
func CreateEndpoint(ctx context.Context, act *app.Actor, in EndpointInput) (*EndpointCreated, error) {
	if err := act.Require(Perm); err != nil {
		return nil, err
	}
	t := act.Tenant
	name, err := validName(in.Name)
	if err != nil {
		return nil, err
	}
	if !in.URL.Set || in.URL.Null {
		return nil, app.ErrValidation("url_required", "url")
	}
	u, err := egress.ValidateURL(ctx, in.URL.V, t.App.Cfg.AllowPrivateEgress)
	if err != nil {
		return nil, err
	}
	if err := validBool(in.AllEvents, "all_events"); err != nil {
		return nil, err
	}
	if err := validBool(in.Enabled, "enabled"); err != nil {
		return nil, err
	}
	events, err := validEvents(act.Tenant.App.Registry(), in.Events, in.AllEvents.V)
	if err != nil {
		return nil, err
	}
	enabled := true
	if in.Enabled.Set {
		enabled = in.Enabled.V
	}
	secret := newSecret()
	evJSON, _ := json.Marshal(events)
	var id int64
	err = t.Write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_endpoints`).Scan(&n); err != nil {
			return err
		}
		if n >= MaxEndpoints {
			return app.ErrConflict("webhook_endpoint_limit").With("limit", MaxEndpoints)
		}
		now := t.NowText()
		r, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints(name, url, events, all_events, enabled, secret, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)`,
			name, u, string(evJSON), in.AllEvents.V, enabled, t.App.Keys.Seal([]byte(secret)), now, now)
		if err != nil {
			return err
		}
		id, err = r.LastInsertId()
		return err
	})
	if err != nil {
		return nil, err
	}
	e, err := getEndpoint(ctx, t.DB.R, id)
	if err != nil {
		return nil, err
	}
	return &EndpointCreated{Endpoint: *e, Secret: secret}, nil
}

// UpdateEndpoint applies a PATCH (see EndpointInput).
func UpdateEndpoint(ctx context.Context, act *app.Actor, id int64, in EndpointInput) (*Endpoint, error) {
	if err := act.Require(Perm); err != nil {
		return nil, err
	}
	t := act.Tenant
	var pt app.Patch
	if in.Name.Set {
		name, err := validName(in.Name)
		if err != nil {
			return nil, err
		}
		pt.Set("name", name)
	}
	if in.URL.Set {
		if in.URL.Null {
			return nil, app.ErrValidation("url_required", "url")
		}
		u, err := egress.ValidateURL(ctx, in.URL.V, t.App.Cfg.AllowPrivateEgress)
		if err != nil {
			return nil, err
		}
		pt.Set("url", u)
	}
	if err := validBool(in.Enabled, "enabled"); err != nil {
		return nil, err
	}
	if in.Name.Set || in.URL.Set || in.Events.Set || in.AllEvents.Set {
		all := in.AllEvents.Set && !in.AllEvents.Null && in.AllEvents.V
		events, err := validEvents(act.Tenant.App.Registry(), in.Events, all)
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(events)
		pt.Set("events", string(b))
		pt.Set("all_events", all)
	}
	if in.Enabled.Set {
		pt.Set("enabled", in.Enabled.V)
	}
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := getEndpoint(ctx, tx, id); err != nil {
			return err
		}
		_, err := pt.Exec(ctx, tx, "webhook_endpoints", id, t.NowText())
		return err
	})
	if err != nil {
		return nil, err
	}
	return getEndpoint(ctx, t.DB.R, id)
}

// DeleteEndpoint removes an endpoint. Its deliveries still waiting (queued,
// failed, or in flight) stop: they go dead with last_error "endpoint
// deleted" and their jobs are cancelled; the log rows stay.
func DeleteEndpoint(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(Perm); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return app.ErrNotFound()
		}
		jobs, err := app.QueryIDs(ctx, tx, `SELECT job_id FROM webhook_deliveries WHERE endpoint_id = ? AND state IN ('queued','sending','failed') AND job_id IS NOT NULL`, id)
		if err != nil {
			return err
		}
		if err := app.CancelQueued(ctx, tx, act.Tenant.Now(), "", jobs...); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = 'dead', last_error = 'endpoint deleted', next_attempt_at = NULL, gen = gen + 1
			WHERE endpoint_id = ? AND state IN ('queued','sending','failed')`, id)
		return err
	})
}

// BulkDeleteEndpoints deletes each id on its own, in the bulk shape.
func BulkDeleteEndpoints(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(Perm); err != nil {
		return app.BulkResult{}, err
	}
	if err := in.Validate(); err != nil {
		return app.BulkResult{}, err
	}
	return app.RunBulk(ctx, in.IDs, func(ctx context.Context, id int64) error {
		return DeleteEndpoint(ctx, act, id)
	}), nil
}

// RotateInput asks for a new signing secret. GraceSeconds (default one
// day, at most seven, 0 = none) is how long the previous secret keeps
// signing beside the new one.
type RotateInput struct {
	GraceSeconds app.Opt[int] `json:"grace_seconds"`
}

// DefaultRotationGrace and MaxRotationGrace bound RotateInput.GraceSeconds.
const (
	DefaultRotationGrace = 24 * time.Hour
	MaxRotationGrace     = 7 * 24 * time.Hour
)

// SecretResult is the answer of a rotation: the new secret, shown once.
type SecretResult struct {
	ID                      int64    `json:"id"`
	Secret                  string   `json:"secret"`
	PreviousSecretExpiresAt app.Time `json:"previous_secret_expires_at"`
}

// RotateSecret replaces an endpoint's signing secret. Until the grace
// window ends every delivery carries two signatures, one per secret, so a
// receiver can switch to the new secret at its own pace.
func RotateSecret(ctx context.Context, act *app.Actor, id int64, in RotateInput) (*SecretResult, error) {
	if err := act.Require(Perm); err != nil {
		return nil, err
	}
	grace := DefaultRotationGrace
	if in.GraceSeconds.Set {
		if in.GraceSeconds.Null || in.GraceSeconds.V < 0 || time.Duration(in.GraceSeconds.V)*time.Second > MaxRotationGrace {
			return nil, app.ErrValidation("invalid_grace_seconds", "grace_seconds").With("max", int(MaxRotationGrace/time.Second))
		}
		grace = time.Duration(in.GraceSeconds.V) * time.Second
	}
	t := act.Tenant
	secret := newSecret()
	out := &SecretResult{ID: id, Secret: secret}
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var cur []byte
		err := tx.QueryRowContext(ctx, `SELECT secret FROM webhook_endpoints WHERE id = ?`, id).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return app.ErrNotFound()
		}
		if err != nil {
			return err
		}
		var prev []byte
		var until app.Time
		if grace > 0 {
			prev, until = cur, app.T(t.Now().Add(grace))
			out.PreviousSecretExpiresAt = until
		}
		_, err = tx.ExecContext(ctx, `UPDATE webhook_endpoints SET secret = ?, prev_secret = ?, prev_secret_until = ?, updated_at = ? WHERE id = ?`,
			t.App.Keys.Seal([]byte(secret)), prev, until, t.NowText(), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Catalog is the event catalogue of a's modules (static per release).
func Catalog(a *app.App) []app.EventType { return a.Events() }

// EventCatalog is GET /admin/webhooks/event-catalog: the catalogue, for
// a caller who manages notifications.
func EventCatalog(ctx context.Context, act *app.Actor) ([]app.EventType, error) {
	if err := act.Require(PermNotificationsManage); err != nil {
		return nil, err
	}
	return Catalog(act.Tenant.App), nil
}
