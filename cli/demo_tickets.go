package cli

import (
	"context"
	"fmt"

	"xr/app"
	"xr/app/tickets"
)

// seedDemoTickets: a support queue with a ticket in every state, opened
// for subscribers and answered through the tickets functions the API
// calls.
func seedDemoTickets(ctx context.Context, d *demoSeed) error {
	support := d.managers[demoSupport]
	tomorrow := app.DateOrTime{Time: app.T(d.now.AddDate(0, 0, 1))}
	list := []struct {
		subject, body, priority string
		steps                   []string // "reply:..." or a state action
	}{
		{"No internet since this morning", "The router shows a red light and nothing loads.", "high", nil},
		{"Slow speed in the evening", "Between 8 and 11 pm I get 2 Mbps on a 50 Mbps plan.", "normal", nil},
		{"Change my plan to Fiber 100M", "We moved to the new building, fibre is available.", "normal", []string{"open"}},
		{"Router keeps disconnecting", "Every 10 minutes the PPPoE session drops.", "urgent", []string{"open"}},
		{"Invoice for October", "Please send me an invoice for my October payment.", "low", []string{"reply:Attached to your portal messages; could you confirm it reached you?"}},
		{"Quota ran out early", "I used 30 GB in 12 days, is that right?", "normal", []string{"reply:Your usage report shows large downloads at night. Shall we look at the Night Boost plan?"}},
		{"Move the installation next month", "We move on the 15th, please call before.", "low", []string{"snooze"}},
		{"Wi-Fi password reset", "I forgot the Wi-Fi password of the router you installed.", "normal", []string{"reply:The password is on the sticker under the router; reset it from the portal.", "resolve"}},
		{"Double charge on renewal", "I was charged twice for the renewal.", "high", []string{"reply:We refunded the second charge to your balance.", "resolve", "close"}},
		{"Outage in our street?", "The whole street is offline.", "urgent", []string{"open", "resolve"}},
		{"Thank you", "Great service this month!", "low", []string{"close"}},
	}
	for k, tk := range list {
		s := d.users[(k*37+11)%len(d.users)]
		in := tickets.CreateInput{Subject: tk.subject, Body: tk.body, Priority: tickets.Priority(tk.priority), UserID: &s.id,
			Tags: []string{"demo"}}
		if k%2 == 0 {
			in.AssigneeID = &support
		}
		t, err := tickets.Create(ctx, d.sys, in)
		if err != nil {
			return fmt.Errorf("ticket %q: %w", tk.subject, err)
		}
		for _, step := range tk.steps {
			switch {
			case len(step) > 6 && step[:6] == "reply:":
				_, err = tickets.Reply(ctx, d.sys, t.ID, tickets.ReplyInput{Body: step[6:]})
			case step == "snooze":
				_, err = tickets.ChangeState(ctx, d.sys, t.ID, tickets.StateInput{Action: tickets.ActSnooze, Until: tomorrow})
			default:
				_, err = tickets.ChangeState(ctx, d.sys, t.ID, tickets.StateInput{Action: step})
			}
			if err != nil {
				return fmt.Errorf("ticket %q %s: %w", tk.subject, step, err)
			}
		}
	}
	return nil
}
