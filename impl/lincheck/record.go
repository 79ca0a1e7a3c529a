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
	*store.MemEventStore
	d *delayer
}

func (s slowEventStore) UnregisterDispatcher(id store.DispatcherID) {
	s.d.maybe()
	s.MemEventStore.UnregisterDispatcher(id)
}

// slowSchemaStore delays schema registrations, widening the window
// between a registration's subscription and its publication.
type slowSchemaStore struct {
	*store.MemSchemaStore
	d *delayer
}

func (s slowSchemaStore) RegisterTable(ctx context.Context, t store.TableID, ts uint64) error {
	s.d.maybe()
	return s.MemSchemaStore.RegisterTable(ctx, t, ts)
}

// recorder is one recording run.
type recorder struct {
	cfg Config
	svc *eventservice.Service
	es  *store.MemEventStore
	ss  *store.MemSchemaStore
	clk clock
	ts  atomic.Uint64 // StartTs sequence
}

// Record runs cfg.Clients goroutines issuing cfg.Ops random operations
// against a fresh event service with in-memory stores and seeded store
// faults, with a quiescent audit every cfg.Round operations per client
// (and at the start and the end), and returns the history. One
// CloseAdmission is issued in the second half of the run. In a binary
// built with -tags bugs, the bugs switched on in package bugs are active
// and History.Bug names them.
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
	r := &recorder{cfg: cfg, es: store.NewMemEventStore(), ss: store.NewMemSchemaStore()}
	r.es.Refuse(func(_ store.DispatcherID, sub store.Subscription) bool { return sub.StartTs%4 == tsRefuse })
	r.ss.FailIf(func(_ store.TableID, ts uint64) bool { return ts%4 == tsSchema }, nil)
	d := &delayer{rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed)), max: cfg.Delay}
	var fake atomic.Int64 // the service's clock: every reading is an hour later
	svc, err := eventservice.New(eventservice.Config{
		NewStores: func(eventservice.ClusterID) (store.EventStore, store.SchemaStore) {
			return slowEventStore{r.es, d}, slowSchemaStore{r.ss, d}
		},
		Now:               func() time.Time { return time.Unix(0, fake.Add(int64(time.Hour))) },
		InactivityTimeout: time.Minute,
		Tracer:            cfg.Tracer,
	})
	if err != nil {
		return nil, err
	}
	r.svc = svc
	runCtx, cancel := context.WithCancel(ctx)
	wait := svc.Start(runCtx)
	defer func() {
		cancel()
		_ = wait()
	}()
	// Create the brokers in broker order, so that Report, which reads
	// them in the order they were created, reads broker 0's count first,
	// as the model's report does: register and remove a table trigger
	// (no store call) of each cluster. The state is the initial one again.
	for k := range NumBrokers {
		id := eventservice.DispatcherID(IDName(NumOrdinary + k))
		for _, a := range []eventservice.Action{eventservice.Register, eventservice.Remove} {
			req := eventservice.Request{Action: a, Cluster: clusterOf(NumOrdinary + k), Changefeed: changefeed,
				Dispatcher: id, TableTrigger: true}
			if err := svc.Do(ctx, req); err != nil {
				return nil, fmt.Errorf("lincheck: creating broker %d: %w", k, err)
			}
		}
	}

	h := &History{Version: HistoryVersion, Clients: cfg.Clients, Seed: cfg.Seed}
	if on := bugs.Enabled(); len(on) > 0 {
		h.Bug = fmt.Sprint(on)
		if len(on) == 1 {
			h.Bug = on[0]
		}
	}
	master := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x11c))
	perRound := cfg.Clients * cfg.Round
	rounds := (cfg.Ops + perRound - 1) / perRound
	closeAt := -1 // global op index of the close
	if cfg.Ops > 0 {
		closeAt = cfg.Ops/2 + master.IntN(cfg.Ops-cfg.Ops/2)
	}
	rngs := make([]*rand.Rand, cfg.Clients)
	for c := range rngs {
		rngs[c] = rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(c)+1))
	}
	logs := make([][]Op, cfg.Clients)

	audit := func() error {
		op, err := r.audit(ctx)
		if err == nil {
			logs[0] = append(logs[0], op)
		}
		return err
	}
	// stopped returns what was recorded when ctx ended, or nil and err.
	stopped := func(err error) (*History, error) {
		if ctx.Err() == nil {
			return nil, err
		}
		for _, l := range logs {
			h.Ops = append(h.Ops, l...)
		}
		return h, ctx.Err()
	}
	if err := audit(); err != nil {
		return stopped(err)
	}
	next := 0
	for range rounds {
		if err := ctx.Err(); err != nil {
			return stopped(err)
		}
		n := min(perRound, cfg.Ops-next)
		var wg sync.WaitGroup
		errs := make([]error, cfg.Clients)
		for c := range cfg.Clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := next + c; k < next+n; k += cfg.Clients {
					op, err := r.do(ctx, c, rngs[c], k == closeAt)
					if err != nil {
						errs[c] = err
						return
					}
					logs[c] = append(logs[c], op)
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return stopped(err)
		}
		next += n
		if err := audit(); err != nil {
			return stopped(err)
		}
	}
	for _, l := range logs {
		h.Ops = append(h.Ops, l...)
	}
	return h, nil
}

// do issues one random operation for client c (the close if isClose).
func (r *recorder) do(ctx context.Context, c int, rng *rand.Rand, isClose bool) (Op, error) {
	op := Op{Client: c}
	if isClose {
		op.Kind = KindClose
		op.Call = r.clk.tick()
		r.svc.CloseAdmission()
		op.Return = r.clk.tick()
		return op, nil
	}
	pickID := func() int {
		if rng.IntN(4) == 0 {
			return NumOrdinary + rng.IntN(NumTriggers)
		}
		return rng.IntN(NumOrdinary)
	}
	var err error
	switch p := rng.IntN(100); {
	case p < 34:
		id := pickID()
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
		op.Call = r.clk.tick()
		err = r.svc.Do(ctx, req)
		op.Return = r.clk.tick()
	case p < 50:
		id := pickID()
		op.Kind, op.ID = KindRemove, IDName(id)
		req := eventservice.Request{Action: eventservice.Remove, Cluster: clusterOf(id), Dispatcher: eventservice.DispatcherID(op.ID)}
		op.Call = r.clk.tick()
		err = r.svc.Do(ctx, req)
		op.Return = r.clk.tick()
	case p < 62:
		id := pickID()
		op.Kind, op.ID, op.Epoch = KindReset, IDName(id), uint8(1+rng.IntN(4))
		req := eventservice.Request{Action: eventservice.Reset, Cluster: clusterOf(id), Dispatcher: eventservice.DispatcherID(op.ID),
			Epoch: uint64(op.Epoch), StartTs: r.ts.Add(1) * 4}
		op.Call = r.clk.tick()
		err = r.svc.Do(ctx, req)
		op.Return = r.clk.tick()
	case p < 80:
		op.Kind = KindReport
		op.Call = r.clk.tick()
		op.Count, op.Closed = r.svc.Report()
		op.Return = r.clk.tick()
	case p < 94:
		op.Kind = KindSubscribers
		op.Call = r.clk.tick()
		subs := r.es.Subscribers()
		op.Return = r.clk.tick()
		op.Held = idNames(subs)
	default:
		op.Kind = KindCleanup
		op.Call = r.clk.tick()
		op.Removed, err = r.svc.Cleanup(ctx)
		op.Return = r.clk.tick()
	}
	if err != nil {
		switch {
		case errors.Is(err, eventservice.ErrAdmissionClosed):
			op.Err = ErrAdmissionClosed
		case errors.Is(err, eventservice.ErrNotReusable):
			op.Err = ErrNotReusable
		case errors.Is(err, store.ErrInjected):
			op.Err = ErrSchema
		case errors.Is(err, eventservice.ErrUnknownDispatcher):
			op.Err = ErrUnknownDispatcher
		default:
			return op, fmt.Errorf("lincheck: client %d: %s: %w", c, op.Kind, err)
		}
	}
	return op, nil
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

// TraceHeader returns the header of a trace of a recording (Config.Tracer):
// the model's constants over the history's dispatcher universe, the last
// NumTriggers of them table triggers. Its dispatchers outnumber what the
// Go transcription of the model holds (spec.MaxDispatchers), and its
// CloseAdmission is not one step of the model (v1), so `checker trace`
// refuses such a trace for now: the model's next version has both.
func TraceHeader(cfg Config) trace.Header {
	var ds, tts []string
	for id := range NumOrdinary + NumTriggers {
		ds = append(ds, IDName(id))
		if isTrigger(id) {
			tts = append(tts, IDName(id))
		}
	}
	return trace.Header{Source: fmt.Sprintf("lincheck seed %d, %d clients, %d ops", cfg.Seed, cfg.Clients, cfg.Ops),
		Model: map[string]any{"Dispatchers": ds, "TableTriggers": tts, "MaxEpoch": 15, "MaxReg": 15, "MaxMsgs": 8,
			"Transport": "heartbeat", "Bugs": []string{}}}
}
