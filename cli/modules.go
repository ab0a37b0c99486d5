package cli

import (
	"context"

	"github.com/spf13/cobra"
	"xr/app"
	"xr/app/aaa"
	"xr/app/cards"
	"xr/app/parental"
)

// What the command line adds per area, listed once (the data side of each
// area is its app.Module, listed in xr/app/modules).

// areaCommands are the commands beside the core ones (serve, tenant, nas,
// backup, restore, demo, version).
var areaCommands = []func(g *globals) *cobra.Command{importCmd, simulateCmd, keysCmd, userCmd, planCmd, tokenCmd, devCmd}

// demoSeeders fill the demo tenant, in this order: people and plans, the
// NAS, the subscribers, their 90 days of history, then today's work
// through the API's functions (see cli/demo*.go).
var demoSeeders = []func(ctx context.Context, d *demoSeed) error{seedDemoStaff, seedDemoPlans, seedDemoNAS, seedDemoSubscribers,
	seedDemoHistory, seedDemoWallets, seedDemoToday, seedDemoCards, seedDemoWebhooks, seedDemoTickets, seedDemoPayments, seedDemoNetwork, seedDemoDesigns}

// wireRadius lets areas extend the RADIUS service before it serves: the
// cards area answers prepaid-card usernames as vouchers, after the guest
// accesses of the parental area.
func wireRadius(a *app.App, svc *aaa.Service) {
	svc.Vouchers, svc.IsVoucher = parental.WithGuests(cards.VoucherAuthorizer), cards.IsVoucherLogin
	svc.IsGuest = parental.IsGuestLogin
}
