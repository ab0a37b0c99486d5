package app

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ConsoleSessionStore keeps the staff console's cookie sessions (scs) in
// the instance file, so they survive a restart. It implements scs.CtxStore.
type ConsoleSessionStore struct{ a *App }

// ConsoleSessions is the console's session store.
func (a *App) ConsoleSessions() *ConsoleSessionStore { return &ConsoleSessionStore{a: a} }

// FindCtx returns a live session's data; an expired or unknown token is
// not found.
func (s *ConsoleSessionStore) FindCtx(ctx context.Context, token string) ([]byte, bool, error) {
	var b []byte
	err := s.a.Inst.R.QueryRowContext(ctx, `SELECT data FROM console_sessions WHERE token = ? AND expiry > ?`, token, time.Now().UnixNano()).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// CommitCtx writes a session and, now and then, drops expired ones.
func (s *ConsoleSessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	return s.a.Inst.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO console_sessions(token, data, expiry) VALUES (?,?,?)
			ON CONFLICT(token) DO UPDATE SET data = excluded.data, expiry = excluded.expiry`, token, b, expiry.UnixNano()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE expiry < ?`, time.Now().UnixNano())
		return err
	})
}

// DeleteCtx removes a session.
func (s *ConsoleSessionStore) DeleteCtx(ctx context.Context, token string) error {
	return s.a.Inst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE token = ?`, token)
		return err
	})
}

// Find, Commit and Delete are the context-free forms scs also requires.
func (s *ConsoleSessionStore) Find(token string) ([]byte, bool, error) {
	return s.FindCtx(context.Background(), token)
}
func (s *ConsoleSessionStore) Commit(token string, b []byte, expiry time.Time) error {
	return s.CommitCtx(context.Background(), token, b, expiry)
}
func (s *ConsoleSessionStore) Delete(token string) error {
	return s.DeleteCtx(context.Background(), token)
}
