package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// Reserved request_id prefix: keys xr mints itself (optional-key endpoints)
// start with it, so a client key can never collide with one.
const reservedRequestIDPrefix = "xr-"

// ValidateRequestID applies the spec's key rules. required=false lets an
// empty key pass (the caller then mints one).
func ValidateRequestID(key string, required bool) error {
	switch {
	case key == "":
		if required {
			return ErrValidation("request_id_required", "request_id")
		}
		return nil
	case utf8.RuneCountInString(key) > 255:
		return ErrValidation("request_id_too_long", "request_id")
	case strings.ContainsAny(key, ":|"), strings.HasPrefix(key, reservedRequestIDPrefix):
		return ErrValidation("request_id_reserved", "request_id")
	}
	return nil
}

// MintRequestID makes a server-side key for endpoints where the client may
// omit one; it dedupes nothing across retries, as the spec says.
func MintRequestID() string { return reservedRequestIDPrefix + NewUUID() }

// Idem describes one idempotent intent: its key, the subject it acts on
// (route and target, e.g. "users/12/deposit"), and the reason answered when
// the key is already bound to another subject.
type Idem struct {
	Key            string
	Subject        string
	ConflictReason string // default request_id_conflict
}

// Idempotent runs effect once per key inside tx, the transaction of the
// effect itself, and stores its outcome beside it. A replay (same key, same
// subject) returns the stored outcome re-read from the database with
// replay=true and runs nothing. The same key on another subject is a 409.
func Idempotent[T any](ctx context.Context, tx *sql.Tx, id Idem, effect func() (T, error)) (out T, replay bool, err error) {
	var subject, outcome string
	err = tx.QueryRowContext(ctx, `SELECT subject, outcome FROM idempotency WHERE key = ?`, id.Key).Scan(&subject, &outcome)
	switch {
	case err == nil:
		if subject != id.Subject {
			reason := id.ConflictReason
			if reason == "" {
				reason = "request_id_conflict"
			}
			return out, false, ErrConflict(reason)
		}
		if err := json.Unmarshal([]byte(outcome), &out); err != nil {
			return out, false, ErrInternal(err)
		}
		return out, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return out, false, err
	}
	out, err = effect()
	if err != nil {
		return out, false, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return out, false, ErrInternal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO idempotency(key, subject, outcome, created_at) VALUES (?,?,?,?)`,
		id.Key, id.Subject, string(b), NowText()); err != nil {
		return out, false, err
	}
	return out, false, nil
}

// PruneIdempotency drops keys older than keepDays (at least 30).
func PruneIdempotency(ctx context.Context, tx *sql.Tx, keepDays int) (int64, error) {
	keepDays = max(keepDays, 30)
	cut := FormatTime(Now().AddDate(0, 0, -keepDays))
	r, err := tx.ExecContext(ctx, `DELETE FROM idempotency WHERE created_at < ?`, cut)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}
