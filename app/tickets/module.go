package tickets

import (
	"errors"

	"xr/app"
	"xr/app/outbox"
)

// Module is the tickets area: the snooze wake-up job, its outbox
// templates. Deleting a manager unassigns its tickets (ON DELETE SET NULL).
var Module = app.Module{
	Name:        "tickets",
	Jobs:        map[string]app.JobHandler{jobWake: wake},
	Init:        func(a *app.App) { outbox.Register(a, templates...) },
	Permissions: permCatalogue,
	RoleGrants:  roleGrants,
	Settings:    settingDecls,
	Events: []app.EventType{
		{Key: "ticket.created", Category: "support"},
		{Key: "ticket.replied", Category: "support"},
		{Key: "ticket.state_changed", Category: "support"},
		{Key: "ticket.assigned", Category: "support"},
	},
}

func asAppErr(err error, target **app.Error) bool { return errors.As(err, target) }
