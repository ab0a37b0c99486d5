package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func TestBulkIDsValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ids    []int64
		reason string
	}{
		{nil, "ids_required"},
		{[]int64{}, "ids_required"},
		{[]int64{1, 0}, "invalid_id"},
		{[]int64{-4}, "invalid_id"},
		{make([]int64, MaxBulkIDs+1), "too_many_ids"},
	}
	for _, c := range cases {
		b := BulkIDs{IDs: c.ids}
		e := fndErr(t, b.Validate(), 400, CodeValidation, c.reason)
		if e.Field != "ids" {
			t.Errorf("field %q", e.Field)
		}
	}
	ok := BulkIDs{IDs: make([]int64, MaxBulkIDs)}
	for i := range ok.IDs {
		ok.IDs[i] = int64(i + 1)
	}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
}

// The bulk shape: 200 with updated and failed (always present), one
// outcome per distinct id, reasons not_found / not_authorized / error.
func TestRunBulk(t *testing.T) {
	t.Parallel()
	var calls []int64
	res := RunBulk(context.Background(), []int64{1, 2, 3, 4, 5, 6, 1, 2}, func(ctx context.Context, id int64) error {
		calls = append(calls, id)
		switch id {
		case 2:
			return ErrNotFound()
		case 3:
			return ErrOutOfScope()
		case 4:
			return ErrForbidden("")
		case 5:
			return fmt.Errorf("wrapped: %w", ErrConflict("card_redeemed"))
		case 6:
			return errors.New("disk on fire at /var/lib/secret")
		}
		return nil
	})
	if fmt.Sprint(calls) != "[1 2 3 4 5 6]" {
		t.Fatalf("calls %v (duplicates must run once)", calls)
	}
	b, _ := json.Marshal(res)
	want := `{"updated":[1],"failed":[{"id":2,"reason":"not_found","message":"no such record"},{"id":3,"reason":"not_authorized","message":"outside your scope"},` +
		`{"id":4,"reason":"not_authorized","message":"insufficient_permissions"},{"id":5,"reason":"error","message":"card_redeemed"},{"id":6,"reason":"error","message":"internal error"}]}`
	if string(b) != want {
		t.Fatalf("bulk result:\n%s\nwant\n%s", b, want)
	}
	empty, _ := json.Marshal(RunBulk(context.Background(), []int64{7}, func(context.Context, int64) error { return nil }))
	if string(empty) != `{"updated":[7],"failed":[]}` {
		t.Fatalf("failed must always be present: %s", empty)
	}
}

func TestErrorsHelpers(t *testing.T) {
	t.Parallel()
	// An out-of-scope record is written exactly like a missing one.
	a, b := ErrNotFound(), ErrOutOfScope()
	if a.Code != b.Code || a.Status != b.Status || a.Reason != b.Reason || a.Field != b.Field || len(a.Details) != len(b.Details) {
		t.Fatalf("%+v vs %+v", a, b)
	}
	// AsError finds the *Error through wrapping; the cause stays out of the
	// client's view but in Error() for the log.
	cause := errors.New("constraint failed: users.username")
	e := ErrInternal(cause)
	wrapped := fmt.Errorf("create user: %w", e)
	if AsError(wrapped) != e || !errors.Is(wrapped, cause) || AsError(cause) != nil || AsError(nil) != nil {
		t.Fatal("AsError / Unwrap")
	}
	if e.Status != 500 || e.Code != CodeInternal || e.Reason != "internal_error" {
		t.Fatalf("%+v", e)
	}
	for _, c := range []struct {
		e      *Error
		status int
		code   string
		reason string
	}{
		{ErrValidation("x", "f"), 400, CodeValidation, "x"},
		{ErrUnauthorized("invalid_token"), 401, CodeUnauthorized, "invalid_token"},
		{ErrForbidden(""), 403, CodeForbidden, "insufficient_permissions"},
		{ErrForbidden("api_token_forbidden"), 403, CodeForbidden, "api_token_forbidden"},
		{ErrLicenseLocked(), 403, CodeLicenseBlocked, "license_locked"},
		{ErrNotFound(), 404, CodeNotFound, "not_found"},
		{ErrConflict("request_id_conflict"), 409, CodeConflict, "request_id_conflict"},
		{ErrRateLimited(), 429, CodeRateLimited, "rate_limited"},
		{ErrNotImplemented(), 501, CodeInternal, "not_implemented"},
		{ErrTimeout(), 503, CodeTimeout, "timeout"},
		{ErrUnavailable("site_offline"), 503, CodeUnavailable, "site_offline"},
	} {
		if c.e.Status != c.status || c.e.Code != c.code || c.e.Reason != c.reason {
			t.Errorf("%+v, want %d %s %s", c.e, c.status, c.code, c.reason)
		}
	}
	if d := ErrConflict("slug_taken").With("field", "slug").With("n", 2); d.Details["field"] != "slug" || d.Details["n"] != 2 {
		t.Fatalf("With: %v", d.Details)
	}
}
