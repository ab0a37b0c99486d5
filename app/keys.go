package app

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"xr/db"
)

// The instance keys live in instance.db (table instance_keys): "sign" signs
// tokens, "enc" seals recoverable secrets, and "enc_prev:<n>" are sealing
// keys being retired by a rotation (Open still accepts them). With a master
// key (xr --master-key-file / XR_MASTER_KEY), kept outside the data
// directory, each row holds its key wrapped: AES-256-GCM under the master
// key, the row's name as additional data. A copy of the data directory
// without the master key then opens nothing.

// SealedColumn is a column holding values sealed with Keys.Seal. The area
// that owns the table declares it (Module.SealedColumns, or
// InstanceSealedColumns for instance.db); xr keys rotate re-seals every
// column of the App's registry (TestSealedColumnsCoverMigrations fails when
// a column the migrations mark `_sealed` or `-- sealed` is not declared).
type SealedColumn struct{ Table, Column string }

const (
	masterKeyLen = 32
	wrapPrefix   = "xrwk1:" // a wrapped key row: prefix, nonce, AES-GCM(key)
	keyPrevName  = "enc_prev:"
)

// ErrMasterKeyMissing: the instance keys are wrapped and no master key was
// given.
var ErrMasterKeyMissing = errors.New("the instance keys are wrapped by a master key that was not given: " +
	"start with --master-key-file FILE or set XR_MASTER_KEY (without it no sealed secret can be opened)")

// ErrMasterKeyWrong: the master key given does not unwrap the instance keys.
var ErrMasterKeyWrong = errors.New("the master key given (--master-key-file / XR_MASTER_KEY) does not unwrap this instance's keys")

// ErrKeysNotWrapped: a master key was given for an instance whose keys are
// stored plain.
var ErrKeysNotWrapped = errors.New("a master key was given (--master-key-file / XR_MASTER_KEY) but this instance's keys are " +
	"not wrapped: run `xr keys wrap` with it first, or start without it")

// ParseMasterKey reads a master key: 32 bytes written as 64 hex digits or
// base64 (surrounding whitespace ignored), or exactly 32 raw bytes.
func ParseMasterKey(b []byte) ([]byte, error) {
	s := strings.TrimSpace(string(b))
	if k, err := hex.DecodeString(s); err == nil && len(k) == masterKeyLen {
		return k, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == masterKeyLen {
			return k, nil
		}
	}
	if len(b) == masterKeyLen {
		return append([]byte(nil), b...), nil
	}
	return nil, errors.New("master key must be 32 bytes, written as 64 hex digits or base64 (e.g. `head -c 32 /dev/urandom | base64`)")
}

// NewMasterKey returns a fresh master key in the text form ParseMasterKey reads.
func NewMasterKey() string { return base64.StdEncoding.EncodeToString(RandomBytes(masterKeyLen)) }

func isWrapped(blob []byte) bool { return bytes.HasPrefix(blob, []byte(wrapPrefix)) }

func wrapKey(master []byte, name string, key []byte) []byte {
	return append([]byte(wrapPrefix), sealWith(master, key, []byte("xr instance key "+name))...)
}

// unwrapKey returns a row's key: unwrapped under master when wrapped.
func unwrapKey(master []byte, name string, blob []byte) ([]byte, error) {
	if !isWrapped(blob) {
		if master != nil {
			return nil, ErrKeysNotWrapped
		}
		return blob, nil
	}
	if master == nil {
		return nil, ErrMasterKeyMissing
	}
	k, err := openWith(master, blob[len(wrapPrefix):], []byte("xr instance key "+name))
	if err != nil {
		return nil, ErrMasterKeyWrong
	}
	return k, nil
}

type keyRow struct {
	Name      string
	Blob      []byte
	CreatedAt string
}

func readKeyRows(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) ([]keyRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, key, created_at FROM instance_keys ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []keyRow
	for rows.Next() {
		var r keyRow
		if err := rows.Scan(&r.Name, &r.Blob, &r.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// keysFromRows unwraps the rows into Keys.
func keysFromRows(rows []keyRow, master []byte) (sign, enc []byte, prev [][]byte, err error) {
	type named struct {
		n   int
		key []byte
	}
	var olds []named
	for _, r := range rows {
		k, err := unwrapKey(master, r.Name, r.Blob)
		if err != nil {
			return nil, nil, nil, err
		}
		switch {
		case r.Name == "sign":
			sign = k
		case r.Name == "enc":
			enc = k
		case strings.HasPrefix(r.Name, keyPrevName):
			n, _ := strconv.Atoi(strings.TrimPrefix(r.Name, keyPrevName))
			olds = append(olds, named{n, k})
		}
	}
	sort.Slice(olds, func(i, j int) bool { return olds[i].n > olds[j].n }) // newest first
	for _, o := range olds {
		prev = append(prev, o.key)
	}
	return sign, enc, prev, nil
}

// loadKeys reads the instance keys, creating missing ones (wrapped when a
// master key is given). It refuses wrapped keys without the master key,
// with the wrong one, and plain keys when a master key is given.
func loadKeys(inst *db.DB, master []byte) (*Keys, error) {
	k := &Keys{}
	open := inst.Write
	if inst.Followed() {
		open = inst.Read // a standby's copy: the primary made the keys
	}
	err := open(context.Background(), func(tx *sql.Tx) error {
		rows, err := readKeyRows(context.Background(), tx)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, r := range rows {
			have[r.Name] = true
		}
		for _, name := range []string{"sign", "enc"} {
			if have[name] {
				continue
			}
			key := RandomBytes(32)
			blob := key
			if master != nil {
				blob = wrapKey(master, name, key)
			}
			if _, err := tx.Exec(`INSERT INTO instance_keys(name, key, created_at) VALUES (?,?,?)`, name, blob, stampNow()); err != nil {
				return err
			}
			rows = append(rows, keyRow{Name: name, Blob: blob})
		}
		sign, enc, prev, err := keysFromRows(rows, master)
		if err != nil {
			return err
		}
		k.Sign, k.Enc, k.prev = sign, enc, prev
		return nil
	})
	return k, err
}

// refreshKeys re-reads the sealing keys (a rotation by another process
// bumped the registry generation); on failure the keys in memory stay.
func (a *App) refreshKeys(ctx context.Context) {
	rows, err := readKeyRows(ctx, a.Inst.R)
	if err != nil {
		a.Log.Error("re-read instance keys", "err", err)
		return
	}
	_, enc, prev, err := keysFromRows(rows, a.Cfg.MasterKey)
	if err != nil {
		a.Log.Error("instance keys changed but cannot be read: restart with the right --master-key-file", "err", err)
		return
	}
	if enc == nil {
		return
	}
	cur, old := a.Keys.sealing()
	if bytes.Equal(cur, enc) && len(old) == len(prev) {
		return
	}
	a.Keys.setSealing(enc, prev)
	a.Log.Info("instance sealing keys reloaded", "previous_keys", len(prev))
}

// KeyInfo describes one row of instance_keys (never the key).
type KeyInfo struct {
	Name      string `json:"name"`
	Wrapped   bool   `json:"wrapped"`
	CreatedAt string `json:"created_at"`
}

// KeyStatus is what xr keys status reports.
type KeyStatus struct {
	Wrapped        bool      `json:"wrapped"` // every key is wrapped by a master key
	MasterKeyGiven bool      `json:"master_key_given"`
	Opens          bool      `json:"opens"` // the keys could be read with what was given
	Problem        string    `json:"problem,omitempty"`
	Keys           []KeyInfo `json:"keys"`
	PreviousKeys   int       `json:"previous_keys"` // retired sealing keys kept (a rotation not finished)
	// Sealed values per state, over every tenant (only when Opens).
	SealedCurrent  int `json:"sealed_current"`
	SealedPrevious int `json:"sealed_previous"`
	SealedUnusable int `json:"sealed_unreadable"`
}

// InspectKeys reports the key state of a data directory without opening the
// instance (so it works when the master key is missing or wrong).
func InspectKeys(ctx context.Context, dataDir string, master []byte) (_ KeyStatus, err error) {
	inst, err := db.Open(filepath.Join(dataDir, "instance.db"), "instance", db.Options{Readers: 1})
	if err != nil {
		return KeyStatus{}, err
	}
	// Open may have migrated the file: its close is checked.
	defer func() {
		if cerr := inst.Close(); err == nil {
			err = cerr
		}
	}()
	rows, err := readKeyRows(ctx, inst.R)
	if err != nil {
		return KeyStatus{}, err
	}
	st := KeyStatus{MasterKeyGiven: master != nil, Wrapped: len(rows) > 0, Keys: []KeyInfo{}}
	for _, r := range rows {
		w := isWrapped(r.Blob)
		st.Wrapped = st.Wrapped && w
		st.Keys = append(st.Keys, KeyInfo{Name: r.Name, Wrapped: w, CreatedAt: r.CreatedAt})
		if strings.HasPrefix(r.Name, keyPrevName) {
			st.PreviousKeys++
		}
	}
	if _, _, _, err := keysFromRows(rows, master); err != nil {
		st.Problem = err.Error()
	} else {
		st.Opens = true
	}
	return st, nil
}

// KeyStatus reports the keys of this open instance and counts the sealed
// values of instance.db and of every tenant by the key that opens them
// (the values xr keys rotate re-seals).
func (a *App) KeyStatus(ctx context.Context) (KeyStatus, error) {
	st, err := InspectKeys(ctx, a.Cfg.DataDir, a.Cfg.MasterKey)
	if err != nil || !st.Opens {
		return st, err
	}
	enc, prev := a.Keys.sealing()
	count := func(_ SealedColumn, _ int64, v []byte) error {
		switch sealedUnder(v, enc, prev) {
		case 0:
			st.SealedCurrent++
		case 1:
			st.SealedPrevious++
		default:
			st.SealedUnusable++
		}
		return nil
	}
	if err := a.Inst.Read(ctx, func(tx *sql.Tx) error {
		return eachSealedIn(ctx, tx, a.Registry().InstanceSealedColumns(), count)
	}); err != nil {
		return st, err
	}
	for _, slug := range a.TenantSlugs() {
		t, release, err := a.Acquire(slug)
		if err != nil {
			return st, err
		}
		err = t.Read(ctx, func(tx *sql.Tx) error {
			return eachSealedIn(ctx, tx, a.Registry().SealedColumns(), count)
		})
		release()
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// sealedUnder tells which key opens v: 0 the current, 1 a previous one, -1 none.
func sealedUnder(v, enc []byte, prev [][]byte) int {
	if _, err := openWith(enc, v, nil); err == nil {
		return 0
	}
	for _, p := range prev {
		if _, err := openWith(p, v, nil); err == nil {
			return 1
		}
	}
	return -1
}

// eachSealedIn calls fn for every non-NULL sealed value of the columns cols
// in tx. The values are read first and fn runs after, so fn may update the
// rows.
func eachSealedIn(ctx context.Context, tx *sql.Tx, cols []SealedColumn, fn func(SealedColumn, int64, []byte) error) error {
	type item struct {
		col   SealedColumn
		rowid int64
		v     []byte
	}
	var items []item
	for _, c := range cols {
		rows, err := tx.QueryContext(ctx, `SELECT rowid, `+c.Column+` FROM `+c.Table+` WHERE `+c.Column+` IS NOT NULL`)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", c.Table, c.Column, err)
		}
		for rows.Next() {
			it := item{col: c}
			if err := rows.Scan(&it.rowid, &it.v); err != nil {
				rows.Close()
				return err
			}
			items = append(items, it)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
	}
	for _, it := range items {
		if err := fn(it.col, it.rowid, it.v); err != nil {
			return err
		}
	}
	return nil
}

// WrapKeys stores every instance key wrapped under newMaster (nil: plain).
// The instance must have been opened with its current master key (nil when
// the keys are plain). The keys themselves do not change, so nothing sealed
// needs re-sealing and a running server keeps working; restart it with the
// new --master-key-file so it can read the keys at its next start.
func (a *App) WrapKeys(ctx context.Context, newMaster []byte) (int, error) {
	n := 0
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		rows, err := readKeyRows(ctx, tx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			key, err := unwrapKey(a.Cfg.MasterKey, r.Name, r.Blob)
			if err != nil {
				return err
			}
			blob := key
			if newMaster != nil {
				blob = wrapKey(newMaster, r.Name, key)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE instance_keys SET key = ? WHERE name = ?`, blob, r.Name); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err == nil {
		a.Cfg.MasterKey = newMaster
	}
	return n, err
}

// RotateReport is what a rotation did.
type RotateReport struct {
	Tenants      int  `json:"tenants"`
	Resealed     int  `json:"resealed"`
	Unreadable   int  `json:"unreadable"`    // values no key opens (left as they were)
	PreviousKept bool `json:"previous_kept"` // some value still needs a retired key
}

// RotateOptions tunes RotateKeys.
type RotateOptions struct {
	// Settle is how long to wait after installing the new key before
	// re-sealing, so a server running on the same directory (which re-reads
	// the keys within a second of the registry generation changing) seals
	// under the new key first. Default 3 s; negative for none (tests).
	Settle time.Duration
}

// RotateKeys replaces the sealing key without downtime: (1) a new key
// becomes current and the old one is kept as a retired key that still
// opens, and the registry generation is bumped so running servers switch;
// (2) every sealed value of every tenant is re-sealed under the new key, one
// transaction per tenant; (3) a check pass re-seals stragglers (values a
// server sealed before it switched); (4) only when no value needs a retired
// key any more are the retired keys deleted. An interrupted rotation loses
// nothing: run it again. The signing key is not rotated (that would sign
// everybody out).
func (a *App) RotateKeys(ctx context.Context, opt RotateOptions) (RotateReport, error) {
	var rep RotateReport
	if opt.Settle == 0 {
		opt.Settle = 3 * time.Second
	}
	newKey, prev, err := a.installSealingKey(ctx)
	if err != nil {
		return rep, err
	}
	if opt.Settle > 0 {
		select {
		case <-ctx.Done():
			return rep, ctx.Err()
		case <-time.After(opt.Settle):
		}
	}
	slugs := a.TenantSlugs()
	sort.Strings(slugs)
	rep.Tenants = len(slugs)
	// Passes: the first re-seals everything, later ones catch stragglers.
	for pass := 0; pass < 3; pass++ {
		left, unreadable := 0, 0
		n, u, err := a.resealInstance(ctx, newKey, prev)
		if err != nil {
			return rep, fmt.Errorf("instance: %w (nothing lost: run xr keys rotate again)", err)
		}
		rep.Resealed += n
		if pass > 0 {
			left += n
		}
		unreadable += u
		for _, slug := range slugs {
			n, u, err := a.resealTenant(ctx, slug, newKey, prev)
			if err != nil {
				return rep, fmt.Errorf("tenant %s: %w (nothing lost: run xr keys rotate again)", slug, err)
			}
			rep.Resealed += n
			if pass > 0 {
				left += n
			}
			unreadable += u
		}
		rep.Unreadable = unreadable
		if pass > 0 && left == 0 {
			break
		}
		if pass == 2 && left > 0 {
			rep.PreviousKept = true
		}
	}
	if rep.PreviousKept {
		return rep, nil
	}
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM instance_keys WHERE name LIKE 'enc_prev:%'`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE meta SET value = value + 1 WHERE key = 'generation'`)
		return err
	})
	if err != nil {
		return rep, err
	}
	a.Keys.setSealing(newKey, nil)
	return rep, nil
}

// installSealingKey is step (1) of RotateKeys: a new current key, the old
// ones retired (still opening), the generation bumped.
func (a *App) installSealingKey(ctx context.Context) (newKey []byte, prev [][]byte, err error) {
	newKey = RandomBytes(32)
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		rows, err := readKeyRows(ctx, tx)
		if err != nil {
			return err
		}
		_, enc, old, err := keysFromRows(rows, a.Cfg.MasterKey)
		if err != nil {
			return err
		}
		if enc == nil {
			return errors.New("no sealing key to rotate")
		}
		maxN := 0
		for _, r := range rows {
			if n, err := strconv.Atoi(strings.TrimPrefix(r.Name, keyPrevName)); err == nil && strings.HasPrefix(r.Name, keyPrevName) && n > maxN {
				maxN = n
			}
		}
		name := keyPrevName + strconv.Itoa(maxN+1)
		now := a.NowText()
		if err := a.putKey(ctx, tx, "enc", newKey, now); err != nil {
			return err
		}
		if err := a.putKey(ctx, tx, name, enc, now); err != nil {
			return err
		}
		prev = append([][]byte{enc}, old...)
		_, err = tx.ExecContext(ctx, `UPDATE meta SET value = value + 1 WHERE key = 'generation'`)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	a.Keys.setSealing(newKey, prev)
	return newKey, prev, nil
}

// putKey writes a key row, wrapped when the instance has a master key.
func (a *App) putKey(ctx context.Context, tx *sql.Tx, name string, key []byte, now string) error {
	blob := key
	if a.Cfg.MasterKey != nil {
		blob = wrapKey(a.Cfg.MasterKey, name, key)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO instance_keys(name, key, created_at) VALUES (?,?,?)
		ON CONFLICT(name) DO UPDATE SET key = excluded.key, created_at = excluded.created_at`, name, blob, now)
	return err
}

// resealTenant re-seals, in one transaction, every value of slug that the
// new key does not open; n counts them, unreadable those no key opens.
func (a *App) resealTenant(ctx context.Context, slug string, newKey []byte, prev [][]byte) (n, unreadable int, err error) {
	t, release, err := a.Acquire(slug)
	if err != nil {
		return 0, 0, err
	}
	defer release()
	err = t.Write(ctx, func(tx *sql.Tx) error {
		n, unreadable, err = resealIn(ctx, tx, a.Registry().SealedColumns(), newKey, prev)
		return err
	})
	return n, unreadable, err
}

// resealInstance is resealTenant for the sealed columns of instance.db.
func (a *App) resealInstance(ctx context.Context, newKey []byte, prev [][]byte) (n, unreadable int, err error) {
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		n, unreadable, err = resealIn(ctx, tx, a.Registry().InstanceSealedColumns(), newKey, prev)
		return err
	})
	return n, unreadable, err
}

// resealIn re-seals in tx the values of cols that newKey does not open.
func resealIn(ctx context.Context, tx *sql.Tx, cols []SealedColumn, newKey []byte, prev [][]byte) (n, unreadable int, err error) {
	err = eachSealedIn(ctx, tx, cols, func(c SealedColumn, rowid int64, v []byte) error {
		if _, err := openWith(newKey, v, nil); err == nil {
			return nil
		}
		var plain []byte
		for _, p := range prev {
			if pl, err := openWith(p, v, nil); err == nil {
				plain = pl
				break
			}
		}
		if plain == nil {
			unreadable++
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE `+c.Table+` SET `+c.Column+` = ? WHERE rowid = ?`, sealWith(newKey, plain, nil), rowid); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, unreadable, err
}
