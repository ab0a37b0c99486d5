package pos

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"xr/app"
	"xr/app/cards"
	"xr/app/identity"
	"xr/app/subs"
)

func secs(n int64) time.Duration { return time.Duration(n) * time.Second }

// VoidInput is POST /pos/sales/{id}/void.
type VoidInput struct {
	Note string `json:"note"`
}

// Void is POST /pos/sales/{id}/void: reverses every effect of a sale in
// one transaction. A cashier (prm_pos_sell) voids its own sale within the
// tenant's pos_undo_window_seconds (409 void_window_passed after); a
// manager with prm_pos_void voids any sale of its subtree at any time.
// Cards are revoked (409 card_already_redeemed when one was used), renewals
// reverted through the activation refund (409 activation_superseded when a
// later activation followed), top-ups taken back from the subscriber's
// balance (409 insufficient_balance when it was spent), and the wallet is
// refunded what the sale cost it; add-ons are taken back and refunded to
// their payer (409 addon_used when their data or time was consumed).
// Voiding a voided sale answers it again (replay).
func Void(ctx context.Context, act *app.Actor, id int64, in VoidInput) (*Sale, error) {
	if _, err := cashier(act, PermPosSell, PermPosVoid); err != nil {
		return nil, err
	}
	if len(in.Note) > 500 {
		return nil, app.ErrValidation("too_long", "note")
	}
	t := act.Tenant
	replay := false
	err := t.Write(ctx, func(tx *sql.Tx) error {
		s, err := loadSale(ctx, tx, act, id)
		if err != nil {
			return err
		}
		if s.Status == "voided" {
			replay = true
			return nil
		}
		if !act.Can(PermPosVoid) {
			w, err := identity.SettingPOSUndoWindow.Get(ctx, tx)
			if err != nil {
				return err
			}
			if t.Now().After(s.CreatedAt.Add(secs(w))) {
				return app.ErrConflict("void_window_passed").With("window_seconds", w)
			}
		}
		return voidSale(ctx, tx, act, s, in.Note)
	})
	if err != nil {
		return nil, err
	}
	s, err := GetSale(ctx, act, id)
	if err != nil {
		return nil, err
	}
	s.Replay = replay
	return s, nil
}

func voidSale(ctx context.Context, tx *sql.Tx, act *app.Actor, s Sale, note string) error {
	lines, err := saleLines(ctx, tx, s.ID)
	if err != nil {
		return err
	}
	key := fmt.Sprintf("pos-void-%d", s.ID)
	var walletRefund app.Money
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		switch l.Kind {
		case KindCard:
			ids := make([]int64, len(l.Cards))
			for j, c := range l.Cards {
				ids[j] = c.ID
			}
			if err := cards.VoidSold(ctx, tx, ids, act.ManagerID); err != nil {
				return err
			}
			if walletRefund, err = walletRefund.Add(l.Cost); err != nil {
				return err
			}
		case KindRenewal:
			if _, err := subs.RevertActivation(ctx, tx, act.ManagerID, *l.UserID, l.EffectID, key, note); err != nil {
				return err
			}
		case KindAddon:
			if err := subs.RevertAddon(ctx, tx, act.ManagerID, *l.UserID, l.EffectID, key, note); err != nil {
				return err
			}
		case KindTopup:
			if _, _, err := subs.MoveBalance(ctx, tx, subs.Movement{UserID: *l.UserID, Amount: -l.Amount, Kind: "pos_topup_void", ActorID: act.ManagerID,
				RefType: "pos_sale", RefID: s.ID, RequestID: key, Note: note, NoOverdraw: true}); err != nil {
				return err
			}
			if walletRefund, err = walletRefund.Add(l.Cost); err != nil {
				return err
			}
		}
	}
	if walletRefund > 0 {
		if _, _, err := identity.MoveManagerWallet(ctx, tx, identity.WalletMove{ManagerID: s.CashierID, Amount: walletRefund, Kind: "pos_void",
			ActorID: act.ManagerID, RefType: "pos_sale", RefID: s.ID, RequestID: key, Note: note}); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE pos_sales SET status = 'voided', voided_at = ?, voided_by = ? WHERE id = ? AND status = 'completed'`,
		act.Tenant.NowText(), act.ManagerID, s.ID)
	return err
}
