package monitoring

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"xr/app"
	"xr/app/outbox"
	"xr/app/probes"
)

// Retention of the samples: raw results for the 24 h percentiles, the
// hourly rollup for the 7 and 30 day windows.
const (
	RawKeep    = 48 * time.Hour
	HourlyKeep = 35 * 24 * time.Hour
	lossWindow = 20 // the loss is over the last 20 echoes
)

// dueDevice is what the poller needs of a device.
type dueDevice struct {
	id               int64
	kind, name, addr string
	port             int
	snmpVer          string
	pingIvl, snmpIvl int
	nextSNMP         sql.NullString
	status           string
	fails            int
	uptime           sql.NullInt64
	notify           string
	res              probes.Result
	skipped          bool
	snmpDone, snmpOK bool
	newUptime        uint64
	cred             *probes.SNMPCred
	lossPct          float64
	alerts           []int64
	wentDown, wentUp bool
	// The watched interface (rules.if_index): stored counters, and this
	// poll's reading.
	ifIn, ifOut      sql.NullInt64
	ifPolled, ifOver sql.NullString
	ifDone, ifOK     bool
	ifNow            probes.Interface
}

// PollDue probes tenant t's devices whose next probe is due at now, stores
// the samples and the rollup, and applies the alert rules, in one
// transaction. It answers how many devices it probed. Tests call it with a
// fake clock; the poller service calls it every second.
func PollDue(ctx context.Context, t *app.Tenant, now time.Time) (int, error) {
	nowText := app.FormatTime(now)
	var due []*dueDevice
	var guard *probes.Guard
	err := t.Read(ctx, func(tx *sql.Tx) error {
		var err error
		if guard, err = probes.TenantGuard(ctx, t.App, tx); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, kind, name, address, probe_port, snmp_version, ping_interval, snmp_interval, next_snmp,
			status, fails, sys_uptime, notify, if_in_octets, if_out_octets, if_polled_at, if_over_since FROM mon_devices WHERE next_probe IS NULL OR next_probe <= ? ORDER BY next_probe LIMIT 5000`, nowText)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			d := &dueDevice{}
			if err := rows.Scan(&d.id, &d.kind, &d.name, &d.addr, &d.port, &d.snmpVer, &d.pingIvl, &d.snmpIvl, &d.nextSNMP,
				&d.status, &d.fails, &d.uptime, &d.notify, &d.ifIn, &d.ifOut, &d.ifPolled, &d.ifOver); err != nil {
				return err
			}
			due = append(due, d)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, d := range due {
			if d.snmpVer != "" && (!d.nextSNMP.Valid || d.nextSNMP.String <= nowText) {
				if d.cred, err = snmpCred(ctx, tx, t, d.id); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil || len(due) == 0 {
		return 0, err
	}
	p := pool(t.App)
	var wg sync.WaitGroup
	for _, d := range due {
		addr, err := netip.ParseAddr(d.addr)
		if err != nil || !guard.Allow(addr) {
			d.skipped = true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = p.Do(ctx, func() { // ctx ended: the device stays due
				d.res = probes.Echo(ctx, guard.Target(addr, d.port), ProbeTimeout)
				if d.cred != nil {
					d.snmpDone = true
					up, err := probes.SysUpTime(ctx, guard.Target(addr, 0), *d.cred, ProbeTimeout)
					d.snmpOK, d.newUptime = err == nil, up
					if r := parseNotify(d.notify).Rules; r.IfIndex > 0 && r.IfUtilPct > 0 {
						d.ifDone = true
						d.ifNow, err = probes.Counters(ctx, guard.Target(addr, 0), *d.cred, r.IfIndex, ProbeTimeout)
						d.ifOK = err == nil
					}
				}
			})
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	err = t.Write(ctx, func(tx *sql.Tx) error {
		for _, d := range due {
			if err := record(ctx, tx, t, d, now); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mon_samples WHERE at < ?`, app.FormatTime(now.Add(-RawKeep))); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM mon_hourly WHERE hour < ?`, now.Add(-HourlyKeep).UTC().Format("2006-01-02 15"))
		return err
	})
	if err != nil {
		return 0, err
	}
	return len(due), nil
}

// record stores one device's probe and applies the rules.
func record(ctx context.Context, tx *sql.Tx, t *app.Tenant, d *dueDevice, now time.Time) error {
	nowText := app.FormatTime(now)
	next := app.FormatTime(now.Add(time.Duration(d.pingIvl) * time.Second))
	if d.skipped {
		_, err := tx.ExecContext(ctx, `UPDATE mon_devices SET status = 'unknown', next_probe = ?, method = '' WHERE id = ?`, next, d.id)
		return err
	}
	rules := parseNotify(d.notify).Rules.withDefaults()
	ok := d.res.OK
	var rtt any
	if ok {
		rtt = d.res.RTTms()
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO mon_samples(device_id, at, ok, rtt_ms, method) VALUES (?, ?, ?, ?, ?)`,
		d.id, nowText, ok, rtt, d.res.Method); err != nil {
		return err
	}
	okN, rttv := 0, 0.0
	if ok {
		okN, rttv = 1, d.res.RTTms()
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO mon_hourly(device_id, hour, probes, ok, rtt_sum, rtt_max) VALUES (?, ?, 1, ?, ?, ?)
		ON CONFLICT(device_id, hour) DO UPDATE SET probes = probes + 1, ok = ok + excluded.ok, rtt_sum = rtt_sum + excluded.rtt_sum,
		rtt_max = MAX(rtt_max, excluded.rtt_max)`, d.id, now.UTC().Format("2006-01-02 15"), okN, rttv, rttv); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(100.0 * SUM(1 - ok) / COUNT(*), 0) FROM
		(SELECT ok FROM mon_samples WHERE device_id = ? ORDER BY at DESC LIMIT ?)`, d.id, lossWindow).Scan(&d.lossPct); err != nil {
		return err
	}
	status, fails := d.status, d.fails
	if ok {
		fails = 0
		if status != "up" {
			d.wentUp = status == "down"
			status = "up"
		}
	} else {
		fails++
		if fails >= rules.DownAfter && status != "down" {
			d.wentDown = true
			status = "down"
		}
	}
	since := "status_since"
	if status != d.status {
		since = "?"
	}
	args := []any{status, fails, nowText, next, d.lossPct, d.res.Method}
	if since == "?" {
		args = append(args, nowText)
	}
	lastSeen, latency := "last_seen", "latency_ms"
	if ok {
		lastSeen, latency = "?", "?"
		args = append(args, nowText, d.res.RTTms())
	}
	args = append(args, d.id)
	if _, err := tx.ExecContext(ctx, `UPDATE mon_devices SET status = ?, fails = ?, last_probe = ?, next_probe = ?, loss_pct = ?, method = ?,
		status_since = `+since+`, last_seen = `+lastSeen+`, latency_ms = `+latency+` WHERE id = ?`, args...); err != nil {
		return err
	}
	ev := alertEnv{tx: tx, t: t, d: d, now: now}
	if d.wentDown {
		if _, err := tx.ExecContext(ctx, `INSERT INTO mon_outages(device_id, started_at) VALUES (?, ?)`, d.id, nowText); err != nil {
			return err
		}
		if err := ev.open(ctx, "down", "critical", fmt.Sprintf("down after %d failed probes", fails), nil); err != nil {
			return err
		}
		if err := app.Emit(ctx, tx, "device.down", eventData(d, nowText)); err != nil {
			return err
		}
	}
	if d.wentUp {
		if _, err := tx.ExecContext(ctx, `UPDATE mon_outages SET ended_at = ? WHERE device_id = ? AND ended_at IS NULL`, nowText, d.id); err != nil {
			return err
		}
		if err := ev.resolve(ctx, "down"); err != nil {
			return err
		}
		if err := ev.open(ctx, "up", "info", "up again", nil); err != nil {
			return err
		}
		if err := ev.resolve(ctx, "up"); err != nil {
			return err
		}
		if err := app.Emit(ctx, tx, "device.up", eventData(d, nowText)); err != nil {
			return err
		}
	}
	if ok && rules.LatencyMs > 0 {
		if err := ev.threshold(ctx, "latency", d.res.RTTms() > rules.LatencyMs, fmt.Sprintf("latency %.1f ms over %.0f ms", d.res.RTTms(), rules.LatencyMs), d.res.RTTms()); err != nil {
			return err
		}
	}
	if rules.LossPct > 0 {
		if err := ev.threshold(ctx, "loss", d.lossPct > rules.LossPct, fmt.Sprintf("loss %.0f%% over %.0f%%", d.lossPct, rules.LossPct), d.lossPct); err != nil {
			return err
		}
	}
	if rules.NASSilentMinutes > 0 && d.kind == KindNAS {
		var last sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT MAX(COALESCE(s.update_time, s.start_time)) FROM radius_sessions s
			JOIN mon_devices m ON m.nas_id = s.nas_id WHERE m.id = ?`, d.id).Scan(&last); err != nil {
			return err
		}
		if last.Valid { // a NAS that never sent accounting is not "silent"
			limit := app.FormatTime(now.Add(-time.Duration(rules.NASSilentMinutes) * time.Minute))
			if err := ev.threshold(ctx, "nas_silent", last.String < limit, fmt.Sprintf("no RADIUS accounting for %d minutes", rules.NASSilentMinutes), 0); err != nil {
				return err
			}
		}
	}
	if err := escalate(ctx, tx, t, d, now); err != nil {
		return err
	}
	if d.snmpDone {
		nextSNMP := app.FormatTime(now.Add(time.Duration(d.snmpIvl) * time.Second))
		var up any
		if d.snmpOK {
			up = int64(d.newUptime)
			if d.uptime.Valid && uint64(d.uptime.Int64) > d.newUptime {
				if err := ev.open(ctx, "reboot", "warning", "SNMP reboot detected (sysUpTime went back)", nil); err != nil {
					return err
				}
				if err := ev.resolve(ctx, "reboot"); err != nil {
					return err
				}
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mon_devices SET next_snmp = ?, sys_uptime = COALESCE(?, sys_uptime) WHERE id = ?`, nextSNMP, up, d.id); err != nil {
			return err
		}
		if d.ifDone && d.ifOK {
			if err := ifUtilisation(ctx, ev, rules, now); err != nil {
				return err
			}
		}
	}
	return nil
}

func eventData(d *dueDevice, at string) map[string]any {
	return map[string]any{"device_id": d.id, "kind": d.kind, "name": d.name, "address": d.addr, "at": at}
}

type alertEnv struct {
	tx  *sql.Tx
	t   *app.Tenant
	d   *dueDevice
	now time.Time
}

// open raises an alert of rule unless one is open, and notifies.
func (e alertEnv) open(ctx context.Context, rule, severity, msg string, value any) error {
	var open int
	if err := e.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM mon_alerts WHERE device_id = ? AND rule = ? AND state = 'open'`, e.d.id, rule).Scan(&open); err != nil {
		return err
	}
	if open > 0 {
		return nil
	}
	res, err := e.tx.ExecContext(ctx, `INSERT INTO mon_alerts(device_id, rule, severity, message, value, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		e.d.id, rule, severity, msg, value, app.FormatTime(e.now))
	if err != nil {
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	e.d.alerts = append(e.d.alerts, id)
	return notifyAlert(ctx, e.tx, e.t, e.d, id, rule, msg, e.now)
}

// resolve closes the open alert of rule.
func (e alertEnv) resolve(ctx context.Context, rule string) error {
	_, err := e.tx.ExecContext(ctx, `UPDATE mon_alerts SET state = 'resolved', resolved_at = ? WHERE device_id = ? AND rule = ? AND state = 'open'`,
		app.FormatTime(e.now), e.d.id, rule)
	return err
}

// threshold opens the rule's alert while over, resolves it once under.
func (e alertEnv) threshold(ctx context.Context, rule string, over bool, msg string, value float64) error {
	if over {
		return e.open(ctx, rule, "warning", msg, value)
	}
	return e.resolve(ctx, rule)
}

// notifyAlert queues the messages of an alert for the device's recipients
// (email, SMS), outside the quiet hours; the cause "mon_alert:<id>" is what
// GET /alerts/{id}/deliveries reads.
func notifyAlert(ctx context.Context, tx *sql.Tx, t *app.Tenant, d *dueDevice, alertID int64, rule, msg string, now time.Time) error {
	n := parseNotify(d.notify)
	if n.quiet(ctx, tx, now) {
		return nil
	}
	tmpl, vars := "device.alert", map[string]string{"device": d.name, "address": d.addr, "at": app.FormatTime(now), "message": msg}
	switch rule {
	case "down", "up":
		tmpl = "device." + rule
		delete(vars, "message")
	default:
		if !n.NotifyWarnings {
			return nil
		}
	}
	cause := "mon_alert:" + strconv.FormatInt(alertID, 10)
	for _, to := range n.Emails {
		if _, err := outbox.Enqueue(ctx, tx, t, outbox.Message{Channel: outbox.ChannelEmail, To: to, Template: tmpl, Vars: vars, Cause: cause}); err != nil {
			return err
		}
	}
	for _, to := range n.Phones {
		if _, err := outbox.Enqueue(ctx, tx, t, outbox.Message{Channel: outbox.ChannelSMS, To: to, Template: tmpl, Vars: vars, Cause: cause}); err != nil {
			return err
		}
	}
	return nil
}

func parseNotify(raw string) NotifySettings {
	var n NotifySettings
	if err := json.Unmarshal([]byte(raw), &n); err != nil {
		return NotifySettings{}
	}
	return n
}

// escalate sends the device's critical alerts left open and unacknowledged
// past EscalateAfterMinutes to its escalation addresses, once each (the
// outbox refuses a second (cause, channel, recipient)).
func escalate(ctx context.Context, tx *sql.Tx, t *app.Tenant, d *dueDevice, now time.Time) error {
	n := parseNotify(d.notify)
	if n.EscalateAfterMinutes <= 0 || len(n.EscalateEmails) == 0 {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, message, created_at FROM mon_alerts WHERE device_id = ? AND state = 'open' AND acked_at IS NULL
		AND severity = 'critical' AND created_at <= ?`, d.id, app.FormatTime(now.Add(-time.Duration(n.EscalateAfterMinutes)*time.Minute)))
	if err != nil {
		return err
	}
	type open struct {
		id      int64
		msg, at string
	}
	var list []open
	for rows.Next() {
		var o open
		if err := rows.Scan(&o.id, &o.msg, &o.at); err != nil {
			rows.Close()
			return err
		}
		list = append(list, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, o := range list {
		vars := map[string]string{"device": d.name, "address": d.addr, "at": o.at,
			"message": fmt.Sprintf("unacknowledged for %d minutes: %s", n.EscalateAfterMinutes, o.msg)}
		for _, to := range n.EscalateEmails {
			if _, err := outbox.Enqueue(ctx, tx, t, outbox.Message{Channel: outbox.ChannelEmail, To: to, Template: "device.alert", Vars: vars,
				Cause: "mon_alert:" + strconv.FormatInt(o.id, 10)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// ifUtilisation applies the interface rule to this poll's counters against
// the stored ones, and stores this poll's.
func ifUtilisation(ctx context.Context, ev alertEnv, rules Rules, now time.Time) error {
	d, cur := ev.d, ev.d.ifNow
	overSince := d.ifOver
	if d.ifIn.Valid && d.ifOut.Valid && d.ifPolled.Valid && cur.SpeedBps > 0 {
		prev, err := app.ParseTime(d.ifPolled.String, false)
		if err != nil {
			return err
		}
		if secs := now.Sub(prev).Seconds(); secs > 0 {
			in := probes.CounterDelta(uint64(d.ifIn.Int64), cur.InOctets, cur.Counter64)
			out := probes.CounterDelta(uint64(d.ifOut.Int64), cur.OutOctets, cur.Counter64)
			util := float64(max(in, out)) * 8 / secs / float64(cur.SpeedBps) * 100
			if util > rules.IfUtilPct {
				if !overSince.Valid {
					overSince = sql.NullString{String: app.FormatTime(now), Valid: true}
				}
				since, err := app.ParseTime(overSince.String, false)
				if err != nil {
					return err
				}
				if now.Sub(since) >= time.Duration(rules.IfUtilMinutes)*time.Minute {
					msg := fmt.Sprintf("interface %d at %.1f%% for %d minutes", rules.IfIndex, util, rules.IfUtilMinutes)
					if err := ev.open(ctx, "if_util", "warning", msg, util); err != nil {
						return err
					}
				}
			} else {
				overSince = sql.NullString{}
				if err := ev.resolve(ctx, "if_util"); err != nil {
					return err
				}
			}
		}
	}
	_, err := ev.tx.ExecContext(ctx, `UPDATE mon_devices SET if_in_octets = ?, if_out_octets = ?, if_polled_at = ?, if_over_since = ? WHERE id = ?`,
		int64(cur.InOctets), int64(cur.OutOctets), app.FormatTime(now), overSince, d.id)
	return err
}
