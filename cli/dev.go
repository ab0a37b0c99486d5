package cli

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	layeh "layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2869"

	"xr/app"
	"xr/app/aaa"
	"xr/app/subs"
)

// devCmd gathers what measures xr at scale (bench/tenants.sh): making
// thousands of tenants fast, and timing the first login and the first
// Access-Request of tenants nobody has used since the server started.
func devCmd(g *globals) *cobra.Command {
	cmd := group(&cobra.Command{Use: "dev", Short: "tools to measure xr at scale (bench/tenants.sh)", Hidden: true})
	cmd.AddCommand(devTenantsCmd(g), devColdCmd(g))
	return cmd
}

// Bench tenants: <prefix>NNNNN, owner "owner" with benchPassword; the
// first --nas of them have a NAS at benchNASIP(i) with --secret and a
// subscriber "bench" with benchPassword.
const (
	benchPassword = "Bench-pass-1"
	benchUser     = "bench"
)

func benchSlug(prefix string, i int) string { return fmt.Sprintf("%s%05d", prefix, i) }

// benchNASIP is tenant i's NAS address: 127.1.x.y, so a client on this box
// can send from it (the whole of 127/8 is loopback).
func benchNASIP(i int) string { return fmt.Sprintf("127.1.%d.%d", i/250, i%250+1) }

func devTenantsCmd(g *globals) *cobra.Command {
	var prefix, secret string
	var count, withNAS int
	cmd := &cobra.Command{
		Use:   "tenants",
		Short: "make --count tenants fast: the first with xr tenant create's code, the others as copies of it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if count < 1 || withNAS < 0 || withNAS > count || count > 99999 {
				return app.ErrValidation("out_of_range", "count")
			}
			g.mayCreate = true
			// The bench NASes live on loopback (127.1.x.y), which the
			// egress guard leaves to the operator: this is the operator's tool.
			a, err := g.open(app.Config{AllowPrivateEgress: true})
			if err != nil {
				return err
			}
			defer a.Close()
			ctx := context.Background()
			start := time.Now()
			first := benchSlug(prefix, 1)
			if _, _, err := a.CreateTenant(ctx, app.NewTenant{Slug: first, Name: strings.ToUpper(first), AdminUsername: "owner",
				AdminEmail: "owner@" + first + ".test", AdminPassword: benchPassword}); err != nil {
				return err
			}
			if withNAS > 0 {
				if err := seedBenchTenant(ctx, a, first, secret); err != nil {
					return err
				}
			}
			copies := make([]app.TenantCopy, 0, count-1)
			for i := 2; i <= count; i++ {
				slug := benchSlug(prefix, i)
				c := app.TenantCopy{Slug: slug, Name: strings.ToUpper(slug), AdminUsername: "owner", AdminEmail: "owner@" + slug + ".test"}
				ip := benchNASIP(i)
				c.Edit = func(ctx context.Context, tx *sql.Tx) error {
					if i > withNAS {
						_, err := tx.ExecContext(ctx, `DELETE FROM nas`)
						return err
					}
					_, err := tx.ExecContext(ctx, `UPDATE nas SET ip = ?, name = ?`, ip, "nas-"+slug)
					return err
				}
				copies = append(copies, c)
			}
			if err := a.CopyTenants(ctx, first, copies); err != nil {
				return err
			}
			took := time.Since(start)
			g.print(map[string]any{"tenants": count, "with_nas": withNAS, "seconds": took.Seconds()},
				fmt.Sprintf("made %d tenants (%d with a NAS) in %s", count, withNAS, took.Round(time.Millisecond)))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&prefix, "prefix", "bench", "slug prefix: tenants are PREFIX00001, PREFIX00002, ...")
	f.IntVar(&count, "count", 1000, "tenants to make")
	f.IntVar(&withNAS, "nas", 0, "the first N tenants get a NAS (127.1.x.y) and a subscriber 'bench'")
	f.StringVar(&secret, "secret", "bench-radius-secret-1", "the NASes' shared secret")
	return cmd
}

// seedBenchTenant gives the template tenant its NAS and a subscriber that
// can log in for years.
func seedBenchTenant(ctx context.Context, a *app.App, slug, secret string) error {
	t, release, err := a.Acquire(slug)
	if err != nil {
		return err
	}
	defer release()
	act, err := app.SystemActor(ctx, t)
	if err != nil {
		return err
	}
	if _, err := aaa.CreateNAS(ctx, act, aaa.NASInput{Name: app.Opt[string]{Set: true, V: "nas-" + slug}, IP: app.Opt[string]{Set: true, V: benchNASIP(1)},
		Secret: app.Opt[string]{Set: true, V: secret}}); err != nil {
		return err
	}
	exp := app.DateOrTime{Time: app.T(time.Now().UTC().AddDate(10, 0, 0))}
	_, err = subs.Create(ctx, act, subs.CreateInput{Username: benchUser, Password: benchPassword, Expiration: &exp})
	return err
}

func devColdCmd(g *globals) *cobra.Command {
	var prefix, httpAddr, domain, radiusAddr, secret string
	var count, withNAS, samples int
	cmd := &cobra.Command{
		Use:   "cold",
		Short: "time the first login and the first Access-Request of tenants nobody used since xr serve started",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if samples < 1 || samples > count {
				return app.ErrValidation("out_of_range", "samples")
			}
			// Distinct tenants, each used once: every sample is a cold one.
			order := rand.Perm(count)
			out := map[string]any{}
			var lines []string
			login, err := coldSamples(samples, func(k int) (time.Duration, error) {
				return coldLogin(httpAddr, benchSlug(prefix, order[k]+1)+"."+domain, benchClientIP(k))
			})
			if err != nil {
				return err
			}
			out["login"] = login
			lines = append(lines, "first login:          "+login.String())
			if withNAS > 0 {
				nasOrder := rand.Perm(withNAS)
				n := min(samples, withNAS)
				acc, err := coldSamples(n, func(k int) (time.Duration, error) {
					return coldAccessRequest(radiusAddr, benchNASIP(nasOrder[k]+1), secret)
				})
				if err != nil {
					return err
				}
				out["access_request"] = acc
				lines = append(lines, "first Access-Request: "+acc.String())
			}
			g.print(out, strings.Join(lines, "\n"))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&prefix, "prefix", "bench", "slug prefix of xr dev tenants")
	f.IntVar(&count, "count", 1000, "tenants xr dev tenants made")
	f.IntVar(&withNAS, "nas", 0, "how many of them have a NAS")
	f.IntVar(&samples, "samples", 100, "cold tenants to time, each once")
	f.StringVar(&httpAddr, "http", "127.0.0.1:8080", "xr serve's HTTP address")
	f.StringVar(&domain, "domain", "localhost", "xr serve's --domain")
	f.StringVar(&radiusAddr, "radius-auth", "127.0.0.1:1812", "xr serve's RADIUS authentication address")
	f.StringVar(&secret, "secret", "bench-radius-secret-1", "the NASes' shared secret")
	return cmd
}

// latencies summarises timed samples.
type latencies struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

func (l latencies) String() string {
	return fmt.Sprintf("n=%d p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms", l.N, l.P50, l.P90, l.P99, l.Max)
}

// coldSamples runs n timed calls one after the other (latency, not
// throughput) and summarises them; the first failure stops it.
func coldSamples(n int, call func(k int) (time.Duration, error)) (latencies, error) {
	ds := make([]float64, 0, n)
	for k := range n {
		d, err := call(k)
		if err != nil {
			return latencies{}, fmt.Errorf("sample %d: %w", k, err)
		}
		ds = append(ds, float64(d.Microseconds())/1000)
	}
	slices.Sort(ds)
	at := func(p float64) float64 { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
	return latencies{N: n, P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: ds[len(ds)-1]}, nil
}

// benchClientIP is the address the k-th login comes from: each sample
// its own client, as the login bucket counts per address.
func benchClientIP(k int) string { return fmt.Sprintf("127.2.%d.%d", k/250, k%250+1) }

func coldLogin(addr, host, from string) (time.Duration, error) {
	body, _ := json.Marshal(map[string]string{"email": "owner", "password": benchPassword})
	d := &net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(from), 0))}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest("POST", "http://"+addr+"/api/v1/auth/login", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := client.Do(req)
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("login on %s: HTTP %d", host, resp.StatusCode)
	}
	return took, nil
}

// coldAccessRequest sends a PAP Access-Request with a Message-Authenticator
// from the NAS address src and times the Access-Accept.
func coldAccessRequest(server, src, secret string) (time.Duration, error) {
	p := layeh.New(layeh.CodeAccessRequest, []byte(secret))
	if err := errors.Join(rfc2865.UserName_SetString(p, benchUser), rfc2865.UserPassword_SetString(p, benchPassword),
		rfc2869.MessageAuthenticator_Set(p, make([]byte, 16))); err != nil {
		return 0, err
	}
	b, err := p.Encode()
	if err != nil {
		return 0, err
	}
	h := hmac.New(md5.New, []byte(secret))
	h.Write(b)
	if err := rfc2869.MessageAuthenticator_Set(p, h.Sum(nil)); err != nil {
		return 0, err
	}
	c := layeh.Client{Dialer: net.Dialer{LocalAddr: net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(src), 0))}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	resp, err := c.Exchange(ctx, p, server)
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("from %s: %w", src, err)
	}
	if resp.Code != layeh.CodeAccessAccept {
		return 0, fmt.Errorf("from %s: %v (%s)", src, resp.Code, rfc2865.ReplyMessage_GetString(resp))
	}
	return d, nil
}
