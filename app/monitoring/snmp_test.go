package monitoring_test

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"xr/app/egress"
	"xr/app/monitoring"
	"xr/app/probes"
	"xr/internal/xrtest"
)

// startSNMPD runs Debian's snmpd on a free loopback port with a v2c
// community "xrtest" and a v3 user "xruser" (SHA/AES). Without snmpd the
// test skips loudly, except under CI=true (.ci/run installs it).
func startSNMPD(t *testing.T) int {
	t.Helper()
	bin, err := exec.LookPath("snmpd")
	if err != nil {
		for _, p := range []string{"/usr/sbin/snmpd", "/sbin/snmpd"} {
			if _, serr := os.Stat(p); serr == nil {
				bin, err = p, nil
			}
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("snmpd is missing (apt-get install snmpd): CI must run the SNMP tests")
		}
		t.Skip("SKIPPED LOUDLY: snmpd (Debian package snmpd) is not installed; the SNMP probes are untested here")
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte("rocommunity xrtest 127.0.0.1\ncreateUser xruser SHA authpass123 AES privpass123\nrouser xruser priv\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-f", "-C", "-c", conf, "-Lf", os.DevNull, "-M", dir, "udp:127.0.0.1:"+strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+dir)
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start snmpd: %v", err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	xrtest.Eventually(t, "snmpd answers", func() bool {
		_, err := probes.SysUpTime(context.Background(), lab, probes.SNMPCred{Version: "v2c", Community: "xrtest", Port: port}, 500*time.Millisecond)
		return err == nil
	})
	return port
}

// lab is the agent on loopback, probed as on an instance with private
// egress.
var lab = probes.Target{Addr: netip.MustParseAddr("127.0.0.1"), Egress: egress.Guard{Policy: egress.Device, AllowPrivate: true}}

func TestSNMPAgainstARealAgent(t *testing.T) {
	t.Parallel()
	port := startSNMPD(t)
	e := newEnv(t)
	lo := lab
	// v3 authPriv reads sysUpTime too.
	if up, err := probes.SysUpTime(ctx, lo, probes.SNMPCred{Version: "v3", User: "xruser", AuthProto: "SHA", AuthPass: "authpass123",
		PrivProto: "AES", PrivPass: "privpass123", Port: port}, 2*time.Second); err != nil || up == 0 {
		t.Fatalf("v3 sysUpTime: %d %v", up, err)
	}
	// A wrong community gets no answer.
	if _, err := probes.SysUpTime(ctx, lo, probes.SNMPCred{Version: "v2c", Community: "nope", Port: port}, 300*time.Millisecond); err == nil {
		t.Fatal("a wrong community was answered")
	}
	d, err := monitoring.CreateDevice(ctx, e.sys, monitoring.DeviceInput{Name: "agent", Address: "127.0.0.1", ProbePort: 1,
		SNMP: &probes.SNMPCred{Version: "v2c", Community: "xrtest", Port: port}})
	if err != nil {
		t.Fatal(err)
	}
	if d.SNMPVersion != "v2c" {
		t.Fatalf("snmp version %q", d.SNMPVersion)
	}
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM mon_devices WHERE id = ? AND instr(snmp_sealed, 'xrtest') = 0`, d.ID); n != 1 {
		t.Fatal("the community is stored in clear")
	}
	ifs, err := monitoring.SNMPInterfaces(ctx, e.sys, "device", d.ID)
	if err != nil {
		t.Fatal(err)
	}
	var loIf *probes.Interface
	for i := range ifs {
		if ifs[i].Name == "lo" {
			loIf = &ifs[i]
		}
	}
	if loIf == nil || !loIf.OperUp || !loIf.Counter64 {
		t.Fatalf("interfaces: %+v", ifs)
	}
	monitoring.LiveTrafficGap = 200 * time.Millisecond
	lt, err := monitoring.GetLiveTraffic(ctx, e.sys, "device", d.ID, loIf.Index)
	if err != nil {
		t.Fatal(err)
	}
	if lt.Source != "snmp" || lt.Name != "lo" || lt.InBps < 0 || lt.Seconds <= 0 {
		t.Fatalf("live traffic: %+v", lt)
	}
	_, err = monitoring.GetLiveTraffic(ctx, e.sys, "device", d.ID, 9999)
	xrtest.WantError(t, err, 400, "ERR_VALIDATION", "interface_not_found")
	// Watch lo: any traffic is over a tiny threshold, for a minute.
	if _, err := monitoring.SetNotify(ctx, e.sys, "device", d.ID, monitoring.NotifySettings{Rules: monitoring.Rules{IfIndex: loIf.Index, IfUtilPct: 1e-9, IfUtilMinutes: 1}}); err != nil {
		t.Fatal(err)
	}
	// The poller reads sysUpTime with the echo.
	e.poll(t)
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM mon_devices WHERE id = ? AND sys_uptime > 0 AND next_snmp IS NOT NULL`, d.ID); n != 1 {
		t.Fatal("the poller stored no sysUpTime")
	}
	// snmpd caches ifTable for a few seconds: wait until the counter the
	// poller stored has moved, so the next poll sees traffic.
	moved := func() {
		t.Helper()
		stored := xrtest.Scalar(t, e.t, `SELECT if_in_octets FROM mon_devices WHERE id = ?`, d.ID)
		xrtest.Eventually(t, "lo counters move", func() bool {
			it, err := probes.Counters(ctx, lo, probes.SNMPCred{Version: "v2c", Community: "xrtest", Port: port}, loIf.Index, time.Second)
			return err == nil && int64(it.InOctets) != stored
		})
	}
	moved()
	// sysUpTime going back is a reboot alert.
	xrtest.Exec(t, e.t, `UPDATE mon_devices SET sys_uptime = 999999999, next_snmp = NULL WHERE id = ?`, d.ID)
	e.advance(time.Minute)
	e.poll(t)
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM mon_alerts WHERE device_id = ? AND rule = 'reboot'`, d.ID); n != 1 {
		t.Fatal("no reboot alert")
	}
	// Over since the second reading; a minute later the alert opens.
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM mon_devices WHERE id = ? AND if_over_since IS NOT NULL`, d.ID); n != 1 {
		t.Fatal("interface utilisation not seen over the threshold")
	}
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM mon_alerts WHERE device_id = ? AND rule = 'if_util'`, d.ID); n != 0 {
		t.Fatal("if_util alert before its minutes")
	}
	moved()
	e.advance(time.Minute)
	e.poll(t)
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM mon_alerts WHERE device_id = ? AND rule = 'if_util' AND state = 'open' AND severity = 'warning'`, d.ID); n != 1 {
		t.Fatal("no if_util alert after a minute over")
	}
}
