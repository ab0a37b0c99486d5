package devgw

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/files"
)

// Session is one console as GET /admin/console-sessions lists it.
type Session struct {
	ID            int64    `json:"id"`
	ManagerID     *int64   `json:"manager_id"`
	ManagerName   string   `json:"manager_name"`
	Kind          string   `json:"kind"`
	TargetID      int64    `json:"target_id"`
	TargetName    string   `json:"target_name"`
	TargetAddress string   `json:"target_address"`
	RemoteAddr    string   `json:"remote_addr"`
	State         string   `json:"state"`
	StartedAt     app.Time `json:"started_at"`
	EndedAt       app.Time `json:"ended_at"`
	BytesIn       int64    `json:"bytes_in"`
	BytesOut      int64    `json:"bytes_out"`
	EndReason     string   `json:"end_reason"`
	Cols          int      `json:"cols"`
	Rows          int      `json:"rows"`
	Recorded      bool     `json:"recorded"`
}

// Session states and end reasons.
const (
	StateLive  = "live"
	StateEnded = "ended"

	ReasonIdle          = "idle_timeout"
	ReasonMaxDuration   = "max_duration"
	ReasonClosedByStaff = "closed_by_staff"
	ReasonRemoteExit    = "remote_exit"
	ReasonClientClosed  = "client_closed"
	ReasonServerRestart = "server_restart"
)

const sessionCols = `s.id, s.manager_id, s.manager_name, s.kind, s.target_id, s.target_name, s.target_address, s.remote_addr, s.state,
	s.started_at, s.ended_at, s.bytes_in, s.bytes_out, s.end_reason, s.cols, s.rows, s.recording_file_id IS NOT NULL`

func scanSession(row interface{ Scan(...any) error }) (Session, error) {
	var s Session
	var mgr sql.NullInt64
	err := row.Scan(&s.ID, &mgr, &s.ManagerName, &s.Kind, &s.TargetID, &s.TargetName, &s.TargetAddress, &s.RemoteAddr, &s.State,
		&s.StartedAt, &s.EndedAt, &s.BytesIn, &s.BytesOut, &s.EndReason, &s.Cols, &s.Rows, &s.Recorded)
	if mgr.Valid {
		s.ManagerID = &mgr.Int64
	}
	return s, err
}

// visibleSQL restricts alias s to the consoles the caller sees: the kinds
// its codes reach (prm_nas_remote: NAS, prm_nas_devices_remote: devices),
// opened by managers of its subtree (every one for a tenant-wide caller).
func visibleSQL(act *app.Actor) (string, []any) {
	var kinds []string
	if act.Can(PermNasRemote) {
		kinds = append(kinds, "'nas'")
	}
	if act.Can(PermNasDevicesRemote) {
		kinds = append(kinds, "'device'")
	}
	if len(kinds) == 0 {
		return "0", nil
	}
	cond := "s.kind IN (" + strings.Join(kinds, ",") + ")"
	if act.TenantWide {
		return cond, nil
	}
	c, args := act.ScopeSQL("s.manager_id")
	return cond + " AND " + c, args
}

// SessionListSpec is the console list's sorts and filters.
var SessionListSpec = app.ListSpec{
	Sorts: map[string]string{"id": "s.id", "started_at": "s.started_at", "ended_at": "s.ended_at",
		"bytes_in": "s.bytes_in", "bytes_out": "s.bytes_out"},
	DefaultSort: "started_at",
	Filters: map[string]app.FilterKind{"state": app.FilterString, "kind": app.FilterString, "target_id": app.FilterInt,
		"manager_id": app.FilterInt, "since": app.FilterTime, "until": app.FilterTime},
	Aliases: []string{"state", "kind", "target_id", "manager_id", "since", "until"},
}

// ListSessions answers GET /admin/console-sessions: live and past consoles
// of the caller's scope, newest first; filters state (live|ended), kind,
// target_id, manager_id, since/until (started at); q matches the target's
// name and address and the manager's name.
func ListSessions(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Session], error) {
	if err := act.Require(PermNasRemote, PermNasDevicesRemote); err != nil {
		return app.Page[Session]{}, err
	}
	cond, args := visibleSQL(act)
	where := []string{cond}
	if v, ok := lq.Str("state"); ok {
		if v != StateLive && v != StateEnded {
			return app.Page[Session]{}, app.ErrValidation("invalid_enum", "state").With("allowed", []string{StateLive, StateEnded})
		}
		where, args = append(where, "s.state = ?"), append(args, v)
	}
	if v, ok := lq.Str("kind"); ok {
		if v != KindNAS && v != KindDevice {
			return app.Page[Session]{}, app.ErrValidation("invalid_enum", "kind").With("allowed", []string{KindNAS, KindDevice})
		}
		where, args = append(where, "s.kind = ?"), append(args, v)
	}
	if v, ok := lq.Int("target_id"); ok {
		where, args = append(where, "s.target_id = ?"), append(args, v)
	}
	if v, ok := lq.Int("manager_id"); ok {
		where, args = append(where, "s.manager_id = ?"), append(args, v)
	}
	if v, ok := lq.TimeF("since"); ok {
		where, args = append(where, "s.started_at >= ?"), append(args, app.FormatTime(v.Time))
	}
	if v, ok := lq.TimeF("until"); ok {
		where, args = append(where, "s.started_at <= ?"), append(args, app.FormatTime(v.Time))
	}
	if lq.Q != "" {
		like := "%" + app.LikeEscape(lq.Q) + "%"
		where = append(where, `(s.target_name LIKE ? ESCAPE '\' OR s.target_address LIKE ? ESCAPE '\' OR s.manager_name LIKE ? ESCAPE '\')`)
		args = append(args, like, like, like)
	}
	return app.QueryPage(ctx, act.Tenant, lq, sessionCols, " FROM devgw_sessions s WHERE "+strings.Join(where, " AND "), args, "s.id",
		func(rows *sql.Rows) (Session, error) { return scanSession(rows) })
}

// visibleSession reads one console of the caller's scope (404 otherwise).
func visibleSession(ctx context.Context, q app.Querier, act *app.Actor, sid int64) (*Session, error) {
	cond, args := visibleSQL(act)
	s, err := scanSession(q.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM devgw_sessions s WHERE s.id = ? AND `+cond, append([]any{sid}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// GetSession reads one console (the pages show it).
func GetSession(ctx context.Context, act *app.Actor, sid int64) (*Session, error) {
	if err := act.Require(PermNasRemote, PermNasDevicesRemote); err != nil {
		return nil, err
	}
	return visibleSession(ctx, act.Tenant.DB.R, act, sid)
}

// closeWait bounds how long a close waits for the console to write its
// ended row (the socket and the SSH channel are closed at once).
var closeWait = 5 * time.Second

// closeOne ends a live console of the caller's scope.
func closeOne(ctx context.Context, act *app.Actor, sid int64) error {
	t := act.Tenant
	s, err := visibleSession(ctx, t.DB.R, act, sid)
	if err != nil {
		return err
	}
	if s.State != StateLive {
		return app.ErrConflict("session_not_live")
	}
	if l := reg(t.App).find(t.Slug, sid); l != nil {
		l.stop(ReasonClosedByStaff)
		select {
		case <-l.done:
		case <-time.After(closeWait):
		}
		return nil
	}
	// A row live in the file but not in this process (left by a crash
	// before Recover ran): end it here.
	err = t.Write(ctx, func(tx *sql.Tx) error {
		return endRow(ctx, tx, t, sid, endStats{reason: ReasonClosedByStaff})
	})
	return err
}

// CloseResult is the answer of a close.
type CloseResult struct {
	ID    int64  `json:"id"`
	State string `json:"state"`
}

// CloseSession answers DELETE /admin/console-sessions/{sid}: the socket and
// the SSH channel end at once, the row is ended with reason
// closed_by_staff. 409 session_not_live for an ended console.
func CloseSession(ctx context.Context, act *app.Actor, sid int64) (*CloseResult, error) {
	if err := act.Require(PermNasRemote, PermNasDevicesRemote); err != nil {
		return nil, err
	}
	if err := closeOne(ctx, act, sid); err != nil {
		return nil, err
	}
	return &CloseResult{ID: sid, State: StateEnded}, nil
}

// BulkClose answers POST /admin/console-sessions/bulk-close.
func BulkClose(ctx context.Context, act *app.Actor, in app.BulkIDs) (*app.BulkResult, error) {
	if err := act.Require(PermNasRemote, PermNasDevicesRemote); err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	res := app.RunBulk(ctx, in.IDs, func(ctx context.Context, id int64) error { return closeOne(ctx, act, id) })
	return &res, nil
}

// CloseAllResult counts the consoles DELETE /admin/console-sessions ended.
type CloseAllResult struct {
	Closed int `json:"closed"`
}

// CloseAll answers DELETE /admin/console-sessions: every live console of
// the caller's scope ends.
func CloseAll(ctx context.Context, act *app.Actor) (*CloseAllResult, error) {
	if err := act.Require(PermNasRemote, PermNasDevicesRemote); err != nil {
		return nil, err
	}
	cond, args := visibleSQL(act)
	rows, err := act.Tenant.DB.R.QueryContext(ctx, `SELECT s.id FROM devgw_sessions s WHERE s.state = 'live' AND `+cond, args...)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	out := &CloseAllResult{}
	for _, id := range ids {
		err := closeOne(ctx, act, id)
		if e := app.AsError(err); e != nil && e.Reason == "session_not_live" {
			continue // ended meanwhile
		}
		if err != nil {
			return out, err
		}
		out.Closed++
	}
	return out, nil
}

// OpenRecording answers GET /admin/console-sessions/{sid}/recording: the
// console's output as asciicast v2 and its download name. Recordings hold
// what routers printed (configurations, secrets shown on screen): only
// prm_nas_remote opens them. 404 when the console was not recorded.
func OpenRecording(ctx context.Context, act *app.Actor, sid int64) (io.ReadCloser, string, error) {
	if err := act.Require(PermNasRemote); err != nil {
		return nil, "", err
	}
	t := act.Tenant
	if _, err := visibleSession(ctx, t.DB.R, act, sid); err != nil {
		return nil, "", err
	}
	var fid sql.NullInt64
	if err := t.DB.R.QueryRowContext(ctx, `SELECT recording_file_id FROM devgw_sessions WHERE id = ?`, sid).Scan(&fid); err != nil {
		return nil, "", err
	}
	if !fid.Valid {
		return nil, "", app.ErrNotFound()
	}
	f, err := files.Get(ctx, t.DB.R, fid.Int64)
	if err != nil {
		return nil, "", err
	}
	rc, err := files.Open(t, f)
	if err != nil {
		return nil, "", app.ErrInternal(err)
	}
	return rc, "console-" + strconv.FormatInt(sid, 10) + ".cast", nil
}

// endStats is what a console's end writes on its row.
type endStats struct {
	reason            string
	bytesIn, bytesOut int64
	fileID            int64
}

// endRow ends a live row and emits console.closed (nothing when the row
// is no longer live).
func endRow(ctx context.Context, tx *sql.Tx, t *app.Tenant, sid int64, st endStats) error {
	var fid any
	if st.fileID != 0 {
		fid = st.fileID
	}
	r, err := tx.ExecContext(ctx, `UPDATE devgw_sessions SET state = 'ended', ended_at = ?, end_reason = ?,
		bytes_in = MAX(bytes_in, ?), bytes_out = MAX(bytes_out, ?), recording_file_id = COALESCE(?, recording_file_id)
		WHERE id = ? AND state = 'live'`, t.NowText(), st.reason, st.bytesIn, st.bytesOut, fid, sid)
	if err != nil {
		return err
	}
	if n, err := r.RowsAffected(); err != nil || n == 0 {
		return err
	}
	s, err := scanSession(tx.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM devgw_sessions s WHERE s.id = ?`, sid))
	if err != nil {
		return err
	}
	return app.Emit(ctx, tx, "console.closed", s)
}

// Recover ends the rows a stopped process left live (reason
// server_restart): a console lives only in the process that relays it.
// Rows of consoles live in this App are left alone.
func Recover(ctx context.Context, t *app.Tenant) (int, error) {
	mine := reg(t.App).ids(t.Slug)
	n := 0
	err := t.Write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM devgw_sessions WHERE state = 'live'`)
		if err != nil {
			return err
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			if !mine[id] {
				ids = append(ids, id)
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for _, id := range ids {
			if err := endRow(ctx, tx, t, id, endStats{reason: ReasonServerRestart}); err != nil {
				return err
			}
		}
		n = len(ids)
		return nil
	})
	return n, err
}
