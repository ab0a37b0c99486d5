package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
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

// IsUUID reports whether s is a UUID in its canonical text form
// (8-4-4-4-12 hexadecimal digits): the spec's gateway initiation endpoints
// require one.
func IsUUID(s string) bool { return len(s) == 36 && uuid.Validate(s) == nil }

// MintRequestID makes a server-side key for endpoints where the client may
// omit one; it dedupes nothing across retries, as the spec says.
func MintRequestID() string { return reservedRequestIDPrefix + NewUUID() }

// Idem describes one idempotent intent: its key, the subject it acts on
// (route and target, e.g. "users/12/deposit"), the request's input (its
// fingerprint binds the key to one body), and the reason answered when the
// key is already bound to another subject or another body.
type Idem struct {
	Key            string
	Subject        string
	Input          any    // the decoded request; request_id is left out of the fingerprint
	ConflictReason string // default request_id_conflict
}

// Fingerprint is the SHA-256 (hex) of v's canonical JSON: encoded, decoded
// and re-encoded so object keys are sorted, with a top-level request_id
// removed. Two bodies that decode to the same input share it, whatever
// their key order, spacing or number spelling. nil has none ("").
func Fingerprint(v any) (string, error) {
	if v == nil {
		return "", nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var canon any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&canon); err != nil {
		return "", err
	}
	if m, ok := canon.(map[string]any); ok {
		delete(m, "request_id")
	}
	if b, err = json.Marshal(canon); err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}

// Idempotent runs effect once per key inside tx, the transaction of the
// effect itself, and stores its outcome and the input's fingerprint beside
// it. A replay (same key, same subject, same input) returns the stored
// outcome re-read from the database with replay=true and runs nothing. The
// same key on another subject, or with another input, is a 409: the
// fingerprint stored by the first request decides (a key stored before
// fingerprints existed replays on subject alone).
func Idempotent[T any](ctx context.Context, tx *sql.Tx, id Idem, effect func() (T, error)) (out T, replay bool, err error) {
	fp, err := Fingerprint(id.Input)
	if err != nil {
		return out, false, ErrInternal(err)
	}
	var subject, outcome, storedFP string
	err = tx.QueryRowContext(ctx, `SELECT subject, outcome, fingerprint FROM idempotency WHERE key = ?`, id.Key).Scan(&subject, &outcome, &storedFP)
	switch {
	case err == nil:
		if subject != id.Subject || (storedFP != "" && fp != "" && storedFP != fp) {
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
	if _, err := tx.ExecContext(ctx, `INSERT INTO idempotency(key, subject, outcome, fingerprint, created_at) VALUES (?,?,?,?,?)`,
		id.Key, id.Subject, string(b), fp, stampNow()); err != nil {
		return out, false, err
	}
	return out, false, nil
}

// PruneIdempotency drops keys older than keepDays (at least 30).
func PruneIdempotency(ctx context.Context, tx *sql.Tx, now time.Time, keepDays int) (int64, error) {
	keepDays = max(keepDays, 30)
	cut := FormatTime(now.AddDate(0, 0, -keepDays))
	r, err := tx.ExecContext(ctx, `DELETE FROM idempotency WHERE created_at < ?`, cut)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}
