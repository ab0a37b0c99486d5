package cards

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"xr/app"
	"xr/app/identity"
	"xr/app/subs"
)

// Redemption channels (the card's used_channel and the redemption's channel).
const (
	ChannelStaff     = "staff"           // POST /cards/redeem
	ChannelCounter   = "counter"         // POST /admin/cards/redeem-otc
	ChannelSignup    = "self_signup"     // POST /cards/redeem-create (public)
	ChannelWallet    = "wallet"          // POST /admin/cards/redeem-to-wallet
	ChannelPortal    = "customer_portal" // the subscriber portal (RedeemForSubscriber)
	ChannelRadius    = "radius"          // a prepaid login's first use
	effectBalance    = "balance"
	effectActivation = "activation"
	effectBoth       = "balance_activation"
	effectWallet     = "wallet"
)

// RedeemInput is POST /cards/redeem.
type RedeemInput struct {
	Code      string `json:"code"`
	UserID    int64  `json:"user_id"`
	RequestID string `json:"request_id"`
}

// OTCInput is POST /admin/cards/redeem-otc: a card sold over the counter
// and redeemed at once onto the customer's account.
type OTCInput struct {
	Code       string     `json:"code"`
	UserID     int64      `json:"user_id"`
	RequestID  string     `json:"request_id"`
	PaidAmount *app.Money `json:"paid_amount"` // what the customer paid; default the face value
}

// RedeemCreateInput is POST /cards/redeem-create (public): a new
// subscriber made from a voucher.
type RedeemCreateInput struct {
	Code      string `json:"code"`
	Username  string `json:"username"`
	Password  string `json:"password"`
	RequestID string `json:"request_id"`
	Email     string `json:"email"`
	Phone     string `json:"phone"`
	Firstname string `json:"firstname"`
	Lastname  string `json:"lastname"`
}

// WalletRedeemInput is POST /admin/cards/redeem-to-wallet.
type WalletRedeemInput struct {
	Code      string `json:"code"`
	RequestID string `json:"request_id"`
}

// Effect is what a redemption did.
type Effect struct {
	Type         string    `json:"type"` // balance, activation, balance_activation, wallet
	Amount       app.Money `json:"amount"`
	ProfileID    *int64    `json:"profile_id,omitempty"`
	ActivationID *int64    `json:"activation_id,omitempty"`
	Expiration   *app.Time `json:"expiration,omitempty"`
}

// RedeemResult is the spec's Card redemption result. A replay answers the
// same card_id, mode and effect_applied and omits new_balance.
type RedeemResult struct {
	CardID        int64      `json:"card_id"`
	Mode          string     `json:"mode"`
	UserID        *int64     `json:"user_id"`
	ManagerID     *int64     `json:"manager_id,omitempty"` // redeem-to-wallet: the wallet credited
	Username      string     `json:"username,omitempty"`   // redeem-create: the subscriber made
	EffectApplied Effect     `json:"effect_applied"`
	NewBalance    *app.Money `json:"new_balance,omitempty"`
	RedemptionID  int64      `json:"redemption_id"`
}

type redeemOp struct {
	channel string
	act     *app.Actor // nil: public or portal (the code is the credential)
	code    string
	key     string
	userID  int64
	create  *RedeemCreateInput
	paid    *app.Money
	input   any // the request, fingerprinted with the key
}

// Redeem is POST /cards/redeem: the card (found by its normalised code) must
// be in the caller's subtree and the subscriber writable by the caller —
// both denials are the 404 of an unknown card. A refill card credits its
// face value to the balance (and, auto-activating, activates the series'
// plan paid from that balance); a voucher activates the series' plan at
// no charge. The card becomes consumed.
func Redeem(ctx context.Context, act *app.Actor, in RedeemInput) (*RedeemResult, error) {
	if err := act.Require(PermCardsVerify); err != nil {
		return nil, err
	}
	return (&redeemOp{channel: ChannelStaff, act: act, code: in.Code, key: in.RequestID, userID: in.UserID, input: canonicalCode(&in, &in.Code)}).run(ctx, act.Tenant)
}

// RedeemOTC is POST /admin/cards/redeem-otc: Redeem, with the acting
// manager recorded as the reseller and the paid (by the customer) and
// charged (to the reseller for the card) amounts snapshotted; the card
// counts as sold at the counter.
func RedeemOTC(ctx context.Context, act *app.Actor, in OTCInput) (*RedeemResult, error) {
	if err := act.Require(PermCardsVerify); err != nil {
		return nil, err
	}
	if in.PaidAmount != nil && *in.PaidAmount < 0 {
		return nil, app.ErrValidation("invalid_paid_amount", "paid_amount")
	}
	return (&redeemOp{channel: ChannelCounter, act: act, code: in.Code, key: in.RequestID, userID: in.UserID, paid: in.PaidAmount, input: canonicalCode(&in, &in.Code)}).run(ctx, act.Tenant)
}

// RedeemCreate is POST /cards/redeem-create (public; the tenant comes from
// the host): a voucher card makes a new subscriber (username, password)
// owned by the card's owner and activates the series' plan. A refill card
// is 409 card_mode_mismatch.
func RedeemCreate(ctx context.Context, t *app.Tenant, in RedeemCreateInput) (*RedeemResult, error) {
	if t == nil {
		return nil, app.ErrNotFound()
	}
	in.Username = strings.TrimSpace(in.Username)
	if in.Username == "" {
		return nil, app.ErrValidation("username_required", "username")
	}
	if in.Password == "" {
		return nil, app.ErrValidation("password_required", "password")
	}
	return (&redeemOp{channel: ChannelSignup, code: in.Code, key: in.RequestID, create: &in, input: withoutPassword(in)}).run(ctx, t)
}

// RedeemToWallet is POST /admin/cards/redeem-to-wallet: a refill card in
// the caller's subtree credits its face value to the caller's own wallet
// (app.MoveManagerWallet). A voucher card is 409 card_mode_mismatch.
func RedeemToWallet(ctx context.Context, act *app.Actor, in WalletRedeemInput) (*RedeemResult, error) {
	if err := act.Require(identity.PermManagersSelfDeposit); err != nil {
		return nil, err
	}
	return (&redeemOp{channel: ChannelWallet, act: act, code: in.Code, key: in.RequestID, input: canonicalCode(&in, &in.Code)}).run(ctx, act.Tenant)
}

// RedeemForSubscriber redeems a card for subscriber userID from the
// subscriber portal: the code is the credential (no manager scope).
func RedeemForSubscriber(ctx context.Context, t *app.Tenant, userID int64, code, requestID string) (*RedeemResult, error) {
	return (&redeemOp{channel: ChannelPortal, code: code, key: requestID, userID: userID, input: map[string]any{"code": NormalizeCode(code)}}).run(ctx, t)
}

// withoutPassword is a sign-up request as fingerprinted with its key: the
// code in its normal form, and no password (a password never goes into a
// stored hash of the body).
func withoutPassword(in RedeemCreateInput) RedeemCreateInput {
	in.Password = ""
	in.Code = NormalizeCode(in.Code)
	return in
}

// canonicalCode is a redemption request as fingerprinted with its key: the
// request with its code (code, a field of *in) in normal form, so a
// retry typed with other spacing or case is the same instruction.
func canonicalCode[T any](in *T, code *string) T {
	*code = NormalizeCode(*code)
	return *in
}

func (op *redeemOp) run(ctx context.Context, t *app.Tenant) (*RedeemResult, error) {
	if err := app.ValidateRequestID(op.key, true); err != nil {
		return nil, err
	}
	code := NormalizeCode(op.code)
	if code == "" {
		return nil, app.ErrValidation("code_required", "code")
	}
	if op.userID < 0 || (op.userID == 0 && (op.channel == ChannelStaff || op.channel == ChannelCounter || op.channel == ChannelPortal)) {
		return nil, app.ErrValidation("user_id_required", "user_id")
	}
	var out RedeemResult
	var replay bool
	err := t.Write(ctx, func(tx *sql.Tx) error {
		c, err := loadCard(ctx, tx, op.act, "c.code = ?", code)
		if err != nil {
			return err
		}
		if op.userID != 0 {
			if err := requireWritableUser(ctx, tx, op.act, op.userID); err != nil {
				return err
			}
		}
		subject := fmt.Sprintf("cards/%d/%s", c.ID, op.channel)
		if op.userID != 0 {
			subject += fmt.Sprintf("/users/%d", op.userID)
		}
		out, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: op.key, Subject: subject, Input: op.input}, func() (RedeemResult, error) {
			return op.apply(ctx, tx, t, c)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if replay {
		out.NewBalance = nil
	}
	return &out, nil
}

// requireWritableUser answers the record 404 for a subscriber that is
// missing or outside the actor's subtree (act nil: any subscriber).
func requireWritableUser(ctx context.Context, q app.Querier, act *app.Actor, userID int64) error {
	if act == nil {
		_, err := subs.Read(ctx, q, userID)
		return err
	}
	_, err := subs.Lookup(ctx, q, act, userID)
	return err
}

// refusal is why a card cannot be redeemed now ("" = it can): distinct
// reasons for a consumed, revoked, suspended, expired card.
func (c *cardRow) refusal(now time.Time) *app.Error {
	switch {
	case c.State == StateRevoked && c.RevokedReason == revokedSuspension:
		return app.ErrConflict("card_batch_suspended")
	case c.State == StateRevoked:
		return app.ErrConflict("card_revoked")
	case c.State != StateUnused:
		return app.ErrConflict("card_consumed").With("state", c.State)
	case c.BatchStatus != "ready":
		return app.ErrConflict("card_batch_not_ready")
	case c.effectiveState(now) == stateExpired:
		return app.ErrConflict("card_expired").With("expires_at", c.ExpiresAt)
	}
	return nil
}

func (op *redeemOp) apply(ctx context.Context, tx *sql.Tx, t *app.Tenant, c *cardRow) (RedeemResult, error) {
	now := t.Now()
	if e := c.refusal(now); e != nil {
		return RedeemResult{}, e
	}
	switch {
	case op.channel == ChannelWallet && c.Mode != ModeRefill, op.channel == ChannelSignup && c.Mode != ModeVoucher:
		return RedeemResult{}, app.ErrConflict("card_mode_mismatch").With("card_mode", c.Mode)
	case op.channel == ChannelWallet && c.FaceValue <= 0:
		return RedeemResult{}, app.ErrConflict("card_no_value")
	}
	actor := actorID(op.act)
	face := app.Money(c.FaceValue)
	userID := op.userID
	res := RedeemResult{CardID: c.ID, Mode: c.Mode}
	// The redemption row first: the effects reference it.
	var reseller, paid, charged any
	if op.channel == ChannelCounter {
		reseller = actor
		p := face
		if op.paid != nil {
			p = *op.paid
		}
		paid = int64(p)
		unit, ok, err := unitPriceFor(ctx, tx, c.BatchID, actor, face)
		if err == nil && !ok {
			unit, _, err = unitPriceFor(ctx, tx, c.BatchID, c.OwnerManagerID, face)
		}
		if err != nil {
			return res, err
		}
		charged = int64(unit)
	}
	r, err := tx.ExecContext(ctx, `INSERT INTO card_redemptions(card_id, batch_id, card_mode, channel, actor_id, reseller_id, face_value, paid_amount,
		charged_amount, effect_type, effect_amount, prev_disposition, request_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		c.ID, c.BatchID, c.Mode, op.channel, nullID(actor), reseller, c.FaceValue, paid, charged, "", 0, c.Disposition, op.key, app.FormatTime(now))
	if err != nil {
		return res, err
	}
	rid, _ := r.LastInsertId()
	res.RedemptionID = rid
	if op.create != nil {
		if err := usernameFree(ctx, tx, op.create.Username); err != nil {
			return res, err
		}
		u, err := subs.CreateUser(ctx, tx, t, subs.NewUser{Username: op.create.Username, Password: op.create.Password, ParentID: c.OwnerManagerID,
			ProfileID: c.PlanID.Int64, Email: op.create.Email, Phone: op.create.Phone, Firstname: op.create.Firstname, Lastname: op.create.Lastname,
			Notes: "created from card " + c.Serial})
		if err != nil {
			return res, err
		}
		userID, res.Username = u.ID, u.Username
	}
	var ledgerID, journalID, activationID int64
	var eff Effect
	switch {
	case op.channel == ChannelWallet:
		bal, jid, err := identity.MoveManagerWallet(ctx, tx, identity.WalletMove{ManagerID: actor, Amount: face, Kind: "card_redeem", ActorID: actor,
			RefType: "card_redemption", RefID: rid, RequestID: op.key, Note: "card " + c.Serial})
		if err != nil {
			return res, err
		}
		journalID, eff = jid, Effect{Type: effectWallet, Amount: face}
		res.ManagerID, res.NewBalance = &actor, &bal
	case c.Mode == ModeRefill:
		if err := userLive(ctx, tx, userID); err != nil {
			return res, err
		}
		eff = Effect{Type: effectBalance, Amount: face}
		if face > 0 {
			bal, lid, err := subs.CreditBalance(ctx, tx, t, actor, userID, face, "card_refill", "card_redemption", rid)
			if err != nil {
				return res, err
			}
			ledgerID, res.NewBalance = lid, &bal
		}
		if c.AutoActivate && c.PlanID.Valid {
			a, err := subs.ApplyActivation(ctx, tx, t, actor, userID, c.PlanID.Int64, subs.ActivationOptions{Charge: subs.ChargeSubscriber,
				RefType: "card_redemption", RefID: rid, RequestID: op.key, Note: "card " + c.Serial})
			if err != nil {
				return res, err
			}
			activationID = a.ActivationID
			eff.Type, eff.ProfileID, eff.ActivationID, eff.Expiration = effectBoth, &a.ProfileID, &a.ActivationID, &a.Expiration
			res.NewBalance = &a.Balance
		}
	default: // voucher: the plan, already paid by the card
		a, err := subs.ApplyActivation(ctx, tx, t, actor, userID, c.PlanID.Int64, subs.ActivationOptions{Charge: subs.ChargeNone, Price: &face,
			RefType: "card_redemption", RefID: rid, RequestID: op.key, Note: "card " + c.Serial})
		if err != nil {
			return res, err
		}
		activationID = a.ActivationID
		eff = Effect{Type: effectActivation, Amount: face, ProfileID: &a.ProfileID, ActivationID: &a.ActivationID, Expiration: &a.Expiration}
		res.NewBalance = &a.Balance
	}
	res.EffectApplied = eff
	if userID != 0 {
		res.UserID = &userID
	}
	if _, err := tx.ExecContext(ctx, `UPDATE card_redemptions SET user_id = ?, manager_id = ?, effect_type = ?, effect_amount = ?, ledger_id = ?,
		journal_id = ?, activation_id = ?, created_user = ? WHERE id = ?`, nullID(userID), nullID(int64OrZero(res.ManagerID)), eff.Type, int64(eff.Amount),
		nullID(ledgerID), nullID(journalID), nullID(activationID), op.create != nil, rid); err != nil {
		return res, err
	}
	// The card: consumed, held by its customer (or sold at the counter).
	disp := c.Disposition
	soldCounter := false
	switch {
	case op.channel == ChannelCounter && (disp == DispAvailable || disp == DispHeld || disp == DispStuck):
		disp, soldCounter = DispSoldCounter, true
	case disp == DispAvailable:
		disp = DispCustomer
	}
	nowS := app.FormatTime(now)
	if err := moveCard(ctx, tx, c, change{State: StateConsumed, Disp: disp,
		Sets: []string{"used_by_user_id = ?", "used_by_manager_id = ?", "used_channel = ?", "used_at = ?"},
		Args: []any{nullID(userID), nullID(int64OrZero(res.ManagerID)), op.channel, nowS}}); err != nil {
		return res, err
	}
	sold := 0
	if soldCounter {
		sold = 1
		if _, err := tx.ExecContext(ctx, `UPDATE cards SET sold_at = ? WHERE id = ?`, nowS, c.ID); err != nil {
			return res, err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET redeemed = redeemed + 1, sold_counter = sold_counter + ?, in_circulation = 1 WHERE id = ?`,
		sold, c.BatchID); err != nil {
		return res, err
	}
	if err := event(ctx, tx, c, "redeemed", actor, map[string]any{"redemption_id": rid, "channel": op.channel, "user_id": nullID(userID),
		"manager_id": res.ManagerID, "effect": eff}); err != nil {
		return res, err
	}
	return res, app.Emit(ctx, tx, "card.redeemed", map[string]any{"card_id": c.ID, "batch_id": c.BatchID, "serial": c.Serial, "mode": c.Mode,
		"channel": op.channel, "user_id": nullID(userID), "manager_id": res.ManagerID, "redemption_id": rid, "effect_applied": eff})
}

func int64OrZero(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// userLive refuses a deleted subscriber (the activation path checks it
// itself).
func userLive(ctx context.Context, q app.Querier, userID int64) error {
	u, err := subs.Read(ctx, q, userID)
	if err != nil {
		return err
	}
	if u.Deleted {
		return app.ErrConflict("user_deleted")
	}
	return nil
}

// usernameFree refuses a new subscriber username that a prepaid login
// already uses (it would shadow the card over RADIUS).
func usernameFree(ctx context.Context, q app.Querier, username string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM cards WHERE username = ?`, username).Scan(&one)
	if err == nil {
		return app.ErrConflict("username_taken").With("field", "username")
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}

// Redemption is GET /admin/cards/redemptions/{id}.
type Redemption struct {
	ID            int64      `json:"id"`
	CardID        int64      `json:"card_id"`
	Serial        string     `json:"serial"`
	BatchID       int64      `json:"batch_id"`
	Mode          string     `json:"mode"`
	Channel       string     `json:"channel"`
	UserID        *int64     `json:"user_id"`
	Username      string     `json:"username"`
	ManagerID     *int64     `json:"manager_id"`
	ActorID       *int64     `json:"actor_id"`
	ResellerID    *int64     `json:"reseller_id"`
	FaceValue     app.Money  `json:"face_value"`
	PaidAmount    *app.Money `json:"paid_amount"`
	ChargedAmount *app.Money `json:"charged_amount"`
	EffectApplied Effect     `json:"effect_applied"`
	LedgerID      *int64     `json:"ledger_id"`
	JournalID     *int64     `json:"journal_id"`
	ActivationID  *int64     `json:"activation_id"`
	CreatedUser   bool       `json:"created_user"`
	RequestID     string     `json:"request_id"`
	Reversed      bool       `json:"reversed"`
	ReversedAt    app.Time   `json:"reversed_at"`
	CreatedAt     app.Time   `json:"created_at"`
}

type redemptionRow struct {
	Redemption
	ownerID int64
}

func loadRedemption(ctx context.Context, q app.Querier, act *app.Actor, id int64) (*redemptionRow, error) {
	r := &redemptionRow{}
	var user, mgr, actor, reseller, paid, charged, ledger, journal, activation sql.NullInt64
	var face, amount int64
	err := q.QueryRowContext(ctx, `SELECT r.id, r.card_id, c.serial, r.batch_id, r.card_mode, r.channel, r.user_id, COALESCE(u.username, ''), r.manager_id,
		r.actor_id, r.reseller_id, r.face_value, r.paid_amount, r.charged_amount, r.effect_type, r.effect_amount, r.ledger_id, r.journal_id,
		r.activation_id, r.created_user, r.request_id, r.reversed_at, r.created_at, c.owner_manager_id
		FROM card_redemptions r JOIN cards c ON c.id = r.card_id LEFT JOIN users u ON u.id = r.user_id WHERE r.id = ?`, id).
		Scan(&r.ID, &r.CardID, &r.Serial, &r.BatchID, &r.Mode, &r.Channel, &user, &r.Username, &mgr, &actor, &reseller, &face, &paid, &charged,
			&r.EffectApplied.Type, &amount, &ledger, &journal, &activation, &r.CreatedUser, &r.RequestID, &r.ReversedAt, &r.CreatedAt, &r.ownerID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	if ok, err := act.InScope(ctx, q, r.ownerID); err != nil || !ok {
		if err == nil {
			err = app.ErrOutOfScope()
		}
		return nil, err
	}
	r.UserID, r.ManagerID, r.ActorID, r.ResellerID = ptr(user), ptr(mgr), ptr(actor), ptr(reseller)
	r.LedgerID, r.JournalID, r.ActivationID = ptr(ledger), ptr(journal), ptr(activation)
	r.FaceValue, r.EffectApplied.Amount = app.Money(face), app.Money(amount)
	r.EffectApplied.ActivationID = r.ActivationID
	if paid.Valid {
		m := app.Money(paid.Int64)
		r.PaidAmount = &m
	}
	if charged.Valid {
		m := app.Money(charged.Int64)
		r.ChargedAmount = &m
	}
	r.Reversed = !r.ReversedAt.IsZero()
	return r, nil
}

// GetRedemption is GET /admin/cards/redemptions/{id}: scoped by the card's
// owner (outside the subtree: the 404 of an unknown id).
func GetRedemption(ctx context.Context, act *app.Actor, id int64) (*Redemption, error) {
	if err := act.Require(PermCardsList); err != nil {
		return nil, err
	}
	r, err := loadRedemption(ctx, act.Tenant.DB.R, act, id)
	if err != nil {
		return nil, err
	}
	return &r.Redemption, nil
}

// CardState is what a reversal does with the card.
type CardState string

func (c *CardState) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, StateUnused, StateRevoked)
	*c = CardState(s)
	return err
}

// ReversalInput is POST /admin/cards/redemptions/{id}/reversals.
type ReversalInput struct {
	RequestID string    `json:"request_id"`
	CardState CardState `json:"card_state"` // revoked (default: the code was disclosed) or unused (back in stock)
	Note      string    `json:"note"`
}

// Reversal is one reversal of a redemption.
type Reversal struct {
	ID           int64     `json:"id"`
	RedemptionID int64     `json:"redemption_id"`
	CardID       int64     `json:"card_id"`
	CardState    string    `json:"card_state"`
	Amount       app.Money `json:"amount"`
	LedgerID     *int64    `json:"ledger_id"`
	JournalID    *int64    `json:"journal_id"`
	ActivationID *int64    `json:"activation_id"`
	ActorID      *int64    `json:"actor_id"`
	Note         string    `json:"note"`
	RequestID    string    `json:"request_id"`
	CreatedAt    app.Time  `json:"created_at"`
	Replay       bool      `json:"replay"`
}

// ReverseRedemption is POST /admin/cards/redemptions/{id}/reversals: the
// effect is taken back in one transaction — an activation the card made
// is reverted (subs.RevertActivation: only while it is the subscriber's
// latest, 409 activation_superseded otherwise; what it charged goes back),
// a balance credit is debited back within the subscriber's credit (409
// insufficient_balance), a wallet credit debited back within the debt
// limit — and the card becomes revoked (default) or unused again (back in
// its owner's stock; revoked by suspension if its series is suspended).
// One reversal per redemption: 409 redemption_already_reversed.
func ReverseRedemption(ctx context.Context, act *app.Actor, id int64, in ReversalInput) (*Reversal, error) {
	if err := act.Require(subs.PermUsersRefund); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	if err := checkText("note", in.Note, 500); err != nil {
		return nil, err
	}
	if in.CardState == "" {
		in.CardState = StateRevoked
	}
	t := act.Tenant
	var out Reversal
	var replay bool
	err := t.Write(ctx, func(tx *sql.Tx) error {
		r, err := loadRedemption(ctx, tx, act, id)
		if err != nil {
			return err
		}
		out, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: in.RequestID, Subject: fmt.Sprintf("card-redemptions/%d/reversals", id), Input: in},
			func() (Reversal, error) { return reverse(ctx, tx, act, r, in) })
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	return &out, nil
}

func reverse(ctx context.Context, tx *sql.Tx, act *app.Actor, r *redemptionRow, in ReversalInput) (Reversal, error) {
	if r.Reversed {
		return Reversal{}, app.ErrConflict("redemption_already_reversed")
	}
	key, note := in.RequestID, in.Note
	if note == "" {
		note = fmt.Sprintf("reversal of card redemption %d", r.ID)
	}
	out := Reversal{RedemptionID: r.ID, CardID: r.CardID, CardState: string(in.CardState), Note: in.Note, RequestID: key}
	var ledgerID, journalID int64
	if r.ActivationID != nil {
		if _, err := subs.RevertActivation(ctx, tx, act.ManagerID, *r.UserID, *r.ActivationID, key, note); err != nil {
			return out, err
		}
		out.ActivationID = r.ActivationID
	}
	switch r.EffectApplied.Type {
	case effectBalance, effectBoth:
		if r.EffectApplied.Amount > 0 {
			_, lid, err := subs.MoveBalance(ctx, tx, subs.Movement{UserID: *r.UserID, Amount: -r.EffectApplied.Amount, Kind: "card_reversal",
				ActorID: act.ManagerID, RefType: "card_redemption", RefID: r.ID, RequestID: key, Note: note, CheckCredit: true})
			if err != nil {
				return out, err
			}
			ledgerID, out.Amount = lid, r.EffectApplied.Amount
		}
	case effectWallet:
		_, jid, err := identity.MoveManagerWallet(ctx, tx, identity.WalletMove{ManagerID: *r.ManagerID, Amount: -r.EffectApplied.Amount, Kind: "card_reversal",
			ActorID: act.ManagerID, RefType: "card_redemption", RefID: r.ID, RequestID: key, Note: note})
		if err != nil {
			return out, err
		}
		journalID, out.Amount = jid, r.EffectApplied.Amount
	}
	out.LedgerID, out.JournalID = ptrOf(ledgerID), ptrOf(journalID)
	c, err := loadCard(ctx, tx, nil, "c.id = ?", r.CardID)
	if err != nil {
		return out, err
	}
	now := act.Tenant.NowText()
	if c.State == StateConsumed {
		ch := change{State: StateRevoked, Sets: []string{"revoked_reason = ?", "revoked_at = ?"}, Args: []any{revokedReversal, now}}
		if in.CardState == StateUnused {
			disp := c.Disposition
			if disp == DispCustomer || r.Channel == ChannelCounter {
				if disp, err = prevDisposition(ctx, tx, r.ID); err != nil {
					return out, err
				}
			}
			ch = change{State: StateUnused, Disp: disp, Sets: []string{"used_by_user_id = NULL", "used_by_manager_id = NULL", "used_channel = ''",
				"used_at = NULL"}}
			if c.Suspended {
				ch.State = StateRevoked
				ch.Sets = append(ch.Sets, "revoked_reason = ?", "revoked_at = ?")
				ch.Args = append(ch.Args, revokedSuspension, now)
			}
		}
		if err := moveCard(ctx, tx, c, ch); err != nil {
			return out, err
		}
		out.CardState = c.State
	} else {
		out.CardState = c.State // revoked since: left as it is
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO card_reversals(redemption_id, card_id, actor_id, card_state, amount, ledger_id, journal_id, activation_id,
		note, request_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)`, r.ID, r.CardID, act.ManagerID, out.CardState, int64(out.Amount),
		nullID(ledgerID), nullID(journalID), nullID(int64OrZero(out.ActivationID)), in.Note, key, now)
	if err != nil {
		return out, err
	}
	out.ID, _ = res.LastInsertId()
	if _, err := tx.ExecContext(ctx, `UPDATE card_redemptions SET reversed_at = ? WHERE id = ?`, now, r.ID); err != nil {
		return out, err
	}
	out.ActorID = &act.ManagerID
	if err := out.CreatedAt.Scan(now); err != nil {
		return out, err
	}
	return out, event(ctx, tx, c, "reversed", act.ManagerID, map[string]any{"redemption_id": r.ID, "reversal_id": out.ID,
		"card_state": out.CardState, "amount": out.Amount})
}

func prevDisposition(ctx context.Context, q app.Querier, redemptionID int64) (string, error) {
	var d string
	if err := q.QueryRowContext(ctx, `SELECT prev_disposition FROM card_redemptions WHERE id = ?`, redemptionID).Scan(&d); err != nil {
		return "", err
	}
	if d == "" {
		d = DispAvailable
	}
	return d, nil
}

func ptrOf(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// ListReversals is GET /admin/cards/redemptions/{id}/reversals.
func ListReversals(ctx context.Context, act *app.Actor, id int64) ([]Reversal, error) {
	if err := act.Require(PermCardsList); err != nil {
		return nil, err
	}
	out := []Reversal{}
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		if _, err := loadRedemption(ctx, tx, act, id); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, redemption_id, card_id, card_state, amount, ledger_id, journal_id, activation_id, actor_id, note,
			request_id, created_at FROM card_reversals WHERE redemption_id = ? ORDER BY id`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v Reversal
			var amount int64
			var l, j, a, ac sql.NullInt64
			if err := rows.Scan(&v.ID, &v.RedemptionID, &v.CardID, &v.CardState, &amount, &l, &j, &a, &ac, &v.Note, &v.RequestID, &v.CreatedAt); err != nil {
				return err
			}
			v.Amount, v.LedgerID, v.JournalID, v.ActivationID, v.ActorID = app.Money(amount), ptr(l), ptr(j), ptr(a), ptr(ac)
			out = append(out, v)
		}
		return rows.Err()
	})
	return out, err
}
