package app

import (
	"context"
	"errors"
)

// ErrOutOfScope is the 404 of a record outside the caller's subtree. It is
// written exactly like ErrNotFound (the spec wants byte-identical answers);
// only a bulk call tells the two apart, as not_authorized vs not_found.
func ErrOutOfScope() *Error {
	e := ErrNotFound()
	e.outOfScope = true
	return e
}

// BulkFailure is one id a bulk call could not apply.
type BulkFailure struct {
	ID      int64  `json:"id"`
	Reason  string `json:"reason"` // not_found, not_authorized, error
	Message string `json:"message"`
}

// BulkResult is the spec's bulk shape: 200 even when some ids failed.
type BulkResult struct {
	Updated []int64       `json:"updated"`
	Failed  []BulkFailure `json:"failed"`
}

// BulkIDs is the body every bulk call takes.
type BulkIDs struct {
	IDs []int64 `json:"ids"`
}

// MaxBulkIDs bounds one bulk call.
const MaxBulkIDs = 1000

// Validate requires a non-empty, bounded list of positive ids.
func (b *BulkIDs) Validate() error {
	if len(b.IDs) == 0 {
		return ErrValidation("ids_required", "ids")
	}
	if len(b.IDs) > MaxBulkIDs {
		return ErrValidation("too_many_ids", "ids")
	}
	for _, id := range b.IDs {
		if id <= 0 {
			return ErrValidation("invalid_id", "ids")
		}
	}
	return nil
}

// RunBulk applies fn to each id separately (each in its own transaction,
// authorised on its own) and sorts the outcomes into the bulk shape. A
// duplicate id is applied once.
func RunBulk(ctx context.Context, ids []int64, fn func(ctx context.Context, id int64) error) BulkResult {
	res := BulkResult{Updated: []int64{}, Failed: []BulkFailure{}}
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		err := fn(ctx, id)
		if err == nil {
			res.Updated = append(res.Updated, id)
			continue
		}
		res.Failed = append(res.Failed, bulkFailure(id, err))
	}
	return res
}

func bulkFailure(id int64, err error) BulkFailure {
	var e *Error
	if errors.As(err, &e) {
		switch {
		case e.outOfScope:
			return BulkFailure{ID: id, Reason: "not_authorized", Message: "outside your scope"}
		case e.Code == CodeNotFound:
			return BulkFailure{ID: id, Reason: "not_found", Message: "no such record"}
		case e.Code == CodeForbidden:
			return BulkFailure{ID: id, Reason: "not_authorized", Message: e.Reason}
		}
		return BulkFailure{ID: id, Reason: "error", Message: e.Reason}
	}
	return BulkFailure{ID: id, Reason: "error", Message: "internal error"}
}
