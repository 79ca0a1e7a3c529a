package eventservice

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/store"
)

// R1–R9 under concurrency: many goroutines register (ordinary and table
// triggers, some refused by the event store, some failing RegisterTable),
// remove, reset, heartbeat, report and run the inactivity cleanup against
// one service, and a closer closes admission midway. While they run, each
// reporter checks that a count is never negative and, once it saw
// admission closed, never rises (R8). At quiescent points (every worker
// done) the harness checks R1, R3 and R9 exactly. Run it with -race.
func TestStress(t *testing.T) {
	const workers, ops = 8, 1000
	h := newHarness(t, func(c *Config) { c.InactivityTimeout = time.Minute })
	for _, c := range []ClusterID{"c1", "c2"} {
		// Deterministic per-ID faults: dispatchers on tables ≡ 3 (mod 7)
		// fail RegisterTable, those on tables ≡ 5 (mod 11) are refused.
		h.schemaStore(c).FailIf(func(tbl TableID, _ uint64) bool { return tbl%7 == 3 }, nil)
		h.eventStore(c).Refuse(func(_ DispatcherID, s store.Subscription) bool { return s.Table%11 == 5 })
	}
	round := func(seed uint64, closeMidway bool) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				// Odd workers' contexts can be cancelled (never are): their
				// Do queues behind a busy loop instead of waiting for the
				// baton, so both of Do's paths race.
				ctx := context.Background()
				if w%2 == 1 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
				}
				rng := rand.New(rand.NewPCG(seed, uint64(w)))
				sawClosed, last := false, int64(0)
				for i := range ops {
					if closeMidway && w == 0 && i == ops/2 {
						h.svc.CloseAdmission()
					}
					n := rng.IntN(16) // 16 IDs per worker, shared clusters
					cluster := ClusterID(fmt.Sprintf("c%d", 1+n%2))
					id := DispatcherID(fmt.Sprintf("w%d-d%d", w, n))
					switch op := rng.IntN(10); {
					case op < 4:
						req := Request{Action: Register, Cluster: cluster, Changefeed: ChangefeedID(fmt.Sprintf("cf%d", n%3)),
							Dispatcher: id, Table: TableID(w*16 + n + 1), StartTs: 1, TableTrigger: n%5 == 0, OnlyReuse: n%4 == 1}
						if rng.IntN(2) == 0 {
							_ = h.svc.Do(ctx, req)
						} else {
							_ = h.svc.Submit(ctx, req)
						}
					case op < 7:
						_ = h.svc.Submit(ctx, rem(cluster, id))
					case op < 8:
						_ = h.svc.Do(ctx, reset(cluster, id, uint64(1+rng.IntN(3)), 2))
					case op < 9:
						_, _ = h.svc.Heartbeat(ctx, Heartbeat{Cluster: cluster, Progress: []Progress{{Dispatcher: id, Epoch: 1, CheckpointTs: 5}}})
					default:
						if w == 1 {
							h.advance(30 * time.Second)
							_, _ = h.svc.Cleanup(ctx)
						}
					}
					cnt, closed := h.svc.Sample()
					if cnt < 0 {
						t.Errorf("R1: negative count %d", cnt)
						return
					}
					if sawClosed && cnt > last {
						t.Errorf("R8: count rose from %d to %d after admission closed", last, cnt)
						return
					}
					sawClosed, last = closed, cnt
				}
			})
		}
		wg.Wait()
		h.checkQuiescent()
	}
	round(1, false)
	round(2, false)
	round(3, true)
	// Remove everything: the count returns to zero and no store holds
	// anything.
	for _, b := range h.snapshot().Brokers {
		for _, d := range b.Dispatchers {
			_ = h.do(rem(b.Cluster, d.ID))
		}
	}
	h.checkQuiescent()
	if n, closed := h.svc.Sample(); n != 0 || !closed {
		t.Fatalf("final Sample() = (%d, %v), want (0, true)", n, closed)
	}
}

// R2, R8: CloseAdmission races registrations, some of them to clusters
// whose broker the loop creates meanwhile, and reports. No registration
// fails or is removed, so once a report saw admission closed with count
// n, every later report says n: none admitted before the close is missed
// (counted late), and none refused is counted. A refused registration
// also implies that admission reads as closed. Run it with -race.
func TestCloseAdmissionRacesAdmissions(t *testing.T) {
	for round := range 20 {
		h := newHarness(t)
		ctx := context.Background()
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Go(func() {
				for i := range 40 {
					c := ClusterID(fmt.Sprintf("c%d", (w+i)%6))
					err := h.svc.Do(ctx, Request{Action: Register, Cluster: c, Changefeed: "cf", Dispatcher: DispatcherID(fmt.Sprintf("d%d-%d", w, i)), Table: TableID(i + 1)})
					if err != nil {
						if !assert.ErrorIs(t, err, ErrAdmissionClosed) {
							return
						}
						assert.True(t, h.svc.AdmissionClosed(), "refused while admission reads open")
					}
				}
			})
		}
		wg.Go(func() {
			time.Sleep(time.Duration(round) * 20 * time.Microsecond)
			h.svc.CloseAdmission()
		})
		wg.Go(func() {
			final := int64(-1)
			for range 2000 {
				n, closed := h.svc.Sample()
				if final >= 0 && !assert.Equal(t, final, n, "R8: count changed after a closed report") {
					return
				}
				if closed && final < 0 {
					final = n
				}
			}
		})
		wg.Wait()
		n, closed := h.svc.Sample()
		require.True(t, closed)
		snap := h.snapshot()
		var published int64
		for _, b := range snap.Brokers {
			published += int64(len(b.Dispatchers))
		}
		require.Equal(t, published, n, "count is the admitted registrations")
	}
}
