package selfservice

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"xr/app"
	"xr/app/portal"
)

// The quota buckets of a period, in their default order of consumption.
// plan: the plan's data quota; addon: the data add-ons bought since the
// period started; bonus: whatever else was added to the limit (staff
// top-ups). The subscriber's total limit (users.bytes_limit) is their sum.
const (
	BucketPlan  = "plan"
	BucketAddon = "addon"
	BucketBonus = "bonus"
)

// DefaultBucketOrder is the order without a choice of the subscriber.
var DefaultBucketOrder = []string{BucketPlan, BucketAddon, BucketBonus}

// BucketOrderInput is PUT /portal/bucket-order: the three buckets in the
// order to consume them.
type BucketOrderInput struct {
	Order []string `json:"order"`
}

// Bucket is one quota bucket of the current period.
type Bucket struct {
	Bucket    string `json:"bucket"`
	Limit     int64  `json:"limit"`
	Used      int64  `json:"used"`
	Remaining int64  `json:"remaining"`
}

// BucketState is the chosen order and the buckets in it.
type BucketState struct {
	Order   []string `json:"order"`
	Buckets []Bucket `json:"buckets"`
}

func validOrder(o []string) bool {
	if len(o) != len(DefaultBucketOrder) {
		return false
	}
	seen := map[string]bool{}
	for _, b := range o {
		if (b != BucketPlan && b != BucketAddon && b != BucketBonus) || seen[b] {
			return false
		}
		seen[b] = true
	}
	return true
}

// SetBucketOrder stores the order in which accounting consumes the
// caller's quota buckets (400 invalid_bucket_order unless a permutation
// of plan, addon, bonus). Always on (no feature switch). What each bucket
// used so far stays as the previous order decided; the new order applies
// to what follows.
func SetBucketOrder(ctx context.Context, act *app.Actor, in BucketOrderInput) (*BucketState, error) {
	t, uid := act.Tenant, act.SubscriberID
	if err := portal.RequireEnabled(ctx, t); err != nil {
		return nil, err
	}
	if !validOrder(in.Order) {
		return nil, app.ErrValidation("invalid_bucket_order", "order")
	}
	var out *BucketState
	err := t.Write(ctx, func(tx *sql.Tx) error {
		snap, err := readBuckets(ctx, tx, uid)
		if err != nil {
			return err
		}
		if err := writeUsage(ctx, tx, uid, snap.period, snap.usage()); err != nil {
			return err
		}
		b, err := json.Marshal(in.Order)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO ss_bucket_orders(user_id, buckets, updated_at) VALUES (?,?,?)
			ON CONFLICT(user_id) DO UPDATE SET buckets = excluded.buckets, updated_at = excluded.updated_at`, uid, string(b), t.NowText()); err != nil {
			return err
		}
		if snap, err = readBuckets(ctx, tx, uid); err != nil {
			return err
		}
		out = snap.state()
		return nil
	})
	if err != nil {
		return nil, err
	}
	ordersOf(t).add(uid)
	return out, nil
}

// buckets is a subscriber's buckets as stored: the current period (its
// last activation, 0 = none), the limits, the total used, the order, and
// what each bucket used when tracked for this period (nil otherwise).
type buckets struct {
	period int64
	limits map[string]int64
	used   int64
	order  []string
	track  map[string]int64
}

// readBuckets reads it all in one statement (the accounting hook runs it
// on every Interim of a subscriber who chose an order).
func readBuckets(ctx context.Context, q app.Querier, uid int64) (*buckets, error) {
	var total, planLimit, addon int64
	var act, period, pl, ad, bo sql.NullInt64
	var order sql.NullString
	k := &buckets{}
	err := q.QueryRowContext(ctx, `SELECT u.bytes_limit, u.used_bytes, COALESCE(p.bytes_limit, 0), a.id,
		(SELECT COALESCE(SUM(x.amount * ua.quantity), 0) FROM user_addons ua JOIN addons x ON x.id = ua.addon_id
			WHERE ua.user_id = u.id AND x.kind = 'data' AND ua.created_at >= COALESCE(a.created_at, '')),
		o.buckets, s.period_id, s.plan_used, s.addon_used, s.bonus_used
		FROM users u LEFT JOIN profiles p ON p.id = u.profile_id
		LEFT JOIN user_activations a ON a.id = (SELECT MAX(y.id) FROM user_activations y WHERE y.user_id = u.id AND y.refunded_at IS NULL)
		LEFT JOIN ss_bucket_orders o ON o.user_id = u.id LEFT JOIN ss_bucket_usage s ON s.user_id = u.id
		WHERE u.id = ?`, uid).Scan(&total, &k.used, &planLimit, &act, &addon, &order, &period, &pl, &ad, &bo)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	k.period = act.Int64
	plan := max(min(planLimit, total), 0)
	addon = max(min(addon, total-plan), 0)
	k.limits = map[string]int64{BucketPlan: plan, BucketAddon: addon, BucketBonus: max(total-plan-addon, 0)}
	k.order = DefaultBucketOrder
	if order.Valid {
		var o []string
		if err := json.Unmarshal([]byte(order.String), &o); err != nil {
			return nil, fmt.Errorf("bucket order of %d: %w", uid, err)
		}
		if validOrder(o) {
			k.order = o
		}
	}
	if period.Valid && period.Int64 == k.period {
		k.track = map[string]int64{BucketPlan: pl.Int64, BucketAddon: ad.Int64, BucketBonus: bo.Int64}
	}
	return k, nil
}

// usage is what each bucket used: as tracked, or (not tracked for this
// period) the period's total usage taken in order.
func (k *buckets) usage() map[string]int64 {
	if k.track != nil {
		return k.track
	}
	u := map[string]int64{}
	consume(k.order, k.limits, u, k.used)
	return u
}

func (k *buckets) state() *BucketState {
	used := k.usage()
	out := &BucketState{Order: k.order, Buckets: []Bucket{}}
	for _, b := range k.order {
		out.Buckets = append(out.Buckets, Bucket{Bucket: b, Limit: k.limits[b], Used: used[b], Remaining: max(k.limits[b]-used[b], 0)})
	}
	return out
}

// consume adds bytes to the buckets in order: each takes what it has
// left, and what none has left goes to the last one (over quota).
func consume(order []string, limits, used map[string]int64, bytes int64) {
	for _, b := range order {
		if bytes <= 0 {
			return
		}
		take := min(bytes, max(limits[b]-used[b], 0))
		used[b] += take
		bytes -= take
	}
	if bytes > 0 {
		used[order[len(order)-1]] += bytes
	}
}

// chargeBuckets is the accounting hook (aaa.SetUsageHook): bytes more were
// used by subscriber uid, in accounting's transaction. Only subscribers who
// chose an order are tracked (a set kept in memory, so the others cost
// nothing here): the others consume in the default order, which their
// total usage alone tells. A new period (a new activation) starts the
// buckets over from the usage the period already has.
func chargeBuckets(ctx context.Context, t *app.Tenant, tx *sql.Tx, uid, bytes, _ int64) error {
	chose, err := ordersOf(t).has(ctx, tx, uid)
	if err != nil || !chose {
		return err
	}
	k, err := readBuckets(ctx, tx, uid)
	if err != nil {
		if app.AsError(err) != nil {
			return nil // gone meanwhile: nothing to track
		}
		return err
	}
	used := k.usage() // a new period: its whole usage so far, this charge included
	if k.track != nil {
		consume(k.order, k.limits, used, bytes)
	}
	return writeUsage(ctx, tx, uid, k.period, used)
}

func writeUsage(ctx context.Context, tx *sql.Tx, uid, period int64, used map[string]int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO ss_bucket_usage(user_id, period_id, plan_used, addon_used, bonus_used) VALUES (?,?,?,?,?)
		ON CONFLICT(user_id) DO UPDATE SET period_id = excluded.period_id, plan_used = excluded.plan_used, addon_used = excluded.addon_used,
		bonus_used = excluded.bonus_used`, uid, period, used[BucketPlan], used[BucketAddon], used[BucketBonus])
	return err
}

// orderSet is the subscribers of a tenant who chose a bucket order,
// loaded from the tenant's file at first use and kept with the opening of
// its files (app.Tenant.Cache: loaded again after a reopen, e.g. after a
// restore).
type orderSet struct {
	mu     sync.Mutex
	loaded bool
	users  map[int64]bool
}

type orderSetKey struct{}

func ordersOf(t *app.Tenant) *orderSet {
	return t.Cache(orderSetKey{}, func() any { return &orderSet{} }).(*orderSet)
}

func (s *orderSet) has(ctx context.Context, q app.Querier, uid int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded {
		ids, err := app.QueryIDs(ctx, q, `SELECT user_id FROM ss_bucket_orders`)
		if err != nil {
			return false, err
		}
		s.users = make(map[int64]bool, len(ids))
		for _, id := range ids {
			s.users[id] = true
		}
		s.loaded = true
	}
	return s.users[uid], nil
}

// add records after a commit that uid chose an order.
func (s *orderSet) add(uid int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loaded {
		s.users[uid] = true
	}
}
