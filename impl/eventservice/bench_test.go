package eventservice

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/drainproof/drainproof/impl/store"
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
	if !r.es.RegisterDispatcher(id, store.Subscription{Table: tbl}, func() {}) {
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

func newMutexRegistry() *mutexRegistry {
	return &mutexRegistry{m: map[DispatcherID]TableID{}, es: store.NewMemEventStore(), ss: store.NewMemSchemaStore()}
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
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range g {
		wg.Go(func() {
			for i := 0; next.Add(1) <= int64(b.N); i++ {
				pair(w, i)
			}
		})
	}
	wg.Wait()
}

// BenchmarkRegisterRemove measures register+remove pairs per second with
// 1, 2 and 8 goroutines: our service (requests queued with Submit, as a
// collector's messages are, then a barrier) against the global-mutex map.
func BenchmarkRegisterRemove(b *testing.B) {
	const idsPer = 64
	for _, g := range []int{1, 2, 8} {
		ids := benchIDs(g, idsPer)
		b.Run(fmt.Sprintf("service/g=%d", g), func(b *testing.B) {
			h := newHarness(b)
			ctx := context.Background()
			runParallel(b, g, func(w, i int) {
				id := ids[w][i%idsPer]
				_ = h.svc.Submit(ctx, Request{Action: Register, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: TableID(w*idsPer + i%idsPer)})
				_ = h.svc.Submit(ctx, Request{Action: Remove, Cluster: "c1", Dispatcher: id})
			})
			if _, err := h.svc.Snapshot(ctx); err != nil { // barrier: the queue is drained
				b.Fatal(err)
			}
			b.StopTimer()
			if n, _ := h.svc.Report(); n != 0 {
				b.Fatalf("count %d after balanced pairs", n)
			}
		})
		b.Run(fmt.Sprintf("service-sync/g=%d", g), func(b *testing.B) {
			h := newHarness(b)
			ctx := context.Background()
			runParallel(b, g, func(w, i int) {
				id := ids[w][i%idsPer]
				_ = h.svc.Do(ctx, Request{Action: Register, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: TableID(w*idsPer + i%idsPer)})
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

// BenchmarkReportWhileRegistering measures one Report while 2 goroutines
// keep registering and removing: our lock-free Report against the
// global-mutex map's locked read.
func BenchmarkReportWhileRegistering(b *testing.B) {
	const g, idsPer = 2, 64
	ids := benchIDs(g, idsPer)
	load := func(b *testing.B, pair func(w, i int)) (stop func()) {
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
				}
			})
		}
		return func() { close(done); wg.Wait() }
	}
	b.Run("service", func(b *testing.B) {
		h := newHarness(b)
		ctx := context.Background()
		stop := load(b, func(w, i int) {
			id := ids[w][i%idsPer]
			_ = h.svc.Do(ctx, Request{Action: Register, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: TableID(w*idsPer + i%idsPer)})
			_ = h.svc.Do(ctx, Request{Action: Remove, Cluster: "c1", Dispatcher: id})
		})
		b.ResetTimer()
		for range b.N {
			h.svc.Report()
		}
		b.StopTimer()
		stop()
	})
	b.Run("mutexmap", func(b *testing.B) {
		r := newMutexRegistry()
		stop := load(b, func(w, i int) {
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
