package main

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"
)

// writes is a paced load of deposits on one server: one writer per
// tenant, each sequential, so a writer's k-th acknowledged deposit is the
// k-th of its subscriber's balance and a balance seen elsewhere says
// exactly which of its acknowledged deposits are there.
type writes struct {
	acks   [][]time.Time // per writer: when each deposit was acknowledged, in order
	failed int           // deposits answered otherwise (or not at all)
	mu     sync.Mutex
	done   chan struct{} // closed when every writer has stopped
}

// runWrites sends rate deposits a second to addr, spread over the
// tenants' writers, until stop closes.
func runWrites(addr string, apis []*tenantAPI, rate float64, stop <-chan struct{}) *writes {
	w := &writes{acks: make([][]time.Time, len(apis)), done: make(chan struct{})}
	start := time.Now()
	var wg sync.WaitGroup
	for i, a := range apis {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Writer i's k-th deposit is due at (k*n + i)/rate: the
			// writers interleave into one steady stream.
			for k := 0; ; k++ {
				due := start.Add(time.Duration(float64(k*len(apis)+i) / rate * float64(time.Second)))
				select {
				case <-stop:
					return
				case <-time.After(time.Until(due)):
				}
				err := a.deposit(addr, fmt.Sprintf("ha-%d-%d-%d", start.UnixNano(), i, k))
				now := time.Now()
				w.mu.Lock()
				if err == nil {
					w.acks[i] = append(w.acks[i], now)
				} else {
					w.failed++
				}
				w.mu.Unlock()
				if err != nil {
					// A writer whose deposit got no answer stops: the
					// next acknowledged one would no longer be its
					// balance's next.
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(w.done) }()
	return w
}

func (w *writes) total() int {
	n := 0
	for _, a := range w.acks {
		n += len(a)
	}
	return n
}

// lagSamples polls the balances of the first writers on the standby every
// interval until each shows its writer's acknowledged deposits (or
// limit), and returns, for every acknowledged deposit of those writers,
// the time from its acknowledgement to the first poll answer that
// showed it.
func lagSamples(standby string, apis []*tenantAPI, base []int, w *writes, interval, limit time.Duration) ([]time.Duration, int) {
	var lags []time.Duration
	var unseen int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, a := range apis {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var seen []time.Time // seen[k]: the first poll that showed deposit k
			var deadline <-chan time.Time
			for {
				n, err := a.balance(standby)
				at := time.Now()
				if err == nil {
					for len(seen) < n-base[i] {
						seen = append(seen, at)
					}
				}
				select {
				case <-w.done:
					if deadline == nil {
						deadline = time.After(limit)
					}
				default:
				}
				w.mu.Lock()
				acks := append([]time.Time(nil), w.acks[i]...)
				w.mu.Unlock()
				if deadline != nil && len(seen) >= len(acks) {
					mu.Lock()
					lags = append(lags, lagsOf(acks, seen)...)
					mu.Unlock()
					return
				}
				select {
				case <-deadline:
					mu.Lock()
					lags = append(lags, lagsOf(acks, seen)...)
					unseen += max(0, len(acks)-len(seen))
					mu.Unlock()
					return
				case <-time.After(interval):
				}
			}
		}()
	}
	wg.Wait()
	return lags, unseen
}

// lagsOf pairs acknowledgements with the polls that showed them; a poll
// may answer before the acknowledgement reaches the client: lag 0.
func lagsOf(acks, seen []time.Time) []time.Duration {
	out := make([]time.Duration, 0, len(acks))
	for k := range min(len(acks), len(seen)) {
		out = append(out, max(0, seen[k].Sub(acks[k])))
	}
	return out
}

// shipped follows the files under the replica directory every second
// until stop and returns the bytes written there since the first look:
// the growth of the files that were there plus the files that appeared
// (Litestream writes new LTX files and compacts them into new ones; the
// ones it removes still count as shipped).
func shipped(dir string, stop <-chan struct{}) func() int64 {
	first := replicaBytes(dir)
	most := map[string]int64{}
	var mu sync.Mutex
	look := func() {
		mu.Lock()
		defer mu.Unlock()
		for p, n := range replicaBytes(dir) {
			most[p] = max(most[p], n)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				look()
				return
			case <-time.After(time.Second):
				look()
			}
		}
	}()
	return func() int64 {
		<-done
		var total int64
		for p, n := range most {
			total += max(0, n-first[p])
		}
		return total
	}
}

// quantile of sorted durations (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(q*float64(len(ds))+0.5) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

func sorted(ds []time.Duration) []time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds
}

var lagField = regexp.MustCompile(`"lag_seconds":\s*([0-9.eE+-]+)`)

// readyzLags reads the lag the standby reports in /readyz every interval
// until stop: the follower's own leg (replica → standby), beside the
// end-to-end lag the API polls see.
func readyzLags(standby string, interval time.Duration, stop <-chan struct{}) func() []time.Duration {
	var lags []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if res, err := httpClient.Get("http://" + standby + "/readyz"); err == nil {
				b, _ := io.ReadAll(res.Body)
				_ = res.Body.Close()
				if m := lagField.FindSubmatch(b); m != nil {
					if s, err := strconv.ParseFloat(string(m[1]), 64); err == nil {
						lags = append(lags, time.Duration(s*float64(time.Second)))
					}
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(interval):
			}
		}
	}()
	return func() []time.Duration { <-done; return sorted(lags) }
}
