// Package aaa is the data side of xr's RADIUS server: the NAS directory, an
// in-memory index of authorization records kept coherent with the tenant
// databases, accounting applied in group commits, quota thresholds, and the
// stale-session sweeper. radiusd (the wire side) adapts to it.
package aaa

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
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
	// standby is the standby's address for the setup scripts.
	standby atomic.Pointer[string]

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

	authLog *authLog     // batched writer of the auth log (authlog.go)
	journal *acctJournal // a standby's accounting journal (journal.go)
}

// New builds the service and loads the NAS directory.
func New(a *app.App) *Service {
	s := &Service{app: a, log: a.Log, tenants: map[string]*tenantIndex{}, PollEvery: 200 * time.Millisecond}
	empty := map[netip.Addr]*NAS{}
	s.nas.Store(&empty)
	s.idx.Store(&directoryIndexes{byID: map[nasKey]*NAS{}, radsec: map[[32]byte]*NAS{}})
	s.ReloadNAS(context.Background())
	a.OnReload(func() { s.ReloadNAS(context.Background()) })
	a.OnCommit(s.applyCommitted)
	a.SetUserDisconnector(s.DisconnectUser)
	a.SetValue(serviceKey{}, s)
	if !a.IsStandby() { // a standby's files are read-only: the primary keeps the auth log
		s.authLog = startAuthLog(s)
	} else {
		j, err := openJournal(a.Cfg.DataDir)
		if err != nil { // accounting then goes unacknowledged: the NAS retries the primary
			s.log.Error("standby: accounting journal", "err", err)
		}
		s.journal = j
	}
	return s
}

// applyCommitted brings a loaded tenant index up to date right after a
// commit of this process, so the next packet sees the write (an index not
// loaded yet will read everything when it loads). The committing writer
// holds the tenant, so an index found here is of its open files.
func (s *Service) applyCommitted(slug string) {
	s.mu.Lock()
	ti := s.tenants[slug]
	s.mu.Unlock()
	if ti == nil || !ti.isLoaded() {
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

// ReloadNAS rebuilds the directory from instance.db alone: the NAS index
// holds every field a packet needs (the secret sealed with the instance
// key, opened once here, not per packet), so no tenant file opens for it.
// Rows from before the index held them are filled from their tenant's
// file, once.
func (s *Service) ReloadNAS(ctx context.Context) {
	if err := s.fillNASIndex(ctx); err != nil {
		s.log.Error("nas directory: fill from tenant files", "err", err)
	}
	rows, err := s.app.Inst.R.QueryContext(ctx, `SELECT n.ip, n.nas_id, t.slug, t.id, n.name, n.secret_sealed, n.type, n.coa_port, n.require_message_authenticator,
		n.radsec_fingerprint FROM nas_index n JOIN tenants t ON t.id = n.tenant_id WHERE n.secret_sealed IS NOT NULL`)
	if err != nil {
		s.log.Error("nas directory", "err", err)
		return
	}
	defer rows.Close()
	next := map[netip.Addr]*NAS{}
	for rows.Next() {
		n := &NAS{}
		var ip string
		var sealed []byte
		if err := rows.Scan(&ip, &n.ID, &n.TenantSlug, &n.TenantID, &n.Name, &sealed, &n.Type, &n.CoAPort, &n.RequireMessageAuthenticator, &n.RadSecFingerprint); err != nil {
			s.log.Error("nas directory", "err", err) // the current directory stays
			return
		}
		addr, err := netip.ParseAddr(ip)
		if err != nil {
			continue
		}
		if n.Secret, err = s.app.Keys.Open(sealed); err != nil {
			s.log.Error("nas secret", "tenant", n.TenantSlug, "nas", n.ID, "err", err)
			continue
		}
		n.IP = addr.Unmap()
		next[n.IP] = n
	}
	if err := rows.Err(); err != nil {
		s.log.Error("nas directory", "err", err) // the current directory stays
		return
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

// fillNASIndex copies, for the index rows that have no secret yet (made
// before the index held whole rows), the NAS's fields from its tenant file.
func (s *Service) fillNASIndex(ctx context.Context) error {
	type ref struct {
		slug string
		id   int64
	}
	var refs []ref
	rows, err := s.app.Inst.R.QueryContext(ctx, `SELECT t.slug, n.nas_id FROM nas_index n JOIN tenants t ON t.id = n.tenant_id WHERE n.secret_sealed IS NULL`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var r ref
		if err := rows.Scan(&r.slug, &r.id); err != nil {
			rows.Close()
			return err
		}
		refs = append(refs, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	var errs []error
	for _, r := range refs {
		t, release, err := s.app.Acquire(r.slug)
		if err != nil {
			continue
		}
		err = t.Read(ctx, func(tx *sql.Tx) error {
			row, err := readNASRow(ctx, tx, r.id)
			if err != nil {
				return err
			}
			return s.app.Inst.Write(ctx, func(itx *sql.Tx) error { return row.index(ctx, itx, t.ID) })
		})
		release()
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			errs = append(errs, fmt.Errorf("tenant %s nas %d: %w", r.slug, r.id, err))
		}
	}
	return errors.Join(errs...)
}

// Close releases every tenant index.
func (s *Service) Close() {
	if s.authLog != nil {
		s.authLog.close() // flushes while the tenant files are still open
	}
	if s.journal != nil {
		if err := s.journal.db.Close(); err != nil {
			s.log.Error("standby: close the accounting journal", "err", err)
		}
	}
	s.mu.Lock()
	list := make([]*tenantIndex, 0, len(s.tenants))
	for _, ti := range s.tenants {
		list = append(list, ti)
	}
	s.mu.Unlock()
	for _, ti := range list {
		ti.Close()
	}
}

// indexKey names a tenant's RADIUS index among the caches of its open
// files (app.Tenant.Cache): it is loaded on the first packet or call that
// needs it and leaves when the files close.
type indexKey struct{}

// tenant acquires a tenant (opening its files if needed) and returns its
// loaded index; call release when done with it.
func (s *Service) tenant(ctx context.Context, slug string) (*tenantIndex, func(), error) {
	t, release, err := s.app.Acquire(slug)
	if err != nil {
		return nil, nil, err
	}
	ti := t.Cache(indexKey{}, func() any { return &tenantIndex{slug: slug, t: t, svc: s} }).(*tenantIndex)
	if err := ti.ensureLoaded(ctx, s); err != nil {
		release()
		return nil, nil, err
	}
	return ti, release, nil
}

// Run keeps the indexes of the open tenants coherent with writes of other
// processes (polling their change logs) until ctx ends. The session sweep
// is the aaa.sweep tenant task.
func (s *Service) Run(ctx context.Context) {
	poll := time.NewTicker(s.PollEvery)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
			for _, ti := range s.loaded() {
				s.refreshOpen(ctx, ti)
			}
		}
	}
}

// refreshOpen refreshes ti if its tenant is still open (never opening it).
func (s *Service) refreshOpen(ctx context.Context, ti *tenantIndex) {
	_, release, ok := s.app.AcquireOpen(ti.slug)
	if !ok {
		return
	}
	defer release()
	s.mu.Lock()
	cur := s.tenants[ti.slug]
	s.mu.Unlock()
	if cur != ti {
		return // closed and opened again meanwhile
	}
	if err := ti.refresh(ctx, s); err != nil {
		s.log.Warn("radius index refresh", "tenant", ti.slug, "err", err)
	}
}

func (s *Service) loaded() []*tenantIndex {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*tenantIndex, 0, len(s.tenants))
	for _, ti := range s.tenants {
		out = append(out, ti)
	}
	return out
}
