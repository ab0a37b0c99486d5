package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/app/identity"
	"xr/app/monitoring"
	"xr/app/reports"
	"xr/app/subs"
	"xr/app/webhooks"
)

// The demo's logins besides the owner (admin / demo-Admin-1).
const (
	demoReseller         = "north"
	demoResellerPassword = "demo-Reseller-1"
	demoCashier          = "cashier"
	demoCashierPassword  = "demo-Cashier-1"
	demoSupport          = "support"
	demoSupportPassword  = "demo-Support-1"
	demoSubReseller      = "north-east" // north's own reseller
	demoNOC              = "noc"
	demoNOCPassword      = "demo-Noc-1"
	demoPortalUser       = "user00001"
	demoPortalPassword   = "pass"
	demoRadclientUser    = "user00002"
	// demoReserved: user00000..user00009 are left to people (portal,
	// radclient, xr simulate by hand); the demo's simulator plays the rest.
	demoReserved = 10
)

// demoSeed is what the demo seeders share: the tenant, the system actor,
// a deterministic random source (every demo is the same ISP), and the ids
// each seeder made for the next.
type demoSeed struct {
	a        *app.App
	t        *app.Tenant
	sys      *app.Actor
	rng      *rand.Rand
	now      time.Time
	roles    map[string]int64 // template key or name → id
	managers map[string]int64 // username → id
	owners   []int64          // managers that own subscribers, weighted
	plans    []demoPlan
	users    []demoSub
	nas      []int64
}

type demoPlan struct {
	id               int64
	name             string
	price            app.Money
	days             int64
	bytes, secs      int64
	weight           int
	downKbps, upKbps int64
}

func newDemoSeed(ctx context.Context, a *app.App, t *app.Tenant) (*demoSeed, error) {
	sys, err := app.SystemActor(ctx, t)
	if err != nil {
		return nil, err
	}
	return &demoSeed{a: a, t: t, sys: sys, rng: rand.New(rand.NewPCG(2026, 23)), now: t.Now(),
		roles: map[string]int64{}, managers: map[string]int64{}}, nil
}

func optS(s string) app.Opt[string]        { return app.Opt[string]{Set: true, V: s} }
func optI(v int64) app.Opt[int64]          { return app.Opt[int64]{Set: true, V: v} }
func optM(v app.Money) app.Opt[app.Money]  { return app.Opt[app.Money]{Set: true, V: v} }
func money(major float64) app.Money        { return app.Money(major * 1000) }
func optIDs(ids ...int64) app.Opt[[]int64] { return app.Opt[[]int64]{Set: true, V: ids} }

// seedDemoStaff: the system roles (administrator, reseller, support,
// cashier; support made tenant-wide) and a hand-made tenant-wide NOC role; a three-level reseller tree with
// wallets, debt limits and discounts; a cashier, a support agent and a NOC
// operator; the owner's API token the banner prints.
func seedDemoStaff(ctx context.Context, d *demoSeed) error {
	roles, err := identity.ListRoles(ctx, d.sys)
	if err != nil {
		return err
	}
	for _, r := range roles {
		if r.TemplateKey != nil {
			d.roles[*r.TemplateKey] = r.ID
		}
	}
	// The NOC reads the whole network (NAS, monitoring and its map, live
	// sessions, the subscribers a fault touches) and acknowledges alerts;
	// support helps any subscriber of the tenant. Both see every record:
	// a desk that answers the whole ISP's customers is not a branch.
	wide := app.Opt[bool]{Set: true, V: true}
	noc, err := identity.CreateRole(ctx, d.sys, identity.RoleInput{Name: optS("NOC"), Description: optS("Watches the network: NAS, monitoring, the map, live sessions"),
		Permissions: app.Opt[[]string]{Set: true, V: []string{string(subs.PermUsersIndex), string(subs.PermUsersLiveTraffic), string(reports.PermReportSessions),
			string(subs.PermProfilesIndex), string(aaa.PermNasIndex), string(monitoring.PermMonitoringView), string(monitoring.PermMonitoringAck), string(monitoring.PermMapView)}},
		TenantWide: wide})
	if err != nil {
		return fmt.Errorf("role NOC: %w", err)
	}
	d.roles["noc"] = noc.ID
	if _, err := identity.UpdateRole(ctx, d.sys, d.roles["support"], identity.RoleInput{TenantWide: wide}); err != nil {
		return fmt.Errorf("role support: %w", err)
	}
	owner := d.sys.ManagerID
	d.managers[demoUser] = owner
	staff := []struct {
		user, pass, parent, role, first, last, company, phone, lang string
		debt, discount                                              float64
	}{
		{demoReseller, demoResellerPassword, demoUser, "reseller", "Layla", "Haddad", "North Net", "+962791000101", "ar", 500, 10},
		{"north-east", demoResellerPassword, demoReseller, "reseller", "Omar", "Nasser", "NE Wireless", "+962791000102", "ar", 200, 5},
		{"ne-shop", demoResellerPassword, "north-east", "reseller", "Sami", "Khoury", "Corner Shop", "+962791000103", "en", 50, 2.5},
		{"south", demoResellerPassword, demoUser, "reseller", "Claire", "Dubois", "Sud Connect", "+33612000104", "fr", 300, 7.5},
		{demoCashier, demoCashierPassword, demoUser, "cashier", "Maya", "Said", "", "+962791000105", "en", 0, 0},
		{demoSupport, demoSupportPassword, demoUser, "support", "Chen", "Wei", "", "+8613800000106", "en", 0, 0},
		{demoNOC, demoNOCPassword, demoUser, "noc", "Diego", "Ruiz", "", "+34612000107", "es", 0, 0},
	}
	for _, s := range staff {
		m, err := identity.CreateManager(ctx, d.sys, identity.ManagerInput{Username: optS(s.user), Password: optS(s.pass),
			ParentManagerID: optI(d.managers[s.parent]), Firstname: optS(s.first), Lastname: optS(s.last), Company: optS(s.company),
			Phone: optS(s.phone), Language: optS(s.lang), Email: optS(s.user + "@demo.example"),
			DebtLimit: optM(money(s.debt)), DiscountRate: optM(money(s.discount)), RoleIDs: optIDs(d.roles[s.role])})
		if err != nil {
			return fmt.Errorf("manager %s: %w", s.user, err)
		}
		d.managers[s.user] = m.ID
	}
	// Who owns subscribers: the owner most, then the reseller tree.
	for name, w := range map[string]int{demoUser: 8, demoReseller: 5, "north-east": 2, "ne-shop": 2, "south": 3} {
		for range w {
			d.owners = append(d.owners, d.managers[name])
		}
	}
	d.rng.Shuffle(len(d.owners), func(i, j int) { d.owners[i], d.owners[j] = d.owners[j], d.owners[i] })
	_, err = identity.CreateAPIToken(ctx, d.sys, identity.APITokenInput{Name: demoTokenName, FullAccess: true})
	return err
}

// seedDemoWallets funds the resellers today through the wallet API (the
// 90 days before are history, see demo_history.go): each parent tops up
// its children from its own wallet.
func seedDemoWallets(ctx context.Context, d *demoSeed) error {
	for _, w := range []struct {
		from, to string
		amount   float64
	}{{demoUser, demoReseller, 400}, {demoUser, "south", 250}, {demoReseller, "north-east", 120}, {"north-east", "ne-shop", 40}} {
		act := d.sys
		if w.from != demoUser {
			a, _, err := app.ManagerActor(ctx, d.t, d.managers[w.from], nil)
			if err != nil {
				return err
			}
			act = a
		}
		kind := identity.WalletTopup
		if w.from == demoUser {
			kind = identity.WalletDeposit
		}
		if _, err := identity.ManagerWalletOp(ctx, act, d.managers[w.to], kind, identity.WalletInput{Amount: money(w.amount),
			RequestID: fmt.Sprintf("demo-wallet-%s-%s", w.from, w.to), Note: "demo: weekly top-up"}); err != nil {
			return fmt.Errorf("wallet %s → %s: %w", w.from, w.to, err)
		}
	}
	return nil
}

// seedDemoPlans: eight plans, from a day pass to fibre, with a quota plan
// under fair use and a night-boost plan.
func seedDemoPlans(ctx context.Context, d *demoSeed) error {
	const gb = int64(1) << 30
	plans := []struct {
		p      subs.ProfileInput
		weight int
	}{
		{subs.ProfileInput{Name: optS("Home 10M"), Description: optS("Entry home plan"), Price: optM(money(15)), DurationDays: optI(30),
			RateDownKbps: optI(10240), RateUpKbps: optI(2048)}, 25},
		{subs.ProfileInput{Name: optS("Home 50M"), Description: optS("Family plan, two devices"), Price: optM(money(35)), DurationDays: optI(30),
			RateDownKbps: optI(51200), RateUpKbps: optI(10240), SimultaneousUse: optI(2)}, 20},
		{subs.ProfileInput{Name: optS("Fiber 100M"), Description: optS("FTTH"), Price: optM(money(55)), DurationDays: optI(30),
			RateDownKbps: optI(102400), RateUpKbps: optI(20480)}, 10},
		{subs.ProfileInput{Name: optS("Capped 20GB"), Description: optS("20 GB a month, then 1 Mbps"), Price: optM(money(9.5)), DurationDays: optI(30),
			BytesLimit: optI(20 * gb), RateDownKbps: optI(20480), RateUpKbps: optI(4096)}, 15},
		{subs.ProfileInput{Name: optS("Student FUP 30GB"), Description: optS("Fair use: 25 Mbps for 30 GB, then 2 Mbps"), Price: optM(money(12)),
			DurationDays: optI(30), BytesLimit: optI(30 * gb), RateDownKbps: optI(25600), RateUpKbps: optI(5120),
			FUPRateDownKbps: optI(2048), FUPRateUpKbps: optI(1024)}, 15},
		{subs.ProfileInput{Name: optS("Night Boost 25M"), Description: optS("25 Mbps, 100 Mbps from midnight to 6 am"), Price: optM(money(19)),
			DurationDays: optI(30), RateDownKbps: optI(25600), RateUpKbps: optI(5120)}, 10},
		{subs.ProfileInput{Name: optS("Day pass"), Description: optS("24 hours online"), Price: optM(money(1.25)), DurationDays: optI(1),
			SecondsLimit: optI(86400), RateDownKbps: optI(8192), RateUpKbps: optI(2048)}, 5},
		{subs.ProfileInput{Name: optS("Card 1 day"), Description: optS("Prepaid card plan"), Price: optM(money(2)), DurationDays: optI(1),
			RateDownKbps: optI(8192), RateUpKbps: optI(2048)}, 0},
	}
	for _, p := range plans {
		pr, err := subs.CreateProfile(ctx, d.sys, p.p)
		if err != nil {
			return fmt.Errorf("plan %s: %w", p.p.Name.V, err)
		}
		d.plans = append(d.plans, demoPlan{id: pr.ID, name: p.p.Name.V, price: p.p.Price.V, days: p.p.DurationDays.V, bytes: p.p.BytesLimit.V,
			secs: p.p.SecondsLimit.V, weight: p.weight, downKbps: p.p.RateDownKbps.V, upKbps: p.p.RateUpKbps.V})
	}
	return nil
}

// seedDemoWebhooks: two endpoint examples, disabled so that a demo on a
// laptop sends nothing anywhere.
func seedDemoWebhooks(ctx context.Context, d *demoSeed) error {
	for _, e := range []webhooks.EndpointInput{
		{Name: optS("Billing system"), URL: optS("https://billing.example.com/hooks/xr"),
			Events: app.Opt[[]string]{Set: true, V: []string{"user.created", "user.activated"}}, Enabled: app.Opt[bool]{Set: true, V: false}},
		{Name: optS("Chat notifications"), URL: optS("https://chat.example.com/xr"), AllEvents: app.Opt[bool]{Set: true, V: true},
			Enabled: app.Opt[bool]{Set: true, V: false}},
	} {
		if _, err := webhooks.CreateEndpoint(ctx, d.sys, e); err != nil {
			return fmt.Errorf("webhook %s: %w", e.Name.V, err)
		}
	}
	return nil
}
