package main

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"errors"
	"net"
	"net/netip"
	"sort"
	"sync"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2869"
)

// nas sends Access-Requests as a NAS with two RADIUS servers does
// (RouterOS, Cisco): each request to the first server, on no answer
// within timeout to the next, the list tried rounds times. A server that
// refuses at once (ICMP port unreachable: the process is gone but the box
// is up) is waited out as a dead box would be, since a NAS does not
// count on that message.
type nas struct {
	servers []string
	timeout time.Duration
	rounds  int
	from    netip.Addr
}

// nasResult is what a run of the NAS saw.
type nasResult struct {
	Sent       int           `json:"sent"`
	ByServer   []int         `json:"answered_by_server"` // in the order of the servers
	Lost       int           `json:"lost"`               // no answer after every round
	LaterRound int           `json:"later_round"`        // answered after the first round: lost by a NAS that tries its list once
	MaxWait    time.Duration `json:"max_wait_ns"`        // the longest a request waited for its answer
	LongestGap time.Duration `json:"longest_gap_ns"`     // the longest span without any answer
}

// run sends rate requests a second until stop closes, then waits for the
// ones in flight.
func (n *nas) run(rate float64, stop <-chan struct{}) nasResult {
	res := nasResult{ByServer: make([]int, len(n.servers))}
	var mu sync.Mutex
	var answers []time.Time
	var wg sync.WaitGroup
	start := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
loop:
	for {
		select {
		case <-stop:
			break loop
		case <-tick.C:
		}
		res.Sent++
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent := time.Now()
			server, round := n.ask()
			mu.Lock()
			defer mu.Unlock()
			if server < 0 {
				res.Lost++
				return
			}
			res.ByServer[server]++
			if round > 0 {
				res.LaterRound++
			}
			res.MaxWait = max(res.MaxWait, time.Since(sent))
			answers = append(answers, time.Now())
		}()
	}
	wg.Wait()
	sort.Slice(answers, func(i, j int) bool { return answers[i].Before(answers[j]) })
	prev := start
	for _, a := range answers {
		res.LongestGap = max(res.LongestGap, a.Sub(prev))
		prev = a
	}
	return res
}

// ask sends one Access-Request through the server list and returns the
// index of the server that answered and in which round (from 0), -1 if
// none did.
func (n *nas) ask() (server, round int) {
	for r := range n.rounds {
		for i, s := range n.servers {
			if n.attempt(s) {
				return i, r
			}
		}
	}
	return -1, 0
}

// attempt is one try on one server: an answer within the timeout, once.
func (n *nas) attempt(server string) bool {
	p, err := n.request()
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.timeout)
	defer cancel()
	c := radius.Client{Dialer: net.Dialer{LocalAddr: net.UDPAddrFromAddrPort(netip.AddrPortFrom(n.from, 0))}}
	if _, err := c.Exchange(ctx, p, server); err != nil {
		<-ctx.Done()
		return false
	}
	return true
}

// request is the bench subscriber's PAP Access-Request, signed with a
// Message-Authenticator (xr requires it of a NAS by default).
func (n *nas) request() (*radius.Packet, error) {
	p := radius.New(radius.CodeAccessRequest, []byte(nasSecret))
	if err := errors.Join(rfc2865.UserName_SetString(p, "bench"), rfc2865.UserPassword_SetString(p, benchPassword),
		rfc2869.MessageAuthenticator_Set(p, make([]byte, 16))); err != nil {
		return nil, err
	}
	b, err := p.Encode()
	if err != nil {
		return nil, err
	}
	h := hmac.New(md5.New, []byte(nasSecret))
	h.Write(b)
	return p, rfc2869.MessageAuthenticator_Set(p, h.Sum(nil))
}
