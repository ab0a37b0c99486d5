package aaa_test

import (
	"context"
	"net"
	"testing"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc3162"

	"xr/app/aaa"
)

// acctFramed is an Accounting-Request carrying Framed-IP-Address and/or
// Framed-IPv6-Prefix ("" leaves one out).
func (r *rig) acctFramed(status rfc2866.AcctStatusType, sid string, in, secs uint32, ip, prefix string) *radius.Packet {
	r.t.Helper()
	p := radius.New(radius.CodeAccountingRequest, []byte(secret))
	rfc2866.AcctStatusType_Set(p, status)
	rfc2865.UserName_SetString(p, "alice")
	rfc2866.AcctSessionID_SetString(p, sid)
	rfc2866.AcctInputOctets_Set(p, rfc2866.AcctInputOctets(in))
	rfc2866.AcctSessionTime_Set(p, rfc2866.AcctSessionTime(secs))
	if ip != "" {
		rfc2865.FramedIPAddress_Set(p, net.ParseIP(ip))
	}
	if prefix != "" {
		_, n, err := net.ParseCIDR(prefix)
		if err != nil {
			r.t.Fatal(err)
		}
		if err := rfc3162.FramedIPv6Prefix_Set(p, n); err != nil {
			r.t.Fatal(err)
		}
	}
	return r.send(p, r.acctAddr)
}

func (r *rig) framed(sid string) (ip, prefix string) {
	r.t.Helper()
	if err := r.ten.DB.R.QueryRow(`SELECT framed_ip, framed_ipv6_prefix FROM radius_sessions WHERE acct_session_id = ?`, sid).Scan(&ip, &prefix); err != nil {
		r.t.Fatal(err)
	}
	return ip, prefix
}

// TestAccountingFramedAddressFromInterim: a NAS that learns the addresses
// after the Start reports them in an Interim-Update; they are recorded
// whether the interim carries new counters or none, a later interim with
// another address replaces it, and one without keeps what is stored.
func TestAccountingFramedAddressFromInterim(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.user("alice", "pw", r.planID, nil)
	if resp := r.acctFramed(rfc2866.AcctStatusType_Value_Start, "f1", 0, 0, "", ""); resp.Code != radius.CodeAccountingResponse {
		t.Fatalf("start: %v", resp.Code)
	}
	if ip, pfx := r.framed("f1"); ip != "" || pfx != "" {
		t.Fatalf("after start: %q %q", ip, pfx)
	}
	// Same counters as the Start: only the addresses are news.
	r.acctFramed(rfc2866.AcctStatusType_Value_InterimUpdate, "f1", 0, 0, "10.1.2.3", "2001:db8:1200::/56")
	if ip, pfx := r.framed("f1"); ip != "10.1.2.3" || pfx != "2001:db8:1200::/56" {
		t.Fatalf("after address-only interim: %q %q", ip, pfx)
	}
	// Growth and a new IPv4 address; the prefix is kept.
	r.acctFramed(rfc2866.AcctStatusType_Value_InterimUpdate, "f1", 500, 60, "10.1.2.4", "")
	if ip, pfx := r.framed("f1"); ip != "10.1.2.4" || pfx != "2001:db8:1200::/56" {
		t.Fatalf("after growth interim: %q %q", ip, pfx)
	}
	// An interim without addresses keeps them; so does the Stop.
	r.acctFramed(rfc2866.AcctStatusType_Value_InterimUpdate, "f1", 900, 120, "", "")
	r.acctFramed(rfc2866.AcctStatusType_Value_Stop, "f1", 1000, 130, "", "")
	var in int64
	if err := r.ten.DB.R.QueryRow(`SELECT input_octets FROM radius_sessions WHERE acct_session_id = 'f1' AND stop_time IS NOT NULL`).Scan(&in); err != nil || in != 1000 {
		t.Fatalf("stop: %d %v", in, err)
	}
	if ip, pfx := r.framed("f1"); ip != "10.1.2.4" || pfx != "2001:db8:1200::/56" {
		t.Fatalf("after stop: %q %q", ip, pfx)
	}
	// The session API shows both.
	var id int64
	if err := r.ten.DB.R.QueryRow(`SELECT id FROM radius_sessions WHERE acct_session_id = 'f1'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	s, err := aaa.GetSession(context.Background(), r.owner(), id)
	if err != nil || s.FramedIP != "10.1.2.4" || s.FramedIPv6Prefix != "2001:db8:1200::/56" {
		t.Fatalf("session: %+v %v", s, err)
	}
}
