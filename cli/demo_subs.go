package cli

import (
	"context"
	"fmt"

	"xr/app"
	"xr/app/subs"
	"xr/radiusd/sim"
)

// The demo's subscribers are user00000..user00499 with RADIUS password
// "pass" (the defaults of xr simulate), multilingual names, phones and
// addresses, under the owner and the reseller tree. Their standing is set
// by index, so every demo is the same ISP:
const demoSubscribers = 500

type demoState int

const (
	subActive   demoState = iota
	subNew                // created, never activated
	subExpired            // stopped renewing: expired
	subDisabled           // suspended by an admin
	subDebt               // renews on credit: balance below zero
)

type demoSub struct {
	id      int64
	i       int
	owner   int64
	plan    int // index in demoSeed.plans
	state   demoState
	tenure  int  // days since the subscriber joined (1..90)
	heavy   bool // on a quota plan, near or over its quota
	macLock bool
}

func demoStateOf(i int) demoState {
	switch {
	case i < 10: // the first ones (the portal login among them) are plain
		return subActive
	case i%25 == 7:
		return subNew
	case i%20 == 3:
		return subExpired
	case i%33 == 5:
		return subDisabled
	case i%17 == 2:
		return subDebt
	}
	return subActive
}

type demoLocale struct {
	weight          int
	first, last     []string
	phone           string // prefix; the index fills the rest
	addresses       []string
	familyNameFirst bool
}

var demoLocales = []demoLocale{
	{35, []string{"أحمد", "فاطمة", "محمد", "ليلى", "يوسف", "مريم", "خالد", "نور", "عمر", "سارة", "رامي", "هبة"},
		[]string{"الحسن", "حداد", "نصار", "خوري", "العلي", "سعيد", "الزعبي", "منصور", "عبيدات", "الخطيب"}, "+96279",
		[]string{"شارع الجامعة، عمّان", "جبل اللويبدة، عمّان", "شارع الملك حسين، إربد", "حي النزهة، الزرقاء", "شارع الستين، العقبة"}, false},
	{20, []string{"James", "Emma", "Liam", "Olivia", "Noah", "Ava", "Ethan", "Mia", "Lucas", "Grace"},
		[]string{"Smith", "Johnson", "Brown", "Taylor", "Wilson", "Clarke", "Walker", "Hughes"}, "+1555",
		[]string{"12 Oak Street, Springfield", "48 Maple Avenue, Riverton", "7 Harbour Road, Bayside", "230 Hill Crescent, Lakeview"}, false},
	{10, []string{"Camille", "Louis", "Chloé", "Hugo", "Léa", "Jules", "Manon", "Théo"},
		[]string{"Martin", "Bernard", "Petit", "Durand", "Lefèvre", "Moreau", "Girard"}, "+336",
		[]string{"8 rue des Lilas, Lyon", "14 avenue Victor-Hugo, Lille", "3 place du Marché, Nantes"}, false},
	{10, []string{"Sofía", "Mateo", "Lucía", "Javier", "Carmen", "Pablo", "Elena"},
		[]string{"García", "Fernández", "López", "Martínez", "Sánchez", "Gómez"}, "+346",
		[]string{"Calle Mayor 5, Madrid", "Avenida del Puerto 19, Valencia", "Calle Sierpes 40, Sevilla"}, false},
	{10, []string{"Ayşe", "Mehmet", "Elif", "Mustafa", "Zeynep", "Emre", "Gül"},
		[]string{"Yılmaz", "Kaya", "Demir", "Şahin", "Çelik", "Öztürk"}, "+905",
		[]string{"Atatürk Cd. 14, İzmir", "İstiklal Cd. 102, İstanbul", "Gazi Blv. 9, Ankara"}, false},
	{8, []string{"伟", "芳", "娜", "敏", "静", "磊", "洋"},
		[]string{"王", "李", "张", "刘", "陈", "杨"}, "+86138",
		[]string{"北京市朝阳区建国路88号", "上海市浦东新区世纪大道100号", "广州市天河区体育西路5号"}, true},
	{7, []string{"Aarav", "Priya", "Rohan", "Ananya", "Vikram", "Isha"},
		[]string{"Sharma", "Patel", "Gupta", "Iyer", "Reddy"}, "+9198",
		[]string{"MG Road 21, Bengaluru", "Linking Road 7, Mumbai", "Park Street 33, Kolkata"}, false},
}

func (d *demoSeed) locale() demoLocale {
	n := d.rng.IntN(100)
	for _, l := range demoLocales {
		if n < l.weight {
			return l
		}
		n -= l.weight
	}
	return demoLocales[0]
}

// pickPlan draws a subscriber plan by weight (the card plan has none).
func (d *demoSeed) pickPlan() int {
	sum := 0
	for _, p := range d.plans {
		sum += p.weight
	}
	n := d.rng.IntN(sum)
	for i, p := range d.plans {
		if n < p.weight {
			return i
		}
		n -= p.weight
	}
	return 0
}

// seedDemoSubscribers creates the 500 subscribers through subs.Create as
// the system actor, each under its owner (the history then dates them).
func seedDemoSubscribers(ctx context.Context, d *demoSeed) error {
	for i := range demoSubscribers {
		s := demoSub{i: i, owner: d.owners[i%len(d.owners)], plan: d.pickPlan(), state: demoStateOf(i), tenure: 1 + d.rng.IntN(90)}
		if i < 10 { // the portal login and the simulator's first users: Home 10M, no quota
			s.owner, s.tenure, s.plan = d.sys.ManagerID, 90, 0
		}
		if i%7 == 3 {
			s.owner = d.managers[demoCashier] // counter customers
		}
		p := d.plans[s.plan]
		s.heavy = p.bytes > 0 && i%3 == 0
		l := d.locale()
		first, last := l.first[d.rng.IntN(len(l.first))], l.last[d.rng.IntN(len(l.last))]
		in := subs.CreateInput{Username: fmt.Sprintf("user%05d", i), Password: demoPortalPassword, ParentID: &s.owner,
			ProfileID: &d.plans[s.plan].id, Firstname: first, Lastname: last, Phone: fmt.Sprintf("%s%07d", l.phone, 1000000+i*37),
			Email: fmt.Sprintf("user%05d@mail.example", i), Address: l.addresses[d.rng.IntN(len(l.addresses))],
			ContractID: fmt.Sprintf("C-%05d", 10000+i)}
		if l.familyNameFirst {
			in.Notes = last + first
		}
		switch {
		case i%40 == 11: // locked to the MAC the simulator sends: it connects
			in.MacLockEnabled, in.MacLockedAddrs, s.macLock = true, []string{sim.MAC(i)}, true
		case i%80 == 51: // locked to another device: refused with mac_mismatch
			in.MacLockEnabled, in.MacLockedAddrs, s.macLock = true, []string{"02:AA:BB:CC:DD:EE"}, true
		}
		if s.state == subDebt {
			limit := money(60)
			in.DebtLimit = &limit
		}
		u, err := subs.Create(ctx, d.sys, in)
		if err != nil {
			return fmt.Errorf("subscriber %s: %w", in.Username, err)
		}
		s.id = u.ID
		d.users = append(d.users, s)
	}
	return nil
}

// seedDemoToday is today's counter work, through the same functions the
// API calls, after the 90 days of history: the cashier takes payments and
// renews its customers, the north reseller renews its own, the owner
// renews the expiring and suspends a few.
func seedDemoToday(ctx context.Context, d *demoSeed) error {
	actors := map[int64]*app.Actor{d.sys.ManagerID: d.sys}
	actorOf := func(m int64) (*app.Actor, error) {
		if a, ok := actors[m]; ok {
			return a, nil
		}
		a, _, err := app.ManagerActor(ctx, d.t, m, nil)
		actors[m] = a
		return a, err
	}
	for k, s := range d.users {
		act := d.sys
		if s.owner == d.managers[demoCashier] || s.owner == d.managers[demoReseller] {
			a, err := actorOf(s.owner)
			if err != nil {
				return err
			}
			act = a
		}
		switch {
		case s.state == subDisabled:
			if _, err := subs.DisableUser(ctx, d.sys, s.id); err != nil {
				return fmt.Errorf("disable %d: %w", s.i, err)
			}
		case s.state == subActive && k%6 == 1:
			// A payment at the counter, and for some a renewal with it.
			p := d.plans[s.plan]
			amount := p.price
			if k%12 == 1 {
				amount = money(20)
			}
			if _, err := subs.Deposit(ctx, act, s.id, subs.DepositInput{Amount: &amount, RequestID: fmt.Sprintf("demo-today-dep-%d", s.i),
				Note: "paid at the counter"}); err != nil {
				return fmt.Errorf("deposit %d: %w", s.i, err)
			}
			if k%12 == 7 || amount == p.price {
				if _, err := subs.Activate(ctx, act, s.id, subs.ActivationInput{RequestID: fmt.Sprintf("demo-today-act-%d", s.i)}); err != nil {
					return fmt.Errorf("activate %d: %w", s.i, err)
				}
			}
		}
	}
	return nil
}
