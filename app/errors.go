package app

import (
	"errors"
	"time"

	"xr/db"
)

// Error codes of the spec: the stable classes a client branches on.
const (
	CodeValidation     = "ERR_VALIDATION"
	CodeUnauthorized   = "ERR_UNAUTHORIZED"
	CodeForbidden      = "ERR_FORBIDDEN"
	CodeNotFound       = "ERR_NOT_FOUND"
	CodeConflict       = "ERR_CONFLICT"
	CodeRateLimited    = "ERR_RATE_LIMITED"
	CodeInternal       = "ERR_INTERNAL"
	CodeTimeout        = "ERR_TIMEOUT"
	CodeLicenseBlocked = "ERR_LICENSE_BLOCKED"
	CodeMaintenance    = "ERR_MAINTENANCE"
	CodeUnavailable    = "ERR_UNAVAILABLE"
)

// Error is the one error type of xr: a stable code and reason for clients, a
// field when one input is at fault, and a cause for the log only.
type Error struct {
	Code    string
	Status  int
	Reason  string
	Field   string
	Details map[string]any // extra safe details echoed to the client
	Cause   error          // logged, never shown

	outOfScope bool // see ErrOutOfScope
}

func (e *Error) Error() string {
	s := e.Code + ": " + e.Reason
	if e.Field != "" {
		s += " (" + e.Field + ")"
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Cause }

// With adds a safe detail echoed to the client.
func (e *Error) With(key string, v any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = v
	return e
}

// AsError finds the *Error in err, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// ErrValidation is a 400 naming the offending field (may be empty).
func ErrValidation(reason, field string) *Error {
	return &Error{Code: CodeValidation, Status: 400, Reason: reason, Field: field}
}

// ErrNotFound is the one 404 for records: missing and out-of-scope records
// answer the same bytes.
func ErrNotFound() *Error { return &Error{Code: CodeNotFound, Status: 404, Reason: "not_found"} }

// ErrConflict is a 409 with its reason.
func ErrConflict(reason string) *Error {
	return &Error{Code: CodeConflict, Status: 409, Reason: reason}
}

// ErrForbidden is a 403; reason insufficient_permissions unless stated.
func ErrForbidden(reason string) *Error {
	if reason == "" {
		reason = "insufficient_permissions"
	}
	return &Error{Code: CodeForbidden, Status: 403, Reason: reason}
}

// ErrUnauthorized is a 401 with one of the spec's reasons.
func ErrUnauthorized(reason string) *Error {
	return &Error{Code: CodeUnauthorized, Status: 401, Reason: reason}
}

// ErrRateLimited is the 429 of every bucket.
func ErrRateLimited() *Error {
	return &Error{Code: CodeRateLimited, Status: 429, Reason: "rate_limited"}
}

// ErrLicenseLocked is the 403 of a locked tenant.
func ErrLicenseLocked() *Error {
	return &Error{Code: CodeLicenseBlocked, Status: 403, Reason: "license_locked"}
}

// ErrInternal wraps an unexpected cause as a 500 whose cause is only logged.
func ErrInternal(cause error) *Error {
	return &Error{Code: CodeInternal, Status: 500, Reason: "internal_error", Cause: cause}
}

// ErrNotImplemented answers a route that exists but is not built yet.
func ErrNotImplemented() *Error {
	return &Error{Code: CodeInternal, Status: 501, Reason: "not_implemented"}
}

// ErrTimeout is the 503 of an elapsed time budget.
func ErrTimeout() *Error { return &Error{Code: CodeTimeout, Status: 503, Reason: "timeout"} }

// ErrUnavailable is a 503 such as site_offline or upstream_unreachable.
func ErrUnavailable(reason string) *Error {
	return &Error{Code: CodeUnavailable, Status: 503, Reason: reason}
}

// ErrBadGateway is the 502 of an upstream device that did not answer (a NAS
// asked to disconnect a session): the only answer meaning "it did not happen".
func ErrBadGateway(reason string) *Error {
	return &Error{Code: CodeUnavailable, Status: 502, Reason: reason}
}

// ErrStorageFull is the 503 of a write refused for lack of space (SQLite
// answered SQLITE_FULL): the transaction rolled back, nothing was written,
// and the same request succeeds once space is freed. ERR_MAINTENANCE is the
// spec's class for "the instance cannot serve this now; retry as-is": it is
// not a time budget (ERR_TIMEOUT), and narrowing the request would not help.
func ErrStorageFull(cause error) *Error {
	return &Error{Code: CodeMaintenance, Status: 503, Reason: "storage_full", Cause: cause}
}

// Classify is the *Error a client sees for err: err's own *Error, except
// that a server fault caused by SQLITE_FULL becomes ErrStorageFull; nil when
// err carries neither (the caller answers a logged 500).
func Classify(err error) *Error {
	e := AsError(err)
	if (e == nil || e.Status >= 500) && db.IsFull(err) {
		return ErrStorageFull(err)
	}
	if e == nil {
		if pe, ok := db.IsPaused(err); ok {
			return ErrMaintenance(pe.Reason, pe.RetryAfter)
		}
		if errors.Is(err, db.ErrReplaced) {
			return ErrMaintenance("tenant_restored", time.Second)
		}
	}
	return e
}

// ErrMaintenance is the 503 of a write refused while the tenant's data is
// being replaced (restore_in_progress, reset_in_progress) or after it was
// (tenant_restored: the request began before the restore; sent again, it
// is authenticated against the restored data). Nothing was written;
// details.retry_after (seconds) is also the Retry-After header.
func ErrMaintenance(reason string, after time.Duration) *Error {
	return (&Error{Code: CodeMaintenance, Status: 503, Reason: reason}).With("retry_after", max(1, int(after.Seconds())))
}
