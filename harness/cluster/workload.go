package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/drainproof/drainproof/impl/transport"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// regRecord is one registration of a collector's dispatcher with a node's
// process, as seen at the gRPC boundary (the checker's wall clock).
type regRecord struct {
	dispatcher string
	epoch      uint64
	invoked    time.Time
	ok         time.Time
	// removeInvoked is when the collector sent its REMOVE (zero: never).
	removeInvoked time.Time
}

// tableState is one table's producer and collector state.
type tableState struct {
	id   int64
	home int // node index

	acked    atomic.Uint64 // the producer's last acknowledged commit ts
	inflight atomic.Int32  // a WriteEvents in flight

	mu         sync.Mutex
	lastRead   uint64
	read       int
	lost       int
	duplicated int
	outOfOrder int
	problems   []string
}

// workload runs the producers and collectors against the nodes' inbound
// proxies.
type workload struct {
	tables []*tableState
	conns  []*grpc.ClientConn // per node
	seed   uint64

	mu   sync.Mutex
	regs map[int][]*regRecord // node index → registrations
	// lives are the liveness changes the collectors saw, per node, in
	// the order seen; last is each node's latest.
	lives []liveObs
	last  map[int]liveObs

	committed atomic.Int64
	// pwg waits for the producers, wg for the collectors: the settle
	// starts only once no write can still be acknowledged.
	pwg, wg sync.WaitGroup
}

func newWorkload(addrs []string, tables int, seed uint64, dial ...grpc.DialOption) (*workload, error) {
	w := &workload{seed: seed, regs: make(map[int][]*regRecord)}
	for _, a := range addrs {
		c, err := transport.Dial(a, dial...)
		if err != nil {
			w.close()
			return nil, err
		}
		w.conns = append(w.conns, c)
	}
	for t := range tables {
		w.tables = append(w.tables, &tableState{id: int64(t + 1), home: t % len(addrs)})
	}
	return w, nil
}

func (w *workload) close() {
	for _, c := range w.conns {
		_ = c.Close()
	}
}

// start runs one producer and one collector per table until the
// producers' or the collectors' context ends.
func (w *workload) start(produce, collect context.Context) {
	for i, t := range w.tables {
		w.pwg.Add(1)
		w.wg.Add(1)
		go func() { defer w.pwg.Done(); w.produce(produce, t) }()
		go func() {
			defer w.wg.Done()
			w.collect(collect, t, rand.New(rand.NewPCG(w.seed, uint64(i)+1)))
		}()
	}
}

// produce commits batches of 1-3 events with consecutive commit
// timestamps, retrying a batch until it is acknowledged.
func (w *workload) produce(ctx context.Context, t *tableState) {
	es := pb.NewEventServiceClient(w.conns[t.home])
	next := uint64(1)
	for ctx.Err() == nil {
		n := 1 + int(next%3)
		req := &pb.WriteEventsRequest{Table: t.id}
		for i := range n {
			ts := next + uint64(i)
			req.Events = append(req.Events, &pb.Event{CommitTs: ts, Key: []byte("row"), Value: []byte(fmt.Sprintf("%d:%d", t.id, ts))})
		}
		t.inflight.Add(1)
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := es.WriteEvents(cctx, req)
		cancel()
		t.inflight.Add(-1)
		if err != nil {
			sleep(ctx, 20*time.Millisecond)
			continue
		}
		next += uint64(n)
		t.acked.Store(next - 1)
		w.committed.Add(int64(n))
		sleep(ctx, 5*time.Millisecond)
	}
}

// collect is the table's collector: it registers the table's dispatcher
// with the home node while the node is ALIVE, reads its events and checks
// them (consecutive commit timestamps from 1, across restarts), removes
// the dispatcher after a seeded delay once the node is DRAINING, and
// registers again with the next process.
func (w *workload) collect(ctx context.Context, t *tableState, rng *rand.Rand) {
	es := pb.NewEventServiceClient(w.conns[t.home])
	id := fmt.Sprintf("disp-t%d", t.id)
	var cur *regRecord
	var removeAt time.Time
	for ctx.Err() == nil {
		sleep(ctx, 15*time.Millisecond)
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		st, err := es.Status(cctx, &pb.StatusRequest{})
		cancel()
		if err != nil {
			continue
		}
		w.observe(t.home, st.GetEpoch(), st.GetLiveness())
		if cur != nil && st.GetEpoch() != cur.epoch {
			cur = nil // the process we registered with is gone
		}
		if cur == nil {
			// A dispatcher may register with a DRAINING node (admission
			// is open until STOPPING): a late registration, sometimes,
			// so that some are in flight when admission closes (F4).
			if l := st.GetLiveness(); l == pb.Liveness_STOPPING || l == pb.Liveness_DRAINING && rng.IntN(4) != 0 {
				continue
			}
			t.mu.Lock()
			from := t.lastRead
			t.mu.Unlock()
			rec := &regRecord{dispatcher: id, invoked: time.Now()}
			cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			r, err := es.Dispatch(cctx, &pb.DispatcherRequest{Action: pb.Action_REGISTER, Cluster: "c1", Changefeed: "cf-cluster",
				Dispatcher: id, Table: t.id, StartTs: from})
			cancel()
			if err != nil || r.GetOutcome() != pb.Outcome_OK {
				continue
			}
			rec.ok, rec.epoch = time.Now(), r.GetNodeEpoch()
			w.mu.Lock()
			w.regs[t.home] = append(w.regs[t.home], rec)
			w.mu.Unlock()
			cur, removeAt = rec, time.Time{}
		}
		if st.GetLiveness() != pb.Liveness_ALIVE && st.GetEpoch() == cur.epoch {
			if removeAt.IsZero() {
				removeAt = time.Now().Add(time.Duration(100+rng.IntN(500)) * time.Millisecond)
			}
			if time.Now().After(removeAt) {
				w.mu.Lock()
				cur.removeInvoked = time.Now()
				w.mu.Unlock()
				cctx, cancel := context.WithTimeout(ctx, time.Second)
				_, err := es.Dispatch(cctx, &pb.DispatcherRequest{Action: pb.Action_REMOVE, Cluster: "c1", Dispatcher: id})
				cancel()
				if err == nil {
					cur = nil
					continue
				}
			}
		}
		w.read(ctx, es, t, id, cur)
	}
}

// read reads the dispatcher's events after the last one read and checks
// them.
func (w *workload) read(ctx context.Context, es pb.EventServiceClient, t *tableState, id string, cur *regRecord) {
	t.mu.Lock()
	after := t.lastRead
	t.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	r, err := es.ReadEvents(cctx, &pb.ReadEventsRequest{Cluster: "c1", Dispatcher: id, After: after, Limit: 256})
	cancel()
	if err != nil || r.GetNodeEpoch() != cur.epoch {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range r.GetEvents() {
		ts := e.GetCommitTs()
		switch {
		case ts == t.lastRead+1:
			t.lastRead = ts
			t.read++
		case ts <= t.lastRead:
			t.duplicated++
			t.problem("table %d: event %d read again after %d", t.id, ts, t.lastRead)
		default:
			// A gap: ts lastRead+1 was acknowledged before ts was
			// written (one producer, in order), and is not there.
			t.lost += int(ts - t.lastRead - 1)
			t.problem("table %d: events %d..%d missing before %d (node epoch %d)", t.id, t.lastRead+1, ts-1, ts, cur.epoch)
			t.lastRead = ts
			t.read++
		}
		if v := fmt.Sprintf("%d:%d", t.id, ts); string(e.GetValue()) != v {
			t.outOfOrder++
			t.problem("table %d: event %d carries %q, want %q", t.id, ts, e.GetValue(), v)
		}
	}
}

// liveObs is a node's liveness as a collector's Status call saw it.
type liveObs struct {
	node     int
	at       time.Time
	epoch    uint64
	liveness pb.Liveness
}

// observe records a node's liveness if it is news: a later epoch, or a
// later liveness of the same epoch (a process's liveness only goes
// ALIVE, DRAINING, STOPPING; an older answer that arrives late is not
// news).
func (w *workload) observe(node int, epoch uint64, l pb.Liveness) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last = map[int]liveObs{}
	}
	prev, seen := w.last[node]
	if seen && (epoch < prev.epoch || epoch == prev.epoch && l <= prev.liveness) {
		return
	}
	o := liveObs{node: node, at: time.Now(), epoch: epoch, liveness: l}
	w.last[node] = o
	w.lives = append(w.lives, o)
}

func (t *tableState) problem(format string, args ...any) {
	if len(t.problems) < 5 {
		t.problems = append(t.problems, fmt.Sprintf(format, args...))
	}
}

// caughtUp reports whether every table's collector has read every
// acknowledged event.
func (w *workload) caughtUp() bool {
	for _, t := range w.tables {
		t.mu.Lock()
		ok := t.lastRead >= t.acked.Load()
		t.mu.Unlock()
		if !ok {
			return false
		}
	}
	return true
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
