// Package aaa is the data side of xr's RADIUS server: the NAS directory, an
// in-memory index of authorization records kept coherent with the tenant
// databases, accounting applied in group commits, quota thresholds, and the
// stale-session sweeper. radiusd (the wire side) adapts to it.
package aaa

import (
	"context"
	"encoding/hex"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"xr/app"
)

// NAS is a RADIUS client as the directory knows it.
type NAS struct {
	TenantSlug                  string
	TenantID                    int64
	ID                          int64
	Name                        string
	IP                          netip.Addr
	Secret                      []byte
	Type                        string
	CoAPort                     int
	RequireMessageAuthenticator bool
	// RadSecFingerprint is the SHA-256 of its current RadSec client
	// certificate, hex; "" when it has none.
	RadSecFingerprint string
	// Wire caches the wire layer's view of this NAS (set once by its
	// adapter), WireRadSec its view of it over RadSec.
	Wire       atomic.Value
	WireRadSec atomic.Value
}

// nasKey names a NAS instance-wide.
type nasKey struct {
	slug string
	id   int64
}

// directoryIndexes are the directory's other ways in: by tenant and id,
// and by RadSec certificate.
type directoryIndexes struct {
	byID   map[nasKey]*NAS
	radsec map[[32]byte]*NAS
}

// Service is the RADIUS backend of one instance.
type Service struct {
	app *app.App
	log *slog.Logger

	nas atomic.Pointer[map[netip.Addr]*NAS]
	idx atomic.Pointer[directoryIndexes]
	// wire is what the serving wire layer reported (ports, per-NAS
	// health); nil until a radiusd server serves this service.
	wire atomic.Pointer[WireStatus]

	mu      sync.Mutex
	tenants map[string]*tenantIndex

	// unconfirmed counts disconnect_unconfirmed flags per tenant (truth.go).
	unconfirmed sync.Map

	// Disconnect, when set, asks the NAS to end a session (RFC 5176);
	// the wiring in cli sets it to radiusd's CoA client.
	Disconnect func(ctx context.Context, nas *NAS, username, acctSessionID string, framedIP netip.Addr) (outcome string, err error)
	// ChangeRate, when set, sends a CoA with a new rate (FUP).
	ChangeRate func(ctx context.Context, nas *NAS, username, acctSessionID string, downKbps, upKbps int64) (outcome string, err error)
	// Vouchers, when set, authorizes usernames that are not subscribers
	// (prepaid cards); the cards area sets it.
	Vouchers func(ctx context.Context, t *app.Tenant, username string) (*Answer, bool)
	// IsVoucher, when set, tells accounting that a username that is no
	// subscriber is a voucher login (its session kind); it reads in q, the
	// accounting transaction.
	IsVoucher func(ctx context.Context, q app.Querier, username string) bool
	// IsGuest, when set, tells accounting that such a username is a guest
	// access of a subscriber (session kind guest; app/parental sets it).
	IsGuest func(ctx context.Context, q app.Querier, username string) bool
	// ReplyAttributes, when set, lists the attributes the wire layer puts
	// in its answer to a decision for a NAS (reason "" = Access-Accept)
	// and a method (AuthMethods); the explainer shows them (explain.go).
	ReplyAttributes func(nas *NAS, a *Answer, reason, method string) []Attribute

	// PollEvery is how often the index checks the change log.
	PollEvery time.Duration

	authLog *authLog // batched writer of the auth log (authlog.go)
}

// New builds the service and loads the NAS directory.
func New(a *app.App) *Service {
	s := &Service{app: a, log: a.Log, tenants: map[string]*tenantIndex{}, PollEvery: 200 * time.Millisecond}
	empty := map[netip.Addr]*NAS{}
	s.nas.Store(&empty)
	s.idx.Store(&directoryIndexes{byID: map[nasKey]*NAS{}, radsec: map[[32]byte]*NAS{}})
	s.ReloadNAS(context.Background())
	a.OnReload(func() { s.ReloadNAS(context.Background()); s.dropGone() })
	a.OnCommit(s.applyCommitted)
	a.SetUserDisconnector(s.DisconnectUser)
	a.SetValue(serviceKey{}, s)
	s.authLog = startAuthLog(s)
	return s
}

// applyCommitted brings a loaded tenant index up to date right after a
// commit of this process, so the next packet sees the write (an index not
// loaded yet will read everything when it loads).
func (s *Service) applyCommitted(slug string) {
	s.mu.Lock()
	ti := s.tenants[slug]
	s.mu.Unlock()
	if ti == nil {
		return
	}
	<-ti.ready
	if ti.err != nil {
		return
	}
	if err := ti.refresh(context.Background(), s); err != nil {
		s.log.Warn("radius index refresh after commit", "tenant", slug, "err", err)
	}
}

// LookupNAS resolves a packet source to its NAS (lock-free read).
func (s *Service) LookupNAS(ip netip.Addr) (*NAS, bool) {
	n, ok := (*s.nas.Load())[ip.Unmap()]
	return n, ok
}

// ReloadNAS rebuilds the directory from the instance index and the tenant
// files (secrets are decrypted once here, not per packet).
func (s *Service) ReloadNAS(ctx context.Context) {
	rows, err := s.app.Inst.R.QueryContext(ctx, `SELECT n.ip, n.nas_id, t.slug, t.id FROM nas_index n JOIN tenants t ON t.id = n.tenant_id`)
	if err != nil {
		s.log.Error("nas directory", "err", err)
		return
	}
	type ref struct {
		ip      string
		id, tid int64
		slug    string
	}
	var refs []ref
	for rows.Next() {
		var r ref
		if err := rows.Scan(&r.ip, &r.id, &r.slug, &r.tid); err != nil {
			rows.Close()
			s.log.Error("nas directory", "err", err) // the current directory stays
			return
		}
		refs = append(refs, r)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		s.log.Error("nas directory", "err", err) // the current directory stays
		return
	}
	rows.Close()
	next := map[netip.Addr]*NAS{}
	bySlug := map[string][]ref{}
	for _, r := range refs {
		bySlug[r.slug] = append(bySlug[r.slug], r)
	}
	for slug, list := range bySlug {
		t, release, err := s.app.Acquire(slug)
		if err != nil {
			continue
		}
		for _, r := range list {
			var n NAS
			var ip string
			var sealed []byte
			err := t.DB.R.QueryRowContext(ctx, `SELECT id, name, ip, secret_sealed, type, coa_port, require_message_authenticator, radsec_fingerprint FROM nas WHERE id = ?`, r.id).
				Scan(&n.ID, &n.Name, &ip, &sealed, &n.Type, &n.CoAPort, &n.RequireMessageAuthenticator, &n.RadSecFingerprint)
			if err != nil {
				continue
			}
			if n.Secret, err = s.app.Keys.Open(sealed); err != nil {
				s.log.Error("nas secret", "tenant", slug, "nas", r.id, "err", err)
				continue
			}
			addr, err := netip.ParseAddr(ip)
			if err != nil {
				continue
			}
			n.IP, n.TenantSlug, n.TenantID = addr.Unmap(), slug, r.tid
			next[n.IP] = &n
		}
		release()
	}
	idx, err := s.loadIndexes(ctx, next)
	if err != nil {
		s.log.Error("nas directory: radsec certificates", "err", err) // the current indexes stay
		s.nas.Store(&next)
		return
	}
	s.nas.Store(&next)
	s.idx.Store(idx)
}

// loadIndexes indexes the directory by id and binds the current RadSec
// certificates: one is bound when the NAS row names its fingerprint too.
func (s *Service) loadIndexes(ctx context.Context, dir map[netip.Addr]*NAS) (*directoryIndexes, error) {
	idx := &directoryIndexes{byID: make(map[nasKey]*NAS, len(dir)), radsec: map[[32]byte]*NAS{}}
	byTenant := map[[2]int64]*NAS{}
	for _, n := range dir {
		idx.byID[nasKey{n.TenantSlug, n.ID}] = n
		byTenant[[2]int64{n.TenantID, n.ID}] = n
	}
	rows, err := s.app.Inst.R.QueryContext(ctx, `SELECT fingerprint, tenant_id, nas_id FROM radsec_certs WHERE revoked_at IS NULL`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var fp string
		var tid, nid int64
		if err := rows.Scan(&fp, &tid, &nid); err != nil {
			return nil, err
		}
		n := byTenant[[2]int64{tid, nid}]
		var key [32]byte
		if b, err := hex.DecodeString(fp); err == nil && len(b) == 32 && n != nil && n.RadSecFingerprint == fp {
			copy(key[:], b)
			idx.radsec[key] = n
		}
	}
	return idx, rows.Err()
}

// LookupRadSec resolves a RadSec client certificate (SHA-256 of its DER)
// to the NAS it is bound to (lock-free read).
func (s *Service) LookupRadSec(fingerprint [32]byte) (*NAS, bool) {
	n, ok := s.idx.Load().radsec[fingerprint]
	return n, ok
}

// NASByID finds a NAS of a tenant in the directory (lock-free read).
func (s *Service) NASByID(slug string, id int64) (*NAS, bool) {
	n, ok := s.idx.Load().byID[nasKey{slug, id}]
	return n, ok
}

// nasByID finds a NAS of a tenant in the directory, or nil.
func (s *Service) nasByID(slug string, id int64) *NAS {
	n, _ := s.NASByID(slug, id)
	return n
}

func (s *Service) dropGone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for slug, ti := range s.tenants {
		if _, ok := s.app.TenantBySlug(slug); !ok {
			ti.close()
			delete(s.tenants, slug)
		}
	}
}

// Close releases every tenant index.
func (s *Service) Close() {
	s.authLog.close() // flushes while the tenant files are still open
	s.mu.Lock()
	defer s.mu.Unlock()
	for slug, ti := range s.tenants {
		ti.close()
		delete(s.tenants, slug)
	}
}

// tenant returns the loaded index of a tenant, loading it on first use.
func (s *Service) tenant(ctx context.Context, slug string) (*tenantIndex, error) {
	s.mu.Lock()
	ti := s.tenants[slug]
	if ti == nil {
		ti = &tenantIndex{slug: slug, ready: make(chan struct{})}
		s.tenants[slug] = ti
		s.mu.Unlock()
		ti.err = ti.load(ctx, s)
		close(ti.ready)
		if ti.err != nil {
			s.mu.Lock()
			delete(s.tenants, slug)
			s.mu.Unlock()
		}
		return ti, ti.err
	}
	s.mu.Unlock()
	<-ti.ready
	return ti, ti.err
}

// Run keeps the indexes coherent (polling the change logs) and sweeps the
// sessions (Sweep: stale, zombie, over-limit, unconfirmed disconnects)
// until ctx ends. The sweep has its own goroutine: the Disconnect-Requests
// it may send never hold up the polls.
func (s *Service) Run(ctx context.Context) {
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		s.sweepLoop(ctx)
	}()
	defer func() { <-swept }()
	poll := time.NewTicker(s.PollEvery)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
			for _, ti := range s.loaded() {
				if err := ti.refresh(ctx, s); err != nil {
					s.log.Warn("radius index refresh", "tenant", ti.slug, "err", err)
				}
			}
		}
	}
}

func (s *Service) sweepLoop(ctx context.Context) {
	sweep := time.NewTicker(30 * time.Second)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sweep.C:
			for _, ti := range s.loaded() {
				if _, err := s.Sweep(ctx, ti.slug); err != nil && ctx.Err() == nil {
					s.log.Warn("session sweep", "tenant", ti.slug, "err", err)
				}
			}
		}
	}
}

func (s *Service) loaded() []*tenantIndex {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*tenantIndex, 0, len(s.tenants))
	for _, ti := range s.tenants {
		select {
		case <-ti.ready:
			if ti.err == nil {
				out = append(out, ti)
			}
		default:
		}
	}
	return out
}
