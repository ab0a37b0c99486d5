package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/benbjohnson/litestream"
)

// Promotion turns a standby's data directory into a primary's: the
// follower has stopped (after a last catch-up), the replica is taken over
// under a new generation, and the copies lose their followed marks. The
// record (PromotionPath) stays: a standby's xr serve --standby-of restarted
// on a promoted directory runs as the primary of that replica, and the
// journal is applied by the promoted process before it serves.

// Promotion is the record of a standby's promotion (PromotionPath).
type Promotion struct {
	Of      string    `json:"of"`         // the replica, now replicated to
	Gen     uint64    `json:"generation"` // the generation taken over
	At      time.Time `json:"at"`
	Primary time.Time `json:"primary_at,omitzero"` // when the box served as the primary (journal applied)
	Journal any       `json:"journal,omitempty"`   // what the journal applied (aaa.JournalReport)
}

// PromotionPath is where a promoted data directory keeps its Promotion.
func PromotionPath(dataDir string) string { return filepath.Join(dataDir, "standby", "promoted.json") }

// ReadPromotion reads the data directory's promotion; ok is false for a
// directory never promoted.
func ReadPromotion(dataDir string) (p Promotion, ok bool, err error) {
	b, err := os.ReadFile(PromotionPath(dataDir))
	if errors.Is(err, os.ErrNotExist) {
		return p, false, nil
	}
	if err != nil {
		return p, false, err
	}
	return p, true, json.Unmarshal(b, &p)
}

// WritePromotion rewrites the record atomically.
func WritePromotion(dataDir string, p Promotion) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	path := PromotionPath(dataDir)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Promote takes the replica over for the standby at dataDir, whose
// follower has stopped: it stamps the next generation naming this data
// directory's holder (the old primary is fenced from its next look at the
// stamp), records the promotion and removes the followed marks (the
// <file>-txid files). It refuses when the replica was taken over by
// another box since this standby began following it.
func Promote(ctx context.Context, target Target, dataDir string) (Promotion, error) {
	st, err := ReadStatus(dataDir)
	if err != nil {
		return Promotion{}, fmt.Errorf("the follower's status: %w", err)
	}
	cur, ok, err := ReadStamp(ctx, target)
	switch {
	case err != nil:
		return Promotion{}, err
	case !ok || st.Gen == 0:
		return Promotion{}, errors.New("the replica holds no generation yet: nothing to promote")
	case cur.Gen != st.Gen:
		return Promotion{}, fmt.Errorf("%w (followed generation %d, now %d)", errGenerationMoved, st.Gen, cur.Gen)
	}
	holder, err := HolderID(dataDir)
	if err != nil {
		return Promotion{}, err
	}
	stamp, err := TakeOver(ctx, target, holder)
	if err != nil {
		return Promotion{}, err
	}
	p := Promotion{Of: target.URL, Gen: stamp.Gen, At: stamp.At}
	if err := WritePromotion(dataDir, p); err != nil {
		return p, err
	}
	for rel := range st.Files {
		path := litestream.TXIDPath(filepath.Join(dataDir, filepath.FromSlash(rel)))
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return p, err
		}
	}
	return p, nil
}
