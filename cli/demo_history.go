package cli

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"xr/app"
	"xr/radiusd/sim"
)

// The demo's 90 days of history: what no app function can write with a
// past date (every function stamps the current time). This is the one store
// function of the demo that writes SQL: in bulk, one transaction per kind
// (manager journal, subscriber money and activations, sessions with their
// usage rollups), so that reports, journals, charts and dashboards have
// content. It runs after the subscribers exist and before today's work
// (seedDemoToday), so ids and dates grow together and every running
// balance continues where its history left it.

const demoHistoryDays = 90

// seedDemoHistory writes the three kinds.
func seedDemoHistory(ctx context.Context, d *demoSeed) error {
	if err := d.historyJournal(ctx); err != nil {
		return fmt.Errorf("history: manager journal: %w", err)
	}
	if err := d.historyMoney(ctx); err != nil {
		return fmt.Errorf("history: money and activations: %w", err)
	}
	if err := d.historySessions(ctx); err != nil {
		return fmt.Errorf("history: sessions and usage: %w", err)
	}
	return nil
}

func (d *demoSeed) dayStart(daysAgo int) time.Time {
	y, m, dd := d.now.Date()
	return time.Date(y, m, dd, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -daysAgo)
}

// historyJournal: the parent tops up each reseller's wallet every week.
func (d *demoSeed) historyJournal(ctx context.Context) error {
	type top struct {
		to, from string
		amount   app.Money
	}
	tops := []top{{demoReseller, demoUser, money(150)}, {"south", demoUser, money(90)}, {"north-east", demoReseller, money(60)},
		{"ne-shop", "north-east", money(20)}}
	return d.t.Write(ctx, func(tx *sql.Tx) error {
		ins, err := tx.PrepareContext(ctx, `INSERT INTO manager_journal(manager_id, kind, amount, balance_after, actor_id, note, created_at)
			VALUES (?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		bal := map[string]app.Money{}
		for week := demoHistoryDays / 7; week >= 1; week-- {
			at := d.dayStart(week * 7).Add(10*time.Hour + time.Duration(d.rng.IntN(3600))*time.Second)
			for _, t := range tops {
				// The parent's wallet pays (the owner's is not tracked).
				if t.from != demoUser {
					bal[t.from] -= t.amount
					if _, err := ins.ExecContext(ctx, d.managers[t.from], "transfer_topup", -t.amount, bal[t.from], d.managers[t.from],
						"weekly top-up", app.FormatTime(at)); err != nil {
						return err
					}
				}
				bal[t.to] += t.amount
				kind := "topup"
				if t.from == demoUser {
					kind = "deposit"
				}
				if _, err := ins.ExecContext(ctx, d.managers[t.to], kind, t.amount, bal[t.to], d.managers[t.from], "weekly top-up",
					app.FormatTime(at)); err != nil {
					return err
				}
			}
		}
		for name, b := range bal {
			if _, err := tx.ExecContext(ctx, `UPDATE managers SET balance = ? WHERE id = ?`, b, d.managers[name]); err != nil {
				return err
			}
		}
		return nil
	})
}

// historyMoney: each subscriber joined tenure days ago and has renewed its
// plan since, each renewal a deposit and the activation it paid (a
// subscriber in debt renewed on credit last time; an expired one stopped
// renewing). The subscriber row ends where its history does: created_at,
// expiration, limits and balance.
func (d *demoSeed) historyMoney(ctx context.Context) error {
	return d.t.Write(ctx, func(tx *sql.Tx) error {
		ledger, err := tx.PrepareContext(ctx, `INSERT INTO user_ledger(user_id, kind, amount, balance_after, actor_id, ref_type, ref_id, note, created_at)
			VALUES (?,?,?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer ledger.Close()
		acts, err := tx.PrepareContext(ctx, `INSERT INTO user_activations(user_id, profile_id, price, payer, added_seconds, old_expiration, new_expiration,
			old_profile_id, old_bytes_limit, old_seconds_limit, old_used_bytes, old_used_seconds, actor_id, created_at)
			VALUES (?,?,?,'subscriber',?,?,?,?,?,?,0,0,?,?)`)
		if err != nil {
			return err
		}
		defer acts.Close()
		link, err := tx.PrepareContext(ctx, `UPDATE user_activations SET ledger_id = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer link.Close()
		user, err := tx.PrepareContext(ctx, `UPDATE users SET created_at = ?, expiration = ?, bytes_limit = ?, seconds_limit = ?, balance = ?,
			updated_at = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer user.Close()
		for k := range d.users {
			s := &d.users[k]
			p := d.plans[s.plan]
			joined := d.dayStart(s.tenure).Add(time.Duration(9*3600+d.rng.IntN(10*3600)) * time.Second)
			period := time.Duration(p.days) * 24 * time.Hour
			if s.state == subExpired && s.tenure*24 < int(p.days)*24+48 {
				// Stopped renewing: at least one period and two days ago.
				s.tenure = min(demoHistoryDays, int(p.days)+2+d.rng.IntN(demoHistoryDays-int(p.days)-1))
				joined = d.dayStart(s.tenure).Add(10 * time.Hour)
			}
			var bal app.Money
			var exp sql.NullString
			if s.state != subNew {
				// Renewal times: every period from joining (a day pass
				// every few days), the expired ones' last ending before now.
				var at []time.Time
				for t := joined; t.Before(d.now); {
					if s.state == subExpired && t.Add(period).After(d.now.Add(-24*time.Hour)) {
						break
					}
					at = append(at, t)
					if p.days == 1 {
						t = t.Add(time.Duration(1+d.rng.IntN(4)) * 24 * time.Hour)
					} else {
						t = t.Add(period)
					}
				}
				if len(at) == 0 {
					at = append(at, joined)
				}
				var old sql.NullString
				for n, t := range at {
					credit := s.state == subDebt && n == len(at)-1
					if !credit {
						bal += p.price
						if _, err := ledger.ExecContext(ctx, s.id, "deposit", p.price, bal, s.owner, "", nil, "cash", app.FormatTime(t.Add(-20*time.Minute))); err != nil {
							return err
						}
					}
					base := t
					if old.Valid {
						if prev, err := time.Parse(app.TimeLayout, old.String); err == nil && prev.After(base) {
							base = prev
						}
					}
					newExp := app.FormatTime(base.Add(period))
					var oldProfile any
					if n > 0 {
						oldProfile = p.id
					}
					r, err := acts.ExecContext(ctx, s.id, p.id, p.price, int64(period/time.Second), old, newExp, oldProfile, p.bytes, p.secs, s.owner,
						app.FormatTime(t))
					if err != nil {
						return err
					}
					actID, _ := r.LastInsertId()
					bal -= p.price
					r, err = ledger.ExecContext(ctx, s.id, "activation", -p.price, bal, s.owner, "user_activation", actID, "", app.FormatTime(t))
					if err != nil {
						return err
					}
					lid, _ := r.LastInsertId()
					if _, err := link.ExecContext(ctx, lid, actID); err != nil {
						return err
					}
					old = sql.NullString{String: newExp, Valid: true}
				}
				exp = old
			}
			if _, err := user.ExecContext(ctx, app.FormatTime(joined), exp, p.bytes, p.secs, bal, app.FormatTime(d.now), s.id); err != nil {
				return err
			}
		}
		return nil
	})
}

// historySessions: an evening session most days a subscriber was in
// service, through one of the towers, with its usage in the daily rollups
// (and hourly for the last week); quota subscribers' counters sit between
// 75 % and 110 % of their quota, so some cross 80 % and 100 % while the
// simulator runs. One subscriber in demoSharerEvery shares its account
// across four devices (the suspicious report flags it).
const demoSharerEvery = 60

func (d *demoSeed) historySessions(ctx context.Context) error {
	return d.t.Write(ctx, func(tx *sql.Tx) error {
		sess, err := tx.PrepareContext(ctx, `INSERT INTO radius_sessions(acct_session_id, user_id, username, nas_id, nas_ip, framed_ip,
			calling_station_id, start_time, update_time, stop_time, session_time, input_octets, output_octets, input_packets, output_packets,
			terminate_cause, profile_name, charged_bytes, charged_seconds, kind) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,'subscriber')`)
		if err != nil {
			return err
		}
		defer sess.Close()
		roll, err := tx.PrepareContext(ctx, `INSERT INTO usage_rollups(user_id, grain, bucket, input_octets, output_octets, seconds, sessions)
			VALUES (?,?,?,?,?,?,?) ON CONFLICT(user_id, grain, bucket) DO UPDATE SET input_octets = input_octets + excluded.input_octets,
			output_octets = output_octets + excluded.output_octets, seconds = seconds + excluded.seconds, sessions = sessions + excluded.sessions`)
		if err != nil {
			return err
		}
		defer roll.Close()
		used, err := tx.PrepareContext(ctx, `UPDATE users SET used_bytes = ?, used_seconds = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer used.Close()
		nasIP := map[int64]string{d.nas[1]: "10.20.0.1", d.nas[2]: "10.30.0.1"}
		n := 0
		for _, s := range d.users {
			if s.state == subNew {
				continue
			}
			p := d.plans[s.plan]
			nas := d.nas[1]
			if p.downKbps >= 51200 {
				nas = d.nas[2]
			}
			var cycleBytes, cycleSecs int64
			for ago := s.tenure; ago >= 1; ago-- {
				if d.rng.IntN(10) < 2 {
					continue // a day offline
				}
				day := d.dayStart(ago)
				start := day.Add(time.Duration(17*3600+d.rng.IntN(5*3600)) * time.Second)
				secs := int64(1800 + d.rng.IntN(4*3600))
				if end := day.Add(24*time.Hour - time.Second); start.Add(time.Duration(secs) * time.Second).After(end) {
					secs = int64(end.Sub(start) / time.Second)
				}
				// 2 to 8 % of the plan's rate on average, more for heavy users.
				util := 0.02 + 0.06*d.rng.Float64()
				if s.heavy {
					util *= 3
				}
				down := int64(float64(p.downKbps) * 125 * float64(secs) * util)
				up := down / 8
				stop := start.Add(time.Duration(secs) * time.Second)
				n++
				mac := sim.MAC(s.i)
				if s.i%demoSharerEvery == 7 {
					mac = sim.MAC(s.i + demoSubscribers*(ago%4)) // an account shared by four devices
				}
				if _, err := sess.ExecContext(ctx, fmt.Sprintf("h%07x", n), s.id, fmt.Sprintf("user%05d", s.i), nas, nasIP[nas],
					fmt.Sprintf("100.64.%d.%d", s.i/250, 1+s.i%250), mac, app.FormatTime(start), app.FormatTime(stop), app.FormatTime(stop),
					secs, up, down, up/600, down/1200, "User-Request", p.name, up+down, secs); err != nil {
					return err
				}
				if _, err := roll.ExecContext(ctx, s.id, "d", day.Unix(), up, down, secs, 1); err != nil {
					return err
				}
				if ago <= 7 {
					// Hourly: the session spread over the hours it spans.
					for h := start.Truncate(time.Hour); h.Before(stop); h = h.Add(time.Hour) {
						from, to := h, h.Add(time.Hour)
						if from.Before(start) {
							from = start
						}
						if to.After(stop) {
							to = stop
						}
						part := to.Sub(from).Seconds() / float64(secs)
						first := int64(0)
						if h.Equal(start.Truncate(time.Hour)) {
							first = 1
						}
						if _, err := roll.ExecContext(ctx, s.id, "h", h.Unix(), int64(float64(up)*part), int64(float64(down)*part),
							int64(to.Sub(from)/time.Second), first); err != nil {
							return err
						}
					}
				}
				if ago <= 30 {
					cycleBytes += up + down
					cycleSecs += secs
				}
			}
			if p.bytes > 0 {
				// Quota plans: the heavy ones close to or past their quota.
				cycleBytes = int64(float64(p.bytes) * (0.2 + 0.4*d.rng.Float64()))
				if s.heavy {
					// A few hundred MB short of 80 % or of 100 %, or over.
					short := int64(50+d.rng.IntN(450)) << 20
					switch s.i % 4 {
					case 0:
						cycleBytes = int64(float64(p.bytes) * (0.6 + 0.15*d.rng.Float64()))
					case 1:
						cycleBytes = p.bytes*8/10 - short
					case 2:
						cycleBytes = p.bytes - short
					default:
						cycleBytes = p.bytes + short
					}
				}
			}
			if p.secs > 0 {
				cycleSecs = min(cycleSecs, p.secs/2)
			}
			if _, err := used.ExecContext(ctx, cycleBytes, cycleSecs, s.id); err != nil {
				return err
			}
		}
		return nil
	})
}
