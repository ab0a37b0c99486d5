package cards

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/identity"
)

// CardType is the type of a new series: refill (credits a balance) or
// prepaid (a voucher that activates a plan or logs in over RADIUS).
type CardType string

func (c *CardType) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, "refill", "prepaid")
	*c = CardType(s)
	return err
}

// Charset is a code alphabet name.
type Charset string

func (c *Charset) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, Charsets...)
	*c = Charset(s)
	return err
}

// MaxQuantity bounds one series.
const MaxQuantity = 100_000

// CreateInput is POST /card-batches.
type CreateInput struct {
	Type           CardType   `json:"type"`
	Quantity       int64      `json:"quantity"`
	FaceValue      *app.Money `json:"face_value"`
	Expiration     string     `json:"expiration"`      // yyyy-MM-dd HH:mm:ss or yyyy-MM-dd (end of that day)
	PlanProfileID  int64      `json:"plan_profile_id"` // required for prepaid and for an auto-activating refill
	CodeLength     int        `json:"code_length"`     // a minimum; raised when the live pool needs more entropy
	CodeCharset    Charset    `json:"code_charset"`    // default numeric
	OwnerManagerID int64      `json:"owner_manager_id"`
	RequestID      string     `json:"request_id"`
	// Design fields.
	Name         string     `json:"name"`
	Note         string     `json:"note"`          // distribution note
	AutoActivate bool       `json:"auto_activate"` // refill: also activate the plan (paid from the balance) on redemption
	SellOnline   bool       `json:"sell_online"`
	TemplateID   *int64     `json:"template_id"`
	UnitPrice    *app.Money `json:"unit_price"` // what the owner pays per card (only for an owner below the caller)
}

// CreateResult is the answer of POST /card-batches: 202 fresh, 200 replay.
type CreateResult struct {
	BatchID    int64     `json:"batch_id"`
	Mode       string    `json:"mode"`
	Status     string    `json:"status"`
	Replay     bool      `json:"replay"`
	JobID      int64     `json:"job_id"`
	CodeLength int       `json:"code_length"`
	Charged    app.Money `json:"charged"`
}

func checkText(field, v string, max int) error {
	if len(v) > max {
		return app.ErrValidation("too_long", field)
	}
	return nil
}

func (in *CreateInput) validate(now time.Time) error {
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return err
	}
	return in.validateSpec(now)
}

// validateSpec is every rule of a new series but the request_id: card
// templates check their generation spec with it.
func (in *CreateInput) validateSpec(now time.Time) error {
	switch {
	case in.Type == "":
		return app.ErrValidation("type_required", "type")
	case in.Quantity <= 0:
		return app.ErrValidation("invalid_quantity", "quantity")
	case in.Quantity > MaxQuantity:
		return app.ErrValidation("quantity_too_large", "quantity").With("max", MaxQuantity)
	case in.FaceValue == nil:
		return app.ErrValidation("face_value_required", "face_value")
	case *in.FaceValue < 0:
		return app.ErrValidation("invalid_face_value", "face_value")
	case in.CodeLength != 0 && (in.CodeLength < MinCodeLength || in.CodeLength > MaxCodeLength):
		return app.ErrValidation("invalid_code_length", "code_length").With("min", MinCodeLength).With("max", MaxCodeLength)
	case in.UnitPrice != nil && *in.UnitPrice < 0:
		return app.ErrValidation("invalid_unit_price", "unit_price")
	}
	if _, err := parseExpiration(in.Expiration, now); err != nil {
		return err
	}
	if in.PlanProfileID == 0 && (in.Type == "prepaid" || in.AutoActivate) {
		return app.ErrValidation("plan_profile_id_required", "plan_profile_id")
	}
	if in.PlanProfileID < 0 {
		return app.ErrValidation("plan_not_assignable", "plan_profile_id")
	}
	if in.CodeCharset == "" {
		in.CodeCharset = "numeric"
	}
	in.Name, in.Note = strings.TrimSpace(in.Name), strings.TrimSpace(in.Note)
	if err := checkText("name", in.Name, 120); err != nil {
		return err
	}
	return checkText("note", in.Note, 1000)
}

// GenerateKind is the job kind that mints a series' cards.
const GenerateKind = "cards.generate"

type generatePayload struct {
	BatchID int64 `json:"batch_id"`
}

// CreateBatch is POST /card-batches: it records the series (status
// generating), charges the owner when a price applies, and queues the job
// that mints the cards. A replay of request_id answers the original
// batch_id with replay true; the same key by this caller on anything else
// is 409 request_id_conflict.
func CreateBatch(ctx context.Context, act *app.Actor, in CreateInput) (*CreateResult, error) {
	if err := act.Require(PermCardsGenerateUser); err != nil {
		return nil, err
	}
	if err := in.validate(act.Tenant.Now()); err != nil {
		return nil, err
	}
	t := act.Tenant
	now := t.Now()
	var out CreateResult
	var replay bool
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		out, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: in.RequestID, Subject: fmt.Sprintf("card-batches/by/%d", act.ManagerID), Input: in},
			func() (CreateResult, error) { return createBatchTx(ctx, tx, act, in, nil, now) })
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	out.Status = "generating" // the spec: generating in both cases
	return &out, nil
}

// createBatchTx records a validated series in tx (status generating),
// charges its owner and queues the generation job: the effect of POST
// /card-batches and of POST /card-templates/{id}/generate, which passes
// the template's design.
func createBatchTx(ctx context.Context, tx *sql.Tx, act *app.Actor, in CreateInput, designID *int64, now time.Time) (CreateResult, error) {
	exp, _ := parseExpiration(in.Expiration, now)
	mode := ModeRefill
	if in.Type == "prepaid" {
		mode = ModeVoucher
	}
	owner := in.OwnerManagerID
	if owner == 0 {
		owner = act.ManagerID
	}
	if err := requireManagerInScope(ctx, tx, act, owner, "owner_manager_id"); err != nil {
		return CreateResult{}, err
	}
	if in.PlanProfileID != 0 {
		if err := requirePlanAssignable(ctx, tx, act, in.PlanProfileID); err != nil {
			return CreateResult{}, err
		}
	}
	live, err := liveCodes(ctx, tx)
	if err != nil {
		return CreateResult{}, err
	}
	length := max(in.CodeLength, RequiredCodeLength(string(in.CodeCharset), live+in.Quantity))
	nowS := app.FormatTime(now)
	r, err := tx.ExecContext(ctx, `INSERT INTO card_batches(name, card_mode, plan_id, quantity, face_value, code_length, requested_code_length,
		code_charset, expiration, sell_online, auto_activate, note, template_id, design_id, owner_manager_id, created_by, request_id, created_at, updated_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, in.Name, mode, nullID(in.PlanProfileID), in.Quantity, int64(*in.FaceValue), length,
		in.CodeLength, string(in.CodeCharset), exp, in.SellOnline, in.AutoActivate && mode == ModeRefill, in.Note, in.TemplateID, designID, owner,
		act.ManagerID, in.RequestID, nowS, nowS)
	if err != nil {
		return CreateResult{}, err
	}
	id, err := r.LastInsertId()
	if err != nil {
		return CreateResult{}, err
	}
	charged, err := chargeGeneration(ctx, tx, act, id, owner, in)
	if err != nil {
		return CreateResult{}, err
	}
	job, err := app.EnqueueJob(ctx, tx, GenerateKind, generatePayload{BatchID: id}, now, act.ManagerID, 5)
	if err != nil {
		return CreateResult{}, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET job_id = ?, charged = ? WHERE id = ?`, job, int64(charged), id); err != nil {
		return CreateResult{}, err
	}
	if err := batchEvent(ctx, tx, id, "created", act.ManagerID, map[string]any{"quantity": in.Quantity, "code_length": length,
		"charged": charged}); err != nil {
		return CreateResult{}, err
	}
	return CreateResult{BatchID: id, Mode: mode, Status: "generating", JobID: job, CodeLength: length, Charged: charged}, nil
}

// chargeGeneration takes the price of a new series from its owner's wallet
// (app.MoveManagerWallet) when a price applies, and records the owner's
// price row. The tenant owner (root) is the house and never pays. The unit
// price is the request's unit_price — which only a caller above the owner
// may set — else, when the tenant sells to resellers (setting
// cards_sell_to_resellers true), the face value less the owner's
// discount_rate; else nothing. A wallet that cannot pay refuses the whole
// series: 409 insufficient_balance.
func chargeGeneration(ctx context.Context, tx *sql.Tx, act *app.Actor, batchID, owner int64, in CreateInput) (app.Money, error) {
	if in.UnitPrice != nil && owner == act.ManagerID {
		return 0, app.ErrValidation("cannot_price_self", "unit_price")
	}
	root, err := isRoot(ctx, tx, owner)
	if err != nil || root {
		return 0, err
	}
	unit, ok, err := defaultUnitPrice(ctx, tx, owner, *in.FaceValue)
	if err != nil {
		return 0, err
	}
	if in.UnitPrice != nil {
		unit, ok = *in.UnitPrice, true
	}
	if !ok {
		return 0, nil
	}
	if err := setPrice(ctx, tx, batchID, owner, unit, act.ManagerID); err != nil {
		return 0, err
	}
	total, err := unit.Mul(in.Quantity)
	if err != nil {
		return 0, app.ErrAmountOutOfRange("quantity")
	}
	if total == 0 {
		return 0, nil
	}
	if _, _, err := identity.MoveManagerWallet(ctx, tx, identity.WalletMove{ManagerID: owner, Amount: -total, Kind: "card_purchase", ActorID: act.ManagerID,
		RefType: "card_batch", RefID: batchID, RequestID: in.RequestID, Note: fmt.Sprintf("%d cards × %s", in.Quantity, unit)}); err != nil {
		return 0, err
	}
	return total, nil
}

// defaultUnitPrice is the tenant's price for a reseller: the face value
// less its discount_rate when the tenant sells cards to resellers.
func defaultUnitPrice(ctx context.Context, q app.Querier, managerID int64, face app.Money) (app.Money, bool, error) {
	sell, err := SettingCardsSellToResellers.Get(ctx, q)
	if err != nil || !sell {
		return 0, false, err
	}
	var rate int64
	if err := q.QueryRowContext(ctx, `SELECT discount_rate FROM managers WHERE id = ?`, managerID).Scan(&rate); err != nil {
		return 0, false, err
	}
	rate = min(max(rate, 0), 100_000) // thousandths of a percent
	unit, err := face.MulDiv(100_000-rate, 100_000)
	if err != nil {
		return 0, false, app.ErrAmountOutOfRange("face_value")
	}
	return unit, true, nil
}

func setPrice(ctx context.Context, tx *sql.Tx, batchID, managerID int64, unit app.Money, by int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO card_batch_prices(batch_id, manager_id, unit_price, updated_by, updated_at) VALUES (?,?,?,?,?)
		ON CONFLICT(batch_id, manager_id) DO UPDATE SET unit_price = excluded.unit_price, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		batchID, managerID, int64(unit), nullID(by), app.StampNow())
	return err
}

// unitPriceFor is what managerID pays per card of a series: its price row,
// else the tenant's default; ok false when nothing applies. The root pays
// nothing.
func unitPriceFor(ctx context.Context, q app.Querier, batchID, managerID int64, face app.Money) (app.Money, bool, error) {
	if root, err := isRoot(ctx, q, managerID); err != nil || root {
		return 0, false, err
	}
	var unit int64
	err := q.QueryRowContext(ctx, `SELECT unit_price FROM card_batch_prices WHERE batch_id = ? AND manager_id = ?`, batchID, managerID).Scan(&unit)
	if err == nil {
		return app.Money(unit), true, nil
	}
	if err != sql.ErrNoRows {
		return 0, false, err
	}
	return defaultUnitPrice(ctx, q, managerID, face)
}

// GetBatch is GET /card-batches/{id}: the header, generation spec and
// counters, plus a breakdown of the cards by state and disposition.
func GetBatch(ctx context.Context, act *app.Actor, id int64) (*Batch, error) {
	if err := act.Require(PermCardsList); err != nil {
		return nil, err
	}
	return getBatch(ctx, act, id)
}

// getBatch reads one series the caller sees, for whichever action answers
// it (the caller's permission was checked by that action).
func getBatch(ctx context.Context, act *app.Actor, id int64) (*Batch, error) {
	var b *Batch
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var err error
		// A series seen only as the holder of some of its cards shows the
		// breakdown of those cards alone.
		scope, sargs := "1=1", []any(nil)
		b, err = loadBatch(ctx, tx, act, id)
		var ae *app.Error
		if errors.As(err, &ae) && ae.Code == app.CodeNotFound && !act.TenantWide {
			cond, args := heldScope(act)
			if b, err = loadBatchIn(ctx, tx, id, cond, args); err == nil {
				scope, sargs = act.ScopeSQL("owner_manager_id")
			}
		}
		if err != nil {
			return err
		}
		one := []Batch{*b}
		if err := fillInStock(ctx, tx, act, one); err != nil {
			return err
		}
		b.InStock = one[0].InStock
		rows, err := tx.QueryContext(ctx, `SELECT state, disposition, COUNT(*) FROM cards WHERE batch_id = ? AND `+scope+` GROUP BY 1, 2 ORDER BY 1, 2`,
			append([]any{id}, sargs...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		b.Breakdown = []StockRow{}
		for rows.Next() {
			var r StockRow
			if err := rows.Scan(&r.State, &r.Disposition, &r.Count); err != nil {
				return err
			}
			b.Breakdown = append(b.Breakdown, r)
		}
		return rows.Err()
	})
	return b, err
}

var batchListSpec = app.ListSpec{
	Sorts: map[string]string{"id": "b.id", "created_at": "b.created_at", "quantity": "b.quantity", "face_value": "b.face_value",
		"expiration": "b.expiration", "available": "b.available", "status": "b.status"},
	DefaultSort: "id",
	Filters: map[string]app.FilterKind{"status": app.FilterString, "card_mode": app.FilterString, "owner_manager_id": app.FilterInt,
		"suspended": app.FilterBool, "template_id": app.FilterInt, "plan_id": app.FilterInt},
}

// BatchListSpec is the list spec of GET /card-batches.
func BatchListSpec() app.ListSpec { return batchListSpec }

// ListBatches is GET /card-batches: filter[status] (generating, ready,
// failed), filter[card_mode] (voucher_account, refill_balance),
// filter[owner_manager_id], filter[suspended], filter[template_id],
// filter[plan_id]; q searches the plan name, the name, the distribution
// note and (a number) the series id. A caller without tenant-wide
// visibility sees the series created within its subtree or owned there.
func ListBatches(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Batch], error) {
	if err := act.Require(PermCardsList); err != nil {
		return app.Page[Batch]{}, err
	}
	var page app.Page[Batch]
	cond, args := readScope(act)
	where := []string{cond}
	if s, ok := lq.Str("status"); ok {
		if s != "generating" && s != "ready" && s != "failed" {
			return page, app.ErrValidation("invalid_filter", "filter[status]")
		}
		where, args = append(where, "b.status = ?"), append(args, s)
	}
	if s, ok := lq.Str("card_mode"); ok {
		if s != ModeVoucher && s != ModeRefill {
			return page, app.ErrValidation("invalid_filter", "filter[card_mode]")
		}
		where, args = append(where, "b.card_mode = ?"), append(args, s)
	}
	if v, ok := lq.Int("owner_manager_id"); ok {
		where, args = append(where, "b.owner_manager_id = ?"), append(args, v)
	}
	if v, ok := lq.Bool("suspended"); ok {
		where, args = append(where, "b.suspended = ?"), append(args, v)
	}
	if v, ok := lq.Int("template_id"); ok {
		where, args = append(where, "b.template_id = ?"), append(args, v)
	}
	if v, ok := lq.Int("plan_id"); ok {
		where, args = append(where, "b.plan_id = ?"), append(args, v)
	}
	if lq.Q != "" {
		like := "%" + app.LikeEscape(lq.Q) + "%"
		c := `(p.name LIKE ? ESCAPE '\' OR b.note LIKE ? ESCAPE '\' OR b.name LIKE ? ESCAPE '\'`
		qa := []any{like, like, like}
		if n, err := strconv.ParseInt(lq.Q, 10, 64); err == nil {
			c += " OR b.id = ?"
			qa = append(qa, n)
		}
		where, args = append(where, c+")"), append(args, qa...)
	}
	w := " WHERE " + strings.Join(where, " AND ")
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var total int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*)`+batchFrom+w, args...).Scan(&total); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+batchCols+batchFrom+w+lq.OrderLimit("b.id"), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		page.Rows = []Batch{}
		for rows.Next() {
			b, err := scanBatch(rows)
			if err != nil {
				return err
			}
			page.Rows = append(page.Rows, *b)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		page.Meta = lq.MetaFor(total)
		return fillInStock(ctx, tx, act, page.Rows)
	})
	return page, err
}

// PatchInput is PATCH /card-batches/{id} (present fields only).
type PatchInput struct {
	Name         app.Opt[string] `json:"name"`
	Note         app.Opt[string] `json:"note"`
	SellOnline   app.Opt[bool]   `json:"sell_online"`
	AutoActivate app.Opt[bool]   `json:"auto_activate"`
	TemplateID   app.Opt[int64]  `json:"template_id"`
	DesignID     app.Opt[int64]  `json:"design_id"` // a card_sheet design of the studio; null: the default design
}

// PatchBatch is PATCH /card-batches/{id}: name, note (distribution note),
// sell_online, auto_activate (refill series with a plan only), template_id,
// design_id (the sheet prints with it: 400 invalid_design_id unless a
// card_sheet design).
func PatchBatch(ctx context.Context, act *app.Actor, id int64, in PatchInput) (*Batch, error) {
	if err := act.Require(PermCardsDesigner); err != nil {
		return nil, err
	}
	if in.Name.Set {
		in.Name.V = strings.TrimSpace(in.Name.V)
		if err := checkText("name", in.Name.V, 120); err != nil {
			return nil, err
		}
	}
	if in.Note.Set {
		if err := checkText("note", in.Note.V, 1000); err != nil {
			return nil, err
		}
	}
	t := act.Tenant
	err := t.Write(ctx, func(tx *sql.Tx) error {
		b, err := loadBatch(ctx, tx, act, id)
		if err != nil {
			return err
		}
		var pt app.Patch
		if in.Name.Set {
			pt.Set("name", in.Name.V)
		}
		if in.Note.Set {
			pt.Set("note", strings.TrimSpace(in.Note.V))
		}
		if in.SellOnline.Set {
			pt.Set("sell_online", in.SellOnline.V)
		}
		if in.AutoActivate.Set {
			if in.AutoActivate.V && (b.CardMode != ModeRefill || b.PlanID == nil) {
				return app.ErrValidation("plan_profile_id_required", "auto_activate")
			}
			pt.Set("auto_activate", in.AutoActivate.V)
		}
		if in.TemplateID.Set {
			var v any
			if !in.TemplateID.Null {
				v = in.TemplateID.V
			}
			pt.Set("template_id", v)
		}
		if in.DesignID.Set {
			var v any
			if !in.DesignID.Null {
				ok, err := isCardSheetDesign(ctx, tx, in.DesignID.V)
				if err != nil {
					return err
				}
				if !ok {
					return app.ErrValidation("invalid_design_id", "design_id")
				}
				v = in.DesignID.V
			}
			pt.Set("design_id", v)
		}
		_, err = pt.Exec(ctx, tx, "card_batches", id, t.NowText())
		return err
	})
	if err != nil {
		return nil, err
	}
	return getBatch(ctx, act, id)
}

// Deleted answers a delete.
type Deleted struct {
	ID       int64     `json:"id"`
	Deleted  bool      `json:"deleted"`
	Refunded app.Money `json:"refunded"`
}

// DeleteBatch is DELETE /card-batches/{id}: refused (409 card_batch_in_use)
// once any card was redeemed, used, transferred or sold. A deleted series
// that was charged to its owner is refunded to the owner's wallet.
func DeleteBatch(ctx context.Context, act *app.Actor, id int64) (*Deleted, error) {
	if err := act.Require(PermCardsDelete); err != nil {
		return nil, err
	}
	out := &Deleted{ID: id, Deleted: true}
	var pdf string
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		b, err := loadBatch(ctx, tx, act, id)
		if err != nil {
			return err
		}
		var redemptions int64
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM card_redemptions WHERE batch_id = ?`, id).Scan(&redemptions); err != nil {
			return err
		}
		if b.InCirculation || redemptions > 0 {
			return app.ErrConflict("card_batch_in_use")
		}
		if b.Charged > 0 {
			if _, _, err := identity.MoveManagerWallet(ctx, tx, identity.WalletMove{ManagerID: b.OwnerManagerID, Amount: b.Charged, Kind: "card_purchase_refund",
				ActorID: act.ManagerID, RefType: "card_batch", RefID: id, Note: "series deleted", NoDebtCheck: true}); err != nil {
				return err
			}
			out.Refunded = b.Charged
		}
		if err := tx.QueryRowContext(ctx, `SELECT pdf_file FROM card_batches WHERE id = ?`, id).Scan(&pdf); err != nil {
			return err
		}
		if b.JobID != nil && b.Status == "generating" {
			if err := app.CancelQueued(ctx, tx, act.Tenant.Now(), "", *b.JobID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM cards WHERE batch_id = ?`, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM card_batches WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if pdf != "" {
		removeStalePDF(act.Tenant, pdf)
	}
	return out, nil
}

// bulk runs fn per id in its own transaction and reports the bulk shape.
func bulk(ctx context.Context, in app.BulkIDs, fn func(ctx context.Context, id int64) error) (app.BulkResult, error) {
	if err := in.Validate(); err != nil {
		return app.BulkResult{}, err
	}
	return app.RunBulk(ctx, in.IDs, fn), nil
}

// BulkDelete is POST /card-batches/bulk-delete.
func BulkDelete(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermCardsDelete); err != nil {
		return app.BulkResult{}, err
	}
	return bulk(ctx, in, func(ctx context.Context, id int64) error { _, err := DeleteBatch(ctx, act, id); return err })
}

// SuspendResult answers suspend and release.
type SuspendResult struct {
	BatchID    int64  `json:"batch_id"`
	Suspended  bool   `json:"suspended"`
	Changed    int64  `json:"changed"` // cards revoked (suspend) or put back in stock (release)
	MessageKey string `json:"message_key"`
}

// SuspendBatch is POST /card-batches/{id}/suspend: the series is marked
// suspended and every still-unused card is revoked (reason suspension);
// cards in flight — held by an open till sale, or stuck in one — are left
// alive, and so are cards already used. Re-running is a no-op. Status is
// unchanged.
func SuspendBatch(ctx context.Context, act *app.Actor, id int64) (*SuspendResult, error) {
	if err := act.Require(PermCardsSuspendRelease); err != nil {
		return nil, err
	}
	out := &SuspendResult{BatchID: id, Suspended: true, MessageKey: "card_batch_suspended"}
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		b, err := loadBatch(ctx, tx, act, id)
		if err != nil {
			return err
		}
		if b.Suspended {
			return nil
		}
		now := act.Tenant.NowText()
		if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET suspended = 1, updated_at = ? WHERE id = ?`, now, id); err != nil {
			return err
		}
		out.Changed, err = transition(ctx, tx, id, `state = 'unused' AND disposition NOT IN ('held','stuck')`, nil,
			change{State: StateRevoked, Sets: []string{"revoked_reason = ?", "revoked_at = ?"}, Args: []any{revokedSuspension, now}})
		if err != nil {
			return err
		}
		if err := bumpContent(ctx, tx, id); err != nil {
			return err
		}
		return batchEvent(ctx, tx, id, "suspended", act.ManagerID, map[string]any{"revoked": out.Changed})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReleaseBatch is POST /card-batches/{id}/release: suspended false, and the
// cards the suspension revoked are back in stock (unused). Cards revoked
// one by one stay revoked. Releasing a series that is not suspended is a
// no-op.
func ReleaseBatch(ctx context.Context, act *app.Actor, id int64) (*SuspendResult, error) {
	if err := act.Require(PermCardsSuspendRelease); err != nil {
		return nil, err
	}
	out := &SuspendResult{BatchID: id, Suspended: false, MessageKey: "card_batch_released"}
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		b, err := loadBatch(ctx, tx, act, id)
		if err != nil {
			return err
		}
		if !b.Suspended {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET suspended = 0, updated_at = ? WHERE id = ?`, act.Tenant.NowText(), id); err != nil {
			return err
		}
		out.Changed, err = transition(ctx, tx, id, `state = 'revoked' AND revoked_reason = ?`, []any{revokedSuspension},
			change{State: StateUnused, Sets: []string{"revoked_reason = ''", "revoked_at = NULL"}})
		if err != nil {
			return err
		}
		if err := bumpContent(ctx, tx, id); err != nil {
			return err
		}
		return batchEvent(ctx, tx, id, "released", act.ManagerID, map[string]any{"released": out.Changed})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BulkSuspend is POST /card-batches/bulk-suspend.
func BulkSuspend(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermCardsSuspendRelease); err != nil {
		return app.BulkResult{}, err
	}
	return bulk(ctx, in, func(ctx context.Context, id int64) error { _, err := SuspendBatch(ctx, act, id); return err })
}

// BulkRelease is POST /card-batches/bulk-release.
func BulkRelease(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermCardsSuspendRelease); err != nil {
		return app.BulkResult{}, err
	}
	return bulk(ctx, in, func(ctx context.Context, id int64) error { _, err := ReleaseBatch(ctx, act, id); return err })
}

// ExpiryInput is POST /card-batches/{id}/expiry.
type ExpiryInput struct {
	Expiration string  `json:"expiration"` // yyyy-MM-dd HH:mm:ss or yyyy-MM-dd (end of that day); in the future
	CardIDs    []int64 `json:"card_ids"`   // optional: only these cards of the series
}

// ExpiryResult answers an expiry change.
type ExpiryResult struct {
	BatchID    int64    `json:"batch_id"`
	Expiration app.Time `json:"expiration"`
	Updated    int64    `json:"updated"`
}

// ChangeExpiry is POST /card-batches/{id}/expiry: the new expiration of the
// series' cards that can still be redeemed (unused, or revoked by a
// suspension so that a release brings them back with it); without card_ids
// the series' own expiration changes too. Used cards keep theirs.
func ChangeExpiry(ctx context.Context, act *app.Actor, id int64, in ExpiryInput) (*ExpiryResult, error) {
	if err := act.Require(PermCardsChangeExpiry); err != nil {
		return nil, err
	}
	exp, err := parseExpiration(in.Expiration, act.Tenant.Now())
	if err != nil {
		return nil, err
	}
	if len(in.CardIDs) > app.MaxBulkIDs {
		return nil, app.ErrValidation("too_many_ids", "card_ids")
	}
	out := &ExpiryResult{BatchID: id, Expiration: exp}
	err = act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := loadBatch(ctx, tx, act, id); err != nil {
			return err
		}
		where := `batch_id = ? AND (state = 'unused' OR (state = 'revoked' AND revoked_reason = 'suspension'))`
		args := []any{exp, id}
		if len(in.CardIDs) > 0 {
			where += " AND id IN (" + strings.TrimSuffix(strings.Repeat("?,", len(in.CardIDs)), ",") + ")"
			for _, c := range in.CardIDs {
				args = append(args, c)
			}
		} else if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET expiration = ?, updated_at = ? WHERE id = ?`, exp, act.Tenant.NowText(), id); err != nil {
			return err
		}
		r, err := tx.ExecContext(ctx, `UPDATE cards SET expires_at = ? WHERE `+where, args...)
		if err != nil {
			return err
		}
		out.Updated, _ = r.RowsAffected()
		if err := bumpContent(ctx, tx, id); err != nil {
			return err
		}
		return batchEvent(ctx, tx, id, "expiry_changed", act.ManagerID, map[string]any{"expiration": exp, "cards": out.Updated})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BulkExpiryInput is POST /card-batches/bulk-expiry.
type BulkExpiryInput struct {
	IDs        []int64 `json:"ids"`
	Expiration string  `json:"expiration"`
}

// BulkExpiry changes the expiry of several series (bulk shape).
func BulkExpiry(ctx context.Context, act *app.Actor, in BulkExpiryInput) (app.BulkResult, error) {
	if err := act.Require(PermCardsChangeExpiry); err != nil {
		return app.BulkResult{}, err
	}
	if _, err := parseExpiration(in.Expiration, act.Tenant.Now()); err != nil {
		return app.BulkResult{}, err
	}
	return bulk(ctx, app.BulkIDs{IDs: in.IDs}, func(ctx context.Context, id int64) error {
		_, err := ChangeExpiry(ctx, act, id, ExpiryInput{Expiration: in.Expiration})
		return err
	})
}

// MarkPrinted is POST /card-batches/{id}/printed: printed_at stamped and
// print_count incremented; the status never moves here. A series still
// generating (or failed) has nothing to print: 409 card_batch_not_ready.
func MarkPrinted(ctx context.Context, act *app.Actor, id int64) (*Batch, error) {
	if err := act.Require(PermCardsDownload); err != nil {
		return nil, err
	}
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		b, err := loadBatch(ctx, tx, act, id)
		if err != nil {
			return err
		}
		if b.Status != "ready" {
			return app.ErrConflict("card_batch_not_ready").With("status", b.Status)
		}
		now := act.Tenant.NowText()
		if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET printed_at = ?, print_count = print_count + 1, updated_at = ? WHERE id = ?`, now, now, id); err != nil {
			return err
		}
		return batchEvent(ctx, tx, id, "printed", act.ManagerID, map[string]any{"print_count": b.PrintCount + 1})
	})
	if err != nil {
		return nil, err
	}
	return getBatch(ctx, act, id)
}

// BulkPrinted is POST /card-batches/bulk-printed.
func BulkPrinted(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermCardsDownload); err != nil {
		return app.BulkResult{}, err
	}
	return bulk(ctx, in, func(ctx context.Context, id int64) error { _, err := MarkPrinted(ctx, act, id); return err })
}

// CodeLengthInfo answers GET /card-batches/code-length.
type CodeLengthInfo struct {
	LiveCards   int64          `json:"live_cards"`
	Quantity    int64          `json:"quantity"`
	CodeCharset string         `json:"code_charset"`
	MinLength   int            `json:"min_length"`
	Lengths     map[string]int `json:"lengths"`
	GuessBound  float64        `json:"guess_bound"`
}

// CodeLength is GET /card-batches/code-length?code_charset=&quantity=: the
// minimum code length the tenant's live pool currently requires for a new
// series of quantity cards (default 1) — live_codes / charset^length ≤
// guess_bound — per charset and for the one asked (default numeric).
func CodeLength(ctx context.Context, act *app.Actor, charset string, quantity int64) (*CodeLengthInfo, error) {
	if err := act.Require(PermCardsGenerateUser); err != nil {
		return nil, err
	}
	if charset == "" {
		charset = "numeric"
	}
	if _, ok := charsets[charset]; !ok {
		return nil, app.ErrValidation("invalid_enum", "code_charset").With("allowed", Charsets)
	}
	if quantity <= 0 {
		quantity = 1
	}
	if quantity > MaxQuantity {
		return nil, app.ErrValidation("quantity_too_large", "quantity").With("max", MaxQuantity)
	}
	live, err := liveCodes(ctx, act.Tenant.DB.R)
	if err != nil {
		return nil, err
	}
	out := &CodeLengthInfo{LiveCards: live, Quantity: quantity, CodeCharset: charset, Lengths: map[string]int{}, GuessBound: GuessBound}
	for _, c := range Charsets {
		out.Lengths[c] = RequiredCodeLength(c, live+quantity)
	}
	out.MinLength = out.Lengths[charset]
	return out, nil
}

// Price is one row of a series' reseller pricing.
type Price struct {
	BatchID   int64     `json:"batch_id"`
	ManagerID int64     `json:"manager_id"`
	Username  string    `json:"username"`
	UnitPrice app.Money `json:"unit_price"`
	UpdatedAt app.Time  `json:"updated_at"`
}

// ListPricing is GET /card-batches/{id}/pricing: the price per card each
// reseller pays for this series (the ones in the caller's subtree).
func ListPricing(ctx context.Context, act *app.Actor, id int64) ([]Price, error) {
	if err := act.Require(PermCardsList); err != nil {
		return nil, err
	}
	out := []Price{}
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		if _, err := loadBatch(ctx, tx, act, id); err != nil {
			return err
		}
		cond, args := act.ScopeSQL("cp.manager_id")
		rows, err := tx.QueryContext(ctx, `SELECT cp.batch_id, cp.manager_id, COALESCE(m.username, m.email, ''), cp.unit_price, cp.updated_at
			FROM card_batch_prices cp JOIN managers m ON m.id = cp.manager_id WHERE cp.batch_id = ? AND `+cond+` ORDER BY cp.manager_id`,
			append([]any{id}, args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p Price
			var unit int64
			if err := rows.Scan(&p.BatchID, &p.ManagerID, &p.Username, &unit, &p.UpdatedAt); err != nil {
				return err
			}
			p.UnitPrice = app.Money(unit)
			out = append(out, p)
		}
		return rows.Err()
	})
	return out, err
}

// PriceInput is PUT /card-batches/{id}/pricing/{resellerId}.
type PriceInput struct {
	UnitPrice *app.Money `json:"unit_price"`
}

// SetPricing is PUT /card-batches/{id}/pricing/{resellerId}: the price per
// card the reseller pays when it receives cards of this series. The
// reseller must be in the caller's subtree and not the caller itself.
func SetPricing(ctx context.Context, act *app.Actor, id, resellerID int64, in PriceInput) (*Price, error) {
	if err := act.Require(PermCardsDesigner); err != nil {
		return nil, err
	}
	if in.UnitPrice == nil {
		return nil, app.ErrValidation("unit_price_required", "unit_price")
	}
	if *in.UnitPrice < 0 {
		return nil, app.ErrValidation("invalid_unit_price", "unit_price")
	}
	if resellerID == act.ManagerID {
		return nil, app.ErrValidation("cannot_price_self", "reseller_id")
	}
	out := &Price{BatchID: id, ManagerID: resellerID, UnitPrice: *in.UnitPrice}
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := loadBatch(ctx, tx, act, id); err != nil {
			return err
		}
		if err := act.RequireScope(ctx, tx, resellerID); err != nil {
			return err
		}
		if root, err := isRoot(ctx, tx, resellerID); err != nil || root {
			if err == nil {
				err = app.ErrValidation("cannot_price_owner", "reseller_id")
			}
			return err
		}
		if err := setPrice(ctx, tx, id, resellerID, *in.UnitPrice, act.ManagerID); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT COALESCE(m.username, m.email, ''), cp.updated_at FROM card_batch_prices cp JOIN managers m ON m.id = cp.manager_id
			WHERE cp.batch_id = ? AND cp.manager_id = ?`, id, resellerID).Scan(&out.Username, &out.UpdatedAt)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeletePricing is DELETE /card-batches/{id}/pricing/{resellerId}; 404 when
// no price was set.
func DeletePricing(ctx context.Context, act *app.Actor, id, resellerID int64) error {
	if err := act.Require(PermCardsDesigner); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := loadBatch(ctx, tx, act, id); err != nil {
			return err
		}
		if err := act.RequireScope(ctx, tx, resellerID); err != nil {
			return err
		}
		r, err := tx.ExecContext(ctx, `DELETE FROM card_batch_prices WHERE batch_id = ? AND manager_id = ?`, id, resellerID)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return app.ErrNotFound()
		}
		return nil
	})
}
