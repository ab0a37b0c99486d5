package cards

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"xr/app"
	"xr/app/identity"
	"xr/db"
)

// ChunkSize is how many cards one generation transaction inserts: big
// enough that a 100,000-card series commits in a few dozen fsyncs, small
// enough that redemptions of the tenant wait a fraction of a second for
// the single writer between chunks.
var ChunkSize = 10_000

// genFailure is a generation that cannot succeed by retrying.
type genFailure struct{ reason string }

func (g *genFailure) Error() string { return "card generation failed: " + g.reason }

// generateResult is the job's result.
type generateResult struct {
	BatchID   int64  `json:"batch_id"`
	Processed int64  `json:"processed"`
	Status    string `json:"status"`
	Reason    string `json:"reason,omitempty"`
}

func runGenerate(ctx context.Context, jc *app.JobContext) (any, error) {
	var p generatePayload
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	res, err := Generate(ctx, jc.Tenant, p.BatchID, func(done, total int64) { jc.NoteProgress(ctx, done, total) })
	var gf *genFailure
	switch {
	case errors.As(err, &gf):
		return failBatch(ctx, jc.Tenant, p.BatchID, gf.reason)
	case err != nil && ctx.Err() == nil && jc.Job.Attempts >= jc.Job.MaxAttempts:
		// The last attempt: the series fails with the cause as its reason.
		if _, ferr := failBatch(ctx, jc.Tenant, p.BatchID, "generation_error"); ferr != nil {
			return nil, errors.Join(err, ferr)
		}
		return nil, err
	}
	return res, err
}

// Generate mints the cards a series still lacks, in chunks of ChunkSize
// cards per transaction, and moves the series to ready (emitting
// card_batch.ready) in the transaction of the last chunk. It resumes where
// a previous run stopped (processed is committed with each chunk), so a
// crashed or retried job neither loses nor duplicates cards. Codes come
// from crypto/rand in the series' charset and length; a code (or login)
// that collides with an existing one is drawn again.
func Generate(ctx context.Context, t *app.Tenant, batchID int64, progress func(done, total int64)) (*generateResult, error) {
	var b struct {
		mode, charset, status string
		quantity, processed   int64
		length                int
		owner                 int64
		planID                sql.NullInt64
	}
	err := t.DB.R.QueryRowContext(ctx, `SELECT card_mode, code_charset, status, quantity, processed, code_length, owner_manager_id, plan_id
		FROM card_batches WHERE id = ?`, batchID).Scan(&b.mode, &b.charset, &b.status, &b.quantity, &b.processed, &b.length, &b.owner, &b.planID)
	if errors.Is(err, sql.ErrNoRows) {
		return &generateResult{BatchID: batchID, Status: "deleted"}, nil
	}
	if err != nil {
		return nil, err
	}
	if b.status != "generating" {
		return &generateResult{BatchID: batchID, Processed: b.processed, Status: b.status}, nil
	}
	if b.planID.Valid {
		if _, err := readPlan(ctx, t.DB.R, b.planID.Int64); err != nil {
			if app.AsError(err) != nil {
				return nil, &genFailure{"plan_not_found"}
			}
			return nil, err
		}
	}
	alphabet := charsets[b.charset]
	if alphabet == "" {
		return nil, &genFailure{"invalid_charset"}
	}
	prepaid := b.mode == ModeVoucher
	rs := newRandSource()
	processed := b.processed
	for processed < b.quantity {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := min(int64(ChunkSize), b.quantity-processed)
		status := ""
		err := t.Write(ctx, func(tx *sql.Tx) error {
			// The series may have been deleted (or failed) meanwhile.
			// Expiry changes and a suspension made while generating apply to
			// the cards still to come.
			var cur int64
			var exp app.Time
			var suspended bool
			err := tx.QueryRowContext(ctx, `SELECT processed, expiration, suspended FROM card_batches WHERE id = ? AND status = 'generating'`, batchID).
				Scan(&cur, &exp, &suspended)
			if errors.Is(err, sql.ErrNoRows) {
				status = "gone"
				return nil
			}
			if err != nil {
				return err
			}
			processed = cur
			n = min(n, b.quantity-cur)
			if err := insertCards(ctx, tx, batchID, cur, n, b.length, alphabet, prepaid, b.owner, exp, rs); err != nil {
				return err
			}
			processed = cur + n
			if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET processed = ?, unused = unused + ?, available = available + ?, updated_at = ? WHERE id = ?`,
				processed, n, n, t.NowText(), batchID); err != nil {
				return err
			}
			if suspended {
				if _, err := transition(ctx, tx, batchID, "seq > ? AND state = 'unused'", []any{cur}, change{State: StateRevoked,
					Sets: []string{"revoked_reason = ?", "revoked_at = ?"}, Args: []any{revokedSuspension, t.NowText()}}); err != nil {
					return err
				}
			}
			if processed < b.quantity {
				return nil
			}
			status = "ready"
			if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET status = 'ready', updated_at = ? WHERE id = ?`, t.NowText(), batchID); err != nil {
				return err
			}
			if err := batchEvent(ctx, tx, batchID, "ready", 0, map[string]any{"quantity": b.quantity}); err != nil {
				return err
			}
			return app.Emit(ctx, tx, "card_batch.ready", map[string]any{"batch_id": batchID, "quantity": b.quantity, "card_mode": b.mode})
		})
		if err != nil {
			return nil, err
		}
		if status == "gone" {
			return &generateResult{BatchID: batchID, Processed: processed, Status: "gone"}, nil
		}
		if progress != nil {
			progress(processed, b.quantity)
		}
		if status == "ready" {
			return &generateResult{BatchID: batchID, Processed: processed, Status: "ready"}, nil
		}
	}
	return &generateResult{BatchID: batchID, Processed: processed, Status: "ready"}, nil
}

// maxRedraws bounds the collisions one chunk tolerates: with the length
// chosen for the live pool a collision has probability ≤ 1e-6 per card, so
// hitting this means the code space is full.
const maxRedraws = 1000

// insertCards inserts n cards with sequence numbers from+1.
func insertCards(ctx context.Context, tx *sql.Tx, batchID, from, n int64, length int, alphabet string, prepaid bool, owner int64, exp app.Time, rs *randSource) error {
	now := app.StampNow()
	var stmt *sql.Stmt
	var err error
	if prepaid {
		// A login must not shadow (or be shadowed by) a subscriber's username.
		stmt, err = tx.PrepareContext(ctx, `INSERT INTO cards(batch_id, seq, serial, code, username, password, owner_manager_id, expires_at, created_at)
			SELECT ?,?,?,?,?,?,?,?,? WHERE NOT EXISTS (SELECT 1 FROM users WHERE username = ?5)`)
	} else {
		stmt, err = tx.PrepareContext(ctx, `INSERT INTO cards(batch_id, seq, serial, code, owner_manager_id, expires_at, created_at) VALUES (?,?,?,?,?,?,?)`)
	}
	if err != nil {
		return err
	}
	defer stmt.Close()
	expS := app.FormatTime(exp.Time)
	redraws := 0
	for i := int64(1); i <= n; i++ {
		seq := from + i
		serial := fmt.Sprintf("%d-%06d", batchID, seq)
		for {
			code := rs.str(alphabet, length)
			var r sql.Result
			if prepaid {
				r, err = stmt.ExecContext(ctx, batchID, seq, serial, code, rs.str(loginAlphabet, loginLength), rs.str(passwordAlphabet, passwordLength),
					owner, expS, now)
			} else {
				r, err = stmt.ExecContext(ctx, batchID, seq, serial, code, owner, expS, now)
			}
			inserted := err == nil
			if inserted && prepaid {
				k, _ := r.RowsAffected()
				inserted = k == 1
			}
			if inserted {
				break
			}
			if err != nil && !db.IsUnique(err) {
				return err
			}
			if redraws++; redraws > maxRedraws {
				return &genFailure{"code_space_exhausted"}
			}
		}
	}
	return nil
}

// failBatch moves a series to failed with a reason: the cards it already
// minted are revoked (nothing of a failed series can be sold) and what its
// owner was charged is refunded.
func failBatch(ctx context.Context, t *app.Tenant, batchID int64, reason string) (any, error) {
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var owner, charged int64
		var status string
		err := tx.QueryRowContext(ctx, `SELECT owner_manager_id, charged, status FROM card_batches WHERE id = ?`, batchID).Scan(&owner, &charged, &status)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && status != "generating") {
			return nil
		}
		if err != nil {
			return err
		}
		now := t.NowText()
		if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET status = 'failed', failure_reason = ?, charged = 0, updated_at = ? WHERE id = ?`,
			reason, now, batchID); err != nil {
			return err
		}
		if _, err := transition(ctx, tx, batchID, "state = 'unused'", nil,
			change{State: StateRevoked, Sets: []string{"revoked_reason = ?", "revoked_at = ?"}, Args: []any{revokedFailed, now}}); err != nil {
			return err
		}
		if charged > 0 {
			if _, _, err := identity.MoveManagerWallet(ctx, tx, identity.WalletMove{ManagerID: owner, Amount: app.Money(charged), Kind: "card_purchase_refund",
				RefType: "card_batch", RefID: batchID, Note: "series failed: " + reason, NoDebtCheck: true}); err != nil {
				return err
			}
		}
		return batchEvent(ctx, tx, batchID, "failed", 0, map[string]any{"reason": reason, "refunded": app.Money(charged)})
	})
	if err != nil {
		return nil, err
	}
	return &generateResult{BatchID: batchID, Status: "failed", Reason: reason}, nil
}

// RegenerateInput is POST /card-batches/{id}/regenerate.
type RegenerateInput struct {
	RequestID string `json:"request_id"`
}

// RegenerateResult answers a regeneration.
type RegenerateResult struct {
	BatchID     int64 `json:"batch_id"`
	Regenerated int64 `json:"regenerated"`
	CodeLength  int   `json:"code_length"`
	Replay      bool  `json:"replay"`
}

// Regenerate is POST /card-batches/{id}/regenerate: fresh codes (and, for
// prepaid logins, fresh passwords) for the series' cards that are still
// unsold stock — unused with disposition available, owned within the
// caller's subtree — so that leaked or misprinted codes stop working.
// Serials and logins stay; cards sold, held, used or revoked keep their
// codes. The code length is raised when the live pool now needs more. The
// stored PDF sheet becomes stale.
func Regenerate(ctx context.Context, act *app.Actor, id int64, in RegenerateInput) (*RegenerateResult, error) {
	if err := act.Require(PermCardsGenerateUser); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out RegenerateResult
	var replay bool
	err := t.Write(ctx, func(tx *sql.Tx) error {
		b, err := loadBatch(ctx, tx, act, id)
		if err != nil {
			return err
		}
		out, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: in.RequestID, Subject: fmt.Sprintf("card-batches/%d/regenerate", id), Input: in}, func() (RegenerateResult, error) {
			if b.Status != "ready" {
				return RegenerateResult{}, app.ErrConflict("card_batch_not_ready").With("status", b.Status)
			}
			live, err := liveCodes(ctx, tx)
			if err != nil {
				return RegenerateResult{}, err
			}
			length := max(b.CodeLength, RequiredCodeLength(b.CodeCharset, live))
			cond, args := act.ScopeSQL("owner_manager_id")
			ids, err := app.QueryIDs(ctx, tx, `SELECT id FROM cards WHERE batch_id = ? AND state = 'unused' AND disposition = 'available' AND `+cond+` ORDER BY seq`,
				append([]any{id}, args...)...)
			if err != nil {
				return RegenerateResult{}, err
			}
			stmt, err := tx.PrepareContext(ctx, `UPDATE cards SET code = ?, password = CASE WHEN password IS NULL THEN NULL ELSE ? END WHERE id = ?`)
			if err != nil {
				return RegenerateResult{}, err
			}
			defer stmt.Close()
			rs := newRandSource()
			alphabet := charsets[b.CodeCharset]
			redraws := 0
			for _, cid := range ids {
				for {
					_, err := stmt.ExecContext(ctx, rs.str(alphabet, length), rs.str(passwordAlphabet, passwordLength), cid)
					if err == nil {
						break
					}
					if !db.IsUnique(err) {
						return RegenerateResult{}, err
					}
					if redraws++; redraws > maxRedraws {
						return RegenerateResult{}, app.ErrConflict("code_space_exhausted")
					}
				}
			}
			if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET code_length = ?, updated_at = ? WHERE id = ?`, length, t.NowText(), id); err != nil {
				return RegenerateResult{}, err
			}
			if err := bumpContent(ctx, tx, id); err != nil {
				return RegenerateResult{}, err
			}
			if err := batchEvent(ctx, tx, id, "regenerated", act.ManagerID, map[string]any{"cards": len(ids), "code_length": length}); err != nil {
				return RegenerateResult{}, err
			}
			return RegenerateResult{BatchID: id, Regenerated: int64(len(ids)), CodeLength: length}, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	return &out, nil
}
