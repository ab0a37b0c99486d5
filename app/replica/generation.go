package replica

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/superfly/ltx"
)

// Fencing. A replica has one holder at a time: the primary that ships to
// it. The holder is stamped at the replica's root (Stamp, in the object
// "generation"); each primary's files go under its generation
// (DIR/g<N>/instance.db/…), so two primaries' transactions never mix, and
// a standby follows the generation the stamp names. A promotion stamps the
// next generation (TakeOver); a primary that finds the stamp naming
// another holder, at its start or while it runs, stops shipping and
// refuses writes (ErrFenced).

// Stamp names the replica's current holder.
type Stamp struct {
	Gen    uint64    `json:"generation"`
	Holder string    `json:"holder"` // a random id kept in the holder's data directory (HolderID)
	At     time.Time `json:"at"`
}

// ErrFenced: the replica is held by another primary (a standby was
// promoted). This box must not write: re-join it as a standby.
var ErrFenced = errors.New("the replica is held by another primary (a standby was promoted): this box refuses writes until it is re-joined as a standby")

// stampRel is where the stamp lives in the replica: an object written and
// read through the target's own client (so it works for every scheme),
// as an LTX file whose TXID is the generation and whose one page holds
// the Stamp in JSON.
const stampRel = "generation"

// ReadStamp reads the replica's stamp; ok is false when it has none (a
// new replica).
func ReadStamp(ctx context.Context, target Target) (st Stamp, ok bool, err error) {
	c := target.rootClient(stampRel)
	itr, err := c.LTXFiles(ctx, 0, 0, false)
	if err != nil {
		return st, false, err
	}
	var last *ltx.FileInfo
	for itr.Next() {
		info := *itr.Item()
		if last == nil || info.MaxTXID > last.MaxTXID {
			last = &info
		}
	}
	if err := errors.Join(itr.Err(), itr.Close()); err != nil || last == nil {
		return st, false, err
	}
	rc, err := c.OpenLTXFile(ctx, 0, last.MinTXID, last.MaxTXID, 0, 0)
	if err != nil {
		return st, false, err
	}
	defer rc.Close()
	dec := ltx.NewDecoder(rc)
	if err := dec.DecodeHeader(); err != nil {
		return st, false, fmt.Errorf("replica stamp: %w", err)
	}
	var ph ltx.PageHeader
	page := make([]byte, dec.Header().PageSize)
	if err := dec.DecodePage(&ph, page); err != nil {
		return st, false, fmt.Errorf("replica stamp: %w", err)
	}
	if err := json.Unmarshal(bytes.TrimRight(page, "\x00"), &st); err != nil {
		return st, false, fmt.Errorf("replica stamp: %w", err)
	}
	if st.Gen != uint64(last.MaxTXID) {
		return st, false, fmt.Errorf("replica stamp: generation %d in a file of %d", st.Gen, last.MaxTXID)
	}
	return st, true, nil
}

// TakeOver stamps the next generation naming holder and checks that it
// holds it (two boxes promoted at once: one wins, the other gets an
// error).
func TakeOver(ctx context.Context, target Target, holder string) (Stamp, error) {
	cur, _, err := ReadStamp(ctx, target)
	if err != nil {
		return Stamp{}, err
	}
	next := Stamp{Gen: cur.Gen + 1, Holder: holder, At: time.Now().UTC()}
	if err := writeStamp(ctx, target, next); err != nil {
		return Stamp{}, fmt.Errorf("stamp generation %d: %w", next.Gen, err)
	}
	got, _, err := ReadStamp(ctx, target)
	if err != nil {
		return Stamp{}, err
	}
	if got.Holder != holder || got.Gen != next.Gen {
		return Stamp{}, fmt.Errorf("another box took the replica over at the same time (generation %d, holder %s)", got.Gen, got.Holder)
	}
	return got, nil
}

func writeStamp(ctx context.Context, target Target, st Stamp) error {
	buf, err := encodeObject(ltx.TXID(st.Gen), st.At, st)
	if err != nil {
		return err
	}
	c := target.rootClient(stampRel)
	if err := c.Init(ctx); err != nil {
		return err
	}
	_, err = c.WriteLTXFile(ctx, 0, ltx.TXID(st.Gen), ltx.TXID(st.Gen), buf)
	return err
}

// encodeObject is v in JSON as the one page of an LTX file of txid: the
// form every replica client stores (the stamp, the heartbeat).
func encodeObject(txid ltx.TXID, at time.Time, v any) (*bytes.Buffer, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	const pageSize = 4096
	if len(b) > pageSize {
		return nil, errors.New("replica object too long")
	}
	page := make([]byte, pageSize)
	copy(page, b)
	var buf bytes.Buffer
	enc, err := ltx.NewEncoder(&buf)
	if err != nil {
		return nil, err
	}
	hdr := ltx.Header{Version: ltx.Version, Flags: ltx.HeaderFlagNoChecksum, PageSize: pageSize, Commit: 1,
		MinTXID: txid, MaxTXID: txid, Timestamp: at.UnixMilli()}
	if err := enc.EncodeHeader(hdr); err != nil {
		return nil, err
	}
	if err := enc.EncodePage(ltx.PageHeader{Pgno: 1}, page); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return &buf, nil
}

// HolderID is this data directory's holder id (DATA/replica-holder),
// made on first use: a primary restarted on the same data keeps holding
// its generation.
func HolderID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "replica-holder")
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	var raw [12]byte
	if _, err := io.ReadFull(rand.Reader, raw[:]); err != nil {
		return "", err
	}
	id := hex.EncodeToString(raw[:])
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", err
	}
	return id, os.Rename(tmp, path)
}

// hold makes holder the holder of target's replica at a primary's start:
// a new replica is stamped generation 1; a replica this holder holds
// goes on in its generation; one held by another is ErrFenced.
func hold(ctx context.Context, target Target, holder string) (Stamp, error) {
	st, ok, err := ReadStamp(ctx, target)
	switch {
	case err != nil:
		return st, fmt.Errorf("read the replica's generation: %w", err)
	case !ok:
		return TakeOver(ctx, target, holder)
	case st.Holder != holder:
		return st, fmt.Errorf("%w (generation %d, holder %s, since %s)", ErrFenced, st.Gen, st.Holder, st.At.Format(time.RFC3339))
	}
	return st, nil
}

// InGeneration is the target's files of generation gen (DIR/g<gen>/…).
func (t Target) InGeneration(gen uint64) Target {
	t.gen = gen
	return t
}

// Generation is the generation whose files the target names (0: none yet).
func (t Target) Generation() uint64 { return t.gen }

// current is the target in the generation the replica's stamp names.
func (t Target) current(ctx context.Context) (Target, error) {
	st, ok, err := ReadStamp(ctx, t)
	if err != nil {
		return t, err
	}
	if !ok {
		return t, ErrNothingToRestore
	}
	return t.InGeneration(st.Gen), nil
}
