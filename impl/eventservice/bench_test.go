package eventservice

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
)

// mutexRegistry is the baseline: one global mutex around a plain map, a
// counter and the same store calls, the registry one would write without
// a request loop. A slow store call holds the lock, so a report waits for
// it.
type mutexRegistry struct {
	mu    sync.Mutex
	m     map[DispatcherID]TableID
	count int64
	es    store.EventStore
	ss    store.SchemaStore
}

func (r *mutexRegistry) register(id DispatcherID, tbl TableID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[id]; ok {
		return
	}
	if !r.es.RegisterDispatcher(id, store.Subscription{Table: tbl}, store.NotifierFunc(func() {})) {
		return
	}
	if err := r.ss.RegisterTable(context.Background(), tbl, 1); err != nil {
		r.es.UnregisterDispatcher(id)
		return
	}
	r.m[id] = tbl
	r.count++
}

func (r *mutexRegistry) remove(id DispatcherID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tbl, ok := r.m[id]
	if !ok {
		return
	}
	delete(r.m, id)
	r.es.UnregisterDispatcher(id)
	r.ss.UnregisterTable(tbl)
	r.count--
}

func (r *mutexRegistry) report() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// do is the map behind the service's API: it validates req as the
// service does and registers or removes.
func (r *mutexRegistry) do(req Request) error {
	if err := validate(&req); err != nil {
		return err
	}
	switch req.Action {
	case Register:
		r.register(req.Dispatcher, req.Table)
	case Remove:
		r.remove(req.Dispatcher)
	}
	return nil
}

func newMutexRegistry() *mutexRegistry {
	return &mutexRegistry{m: map[DispatcherID]TableID{}, es: storetest.NewMemEventStore(), ss: storetest.NewMemSchemaStore()}
}

// ids precomputes dispatcher IDs so that formatting is not measured.
func benchIDs(g, n int) [][]DispatcherID {
	out := make([][]DispatcherID, g)
	for w := range out {
		out[w] = make([]DispatcherID, n)
		for i := range n {
			out[w][i] = DispatcherID(fmt.Sprintf("w%d-d%d", w, i))
		}
	}
	return out
}

// runParallel splits b.N register+remove pairs over g goroutines.
func runParallel(b *testing.B, g int, pair func(w, i int)) {
	b.ResetTimer()
	runPairs(g, b.N, pair)
}

// BenchmarkRegisterRemove measures register+remove pairs per second with
// 1, 2 and 8 goroutines: our service asynchronously ("service": requests
// queued with Submit, as a collector's messages are, then a barrier) and
// synchronously ("service-sync": Do, which waits for the outcome as the
// map's callers do), against the global-mutex map. Each contender runs
// alone; BenchmarkRegisterRemovePaired interleaves them for ratios.
func BenchmarkRegisterRemove(b *testing.B) {
	const idsPer = 64
	for _, g := range []int{1, 2, 8} {
		ids := benchIDs(g, idsPer)
		b.Run(fmt.Sprintf("service/g=%d", g), func(b *testing.B) {
			h := newHarness(b)
			ctx := context.Background()
			runParallel(b, g, func(w, i int) {
				id := ids[w][i%idsPer]
				_ = h.svc.Submit(ctx, Request{Action: Register, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: TableID(w*idsPer + i%idsPer + 1)})
				_ = h.svc.Submit(ctx, Request{Action: Remove, Cluster: "c1", Dispatcher: id})
			})
			if _, err := h.svc.Snapshot(ctx); err != nil { // barrier: the queue is drained
				b.Fatal(err)
			}
			b.StopTimer()
			if n, _ := h.svc.Sample(); n != 0 {
				b.Fatalf("count %d after balanced pairs", n)
			}
		})
		b.Run(fmt.Sprintf("service-sync/g=%d", g), func(b *testing.B) {
			h := newHarness(b)
			ctx := context.Background()
			runParallel(b, g, func(w, i int) {
				id := ids[w][i%idsPer]
				_ = h.svc.Do(ctx, Request{Action: Register, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: TableID(w*idsPer + i%idsPer + 1)})
				_ = h.svc.Do(ctx, Request{Action: Remove, Cluster: "c1", Dispatcher: id})
			})
		})
		b.Run(fmt.Sprintf("mutexmap/g=%d", g), func(b *testing.B) {
			r := newMutexRegistry()
			runParallel(b, g, func(w, i int) {
				id := ids[w][i%idsPer]
				r.register(id, TableID(w*idsPer+i%idsPer))
				r.remove(id)
			})
		})
	}
}

// BenchmarkRegisterRemovePaired measures the same register+remove pairs
// as BenchmarkRegisterRemove, but alternates the contenders round by
// round (rounds of 5,000 pairs, the first contender rotating each round)
// within one run, so that a noisy machine slows all of them alike. The
// contenders: Do ("sync"), Submit then a barrier ("async"), the
// global-mutex map ("map", called with an ID and a table) and the same map
// behind the service's API ("mapreq": a Request in, validated, an error
// out, so that both sides build and pass the same requests). It reports
// ns per pair for each and the medians of the per-round ratios sync/map,
// async/map and sync/mapreq: below 1 is faster than the baseline. b.N
// counts rounds.
func BenchmarkRegisterRemovePaired(b *testing.B) {
	const idsPer, round = 64, 5000
	for _, g := range []int{1, 2, 8} {
		ids := benchIDs(g, idsPer)
		b.Run(fmt.Sprintf("g=%d", g), func(b *testing.B) {
			h := newHarness(b)
			r, rr := newMutexRegistry(), newMutexRegistry()
			ctx := context.Background()
			contenders := []struct {
				name string
				run  func()
			}{
				{"sync", func() {
					runPairs(g, round, func(w, i int) {
						id := ids[w][i%idsPer]
						_ = h.svc.Do(ctx, Request{Action: Register, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: TableID(w*idsPer + i%idsPer + 1)})
						_ = h.svc.Do(ctx, Request{Action: Remove, Cluster: "c1", Dispatcher: id})
					})
				}},
				{"async", func() {
					runPairs(g, round, func(w, i int) {
						id := ids[w][i%idsPer]
						_ = h.svc.Submit(ctx, Request{Action: Register, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: TableID(w*idsPer + i%idsPer + 1)})
						_ = h.svc.Submit(ctx, Request{Action: Remove, Cluster: "c1", Dispatcher: id})
					})
					if _, err := h.svc.Snapshot(ctx); err != nil { // barrier
						b.Fatal(err)
					}
				}},
				{"map", func() {
					runPairs(g, round, func(w, i int) {
						id := ids[w][i%idsPer]
						r.register(id, TableID(w*idsPer+i%idsPer))
						r.remove(id)
					})
				}},
				{"mapreq", func() {
					runPairs(g, round, func(w, i int) {
						id := ids[w][i%idsPer]
						_ = rr.do(Request{Action: Register, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: TableID(w*idsPer + i%idsPer + 1)})
						_ = rr.do(Request{Action: Remove, Cluster: "c1", Dispatcher: id})
					})
				}},
			}
			runs := make([]func(), len(contenders))
			for c, x := range contenders {
				runs[c] = x.run
			}
			b.ResetTimer()
			rounds := alternate(b.N, runs)
			b.StopTimer()
			if n, _ := h.svc.Sample(); n != 0 {
				b.Fatalf("count %d after balanced pairs", n)
			}
			for c, x := range contenders {
				b.ReportMetric(nsPerPair(rounds, c, round), x.name+"-ns/pair")
			}
			b.ReportMetric(median(ratios(rounds, 0, 2)), "sync/map")
			b.ReportMetric(median(ratios(rounds, 1, 2)), "async/map")
			b.ReportMetric(median(ratios(rounds, 0, 3)), "sync/mapreq")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// runPairs runs n register+remove pairs split over g goroutines.
func runPairs(g, n int, pair func(w, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range g {
		wg.Go(func() {
			for i := 0; next.Add(1) <= int64(n); i++ {
				pair(w, i)
			}
		})
	}
	wg.Wait()
}

// startLoad runs pair(w, i) for i = 0, 1, ... on g goroutines w until
// stop is called, counting pairs in n if it is not nil.
func startLoad(g int, n *atomic.Int64, pair func(w, i int)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range g {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				pair(w, i)
				if n != nil {
					n.Add(1)
				}
			}
		})
	}
	return func() { close(done); wg.Wait() }
}

// alternate runs the contenders rounds times, in an order that rotates
// each round, and returns each round's durations, indexed [round][contender].
func alternate(rounds int, contenders []func()) [][]time.Duration {
	out := make([][]time.Duration, rounds)
	for n := range rounds {
		out[n] = make([]time.Duration, len(contenders))
		for k := range contenders {
			c := (k + n) % len(contenders)
			t0 := time.Now()
			contenders[c]()
			out[n][c] = time.Since(t0)
		}
	}
	return out
}

// ratios returns, per round, the duration of contender x over that of y.
func ratios(rounds [][]time.Duration, x, y int) []float64 {
	out := make([]float64, len(rounds))
	for n, d := range rounds {
		out[n] = float64(d[x]) / float64(d[y])
	}
	return out
}

// nsPerPair returns contender c's mean ns per pair over rounds of
// perRound pairs.
func nsPerPair(rounds [][]time.Duration, c, perRound int) float64 {
	var total time.Duration
	for _, d := range rounds {
		total += d[c]
	}
	return float64(total.Nanoseconds()) / float64(len(rounds)*perRound)
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// BenchmarkReportWhileRegistering measures one Sample while 2 goroutines
// keep registering and removing: our lock-free Sample against the
// global-mutex map's locked read.
func BenchmarkReportWhileRegistering(b *testing.B) {
	const g, idsPer = 2, 64
	ids := benchIDs(g, idsPer)
	b.Run("service", func(b *testing.B) {
		h := newHarness(b)
		ctx := context.Background()
		stop := startLoad(g, nil, func(w, i int) {
			id := ids[w][i%idsPer]
			_ = h.svc.Do(ctx, Request{Action: Register, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: TableID(w*idsPer + i%idsPer + 1)})
			_ = h.svc.Do(ctx, Request{Action: Remove, Cluster: "c1", Dispatcher: id})
		})
		b.ResetTimer()
		for range b.N {
			h.svc.Sample()
		}
		b.StopTimer()
		stop()
	})
	b.Run("mutexmap", func(b *testing.B) {
		r := newMutexRegistry()
		stop := startLoad(g, nil, func(w, i int) {
			id := ids[w][i%idsPer]
			r.register(id, TableID(w*idsPer+i%idsPer))
			r.remove(id)
		})
		b.ResetTimer()
		for range b.N {
			r.report()
		}
		b.StopTimer()
		stop()
	})
}

// BenchmarkRegistryCore compares the registries themselves, without the
// service's API and the handoff to the request loop: register+remove
// pairs run by one goroutine through the broker's request handling (the
// code the loop runs: the admission gate, the early count, the published
// table, the changefeed status, the same in-memory store calls; the
// requests built beforehand, as the map's IDs are), against the
// global-mutex map. The two alternate in rounds of 5,000 pairs, and
// core/map is the median of the per-round ratios (below 1: ours is
// faster). b.N counts rounds.
func BenchmarkRegistryCore(b *testing.B) {
	const idsPer, round = 64, 5000
	ids := benchIDs(1, idsPer)[0]
	start := time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC)
	svc, err := New(Config{
		NewStores: func(ClusterID) (store.EventStore, store.SchemaStore) {
			return storetest.NewMemEventStore(), storetest.NewMemSchemaStore()
		},
		// A fake clock, as in the service benchmarks' harness: the cost
		// of reading the wall clock is not the registry's.
		Now: func() time.Time { return start },
	})
	if err != nil {
		b.Fatal(err)
	}
	regs, rems := make([]Request, idsPer), make([]Request, idsPer)
	for i, id := range ids {
		regs[i] = Request{Action: Register, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: TableID(i + 1)}
		rems[i] = Request{Action: Remove, Cluster: "c1", Dispatcher: id}
	}
	r := newMutexRegistry()
	ctx := context.Background()
	contenders := []func(){
		func() {
			// Run is not started: this goroutine plays the request loop.
			for i := range round {
				_ = svc.handle(ctx, nil, &regs[i%idsPer])
				_ = svc.handle(ctx, nil, &rems[i%idsPer])
			}
		},
		func() {
			for i := range round {
				id := ids[i%idsPer]
				r.register(id, TableID(i%idsPer))
				r.remove(id)
			}
		},
	}
	b.ReportAllocs()
	b.ResetTimer()
	rounds := alternate(b.N, contenders)
	b.StopTimer()
	if n, _ := svc.Sample(); n != 0 {
		b.Fatalf("count %d after balanced pairs", n)
	}
	b.ReportMetric(nsPerPair(rounds, 0, round), "core-ns/pair")
	b.ReportMetric(nsPerPair(rounds, 1, round), "map-ns/pair")
	b.ReportMetric(median(ratios(rounds, 0, 1)), "core/map")
	b.ReportMetric(0, "ns/op")
}

// slowSchemaStore is a schema store whose RegisterTable takes d of CPU
// (a spin, so that the delay does not depend on timer resolution), like a
// schema store resolving a table.
type slowSchemaStore struct {
	*storetest.MemSchemaStore
	d time.Duration
}

func (s slowSchemaStore) RegisterTable(ctx context.Context, table TableID, startTs uint64) error {
	for start := time.Now(); time.Since(start) < s.d; {
	}
	return s.MemSchemaStore.RegisterTable(ctx, table, startTs)
}

// BenchmarkReportSlowStore measures Sample's latency while 2 goroutines
// keep registering and removing (with Do, as the map's callers wait too)
// through a RegisterTable that takes 5µs. The global-mutex map holds its
// lock across the store call, so its Sample waits for it; ours reads
// atomics. The reporter pauses ~20µs between reports, as a periodic
// reporter would, so that it does not take a core from the load; ns/op
// is the mean latency of one Sample (the pause excluded), max-ns the
// worst, pairs/s the load's throughput meanwhile.
func BenchmarkReportSlowStore(b *testing.B) {
	const g, idsPer, slow = 2, 64, 5 * time.Microsecond
	ids := benchIDs(g, idsPer)
	run := func(b *testing.B, pair func(w, i int), report func()) {
		var pairs atomic.Int64
		stop := startLoad(g, &pairs, pair)
		time.Sleep(time.Millisecond) // let the load start
		b.ResetTimer()
		start, p0 := time.Now(), pairs.Load()
		var total, worst time.Duration
		for range b.N {
			t0 := time.Now()
			report()
			lat := time.Since(t0)
			total += lat
			worst = max(worst, lat)
			for t1 := time.Now(); time.Since(t1) < 20*time.Microsecond; {
				runtime.Gosched()
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/op")
		b.ReportMetric(float64(worst.Nanoseconds()), "max-ns")
		b.ReportMetric(float64(pairs.Load()-p0)/time.Since(start).Seconds(), "pairs/s")
		stop()
	}
	b.Run("service", func(b *testing.B) {
		h := newHarness(b, func(c *Config) {
			c.NewStores = func(ClusterID) (store.EventStore, store.SchemaStore) {
				return storetest.NewMemEventStore(), slowSchemaStore{storetest.NewMemSchemaStore(), slow}
			}
		})
		ctx := context.Background()
		run(b, func(w, i int) {
			id := ids[w][i%idsPer]
			_ = h.svc.Do(ctx, Request{Action: Register, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: TableID(w*idsPer + i%idsPer + 1)})
			_ = h.svc.Do(ctx, Request{Action: Remove, Cluster: "c1", Dispatcher: id})
		}, func() { h.svc.Sample() })
	})
	b.Run("mutexmap", func(b *testing.B) {
		r := newMutexRegistry()
		r.ss = slowSchemaStore{storetest.NewMemSchemaStore(), slow}
		run(b, func(w, i int) {
			id := ids[w][i%idsPer]
			r.register(id, TableID(w*idsPer+i%idsPer))
			r.remove(id)
		}, func() { r.report() })
	})
}

// BenchmarkAPIPairs measures register+remove pairs through the public API
// (Do) with g goroutines on one cluster, 64 IDs each, and every Do's
// latency: throughput (ns per pair; and the process's CPU time per pair,
// which a loaded machine's descheduling does not inflate) and the tail
// (p99, p999 of one Do).
// It is the end-to-end figure the registry's pieces answer to: a build
// with a piece and one without run it in alternation (see
// docs/perf.md). b.N counts pairs.
func BenchmarkAPIPairs(b *testing.B) {
	const idsPer = 64
	for _, g := range []int{1, 2} {
		b.Run(fmt.Sprintf("g=%d", g), func(b *testing.B) {
			ids := benchIDs(g, idsPer)
			h := newHarness(b)
			ctx := context.Background()
			lat := make([][]time.Duration, g)
			for w := range lat {
				lat[w] = make([]time.Duration, 0, 2*b.N/g+2)
			}
			cpu0 := cpuTime()
			b.ResetTimer()
			runPairs(g, b.N, func(w, i int) {
				id := ids[w][i%idsPer]
				t0 := time.Now()
				_ = h.svc.Do(ctx, Request{Action: Register, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: TableID(w*idsPer + i%idsPer + 1)})
				t1 := time.Now()
				_ = h.svc.Do(ctx, Request{Action: Remove, Cluster: "c1", Dispatcher: id})
				lat[w] = append(lat[w], t1.Sub(t0), time.Since(t1))
			})
			b.StopTimer()
			cpu := cpuTime() - cpu0
			if n := h.svc.sumCounts(); n != 0 {
				b.Fatalf("count %d after balanced pairs", n)
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/pair")
			all := slices.Concat(lat...)
			slices.Sort(all)
			q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Nanoseconds()) }
			b.ReportMetric(q(0.99), "p99-ns")
			b.ReportMetric(q(0.999), "p999-ns")
		})
	}
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
