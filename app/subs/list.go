package subs

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"xr/app"
)

var userListSpec = app.ListSpec{
	Sorts: map[string]string{"id": "u.id", "username": "u.username", "created_at": "u.created_at", "expiration": "u.expiration",
		"balance": "u.balance", "updated_at": "u.updated_at"},
	DefaultSort: "id",
	Filters: map[string]app.FilterKind{
		"enabled": app.FilterBool, "expired": app.FilterBool, "online": app.FilterBool, "profile_id": app.FilterInt,
		"parent_id": app.FilterInt, "username_exact": app.FilterString, "expiring_within_days": app.FilterInt,
		"created_from": app.FilterTime, "created_to": app.FilterTime, "group_id": app.FilterInt, "deleted": app.FilterBool,
		"activated": app.FilterBool, "in_debt": app.FilterBool,
	},
}

// UserListSpec is the list spec of GET /users: sort id (default),
// username, created_at, expiration, balance, updated_at; the spec's filters
// plus group_id, created_to, deleted (deleted subscribers are hidden
// unless filter[deleted]=true), activated (an expiration was ever set) and
// in_debt (a negative balance).
func UserListSpec() app.ListSpec { return userListSpec }

// onlineSQL is true when the subscriber u has an open RADIUS session.
const onlineSQL = `EXISTS (SELECT 1 FROM radius_sessions s WHERE s.user_id = u.id AND s.stop_time IS NULL)`

// userFilter is the WHERE clause of a list of subscribers.
type userFilter struct {
	cond  string
	args  []any
	plain bool // tenant-wide, live subscribers, no filter: total = users_count
	// indexed: q is one id list (trigram matches and the numeric id) over
	// live subscribers, so users_live_ids can serve the page query.
	indexed bool
}

// ftsPhrase quotes a term as an FTS5 phrase (trigram: a substring match).
func ftsPhrase(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// buildUserFilter turns a list query into SQL over alias u, ANDed with the
// actor's scope. filter[parent_id] narrows inside the scope and is ignored
// when it names a manager outside it (it can never widen).
func buildUserFilter(ctx context.Context, q app.Querier, act *app.Actor, lq app.ListQuery, now time.Time) (userFilter, error) {
	scope, args := act.ScopeSQL("u.parent_id")
	where := []string{scope}
	plain := act.TenantWide
	nowS := app.FormatTime(now)
	live := true
	if v, ok := lq.Bool("deleted"); ok && v {
		where = append(where, "u.deleted_at IS NOT NULL")
		plain, live = false, false
	} else {
		where = append(where, "u.deleted_at IS NULL")
	}
	indexed := false
	add := func(c string, a ...any) {
		where = append(where, c)
		args = append(args, a...)
		plain = false
	}
	if v, ok := lq.Bool("enabled"); ok {
		add("u.enabled = ?", v)
	}
	if v, ok := lq.Bool("expired"); ok {
		if v {
			add("(u.expiration IS NULL OR u.expiration <= ?)", nowS)
		} else {
			add("u.expiration > ?", nowS)
		}
	}
	if v, ok := lq.Bool("activated"); ok {
		if v {
			add("u.expiration IS NOT NULL")
		} else {
			add("u.expiration IS NULL")
		}
	}
	if v, ok := lq.Bool("in_debt"); ok {
		if v {
			add("u.balance < 0")
		} else {
			add("u.balance >= 0")
		}
	}
	if v, ok := lq.Bool("online"); ok {
		if v {
			add(onlineSQL)
		} else {
			add("NOT " + onlineSQL)
		}
	}
	if v, ok := lq.Int("profile_id"); ok {
		add("u.profile_id = ?", v)
	}
	if v, ok := lq.Int("group_id"); ok {
		add("u.group_id = ?", v)
	}
	if v, ok := lq.Int("parent_id"); ok {
		in, err := act.InScope(ctx, q, v)
		if err != nil {
			return userFilter{}, err
		}
		if in || act.TenantWide {
			add("u.parent_id = ?", v)
		}
	}
	if v, ok := lq.Str("username_exact"); ok {
		add("u.username = ?", v) // the column is NOCASE: case-insensitive
	}
	if v, ok := lq.Int("expiring_within_days"); ok {
		if v < 0 || v > 36600 {
			return userFilter{}, app.ErrValidation("invalid_filter", "filter[expiring_within_days]")
		}
		add("u.expiration > ? AND u.expiration <= ?", nowS, app.FormatTime(now.Add(time.Duration(v)*24*time.Hour)))
	}
	if v, ok := lq.TimeF("created_from"); ok {
		add("u.created_at >= ?", app.FormatTime(v.Time))
	}
	if v, ok := lq.TimeF("created_to"); ok {
		add("u.created_at <= ?", app.FormatTime(v.Time))
	}
	if term := lq.Q; term != "" {
		id, err := strconv.ParseInt(term, 10, 64)
		numeric := err == nil && id > 0 && strings.Trim(term, "0123456789") == ""
		if utf8.RuneCountInString(term) >= 3 {
			// Trigram index: substring match on every searched column; a
			// purely numeric term is also the exact id. One id list.
			list := `SELECT rowid FROM users_fts WHERE users_fts MATCH ?`
			qa := []any{ftsPhrase(term)}
			if numeric {
				list += ` UNION SELECT ?`
				qa = append(qa, id)
			}
			add("u.id IN ("+list+")", qa...)
			indexed = live
		} else {
			var parts []string
			var qa []any
			like := "%" + app.LikeEscape(term) + "%"
			for _, c := range []string{"username", "email", "firstname", "lastname", "phone", "contract_id", "national_id", "static_ip"} {
				parts = append(parts, "u."+c+` LIKE ? ESCAPE '\'`)
				qa = append(qa, like)
			}
			if numeric {
				parts = append(parts, "u.id = ?")
				qa = append(qa, id)
			}
			add("("+strings.Join(parts, " OR ")+")", qa...)
		}
	}
	return userFilter{cond: strings.Join(where, " AND "), args: args, plain: plain, indexed: indexed}, nil
}

// listCols is the projection of a list row (scanned by scanListRow).
const listCols = `u.id, u.username, u.email, u.enabled, u.deleted_at, u.expiration, u.profile_id, COALESCE(p.name, ''),
	COALESCE(p.fup_rate_down_kbps, 0), u.parent_id, COALESCE(m.username, m.email, ''), u.bytes_limit, u.used_bytes, u.seconds_limit,
	u.used_seconds, u.balance, u.mac_lock_enabled, u.mac_locked_addrs, u.created_at, ` + onlineSQL

const listFrom = ` FROM users u LEFT JOIN profiles p ON p.id = u.profile_id LEFT JOIN managers m ON m.id = u.parent_id`

func scanListRow(row interface{ Scan(...any) error }, tenantID int64, now time.Time, extra ...any) (*User, error) {
	u := &User{TenantID: tenantID}
	var deleted app.Time
	var profile sql.NullInt64
	var fup, secLimit, secUsed, bal int64
	var macs string
	var online bool
	dest := []any{&u.ID, &u.Username, &u.Email, &u.Enabled, &deleted, &u.Expiration, &profile, &u.ProfileName, &fup, &u.ParentID,
		&u.ParentUsername, &u.PlanBytesLimit, &u.UsedBytes, &secLimit, &secUsed, &bal, &u.MacLockEnabled, &macs, &u.CreatedAt, &online}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	u.ProfileID = ptrOf(profile)
	u.Balance = app.Money(bal)
	var err error
	if u.MacLockedAddrs, err = decodeMACs(macs); err != nil {
		return nil, fmt.Errorf("user %d: %w", u.ID, err)
	}
	u.finish(now, !deleted.IsZero(), online, secLimit, secUsed, fup)
	return u, nil
}

// ListUsers is GET /users: the subscribers of the actor's subtree, filtered,
// searched, sorted and paginated, with meta.total over the whole filtered set.
//
// The page is found first as ids (narrow: the covering index or, with q,
// the search index — counted in the same statement, so the search runs
// once), then its rows are read by id.
func ListUsers(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[User], error) {
	if err := act.Require(PermUsersIndex); err != nil {
		return app.Page[User]{}, err
	}
	t := act.Tenant
	now := t.Now()
	var page app.Page[User]
	err := t.Read(ctx, func(tx *sql.Tx) error {
		f, err := buildUserFilter(ctx, tx, act, lq, now)
		if err != nil {
			return err
		}
		total := -1
		var ids []int64
		if lq.Q != "" {
			rows, err := tx.QueryContext(ctx, pageSQL(f, lq), f.args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id, &total); err != nil {
					rows.Close()
					return err
				}
				ids = append(ids, id)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if total < 0 && lq.Offset() == 0 {
				total = 0
			}
		}
		if total < 0 {
			if f.plain {
				// Exact: kept by triggers in the same transactions as the rows.
				err = tx.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'users_count'`).Scan(&total)
			} else {
				err = tx.QueryRowContext(ctx, countSQL(f), f.args...).Scan(&total)
			}
			if err != nil {
				return err
			}
			if lq.Q == "" && lq.Offset() < total {
				if ids, err = app.QueryIDs(ctx, tx, pageSQL(f, lq), f.args...); err != nil {
					return err
				}
			}
		}
		page.Meta = lq.MetaFor(total)
		page.Rows, err = rowsByID(ctx, tx, t.ID, now, ids)
		return err
	})
	return page, err
}

// countSQL counts the filtered set.
func countSQL(f userFilter) string { return `SELECT COUNT(*) FROM users u WHERE ` + f.cond }

// pageSQL selects the ids of the page; with q it also counts the whole
// filtered set (COUNT(*) OVER ()), so the search runs once.
func pageSQL(f userFilter, lq app.ListQuery) string {
	if lq.Q != "" {
		from := `users u`
		if f.indexed {
			// The search's matches are checked against the filters in
			// users_live_ids (narrow, keyed by id, covering), not in the
			// wide rows; the planner only picks it on its own with
			// ANALYZE statistics.
			from = `users u INDEXED BY users_live_ids`
		}
		return `SELECT u.id, COUNT(*) OVER () FROM ` + from + ` WHERE ` + f.cond + lq.OrderLimit("u.id")
	}
	return `SELECT u.id FROM users u WHERE ` + f.cond + lq.OrderLimit("u.id")
}

// rowsByID reads list rows of ids, in the order of ids.
func rowsByID(ctx context.Context, tx *sql.Tx, tenantID int64, now time.Time, ids []int64) ([]User, error) {
	out := make([]User, 0, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	pos := make(map[int64]int, len(ids))
	args := make([]any, len(ids))
	for i, id := range ids {
		pos[id] = i
		args[i] = id
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+listCols+listFrom+` WHERE u.id IN (?`+strings.Repeat(",?", len(ids)-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := make([]*User, len(ids))
	for rows.Next() {
		u, err := scanListRow(rows, tenantID, now)
		if err != nil {
			return nil, err
		}
		found[pos[u.ID]] = u
	}
	for _, u := range found {
		if u != nil {
			out = append(out, *u)
		}
	}
	return out, rows.Err()
}

// eachUser streams every row of a filtered list (no offset cap) to fn, in
// the list's order: the export job uses it.
func eachUser(ctx context.Context, act *app.Actor, lq app.ListQuery, fn func(*User) error) (int, error) {
	t := act.Tenant
	now := t.Now()
	n := 0
	err := t.Read(ctx, func(tx *sql.Tx) error {
		f, err := buildUserFilter(ctx, tx, act, lq, now)
		if err != nil {
			return err
		}
		order := lq.OrderLimit("u.id")
		order = order[:strings.Index(order, " LIMIT ")]
		rows, err := tx.QueryContext(ctx, `SELECT `+listCols+listFrom+` WHERE `+f.cond+order, f.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			u, err := scanListRow(rows, t.ID, now)
			if err != nil {
				return err
			}
			if err := fn(u); err != nil {
				return err
			}
			n++
		}
		return rows.Err()
	})
	return n, err
}

// Summary is GET /users/summary: counts by state over the list's scope
// (live subscribers only; deleted counted apart).
type Summary struct {
	Total        int64 `json:"total"`
	Enabled      int64 `json:"enabled"`
	Disabled     int64 `json:"disabled"`
	Active       int64 `json:"active"` // enabled and not expired
	Expired      int64 `json:"expired"`
	NeverActive  int64 `json:"never_activated"`
	ExpiringSoon int64 `json:"expiring_7_days"`
	Online       int64 `json:"online"`
	InDebt       int64 `json:"in_debt"`
	QuotaSpent   int64 `json:"quota_exhausted"`
	Deleted      int64 `json:"deleted"`
}

// UserSummary counts the actor's subscribers by state: each count is a
// Figure, the count of the list its filter selects (figures.go).
func UserSummary(ctx context.Context, act *app.Actor) (*Summary, error) {
	if err := act.Require(PermUsersIndex); err != nil {
		return nil, err
	}
	n, err := CountFigures(ctx, act, FigureTotal, FigureEnabled, FigureDisabled, FigureActive, FigureNoTime,
		FigureNeverActivated, FigureExpiringSoon, FigureOnline, FigureInDebt, FigureDeleted)
	if err != nil {
		return nil, err
	}
	s := &Summary{Total: n[FigureTotal], Enabled: n[FigureEnabled], Disabled: n[FigureDisabled], Active: n[FigureActive],
		Expired: n[FigureNoTime], NeverActive: n[FigureNeverActivated], ExpiringSoon: n[FigureExpiringSoon], Online: n[FigureOnline],
		InDebt: n[FigureInDebt], Deleted: n[FigureDeleted]}
	scope, args := act.ScopeSQL("u.parent_id")
	err = act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users u WHERE u.deleted_at IS NULL AND
			((u.bytes_limit > 0 AND u.used_bytes >= u.bytes_limit) OR (u.seconds_limit > 0 AND u.used_seconds >= u.seconds_limit)) AND `+scope, args...).
			Scan(&s.QuotaSpent)
	})
	return s, err
}
