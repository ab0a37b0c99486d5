package cards

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"xr/app"
	"xr/app/subs"
)

// Lookup is the spec's Card lookup result (GET /cards/search).
type Lookup struct {
	CardID          int64     `json:"card_id"`
	Serial          string    `json:"serial"`
	State           string    `json:"state"`
	EffectiveState  string    `json:"effective_state"`
	Disposition     string    `json:"disposition"`
	Mode            string    `json:"mode"`
	PlanName        string    `json:"plan_name"`
	BatchID         int64     `json:"batch_id"`
	FaceValue       app.Money `json:"face_value"`
	RedemptionsLeft int       `json:"redemptions_left"`
	OwnerManagerID  int64     `json:"owner_manager_id"`
	OwnerUsername   string    `json:"owner_username"`
	UsedByKind      *string   `json:"used_by_kind"` // user, manager (wallet), login (prepaid RADIUS login)
	UsedByUserID    *int64    `json:"used_by_user_id"`
	UsedByUsername  *string   `json:"used_by_username"`
	UsedChannel     *string   `json:"used_channel"`
	FirstUseAt      app.Time  `json:"first_use_at"`
	ExpiresAt       app.Time  `json:"expires_at"`
	ValidUntil      app.Time  `json:"valid_until"`
}

// scanName reads one display name by id; a row that is gone leaves it
// empty.
func scanName(ctx context.Context, q app.Querier, query string, id int64, dst *string) error {
	if err := q.QueryRowContext(ctx, query, id).Scan(dst); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return nil
}

func lookupOf(ctx context.Context, q app.Querier, c *cardRow, now time.Time) (*Lookup, error) {
	l := &Lookup{CardID: c.ID, Serial: c.Serial, State: c.State, EffectiveState: c.effectiveState(now), Disposition: c.Disposition, Mode: c.Mode,
		BatchID: c.BatchID, FaceValue: app.Money(c.FaceValue), RedemptionsLeft: c.redemptionsLeft(now), OwnerManagerID: c.OwnerManagerID,
		FirstUseAt: c.FirstUseAt, ExpiresAt: c.ExpiresAt, ValidUntil: c.ValidUntil}
	if c.PlanID.Valid {
		if err := scanName(ctx, q, `SELECT name FROM profiles WHERE id = ?`, c.PlanID.Int64, &l.PlanName); err != nil {
			return nil, err
		}
	}
	if err := scanName(ctx, q, `SELECT COALESCE(username, email, '') FROM managers WHERE id = ?`, c.OwnerManagerID, &l.OwnerUsername); err != nil {
		return nil, err
	}
	str := func(s string) *string { return &s }
	switch {
	case c.UsedByUserID.Valid:
		l.UsedByKind, l.UsedByUserID = str("user"), ptr(c.UsedByUserID)
		var name string
		if u, err := subs.Read(ctx, q, c.UsedByUserID.Int64); err == nil {
			name = u.Username
		} else if e := app.AsError(err); e == nil || e.Code != app.CodeNotFound {
			return nil, err
		}
		l.UsedByUsername = &name
	case c.UsedByManager.Valid:
		l.UsedByKind = str("manager")
		var name string
		if err := scanName(ctx, q, `SELECT COALESCE(username, email, '') FROM managers WHERE id = ?`, c.UsedByManager.Int64, &name); err != nil {
			return nil, err
		}
		l.UsedByUsername = &name
	case c.UsedChannel == ChannelRadius:
		l.UsedByKind, l.UsedByUsername = str("login"), str(c.Username.String)
	}
	if c.UsedChannel != "" {
		l.UsedChannel = str(c.UsedChannel)
	}
	return l, nil
}

// Search is GET /cards/search?kind=code|serial|username&keyword=…: a code
// is normalised first (upper-case; spaces, dashes and the xr:c: prefix
// dropped). A card outside the caller's subtree answers exactly like an
// unknown one (404).
func Search(ctx context.Context, act *app.Actor, kind, keyword string) (*Lookup, error) {
	if err := act.Require(PermCardsVerify); err != nil {
		return nil, err
	}
	keyword = strings.TrimSpace(keyword)
	var where string
	switch kind {
	case "code":
		keyword, where = NormalizeCode(keyword), "c.code = ?"
	case "serial":
		where = "c.serial = ?"
	case "username":
		where = "c.username = ?"
	case "":
		return nil, app.ErrValidation("kind_required", "kind")
	default:
		return nil, app.ErrValidation("invalid_enum", "kind").With("allowed", []string{"code", "serial", "username"})
	}
	if keyword == "" {
		return nil, app.ErrValidation("keyword_required", "keyword")
	}
	q := act.Tenant.DB.R
	c, err := loadCard(ctx, q, act, where, keyword)
	if err != nil {
		return nil, err
	}
	return lookupOf(ctx, q, c, act.Tenant.Now())
}

// TimelineEvent is one event of a card's life.
type TimelineEvent struct {
	At      app.Time       `json:"at"`
	Kind    string         `json:"kind"` // minted, printed, sold, held, transferred, redeemed, reversed, first_use, revoked, suspended, released, expiry_changed, regenerated, exhausted
	ActorID *int64         `json:"actor_id"`
	Detail  map[string]any `json:"detail"`
}

// Timeline is GET /cards/{id}/timeline: header facts and the events in
// chronological order.
type Timeline struct {
	Card   Lookup          `json:"card"`
	Events []TimelineEvent `json:"events"`
}

// CardTimeline is GET /cards/{id}/timeline. Minted comes from the card,
// series-wide events (printed, suspended, released, expiry changes,
// regenerations) from the series, the rest from the card's own events.
func CardTimeline(ctx context.Context, act *app.Actor, id int64) (*Timeline, error) {
	if err := act.Require(PermCardsList); err != nil {
		return nil, err
	}
	var out *Timeline
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		c, err := loadCard(ctx, tx, act, "c.id = ?", id)
		if err != nil {
			return err
		}
		l, err := lookupOf(ctx, tx, c, act.Tenant.Now())
		if err != nil {
			return err
		}
		out = &Timeline{Card: *l, Events: []TimelineEvent{{At: c.CreatedAt, Kind: "minted", Detail: map[string]any{"serial": c.Serial, "batch_id": c.BatchID}}}}
		read := func(q string, args ...any) error {
			rows, err := tx.QueryContext(ctx, q, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var e TimelineEvent
				var actor sql.NullInt64
				var detail string
				var id int64
				if err := rows.Scan(&id, &e.At, &e.Kind, &actor, &detail); err != nil {
					return err
				}
				e.ActorID = ptr(actor)
				if err := json.Unmarshal([]byte(detail), &e.Detail); err != nil {
					return fmt.Errorf("card event %d detail: %w", id, err)
				}
				if e.Detail == nil {
					e.Detail = map[string]any{}
				}
				out.Events = append(out.Events, e)
			}
			return rows.Err()
		}
		// One table: id orders card and series events alike.
		return read(`SELECT id, created_at, kind, actor_id, detail FROM card_events WHERE card_id = ?
			UNION ALL SELECT id, created_at, kind, actor_id, detail FROM card_events WHERE batch_id = ? AND card_id IS NULL
			AND kind NOT IN ('created', 'ready', 'failed') ORDER BY 1`, c.ID, c.BatchID)
	})
	return out, err
}

var cardListSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "c.id", "serial": "c.seq", "state": "c.state", "expires_at": "c.expires_at"},
	DefaultSort: "serial",
	DefaultAsc:  true,
	Filters:     map[string]app.FilterKind{"state": app.FilterString, "disposition": app.FilterString, "has_customer": app.FilterBool},
}

// CardListSpec is the list spec of GET /card-batches/{id}/cards.
func CardListSpec() app.ListSpec { return cardListSpec }

// ListCards is GET /card-batches/{id}/cards: the series must be visible to
// the caller, and a caller without tenant-wide visibility sees only the
// cards owned within its subtree. filter[state] (unused, consumed, active,
// exhausted, revoked), filter[disposition], filter[has_customer] (a
// subscriber redeemed it); q matches the serial, code or login.
func ListCards(ctx context.Context, act *app.Actor, batchID int64, lq app.ListQuery) (app.Page[Card], error) {
	if err := act.Require(PermCardsList); err != nil {
		return app.Page[Card]{}, err
	}
	var page app.Page[Card]
	cond, args := act.ScopeSQL("c.owner_manager_id")
	where := []string{"c.batch_id = ?", cond}
	args = append([]any{batchID}, args...)
	if s, ok := lq.Str("state"); ok {
		switch s {
		case StateUnused, StateConsumed, StateActive, StateExhausted, StateRevoked:
		default:
			return page, app.ErrValidation("invalid_filter", "filter[state]")
		}
		where, args = append(where, "c.state = ?"), append(args, s)
	}
	if s, ok := lq.Str("disposition"); ok {
		where, args = append(where, "c.disposition = ?"), append(args, s)
	}
	if v, ok := lq.Bool("has_customer"); ok {
		if v {
			where = append(where, "c.used_by_user_id IS NOT NULL")
		} else {
			where = append(where, "c.used_by_user_id IS NULL")
		}
	}
	if lq.Q != "" {
		n := NormalizeCode(lq.Q)
		where, args = append(where, "(c.serial = ? OR c.code = ? OR c.username = ?)"), append(args, lq.Q, n, lq.Q)
	}
	w := " WHERE " + strings.Join(where, " AND ")
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		// Cards are scoped by their holder, so a holder lists its own.
		cond, cargs := readScope(act)
		if _, err := loadBatchIn(ctx, tx, batchID, cond, cargs); err != nil {
			return err
		}
		var total int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM cards c`+w, args...).Scan(&total); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+cardCols+cardFrom+w+lq.OrderLimit("c.id"), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		now := act.Tenant.Now()
		page.Rows = []Card{}
		for rows.Next() {
			c, err := scanCard(rows)
			if err != nil {
				return err
			}
			page.Rows = append(page.Rows, c.api(now))
		}
		page.Meta = lq.MetaFor(total)
		return rows.Err()
	})
	return page, err
}

// RevokeCard is POST /cards/{id}/revoke: any non-revoked card becomes
// revoked for good (terminal; a release never brings it back). A card
// revoked by a suspension is made terminal too; one already revoked for
// good is 409 card_revoked. The effect a consumed card had stays; an active
// prepaid login is refused from its next authorization on.
func RevokeCard(ctx context.Context, act *app.Actor, id int64) (*Card, error) {
	if err := act.Require(PermCardsSuspendRelease); err != nil {
		return nil, err
	}
	var out Card
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		c, err := loadCard(ctx, tx, act, "c.id = ?", id)
		if err != nil {
			return err
		}
		if c.State == StateRevoked && c.RevokedReason != revokedSuspension {
			return app.ErrConflict("card_revoked")
		}
		now := act.Tenant.NowText()
		if err := moveCard(ctx, tx, c, change{State: StateRevoked, Sets: []string{"revoked_reason = ?", "revoked_at = ?"},
			Args: []any{revokedManual, now}}); err != nil {
			return err
		}
		c.RevokedReason = revokedManual
		if err := c.RevokedAt.Scan(now); err != nil {
			return err
		}
		if err := bumpContent(ctx, tx, c.BatchID); err != nil {
			return err
		}
		out = c.api(act.Tenant.Now())
		return event(ctx, tx, c, "revoked", act.ManagerID, map[string]any{"reason": revokedManual})
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}
