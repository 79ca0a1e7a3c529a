package eventservice

import (
	"context"
	"flag"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
)

// TestMain switches on the bug named by DRAINPROOF_BUG (build tag bugs),
// so that one test binary serves the whole bug zoo, and checks for leaked
// goroutines.
func TestMain(m *testing.M) {
	// rapid writes a failing case to testdata/ by default; tests write
	// files only under t.TempDir, and rapid prints the seed to replay.
	if err := flag.Set("rapid.nofailfile", "true"); err != nil {
		panic(err)
	}
	bugs.SetupTest("eventservice")
	goleak.VerifyTestMain(m)
}

// harness is a running service with in-memory stores per cluster and a
// recorder of the events it emits.
// testingT is what the harness needs of a *testing.T or a *rapid.T.
type testingT interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

type harness struct {
	t   testingT
	svc *Service

	mu     sync.Mutex
	es     map[ClusterID]*storetest.EventStore
	ss     map[ClusterID]*storetest.MemSchemaStore
	events []Event

	stopping atomic.Bool
	now      atomic.Int64 // unix nanoseconds of the fake clock

	pauses pauses // the armed pauses at the service's points (granularity_test.go)
}

type harnessOption func(*Config)

func newHarness(t testingT, opts ...harnessOption) *harness {
	t.Helper()
	h := &harness{
		t:  t,
		es: make(map[ClusterID]*storetest.EventStore),
		ss: make(map[ClusterID]*storetest.MemSchemaStore),
	}
	h.now.Store(time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC).UnixNano())
	cfg := Config{
		NewStores: func(c ClusterID) (store.EventStore, store.SchemaStore) {
			return h.eventStore(c), h.schemaStore(c)
		},
		Emit: func(e Event) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.events = append(h.events, e)
		},
		Stopping: h.stopping.Load,
		Now:      func() time.Time { return time.Unix(0, h.now.Load()) },
	}
	for _, o := range opts {
		o(&cfg)
	}
	svc, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc.hook = h.pauses.hook // before Start: the service's points (hooks.go)
	h.svc = svc
	ctx, cancel := context.WithCancel(context.Background())
	wait := svc.Start(ctx)
	t.Cleanup(func() {
		cancel()
		_ = wait()
	})
	return h
}

// eventStore returns cluster c's event store, creating it so that a test
// can install faults before the broker exists.
func (h *harness) eventStore(c ClusterID) *storetest.EventStore {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.es[c] == nil {
		h.es[c] = storetest.NewMemEventStore()
	}
	return h.es[c]
}

func (h *harness) schemaStore(c ClusterID) *storetest.MemSchemaStore {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ss[c] == nil {
		h.ss[c] = storetest.NewMemSchemaStore()
	}
	return h.ss[c]
}

func (h *harness) advance(d time.Duration) { h.now.Add(int64(d)) }

// takeEvents returns and clears the recorded events.
func (h *harness) takeEvents() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	ev := h.events
	h.events = nil
	return ev
}

func (h *harness) do(req Request) error {
	h.t.Helper()
	return h.svc.Do(context.Background(), req)
}

func (h *harness) snapshot() Snapshot {
	h.t.Helper()
	snap, err := h.svc.Snapshot(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return snap
}

func (h *harness) broker(c ClusterID) (BrokerSnapshot, bool) {
	for _, b := range h.snapshot().Brokers {
		if b.Cluster == c {
			return b, true
		}
	}
	return BrokerSnapshot{}, false
}

func (h *harness) count() int64 {
	n, _ := h.svc.Sample()
	return n
}

// reg is a Register request for an ordinary dispatcher id of cluster c1
// on table tbl.
func reg(id DispatcherID, tbl TableID) Request {
	return Request{Action: Register, Cluster: "c1", Changefeed: "cf1", Dispatcher: id, Table: tbl, StartTs: 100}
}

// trig is a Register request for a table-trigger dispatcher.
func trig(c ClusterID, id DispatcherID) Request {
	return Request{Action: Register, Cluster: c, Changefeed: "cf1", Dispatcher: id, TableTrigger: true}
}

func rem(c ClusterID, id DispatcherID) Request {
	return Request{Action: Remove, Cluster: c, Dispatcher: id}
}

func reset(c ClusterID, id DispatcherID, epoch, startTs uint64) Request {
	return Request{Action: Reset, Cluster: c, Dispatcher: id, Epoch: epoch, StartTs: startTs}
}

func ids(b BrokerSnapshot) []DispatcherID {
	var out []DispatcherID
	for _, d := range b.Dispatchers {
		out = append(out, d.ID)
	}
	return out
}

func kinds(ev []Event) []EventKind {
	var out []EventKind
	for _, e := range ev {
		out = append(out, e.Kind)
	}
	return out
}

// checkQuiescent checks the invariants that hold between requests, with
// nothing in flight: R1 (count = published IDs, never negative), R3/R9
// (each published ordinary dispatcher holds exactly one subscription and
// one schema reference on its table, nothing else does), and no empty
// changefeed status.
func (h *harness) checkQuiescent() {
	h.t.Helper()
	snap := h.snapshot()
	var total int64
	for _, b := range snap.Brokers {
		total += b.Count
		if b.Count != int64(len(b.Dispatchers)) { // R1
			h.t.Fatalf("R1: broker %s count %d, published %v", b.Cluster, b.Count, ids(b))
		}
		es, ss := h.eventStore(b.Cluster), h.schemaStore(b.Cluster)
		var want []DispatcherID
		refs := map[TableID]int{}
		cfs := map[ChangefeedID]bool{}
		for _, d := range b.Dispatchers {
			cfs[d.Changefeed] = true
			if !d.TableTrigger {
				want = append(want, d.ID)
				refs[d.Table]++
			}
		}
		if got := es.Subscribers(); !slices.Equal(got, want) { // R3, R4
			h.t.Fatalf("R3: broker %s subscribers %v, want %v", b.Cluster, got, want)
		}
		total := 0
		for tbl, n := range refs { // R9
			if got := ss.Refs(tbl); got != n {
				h.t.Fatalf("R9: broker %s table %d refs %d, want %d", b.Cluster, tbl, got, n)
			}
			total += n
		}
		if got := ss.TotalRefs(); got != total {
			h.t.Fatalf("R9: broker %s holds %d schema references, want %d", b.Cluster, got, total)
		}
		var wantCfs []ChangefeedID
		for cf := range cfs {
			wantCfs = append(wantCfs, cf)
		}
		slices.Sort(wantCfs)
		if !slices.Equal(b.Changefeeds, wantCfs) {
			h.t.Fatalf("broker %s changefeeds %v, want those of %v: %v", b.Cluster, b.Changefeeds, ids(b), wantCfs)
		}
	}
	if n := h.svc.sumCounts(); n != total || n < 0 { // no Sample: it may close admission
		h.t.Fatalf("R1: Sample count %d, brokers sum %d", n, total)
	}
}
