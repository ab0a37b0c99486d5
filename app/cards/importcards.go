package cards

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/subs"
	"xr/db"
)

// The primitives of a card import (app/dataimport: the cards kind, and the
// card series of the reseller-panel CSV set). Cards brought from another
// system keep their codes, serials and logins; they join a ready series
// the caller sees, counted in its stock like minted cards.

// CardIn is one imported card.
type CardIn struct {
	Serial   string
	Code     string
	Username string
	Password string
}

// ImportSeries is a series cards are imported into.
type ImportSeries struct {
	ID      int64
	Name    string
	Prepaid bool
	Owner   int64
	Expires app.Time
}

var cardLoginRe = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,64}$`)

// FindImportSeries resolves a series by id or name among those the caller
// sees (prm_cards_generate_user): 400 invalid_series when none, 409
// card_batch_not_ready while it generates or after it failed, 409
// card_batch_suspended when suspended.
func FindImportSeries(ctx context.Context, q app.Querier, act *app.Actor, ref string) (*ImportSeries, error) {
	if err := act.Require(PermCardsGenerateUser); err != nil {
		return nil, err
	}
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, app.ErrValidation("series_required", "series")
	}
	cond, args := batchScope(act)
	where := `b.name = ? COLLATE NOCASE`
	arg := any(ref)
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		where, arg = `b.id = ?`, id
	}
	var s ImportSeries
	var mode, status string
	var suspended bool
	err := q.QueryRowContext(ctx, `SELECT b.id, b.name, b.card_mode, b.owner_manager_id, b.expiration, b.status, b.suspended FROM card_batches b
		WHERE `+where+` AND `+cond+` ORDER BY b.id LIMIT 1`, append([]any{arg}, args...)...).Scan(&s.ID, &s.Name, &mode, &s.Owner, &s.Expires, &status, &suspended)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrValidation("invalid_series", "series")
	}
	if err != nil {
		return nil, err
	}
	switch {
	case status != "ready":
		return nil, app.ErrConflict("card_batch_not_ready").With("field", "series")
	case suspended:
		return nil, app.ErrConflict("card_batch_suspended").With("field", "series")
	}
	s.Prepaid = mode == ModeVoucher
	return &s, nil
}

// CheckImportCard validates one card for series s (the code normalised in
// place): the field and reason of a refusal ("" when valid), and whether
// the same card (its code) is already in this series (a re-run: the
// import's on_duplicate decides). A code or serial of another series, or a
// login held by a card or a subscriber, is refused.
func CheckImportCard(ctx context.Context, q app.Querier, s *ImportSeries, c *CardIn) (field, reason string, dup bool, err error) {
	c.Code = NormalizeCode(c.Code)
	c.Serial = strings.TrimSpace(c.Serial)
	c.Username = strings.TrimSpace(c.Username)
	if len(c.Code) < 4 || len(c.Code) > MaxCodeLength || strings.Trim(c.Code, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return "code", "invalid_card_code", false, nil
	}
	if len(c.Serial) > 64 {
		return "serial", "too_long", false, nil
	}
	if s.Prepaid {
		if c.Username == "" || c.Password == "" {
			f := "username"
			if c.Username != "" {
				f = "password"
			}
			return f, "card_login_required", false, nil
		}
		if !cardLoginRe.MatchString(c.Username) {
			return "username", "invalid_username", false, nil
		}
		if len(c.Password) > 128 {
			return "password", "too_long", false, nil
		}
	} else if c.Username != "" || c.Password != "" {
		return "username", "card_login_not_allowed", false, nil
	}
	var batch int64
	err = q.QueryRowContext(ctx, `SELECT batch_id FROM cards WHERE code = ?`, c.Code).Scan(&batch)
	switch {
	case err == nil && batch == s.ID:
		return "code", "", true, nil
	case err == nil:
		return "code", "code_taken", false, nil
	case !errors.Is(err, sql.ErrNoRows):
		return "", "", false, err
	}
	if c.Serial != "" {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM cards WHERE serial = ?`, c.Serial).Scan(&n); err != nil {
			return "", "", false, err
		}
		if n > 0 {
			return "serial", "serial_taken", false, nil
		}
	}
	if c.Username != "" {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM cards WHERE username = ?`, c.Username).Scan(&n); err != nil {
			return "", "", false, err
		}
		taken, err := subs.UsernameTaken(ctx, q, c.Username)
		if err != nil {
			return "", "", false, err
		}
		if n > 0 || taken {
			return "username", "username_taken", false, nil
		}
	}
	return "", "", false, nil
}

// AddImportCard inserts one checked card into series s in tx: unused and
// available in the owner's stock, the series' quantity and counters grown
// by one. A code, serial or login taken since the check is 409 code_taken,
// serial_taken or username_taken (field set).
func AddImportCard(ctx context.Context, tx *sql.Tx, s *ImportSeries, c CardIn) error {
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM cards WHERE batch_id = ?`, s.ID).Scan(&seq); err != nil {
		return err
	}
	serial := c.Serial
	if serial == "" {
		serial = fmt.Sprintf("%d-%06d", s.ID, seq)
	}
	var user, pass any
	if s.Prepaid {
		user, pass = c.Username, c.Password
		if taken, err := subs.UsernameTaken(ctx, tx, c.Username); err != nil {
			return err
		} else if taken {
			return app.ErrConflict("username_taken").With("field", "username")
		}
	}
	now := app.StampNow()
	_, err := tx.ExecContext(ctx, `INSERT INTO cards(batch_id, seq, serial, code, username, password, owner_manager_id, expires_at, created_at)
		VALUES (?,?,?,?,?,?,?,?,?)`, s.ID, seq, serial, c.Code, user, pass, s.Owner, app.FormatTime(s.Expires.Time), now)
	if db.IsUnique(err) {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "serial"):
			return app.ErrConflict("serial_taken").With("field", "serial")
		case strings.Contains(msg, "username"):
			return app.ErrConflict("username_taken").With("field", "username")
		}
		return app.ErrConflict("code_taken").With("field", "code")
	}
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE card_batches SET quantity = MAX(quantity, processed + 1), processed = processed + 1, unused = unused + 1,
		available = available + 1, content_version = content_version + 1, updated_at = ? WHERE id = ?`, now, s.ID)
	return err
}

// UpdateImportCard rewrites an unused card of series s found by its code
// (an import's on_duplicate update): its serial when one is given, and the
// login of a prepaid card. A card already used, sold or revoked is 409
// card_consumed; a serial or login taken by another card (or a
// subscriber) 409 serial_taken or username_taken.
func UpdateImportCard(ctx context.Context, tx *sql.Tx, s *ImportSeries, c CardIn) error {
	var id int64
	var state, disp string
	err := tx.QueryRowContext(ctx, `SELECT id, state, disposition FROM cards WHERE batch_id = ? AND code = ?`, s.ID, c.Code).Scan(&id, &state, &disp)
	if errors.Is(err, sql.ErrNoRows) {
		return app.ErrNotFound()
	}
	if err != nil {
		return err
	}
	if state != StateUnused || disp != DispAvailable {
		return app.ErrConflict("card_consumed").With("field", "code")
	}
	var p app.Patch
	if c.Serial != "" {
		p.Set("serial", c.Serial)
	}
	if s.Prepaid {
		if taken, err := subs.UsernameTaken(ctx, tx, c.Username); err != nil {
			return err
		} else if taken {
			return app.ErrConflict("username_taken").With("field", "username")
		}
		p.Set("username", c.Username)
		p.Set("password", c.Password)
	}
	if p.Empty() {
		return nil
	}
	_, err = p.Exec(ctx, tx, "cards", id, "") // cards carry no updated_at
	if db.IsUnique(err) {
		if strings.Contains(err.Error(), "serial") {
			return app.ErrConflict("serial_taken").With("field", "serial")
		}
		return app.ErrConflict("username_taken").With("field", "username")
	}
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE card_batches SET content_version = content_version + 1, updated_at = ? WHERE id = ?`, app.StampNow(), s.ID)
	return err
}

// NoteImportedCards records on the series' timeline that n cards were
// imported by the caller (once per committed chunk).
func NoteImportedCards(ctx context.Context, tx *sql.Tx, act *app.Actor, seriesID int64, n int) error {
	if n == 0 {
		return nil
	}
	return batchEvent(ctx, tx, seriesID, "imported", act.ManagerID, map[string]any{"count": n})
}

// NewImportSeries is a series created by an import for the cards that
// follow (AddImportCard): a legacy system's series.
type NewImportSeries struct {
	Name       string
	Prepaid    bool
	PlanID     int64 // required for prepaid
	FaceValue  app.Money
	Expiration string // yyyy-MM-dd[ HH:mm:ss]; "" = in ten years
	Owner      int64  // 0 = the caller
}

// CreateImportSeries records a ready series with no cards yet in tx (the
// rules of POST /card-batches for the type, plan, face value, expiry and
// owner; nothing is charged: the cards were paid for in the other system).
func CreateImportSeries(ctx context.Context, tx *sql.Tx, act *app.Actor, in NewImportSeries, now time.Time) (*ImportSeries, error) {
	if err := act.Require(PermCardsGenerateUser); err != nil {
		return nil, err
	}
	in.Name = strings.TrimSpace(in.Name)
	if err := checkText("name", in.Name, 120); err != nil {
		return nil, err
	}
	if in.FaceValue < 0 {
		return nil, app.ErrValidation("invalid_face_value", "face_value")
	}
	if in.Expiration == "" {
		in.Expiration = now.AddDate(10, 0, 0).UTC().Format("2006-01-02")
	}
	exp, err := parseExpiration(in.Expiration, now)
	if err != nil {
		return nil, err
	}
	if in.Prepaid && in.PlanID == 0 {
		return nil, app.ErrValidation("plan_profile_id_required", "plan_profile_id")
	}
	if in.PlanID != 0 {
		if err := requirePlanAssignable(ctx, tx, act, in.PlanID); err != nil {
			return nil, err
		}
	}
	owner := in.Owner
	if owner == 0 {
		owner = act.ManagerID
	}
	if err := requireManagerInScope(ctx, tx, act, owner, "owner_manager_id"); err != nil {
		return nil, err
	}
	mode := ModeRefill
	if in.Prepaid {
		mode = ModeVoucher
	}
	nowS := app.FormatTime(now)
	r, err := tx.ExecContext(ctx, `INSERT INTO card_batches(name, card_mode, plan_id, quantity, face_value, code_length, requested_code_length,
		code_charset, expiration, status, owner_manager_id, created_by, created_at, updated_at)
		VALUES (?,?,?,1,?,?,0,'alnum',?,'ready',?,?,?,?)`, in.Name, mode, nullID(in.PlanID), int64(in.FaceValue), MinCodeLength, exp, owner, act.ManagerID, nowS, nowS)
	if err != nil {
		return nil, err
	}
	id, err := r.LastInsertId()
	if err != nil {
		return nil, err
	}
	if err := batchEvent(ctx, tx, id, "created", act.ManagerID, map[string]any{"imported": true}); err != nil {
		return nil, err
	}
	return &ImportSeries{ID: id, Name: in.Name, Prepaid: in.Prepaid, Owner: owner, Expires: exp}, nil
}

// SeriesOut is a series as an export writes it.
type SeriesOut struct {
	ID         int64
	Name       string
	Prepaid    bool
	PlanName   string
	FaceValue  app.Money
	Expiration app.Time
	Owner      int64
}

// CardOut is a card as an export writes it.
type CardOut struct {
	SeriesID int64
	Code     string
	Serial   string
	Username string
	Password string
	State    string // effective: unused, consumed, active, exhausted, revoked, expired
}

// ExportSeries calls fn for every ready series the caller sees, by id,
// then for each of their cards (by series and seq) calls card.
func ExportSeries(ctx context.Context, q app.Querier, act *app.Actor, series func(SeriesOut) error, card func(CardOut) error) error {
	cond, args := batchScope(act)
	rows, err := q.QueryContext(ctx, `SELECT b.id, b.name, b.card_mode, COALESCE(p.name, ''), b.face_value, b.expiration, b.owner_manager_id
		FROM card_batches b LEFT JOIN profiles p ON p.id = b.plan_id WHERE b.status = 'ready' AND `+cond+` ORDER BY b.id`, args...)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var s SeriesOut
		var mode string
		var face int64
		if err := rows.Scan(&s.ID, &s.Name, &mode, &s.PlanName, &face, &s.Expiration, &s.Owner); err != nil {
			rows.Close()
			return err
		}
		s.Prepaid, s.FaceValue = mode == ModeVoucher, app.Money(face)
		ids = append(ids, s.ID)
		if err := series(s); err != nil {
			rows.Close()
			return err
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	now := app.FormatTime(act.Tenant.Now())
	for _, id := range ids {
		rows, err := q.QueryContext(ctx, `SELECT code, serial, COALESCE(username, ''), COALESCE(password, ''),
			CASE WHEN state = 'unused' AND expires_at <= ? THEN 'expired' ELSE state END FROM cards WHERE batch_id = ? ORDER BY seq`, now, id)
		if err != nil {
			return err
		}
		for rows.Next() {
			c := CardOut{SeriesID: id}
			if err := rows.Scan(&c.Code, &c.Serial, &c.Username, &c.Password, &c.State); err != nil {
				rows.Close()
				return err
			}
			if err := card(c); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}
