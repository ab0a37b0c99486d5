package probes

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gosnmp/gosnmp"
)

// SNMPCred is how xr authenticates to an agent: v2c with a community, or
// v3 with a user (authNoPriv or authPriv).
type SNMPCred struct {
	Version   string `json:"version"` // "v2c" or "v3"
	Community string `json:"community,omitempty"`
	User      string `json:"user,omitempty"`
	AuthProto string `json:"auth_protocol,omitempty"` // MD5, SHA, SHA256
	AuthPass  string `json:"auth_password,omitempty"`
	PrivProto string `json:"priv_protocol,omitempty"` // DES, AES
	PrivPass  string `json:"priv_password,omitempty"`
	Port      int    `json:"port,omitempty"` // 161 when zero
}

// OIDs read by the probes.
const (
	OIDSysUpTime   = "1.3.6.1.2.1.1.3.0"
	oidIfDescr     = "1.3.6.1.2.1.2.2.1.2"
	oidIfSpeed     = "1.3.6.1.2.1.2.2.1.5"
	oidIfOper      = "1.3.6.1.2.1.2.2.1.8"
	oidIfInOctets  = "1.3.6.1.2.1.2.2.1.10"
	oidIfOutOctets = "1.3.6.1.2.1.2.2.1.16"
	oidIfName      = "1.3.6.1.2.1.31.1.1.1.1"
	oidIfHCIn      = "1.3.6.1.2.1.31.1.1.1.6"
	oidIfHCOut     = "1.3.6.1.2.1.31.1.1.1.10"
	oidIfHighSpeed = "1.3.6.1.2.1.31.1.1.1.15"
)

func client(ctx context.Context, t Target, c SNMPCred, timeout time.Duration) (*gosnmp.GoSNMP, error) {
	port := c.Port
	if port == 0 {
		port = 161
	}
	g := &gosnmp.GoSNMP{Target: t.Addr.String(), Port: uint16(port), Timeout: timeout, Retries: 1, Context: ctx, MaxOids: gosnmp.MaxOids,
		Control: t.Egress.Control}
	switch c.Version {
	case "v3":
		g.Version = gosnmp.Version3
		g.SecurityModel = gosnmp.UserSecurityModel
		usm := &gosnmp.UsmSecurityParameters{UserName: c.User}
		g.MsgFlags = gosnmp.NoAuthNoPriv
		if c.AuthPass != "" {
			g.MsgFlags = gosnmp.AuthNoPriv
			usm.AuthenticationPassphrase = c.AuthPass
			switch strings.ToUpper(c.AuthProto) {
			case "MD5":
				usm.AuthenticationProtocol = gosnmp.MD5
			case "SHA256":
				usm.AuthenticationProtocol = gosnmp.SHA256
			default:
				usm.AuthenticationProtocol = gosnmp.SHA
			}
			if c.PrivPass != "" {
				g.MsgFlags = gosnmp.AuthPriv
				usm.PrivacyPassphrase = c.PrivPass
				if strings.ToUpper(c.PrivProto) == "DES" {
					usm.PrivacyProtocol = gosnmp.DES
				} else {
					usm.PrivacyProtocol = gosnmp.AES
				}
			}
		}
		g.SecurityParameters = usm
	default:
		g.Version = gosnmp.Version2c
		g.Community = c.Community
	}
	if err := g.Connect(); err != nil {
		return nil, err
	}
	return g, nil
}

// SysUpTime reads sysUpTime.0 (hundredths of a second).
func SysUpTime(ctx context.Context, t Target, c SNMPCred, timeout time.Duration) (uint64, error) {
	g, err := client(ctx, t, c, timeout)
	if err != nil {
		return 0, err
	}
	defer func() { _ = g.Conn.Close() }() // UDP: nothing to flush
	p, err := g.Get([]string{OIDSysUpTime})
	if err != nil {
		return 0, err
	}
	if len(p.Variables) != 1 || p.Variables[0].Type == gosnmp.NoSuchObject || p.Variables[0].Type == gosnmp.NoSuchInstance {
		return 0, fmt.Errorf("snmp: no sysUpTime")
	}
	return gosnmp.ToBigInt(p.Variables[0].Value).Uint64(), nil
}

// Interface is one row of ifTable/ifXTable.
type Interface struct {
	Index     int    `json:"index"`
	Name      string `json:"name"`
	Descr     string `json:"descr"`
	SpeedBps  uint64 `json:"speed_bps"`
	OperUp    bool   `json:"oper_up"`
	InOctets  uint64 `json:"in_octets"`
	OutOctets uint64 `json:"out_octets"`
	// Counter64 is true when the octets come from ifXTable's 64-bit
	// counters (ifHCInOctets), false for the 32-bit ifTable ones.
	Counter64 bool `json:"counter64"`
}

// Interfaces walks ifTable and ifXTable.
func Interfaces(ctx context.Context, t Target, c SNMPCred, timeout time.Duration) ([]Interface, error) {
	g, err := client(ctx, t, c, timeout)
	if err != nil {
		return nil, err
	}
	defer func() { _ = g.Conn.Close() }() // UDP: nothing to flush
	byIdx := map[int]*Interface{}
	get := func(i int) *Interface {
		if byIdx[i] == nil {
			byIdx[i] = &Interface{Index: i}
		}
		return byIdx[i]
	}
	walk := func(oid string, fn func(it *Interface, v gosnmp.SnmpPDU)) error {
		pdus, err := g.BulkWalkAll(oid)
		if err != nil && c.Version != "v3" {
			pdus, err = g.WalkAll(oid)
		}
		if err != nil {
			return err
		}
		for _, v := range pdus {
			if v.Type == gosnmp.NoSuchObject || v.Type == gosnmp.NoSuchInstance || v.Type == gosnmp.EndOfMibView {
				continue
			}
			i, err := strconv.Atoi(v.Name[strings.LastIndex(v.Name, ".")+1:])
			if err != nil {
				continue
			}
			fn(get(i), v)
		}
		return nil
	}
	str := func(v gosnmp.SnmpPDU) string {
		if b, ok := v.Value.([]byte); ok {
			return string(b)
		}
		return fmt.Sprint(v.Value)
	}
	num := func(v gosnmp.SnmpPDU) uint64 { return gosnmp.ToBigInt(v.Value).Uint64() }
	steps := []struct {
		oid string
		fn  func(it *Interface, v gosnmp.SnmpPDU)
	}{
		{oidIfDescr, func(it *Interface, v gosnmp.SnmpPDU) { it.Descr = str(v) }},
		{oidIfSpeed, func(it *Interface, v gosnmp.SnmpPDU) { it.SpeedBps = num(v) }},
		{oidIfOper, func(it *Interface, v gosnmp.SnmpPDU) { it.OperUp = num(v) == 1 }},
		{oidIfInOctets, func(it *Interface, v gosnmp.SnmpPDU) {
			if !it.Counter64 {
				it.InOctets = num(v)
			}
		}},
		{oidIfOutOctets, func(it *Interface, v gosnmp.SnmpPDU) {
			if !it.Counter64 {
				it.OutOctets = num(v)
			}
		}},
	}
	for _, s := range steps {
		if err := walk(s.oid, s.fn); err != nil {
			return nil, err
		}
	}
	// ifXTable is optional (an old agent has none): errors only skip it.
	_ = walk(oidIfName, func(it *Interface, v gosnmp.SnmpPDU) { it.Name = str(v) })
	_ = walk(oidIfHighSpeed, func(it *Interface, v gosnmp.SnmpPDU) {
		if mbps := num(v); mbps > 0 {
			it.SpeedBps = mbps * 1_000_000
		}
	})
	_ = walk(oidIfHCIn, func(it *Interface, v gosnmp.SnmpPDU) { it.InOctets, it.Counter64 = num(v), true })
	_ = walk(oidIfHCOut, func(it *Interface, v gosnmp.SnmpPDU) { it.OutOctets = num(v) })
	out := make([]Interface, 0, len(byIdx))
	for _, it := range byIdx {
		if it.Name == "" {
			it.Name = it.Descr
		}
		out = append(out, *it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

// CounterDelta is the increase of a counter from prev to cur, handling one
// wrap of a 32- or 64-bit counter.
func CounterDelta(prev, cur uint64, counter64 bool) uint64 {
	if cur >= prev {
		return cur - prev
	}
	if counter64 {
		return cur - prev // uint64 arithmetic wraps modulo 2^64
	}
	return cur + (1 << 32) - prev
}

// Counters reads one interface's octet counters and speed with a single
// get: the 64-bit ifXTable counters where the agent has them, else the
// 32-bit ifTable ones (Counter64 says which).
func Counters(ctx context.Context, t Target, c SNMPCred, ifIndex int, timeout time.Duration) (Interface, error) {
	g, err := client(ctx, t, c, timeout)
	if err != nil {
		return Interface{}, err
	}
	defer func() { _ = g.Conn.Close() }() // UDP: nothing to flush
	n := "." + strconv.Itoa(ifIndex)
	it := Interface{Index: ifIndex}
	p, err := g.Get([]string{oidIfHCIn + n, oidIfHCOut + n, oidIfHighSpeed + n, oidIfInOctets + n, oidIfOutOctets + n, oidIfSpeed + n})
	if err != nil {
		return it, err
	}
	vals := make([]*gosnmp.SnmpPDU, len(p.Variables))
	for i := range p.Variables {
		v := p.Variables[i]
		if v.Type != gosnmp.NoSuchObject && v.Type != gosnmp.NoSuchInstance && v.Type != gosnmp.Null {
			vals[i] = &v
		}
	}
	if len(vals) != 6 || vals[3] == nil {
		return it, fmt.Errorf("snmp: no interface %d", ifIndex)
	}
	num := func(v *gosnmp.SnmpPDU) uint64 { return gosnmp.ToBigInt(v.Value).Uint64() }
	if vals[0] != nil && vals[1] != nil {
		it.InOctets, it.OutOctets, it.Counter64 = num(vals[0]), num(vals[1]), true
	} else {
		it.InOctets, it.OutOctets = num(vals[3]), num(vals[4])
	}
	if vals[2] != nil && num(vals[2]) > 0 {
		it.SpeedBps = num(vals[2]) * 1_000_000
	} else if vals[5] != nil {
		it.SpeedBps = num(vals[5])
	}
	return it, nil
}
