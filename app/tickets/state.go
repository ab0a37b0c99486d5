package tickets

import (
	"time"

	"xr/app"
)

// The ticket state machine. States:
//
//	new       opened, nobody on staff has acted yet
//	open      being worked on
//	pending   waiting for the requester (staff replied publicly)
//	snoozed   put aside until snoozed_until; then open again (job tickets.wake)
//	resolved  answered; the requester may still reply (which reopens it)
//	closed    terminal
//
// Actions and the moves they make (anything else is 409 invalid_transition,
// a closed ticket 409 ticket_closed):
//
//	action          from                               to
//	open            new, pending, snoozed              open
//	pend            new, open, snoozed                 pending
//	snooze          new, open, pending, snoozed        snoozed (until a future time)
//	wake            snoozed                            open   (system, when the time comes)
//	resolve         new, open, pending, snoozed        resolved
//	close           new, open, pending, snoozed,       closed
//	                resolved
//	reopen          resolved                           open
//	bulk-reopen     resolved; closed within            open
//	                tickets_reopen_days of closed_at   (else 409 reopen_window_passed)
//	staff_reply     new, open, snoozed, pending        pending
//	                resolved                           resolved (stays)
//	staff_note      any but closed                     unchanged
//	requester_reply new                                new
//	                open, pending, snoozed, resolved   open   (a reply reopens a resolved ticket)
//
// Messages of any kind on a closed ticket are 409 ticket_closed.

// States of a ticket.
const (
	StateNew      = "new"
	StateOpen     = "open"
	StatePending  = "pending"
	StateSnoozed  = "snoozed"
	StateResolved = "resolved"
	StateClosed   = "closed"
)

// States lists every state in display order.
var States = []string{StateNew, StateOpen, StatePending, StateSnoozed, StateResolved, StateClosed}

// Actions that move a ticket.
const (
	ActOpen           = "open"
	ActPend           = "pend"
	ActSnooze         = "snooze"
	ActWake           = "wake"
	ActResolve        = "resolve"
	ActClose          = "close"
	ActReopen         = "reopen"
	ActBulkReopen     = "bulk_reopen"
	ActStaffReply     = "staff_reply"
	ActStaffNote      = "staff_note"
	ActRequesterReply = "requester_reply"
)

// StateActions are the actions a client may ask for by name
// (POST /tickets/{id}/state).
var StateActions = []string{ActOpen, ActPend, ActSnooze, ActResolve, ActClose, ActReopen}

// Move is the context of a transition.
type Move struct {
	ClosedAt   time.Time // zero when never closed
	Now        time.Time
	ReopenDays int
}

var moves = map[string]map[string]string{
	ActOpen:           {StateNew: StateOpen, StatePending: StateOpen, StateSnoozed: StateOpen},
	ActPend:           {StateNew: StatePending, StateOpen: StatePending, StateSnoozed: StatePending},
	ActSnooze:         {StateNew: StateSnoozed, StateOpen: StateSnoozed, StatePending: StateSnoozed, StateSnoozed: StateSnoozed},
	ActWake:           {StateSnoozed: StateOpen},
	ActResolve:        {StateNew: StateResolved, StateOpen: StateResolved, StatePending: StateResolved, StateSnoozed: StateResolved},
	ActClose:          {StateNew: StateClosed, StateOpen: StateClosed, StatePending: StateClosed, StateSnoozed: StateClosed, StateResolved: StateClosed},
	ActReopen:         {StateResolved: StateOpen},
	ActBulkReopen:     {StateResolved: StateOpen, StateClosed: StateOpen},
	ActStaffReply:     {StateNew: StatePending, StateOpen: StatePending, StateSnoozed: StatePending, StatePending: StatePending, StateResolved: StateResolved},
	ActStaffNote:      {StateNew: StateNew, StateOpen: StateOpen, StatePending: StatePending, StateSnoozed: StateSnoozed, StateResolved: StateResolved},
	ActRequesterReply: {StateNew: StateNew, StateOpen: StateOpen, StatePending: StateOpen, StateSnoozed: StateOpen, StateResolved: StateOpen},
}

// Transition returns the state action leads to from state, or the 409
// explaining why it may not.
func Transition(from, action string, m Move) (string, error) {
	to, ok := moves[action][from]
	if action == ActBulkReopen && from == StateClosed && ok {
		days := m.ReopenDays
		if m.ClosedAt.IsZero() || m.Now.Sub(m.ClosedAt) > time.Duration(days)*24*time.Hour {
			return "", app.ErrConflict("reopen_window_passed").With("state", from)
		}
	}
	if ok {
		return to, nil
	}
	if from == StateClosed {
		return "", app.ErrConflict("ticket_closed").With("state", from)
	}
	return "", app.ErrConflict("invalid_transition").With("state", from).With("action", action)
}

// Active reports whether a state still counts for SLA and workload.
func Active(state string) bool { return state != StateResolved && state != StateClosed }
