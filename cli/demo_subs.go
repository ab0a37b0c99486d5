package cli

import (
	"context"
	"database/sql"
	"fmt"

	"xr/app"
	"xr/app/identity"
	"xr/app/subs"
)

// The demo's subscribers: user00000..user00019 with RADIUS password "pass"
// (the defaults of xr simulate), on a few plans, some under a two-level
// reseller tree.

func seedSubscribers(ctx context.Context, a *app.App, t *app.Tenant) error {
	act, err := app.SystemActor(ctx, t)
	if err != nil {
		return err
	}
	opt := func(v int64) app.Opt[int64] { return app.Opt[int64]{Set: true, V: v} }
	name := func(s string) app.Opt[string] { return app.Opt[string]{Set: true, V: s} }
	price := func(s string) app.Opt[app.Money] {
		m, _ := app.ParseMoney(s)
		return app.Opt[app.Money]{Set: true, V: m}
	}
	plans := []subs.ProfileInput{
		{Name: name("Home 10M"), Price: price("15"), DurationDays: opt(30), RateDownKbps: opt(10240), RateUpKbps: opt(2048)},
		{Name: name("Home 50M"), Price: price("35"), DurationDays: opt(30), RateDownKbps: opt(51200), RateUpKbps: opt(10240), SimultaneousUse: opt(2)},
		{Name: name("Capped 20GB"), Price: price("9.5"), DurationDays: opt(30), BytesLimit: opt(20 << 30), RateDownKbps: opt(20480), RateUpKbps: opt(4096),
			FUPRateDownKbps: opt(1024), FUPRateUpKbps: opt(512)},
		{Name: name("Day pass"), Price: price("1.25"), DurationDays: opt(1), SecondsLimit: opt(86400), RateDownKbps: opt(8192), RateUpKbps: opt(2048)},
	}
	var planIDs []int64
	for _, p := range plans {
		pr, err := subs.CreateProfile(ctx, act, p)
		if err != nil {
			return err
		}
		planIDs = append(planIDs, pr.ID)
	}
	// A reseller and its agent, with the reseller role.
	var roleID int64
	if err := t.DB.R.QueryRowContext(ctx, `SELECT id FROM roles WHERE template_key = 'reseller'`).Scan(&roleID); err != nil && err != sql.ErrNoRows {
		return err
	}
	parents := []int64{act.ManagerID}
	parent := act.ManagerID
	for _, u := range []string{"reseller1", "agent1"} {
		in := identity.ManagerInput{Username: name(u), Password: name("demo-Reseller-1"), ParentManagerID: opt(parent), Firstname: name(u),
			DebtLimit: price("100")}
		if roleID != 0 {
			in.RoleIDs = app.Opt[[]int64]{Set: true, V: []int64{roleID}}
		}
		m, err := identity.CreateManager(ctx, act, in)
		if err != nil {
			return err
		}
		parent = m.ID
		parents = append(parents, m.ID)
	}
	first := []string{"Amal", "Bilal", "Chen", "Dana", "Eli", "Farah", "Goran", "Hana", "Ivan", "Jana"}
	for i := 0; i < 20; i++ {
		err := t.Write(ctx, func(tx *sql.Tx) error {
			u, err := subs.CreateUser(ctx, tx, t, subs.NewUser{Username: fmt.Sprintf("user%05d", i), Password: "pass",
				ParentID: parents[i%len(parents)], ProfileID: planIDs[i%len(planIDs)], Firstname: first[i%len(first)], Lastname: "Demo",
				Phone: fmt.Sprintf("+1555%07d", i), Email: fmt.Sprintf("user%05d@demo.example", i), ActorID: act.ManagerID})
			if err != nil {
				return err
			}
			if i%5 == 4 {
				return nil // a few never activated
			}
			_, err = subs.ApplyActivation(ctx, tx, t, act.ManagerID, u.ID, 0, subs.ActivationOptions{Charge: subs.ChargeNone, Note: "demo"})
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
