package lincheck

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
	"github.com/drainproof/drainproof/impl/trace"
)

// Defaults of [Config].
const (
	// DefaultClients is Config.Clients when 0.
	DefaultClients = 4
	// DefaultOps is Config.Ops when 0.
	DefaultOps = 1000
	// DefaultRound is Config.Round when 0.
	DefaultRound = 16
	// DefaultDelay is Config.Delay when 0.
	DefaultDelay = 100 * time.Microsecond
	// MaxOps is the largest Config.Ops and Config.Round: far more than a
	// check can take, small enough that no count overflows.
	MaxOps = 100_000_000
)

// Config configures [Record]. The zero value records DefaultOps
// operations of DefaultClients clients with seed 0.
type Config struct {
	// Clients is the number of client goroutines (1..MaxClients).
	Clients int
	// Ops is the number of client operations (audits not included),
	// at most MaxOps.
	Ops int
	// Seed seeds every random choice of the workload and of the store
	// faults; goroutine scheduling still varies from run to run.
	Seed int64
	// Round is how many operations each client issues between two
	// audits (DefaultRound if 0; at most MaxOps). Smaller rounds make
	// smaller partitions.
	Round int
	// Delay is the longest injected store delay (DefaultDelay if 0;
	// negative disables delays). A third of the schema registrations and
	// of the event-store unregistrations sleep up to Delay, so that
	// reports and reads land in the middle of a request.
	Delay time.Duration
	// Tracer, if set, receives the event service's model actions
	// (docs/trace.md); TraceHeader is the header of such a trace.
	Tracer trace.Tracer

	_ struct{}
}

func (c *Config) fillDefault() error {
	if c.Clients == 0 {
		c.Clients = DefaultClients
	}
	if c.Ops == 0 {
		c.Ops = DefaultOps
	}
	if c.Round == 0 {
		c.Round = DefaultRound
	}
	if c.Delay == 0 {
		c.Delay = DefaultDelay
	}
	if c.Clients < 1 || c.Clients > MaxClients || c.Ops < 0 || c.Ops > MaxOps || c.Round < 1 || c.Round > MaxOps {
		return fmt.Errorf("lincheck: bad config: clients %d (want 1..%d), ops %d (want 0..%d), round %d (want 1..%d)",
			c.Clients, MaxClients, c.Ops, MaxOps, c.Round, MaxOps)
	}
	return nil
}

// The changefeed of every request.
const changefeed eventservice.ChangefeedID = "cf1"

// clusterOf returns the upstream cluster of dispatcher index i: "c1" for
// broker 0, "c2" for broker 1 ([BrokerOf]).
func clusterOf(i int) eventservice.ClusterID {
	return eventservice.ClusterID(fmt.Sprintf("c%d", BrokerOf(i)+1))
}

// StartTs encodes a registration's injected fault in its two low bits;
// the stores' fault predicates decode it.
const (
	tsRefuse = 1
	tsSchema = 2
)

// clock is the recorder's logical clock: one shared counter, advanced
// with sequentially consistent atomic adds before each call and after
// each return (see the package documentation).
type clock struct{ n atomic.Int64 }

func (c *clock) tick() int64 { return c.n.Add(1) }

// delayer sleeps for a random time up to max on a third of its calls.
type delayer struct {
	mu  sync.Mutex
	rng *rand.Rand
	max time.Duration
}

func (d *delayer) maybe() {
	if d.max <= 0 {
		return
	}
	d.mu.Lock()
	sleep := d.rng.IntN(3) == 0
	dur := time.Duration(d.rng.Int64N(int64(d.max))) + 1
	d.mu.Unlock()
	if sleep {
		time.Sleep(dur)
	}
}

// slowEventStore delays unregistrations, widening the window between a
// removal's store release and its decrement.
type slowEventStore struct {
	*storetest.EventStore
	d *delayer
}

func (s slowEventStore) UnregisterDispatcher(id store.DispatcherID) {
	s.d.maybe()
	s.EventStore.UnregisterDispatcher(id)
}

// slowSchemaStore delays schema registrations, widening the window
// between a registration's subscription and its publication.
type slowSchemaStore struct {
	*storetest.MemSchemaStore
	d *delayer
}

func (s slowSchemaStore) RegisterTable(ctx context.Context, t store.TableID, ts uint64) error {
	s.d.maybe()
	return s.MemSchemaStore.RegisterTable(ctx, t, ts)
}

// recorder is one recording run.
type recorder struct {
	cfg  Config
	svc  *eventservice.Service
	es   *storetest.EventStore
	ss   *storetest.MemSchemaStore
	tr   *tracedRun // the trace mode's node and coordinator (nil: untraced)
	clk  clock
	ts   atomic.Uint64 // StartTs sequence
	rngs []*rand.Rand  // per client
	logs [][]Op        // per client, in its order
}

// Record runs cfg.Clients goroutines issuing cfg.Ops random operations
// against a fresh event service with in-memory stores and seeded store
// faults, with a quiescent audit every cfg.Round operations per client
// (and at the start and the end), and returns the history. One
// CloseAdmission is issued in the second half of the run. In a binary
// built with -tags bugs, the bugs switched on in package bugs are active
// and History.Bug names them. With cfg.Tracer set, Record runs in trace
// mode (see the package documentation): its trace is a behaviour of the
// model if the service is correct.
//
// If ctx ends first, Record returns the operations completed so far with
// ctx's error: such a history lacks the interrupted operations and the
// final audit, so it tells how far the recording got but is not to be
// checked.
func Record(ctx context.Context, cfg Config) (*History, error) {
	if err := cfg.fillDefault(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := newRecorder(cfg)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	wait := r.svc.Start(runCtx)
	defer func() {
		cancel()
		_ = wait()
	}()
	if err := r.createBrokers(ctx); err != nil {
		return nil, err
	}
	if r.tr != nil {
		if err := r.tr.start(r.svc, cfg.Tracer); err != nil {
			return nil, err
		}
	}
	h := &History{Version: HistoryVersion, Clients: cfg.Clients, Seed: cfg.Seed}
	if on := bugs.Enabled(); len(on) > 0 {
		h.Bug = fmt.Sprint(on)
		if len(on) == 1 {
			h.Bug = on[0]
		}
	}
	err = r.rounds(ctx)
	for _, l := range r.logs {
		h.Ops = append(h.Ops, l...)
	}
	if err != nil {
		if ctx.Err() != nil {
			return h, ctx.Err()
		}
		return nil, err
	}
	return h, nil
}

// newRecorder builds the stores, their faults and delays, and the
// service (not started).
func newRecorder(cfg Config) (*recorder, error) {
	r := &recorder{cfg: cfg, es: storetest.NewMemEventStore(), ss: storetest.NewMemSchemaStore(), tr: newTracedRun(cfg.Tracer)}
	r.es.Refuse(func(_ store.DispatcherID, sub store.Subscription) bool { return sub.StartTs%4 == tsRefuse })
	r.ss.FailIf(func(_ store.TableID, ts uint64) bool { return ts%4 == tsSchema }, nil)
	d := &delayer{rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed)), max: cfg.Delay}
	var fake atomic.Int64 // the service's clock: every reading is an hour later
	scfg := eventservice.Config{
		NewStores: func(eventservice.ClusterID) (store.EventStore, store.SchemaStore) {
			return slowEventStore{r.es, d}, slowSchemaStore{r.ss, d}
		},
		Now:               func() time.Time { return time.Unix(0, fake.Add(int64(time.Hour))) },
		InactivityTimeout: time.Minute,
		Tracer:            cfg.Tracer,
	}
	if r.tr != nil {
		scfg.Stopping = r.tr.stopping
	}
	svc, err := eventservice.New(scfg)
	if err != nil {
		return nil, err
	}
	r.svc = svc
	r.rngs = make([]*rand.Rand, cfg.Clients)
	for c := range r.rngs {
		r.rngs[c] = rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(c)+1))
	}
	r.logs = make([][]Op, cfg.Clients)
	return r, nil
}

// createBrokers creates the brokers in broker order, so that Sample,
// which reads them in the order they were created, reads broker 0's count
// first, as the model's report does: it registers and removes a table
// trigger (no store call) of each cluster. The state is the initial one
// again.
func (r *recorder) createBrokers(ctx context.Context) error {
	for k := range NumBrokers {
		id := eventservice.DispatcherID(IDName(NumOrdinary + k))
		for _, a := range []eventservice.Action{eventservice.Register, eventservice.Remove} {
			req := eventservice.Request{Action: a, Cluster: clusterOf(NumOrdinary + k), Changefeed: changefeed,
				Dispatcher: id, TableTrigger: true}
			if err := r.svc.Do(ctx, req); err != nil {
				return fmt.Errorf("lincheck: creating broker %d: %w", k, err)
			}
		}
	}
	return nil
}

// rounds records the rounds of operations, each followed by an audit (the
// first audit precedes them).
func (r *recorder) rounds(ctx context.Context) error {
	cfg := r.cfg
	master := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x11c))
	perRound := cfg.Clients * cfg.Round
	closeAt := -1 // global op index of the close
	if cfg.Ops > 0 {
		closeAt = cfg.Ops/2 + master.IntN(cfg.Ops-cfg.Ops/2)
	}
	if err := r.auditLog(ctx); err != nil {
		return err
	}
	for next := 0; next < cfg.Ops; next += perRound {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.round(ctx, next, min(perRound, cfg.Ops-next), closeAt); err != nil {
			return err
		}
		if err := r.auditLog(ctx); err != nil {
			return err
		}
	}
	return nil
}

// auditLog takes an audit and logs it as client 0's.
func (r *recorder) auditLog(ctx context.Context) error {
	op, err := r.audit(ctx)
	if err == nil {
		r.logs[0] = append(r.logs[0], op)
	}
	return err
}

// round runs the n operations from global index next, client c taking
// indexes next+c, next+c+Clients, ...
func (r *recorder) round(ctx context.Context, next, n, closeAt int) error {
	var wg sync.WaitGroup
	errs := make([]error, r.cfg.Clients)
	for c := range r.cfg.Clients {
		wg.Go(func() {
			for k := next + c; k < next+n; k += r.cfg.Clients {
				op, err := r.do(ctx, c, k == closeAt)
				if err != nil {
					errs[c] = err
					return
				}
				r.logs[c] = append(r.logs[c], op)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// do issues one random operation for client c (the close if isClose).
func (r *recorder) do(ctx context.Context, c int, isClose bool) (Op, error) {
	if isClose {
		return r.closeOp(c)
	}
	if r.tr != nil {
		r.tr.quiet.RLock()
		defer r.tr.quiet.RUnlock()
	}
	rng := r.rngs[c]
	op := Op{Client: c}
	var err error
	switch p := rng.IntN(100); {
	case p < 34:
		err = r.register(ctx, &op, rng)
	case p < 50:
		err = r.remove(ctx, &op, rng)
	case p < 62:
		err = r.reset(ctx, &op, rng)
	case p < 80 && (r.tr == nil || c == 0):
		r.report(&op)
	case p < 94:
		r.subscribers(&op)
	default:
		op.Kind = KindCleanup
		op.Call = r.clk.tick()
		op.Removed, err = r.svc.Cleanup(ctx)
		op.Return = r.clk.tick()
	}
	if err == nil {
		return op, nil
	}
	if op.Err = outcomeOf(err); op.Err == "" {
		return op, fmt.Errorf("lincheck: client %d: %s: %w", c, op.Kind, err)
	}
	return op, nil
}

// outcomeOf returns the history's name of a service error ("" if it is
// none the specification allows).
func outcomeOf(err error) Err {
	switch {
	case errors.Is(err, eventservice.ErrAdmissionClosed):
		return ErrAdmissionClosed
	case errors.Is(err, eventservice.ErrNotReusable):
		return ErrNotReusable
	case errors.Is(err, storetest.ErrInjected):
		return ErrSchema
	case errors.Is(err, eventservice.ErrUnknownDispatcher):
		return ErrUnknownDispatcher
	}
	return ""
}

// closeOp is the close: in trace mode the node is first driven to
// STOPPING (tracedRun.drive), as the model's close needs.
func (r *recorder) closeOp(c int) (Op, error) {
	op := Op{Client: c, Kind: KindClose}
	op.Call = r.clk.tick()
	if r.tr != nil {
		if err := r.tr.drive(); err != nil {
			return op, err
		}
	}
	r.svc.CloseAdmission()
	op.Return = r.clk.tick()
	return op, nil
}

// pickID draws a dispatcher index: a table trigger one time in four.
func (r *recorder) pickID(rng *rand.Rand) int {
	triggers := NumTriggers
	if r.tr != nil {
		triggers = NumTraceIDs - NumOrdinary
	}
	if rng.IntN(4) == 0 {
		return NumOrdinary + rng.IntN(triggers)
	}
	return rng.IntN(NumOrdinary)
}

// register issues a registration with a seeded store fault.
func (r *recorder) register(ctx context.Context, op *Op, rng *rand.Rand) error {
	id := r.pickID(rng)
	op.Kind, op.ID = KindRegister, IDName(id)
	ts := r.ts.Add(1) * 4
	if !isTrigger(id) {
		switch f := rng.IntN(100); {
		case f < 15:
			op.Fault, ts = FaultRefuse, ts+tsRefuse
		case f < 35:
			op.Fault, ts = FaultSchema, ts+tsSchema
		}
	}
	req := eventservice.Request{
		Action: eventservice.Register, Cluster: clusterOf(id), Changefeed: changefeed,
		Dispatcher: eventservice.DispatcherID(op.ID), TableTrigger: isTrigger(id),
		Table: store.TableID(id + 1), StartTs: ts,
	}
	return r.call(ctx, op, req)
}

// remove issues a removal.
func (r *recorder) remove(ctx context.Context, op *Op, rng *rand.Rand) error {
	id := r.pickID(rng)
	op.Kind, op.ID = KindRemove, IDName(id)
	return r.call(ctx, op, eventservice.Request{Action: eventservice.Remove, Cluster: clusterOf(id),
		Dispatcher: eventservice.DispatcherID(op.ID)})
}

// reset issues a reset to an epoch in 1..4.
func (r *recorder) reset(ctx context.Context, op *Op, rng *rand.Rand) error {
	id := r.pickID(rng)
	op.Kind, op.ID, op.Epoch = KindReset, IDName(id), uint8(1+rng.IntN(4))
	return r.call(ctx, op, eventservice.Request{Action: eventservice.Reset, Cluster: clusterOf(id),
		Dispatcher: eventservice.DispatcherID(op.ID), Epoch: uint64(op.Epoch), StartTs: r.ts.Add(1) * 4})
}

// call issues req between op's call and return ticks.
func (r *recorder) call(ctx context.Context, op *Op, req eventservice.Request) error {
	op.Call = r.clk.tick()
	err := r.svc.Do(ctx, req)
	op.Return = r.clk.tick()
	return err
}

// report reads the count and the gate: the service's Report, or in trace
// mode the node's heartbeat (which calls it).
func (r *recorder) report(op *Op) {
	op.Kind = KindReport
	op.Call = r.clk.tick()
	if r.tr != nil {
		op.Count, op.Closed = r.tr.heartbeat()
	} else {
		op.Count, op.Closed = r.svc.Sample()
	}
	op.Return = r.clk.tick()
}

// subscribers reads the event store's subscriptions.
func (r *recorder) subscribers(op *Op) {
	op.Kind = KindSubscribers
	op.Call = r.clk.tick()
	subs := r.es.Subscribers()
	op.Return = r.clk.tick()
	op.Held = idNames(subs)
}

// audit observes the whole state while no client runs: the service's
// snapshot (taken by the request loop) and both stores.
func (r *recorder) audit(ctx context.Context) (Op, error) {
	op := Op{Kind: KindAudit, Registered: map[string]uint8{}}
	op.Call = r.clk.tick()
	snap, err := r.svc.Snapshot(ctx)
	subs := r.es.Subscribers()
	op.Refs = r.ss.TotalRefs()
	op.Return = r.clk.tick()
	if err != nil {
		return op, fmt.Errorf("lincheck: audit: %w", err)
	}
	op.Closed = snap.AdmissionClosed
	counts := make([]int64, NumBrokers)
	for _, b := range snap.Brokers {
		k := -1
		for j := range NumBrokers {
			if clusterOf(j) == b.Cluster {
				k = j
			}
		}
		if k < 0 {
			return op, fmt.Errorf("lincheck: audit: unknown broker %s", b.Cluster)
		}
		counts[k] = b.Count
		op.Count += b.Count
		for _, d := range b.Dispatchers {
			op.Registered[string(d.ID)] = uint8(min(d.Epoch, 255))
		}
	}
	if op.Count != 0 || slices.ContainsFunc(counts, func(n int64) bool { return n != 0 }) {
		op.Counts = counts
	}
	op.Held = idNames(subs)
	return op, nil
}

func idNames(ids []store.DispatcherID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}
