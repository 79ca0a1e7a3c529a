package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/logcoord"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
	"github.com/drainproof/drainproof/impl/trace"
)

// Target is the drained node's ID.
const Target node.ID = "T"

// ClusterID returns the name of upstream cluster k (0-based): c1, c2, …
func ClusterID(k int) eventservice.ClusterID {
	return eventservice.ClusterID(fmt.Sprintf("c%d", k+1))
}

// ClusterConfig configures a [Cluster]. Times are logical ticks.
type ClusterConfig struct {
	// Transport of the broker count.
	Transport node.Transport
	// Dispatchers is the number of dispatchers the collectors may
	// register with T (IDs d1, d2, …); TableTriggers of them (the last
	// ones) are table triggers.
	Dispatchers, TableTriggers int
	// Clusters is the number of upstream clusters, so of event brokers in
	// T's event service, each with its own stores (1 if 0); dispatcher d
	// (0-based) belongs to cluster d mod Clusters.
	Clusters int
	// SetBus gives the bus the model's set semantics: sending a message
	// equal to one in flight does nothing.
	SetBus bool
	// Coordinator's intervals (see coordinator.Config).
	ResendInterval, QueryInterval, UnknownAfter int64
	// HeartbeatInterval throttles T's unforced heartbeats.
	HeartbeatInterval int64
	// CacheTTL is the LogCoordinator cache's TTL (0: no expiry by age).
	CacheTTL int64
	// Store is T's event store (memory if empty).
	Store StoreKind
	// Tracer, if set, receives the model actions of T's processes, the
	// coordinator and the LogCoordinator about T (docs/trace.md), all in
	// one trace.
	Tracer trace.Tracer
	// Traces, if set instead of Tracer, gives each process its own trace
	// (docs/trace.md, multi-process runs): it is called with the name of
	// each process as it starts (the coordinator "coord", the
	// LogCoordinator "logcoord", T's processes "T.1", "T.2", …), the
	// process it succeeds and the Lamport clock to start from, and
	// returns the process's Writer.
	Traces func(proc, after string, clock uint64) (*trace.Writer, error)

	_ struct{}
}

// pendingOp is a registration or removal held inside a store call: the
// model's dispatcher between steps (pc admitted/subscribed or removing).
type pendingOp struct {
	d      int
	remove bool
	gate   *storetest.Hold
	result chan error
}

// process is one process of T: its node, event service and stores (one
// event store and one schema store per upstream cluster).
type process struct {
	node     *node.Node
	live     *node.LivenessStore
	svc      *eventservice.Service
	es       []eventStore
	ss       []*storetest.MemSchemaStore
	cancel   context.CancelFunc
	done     chan struct{}
	pending  *pendingOp
	observer atomic.Bool // suppresses the Stopping callback while observing

	lastReport *node.Report  // the last report sent (NoReReport only)
	tw         *trace.Writer // the process's trace (ClusterConfig.Traces)
}

// Cluster is the simulated cluster around the drained node T: T's current
// process (node, real event service, in-memory stores), the coordinator,
// the LogCoordinator, the collectors' view and a message bus. Its step
// methods are named after the TLA+ actions they implement; it has no
// randomness of its own ([Run] drives it from a seed) and no clock (Now
// advances only by [Cluster.Advance]). It is not safe for concurrent use.
type Cluster struct {
	cfg   ClusterConfig
	now   int64
	epoch uint64
	proc  *process

	// Coord is the coordinator's drain controller.
	Coord *coordinator.Coordinator
	// LogCoord is the LogCoordinator's cache.
	LogCoord *logcoord.Cache

	bus []Msg

	// registered is the collectors' view: dispatcher d is registered with
	// T's current process (its REGISTER returned success).
	registered    []bool
	registrations int
	// regs holds the dispatchers of the REGISTER requests in flight to
	// T's current process, in sending order.
	regs []int

	data     *dataPlane // the changefeed's data (data.go)
	storeErr error      // the first error closing a process's store

	procs *procTraces // the per-process traces (ClusterConfig.Traces), or nil
	// killed: the next end of T's process is a kill (its trace loses its
	// unsent tail), not a stop.
	killed bool
}

// NewCluster starts T's first process (epoch 1) and a coordinator that
// knows T at epoch 1 with a known, current version.
func NewCluster(cfg ClusterConfig) (*Cluster, error) {
	if cfg.Transport == "" {
		cfg.Transport = node.TransportHeartbeat
	}
	if cfg.Dispatchers <= 0 || cfg.TableTriggers < 0 || cfg.TableTriggers > cfg.Dispatchers {
		return nil, fmt.Errorf("sim: bad dispatcher counts %d/%d", cfg.Dispatchers, cfg.TableTriggers)
	}
	if cfg.Clusters == 0 {
		cfg.Clusters = 1
	}
	if cfg.Clusters < 0 {
		return nil, fmt.Errorf("sim: bad cluster count %d", cfg.Clusters)
	}
	if cfg.Tracer != nil && cfg.Traces != nil {
		return nil, errors.New("sim: both Tracer and Traces")
	}
	procs, err := newProcTraces(cfg.Traces)
	if err != nil {
		return nil, err
	}
	coordT, lcT := cfg.Tracer, cfg.Tracer
	if procs != nil {
		coordT, lcT = procs.coord, procs.lc
	}
	co, err := coordinator.New(coordinator.Config{Transport: cfg.Transport, ResendInterval: cfg.ResendInterval,
		QueryInterval: cfg.QueryInterval, UnknownAfter: cfg.UnknownAfter, Tracer: coordT, TraceNode: Target})
	if err != nil {
		return nil, errors.Join(err, procs.close())
	}
	c := &Cluster{cfg: cfg, Coord: co, LogCoord: logcoord.New(logcoord.Config{TTL: cfg.CacheTTL, Tracer: lcT, TraceNode: Target}),
		registered: make([]bool, cfg.Dispatchers), data: newDataPlane(cfg.Dispatchers - cfg.TableTriggers), procs: procs}
	if err := c.start(); err != nil {
		return nil, errors.Join(err, procs.close())
	}
	co.AddNode(Target, c.epoch, c.now)
	c.observeVersion(node.VersionBrokerDrain)
	return c, nil
}

// start starts T's next process.
func (c *Cluster) start() error {
	c.epoch++
	p := &process{live: new(node.LivenessStore), done: make(chan struct{})}
	tracer := c.cfg.Tracer
	if c.procs != nil {
		tw, err := c.procs.startT(c.epoch)
		if err != nil {
			return err
		}
		p.tw, tracer = tw, tw
	}
	byID := make(map[eventservice.ClusterID]int, c.cfg.Clusters)
	for k := range c.cfg.Clusters {
		es, err := newEventStore(c.cfg.Store)
		if err != nil {
			for _, es := range p.es {
				_ = es.Close() // the first error is the one to report
			}
			return err
		}
		p.es = append(p.es, es)
		p.ss = append(p.ss, storetest.NewMemSchemaStore())
		byID[ClusterID(k)] = k
	}
	svc, err := eventservice.New(eventservice.Config{
		NewStores: func(id eventservice.ClusterID) (store.EventStore, store.SchemaStore) {
			k := byID[id] // the cluster asks only for its own clusters
			return p.es[k], p.ss[k]
		},
		Stopping: func() bool { return !p.observer.Load() && p.live.Load() == node.Stopping },
		Now:      func() time.Time { return time.Unix(0, 0) },
		Tracer:   tracer,
	})
	if err != nil {
		return err
	}
	p.svc = svc
	p.node, err = node.New(node.Config{ID: Target, Epoch: c.epoch, Version: node.VersionBrokerDrain,
		Transport: c.cfg.Transport, Service: svc, Liveness: p.live, HeartbeatInterval: c.cfg.HeartbeatInterval,
		Tracer: tracer})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	wait := svc.Start(ctx)
	go func() {
		defer close(p.done)
		_ = wait()
	}()
	c.proc = p
	clear(c.registered)
	c.regs = nil // REGISTERs in flight to the old process are lost
	c.attachStore()
	return nil
}

// stop ends T's current process: a held store call is released, the
// request loop stops, and every goroutine of the process is waited for.
func (c *Cluster) stop() {
	p := c.proc
	if op := p.pending; op != nil {
		op.gate.Release()
		p.cancel()
		<-op.result
		p.pending = nil
	}
	p.cancel()
	<-p.done
	for k, es := range p.es {
		if r := es.Resources(); (r.Batches != 0 || r.Iterators != 0) && c.storeErr == nil {
			c.storeErr = fmt.Errorf("sim: the event store of cluster %s in epoch %d leaked %d batches and %d iterators",
				ClusterID(k), c.epoch, r.Batches, r.Iterators)
		}
		if err := es.Close(); err != nil && c.storeErr == nil {
			c.storeErr = err
		}
	}
	if c.procs != nil {
		c.procs.endT(p.tw, c.killed)
	}
	c.killed = false
}

// Close stops T's process and returns the first error of closing a
// process's event store or trace. The cluster must not be used afterwards.
func (c *Cluster) Close() error {
	c.stop()
	return errors.Join(c.storeErr, c.procs.close())
}

// Now returns the logical time.
func (c *Cluster) Now() int64 { return c.now }

// Advance moves the logical time forward by d ticks.
func (c *Cluster) Advance(d int64) { c.now += d }

// Epoch returns the epoch of T's current process.
func (c *Cluster) Epoch() uint64 { return c.epoch }

// Node returns T's current process.
func (c *Cluster) Node() *node.Node { return c.proc.node }

// Registrations returns the REGISTER requests the collectors issued.
func (c *Cluster) Registrations() int { return c.registrations }

// Dispatcher returns the ID of dispatcher d (0-based).
func Dispatcher(d int) eventservice.DispatcherID {
	return eventservice.DispatcherID(fmt.Sprintf("d%d", d+1))
}

func (c *Cluster) isTT(d int) bool { return d >= c.cfg.Dispatchers-c.cfg.TableTriggers }

// clusterOf returns the index of dispatcher d's upstream cluster.
func (c *Cluster) clusterOf(d int) int { return d % c.cfg.Clusters }

// stores returns the event store and the schema store of d's cluster in
// T's current process.
func (c *Cluster) stores(d int) (eventStore, *storetest.MemSchemaStore) {
	k := c.clusterOf(d)
	return c.proc.es[k], c.proc.ss[k]
}

func table(d int) store.TableID { return store.TableID(d + 1) }

func (c *Cluster) request(a eventservice.Action, d int) eventservice.Request {
	return eventservice.Request{Action: a, Cluster: ClusterID(c.clusterOf(d)), Changefeed: "cf", Dispatcher: Dispatcher(d),
		TableTrigger: c.isTT(d), Table: table(d), StartTs: c.startTs(d)}
}

// Busy reports whether a registration or removal is held between steps
// (the model's Busy).
func (c *Cluster) Busy() bool { return c.proc.pending != nil }

// Pending returns the dispatcher held between steps and whether it is
// being removed.
func (c *Cluster) Pending() (d int, removing, ok bool) {
	if op := c.proc.pending; op != nil {
		return op.d, op.remove, true
	}
	return 0, false, false
}

// Registered reports the collectors' view of dispatcher d.
func (c *Cluster) Registered(d int) bool { return c.registered[d] }

// ErrBusy is returned by a collector request while another is held
// between steps (the event service's loop is serial).
var ErrBusy = errors.New("sim: event service busy")

// Register sends REGISTER(d) to d's cluster and the event
// service takes it (TLA+ CollectorSendRegister, ServiceRecvRegister, then
// BrokerAdmit, and BrokerReleaseOld for a repeated registration). A table
// trigger, a repeated registration or a refused one completes at once.
// An ordinary registration is held inside SchemaStore.RegisterTable after
// its subscription (TLA+ BrokerSubscribe) unless refuse makes the event
// store refuse it (TLA+ BrokerSubscribeRefused, BrokerRollback);
// BrokerRegisterTable or BrokerRegisterTableFails (with BrokerUnsubscribe
// and BrokerRollback) finishes it.
func (c *Cluster) Register(d int, refuse bool) error {
	if c.Busy() {
		return ErrBusy
	}
	c.registrations++
	return c.register(d, refuse)
}

// CollectorSendRegister puts a REGISTER(d) in flight to T's event service
// (TLA+ CollectorSendRegister): [Cluster.ServiceRecvRegister] delivers
// it, [Cluster.NetLoseRegister] loses it, and a restart of T loses every
// REGISTER in flight to the old process. Meanwhile T's liveness may
// change, and the collector may send it again (a retry), so a REGISTER
// can arrive after admission closed or for a dispatcher already
// registered (a re-registration that replaces the old one).
func (c *Cluster) CollectorSendRegister(d int) {
	c.registrations++
	c.regs = append(c.regs, d)
}

// Registers returns the dispatchers of the REGISTERs in flight, in
// sending order.
func (c *Cluster) Registers() []int { return slices.Clone(c.regs) }

// ServiceRecvRegister delivers REGISTER i of [Cluster.Registers] to T's
// event service (TLA+ ServiceRecvRegister), keeping it in flight if keep
// (duplication); the registration then runs as Register's does,
// refused by the event store if refuse. The service's loop is serial: it
// returns ErrBusy while a request is held between store steps.
func (c *Cluster) ServiceRecvRegister(i int, keep, refuse bool) error {
	if c.Busy() {
		return ErrBusy
	}
	if i < 0 || i >= len(c.regs) {
		return fmt.Errorf("sim: no REGISTER %d in flight", i)
	}
	d := c.regs[i]
	if !keep {
		c.regs = slices.Delete(c.regs, i, i+1)
	}
	return c.register(d, refuse)
}

// NetLoseRegister loses REGISTER i of [Cluster.Registers] (TLA+
// NetLoseRegister).
func (c *Cluster) NetLoseRegister(i int) error {
	if i < 0 || i >= len(c.regs) {
		return fmt.Errorf("sim: no REGISTER %d in flight", i)
	}
	c.regs = slices.Delete(c.regs, i, i+1)
	return nil
}

// register runs REGISTER(d) in T's event service (see Register).
func (c *Cluster) register(d int, refuse bool) error {
	p := c.proc
	req := c.request(eventservice.Register, d)
	if c.isTT(d) || c.registered[d] {
		err := p.svc.Do(context.Background(), req)
		if err == nil {
			c.registered[d] = true
		}
		return err
	}
	es, ss := c.stores(d)
	if refuse {
		es.Refuse(func(store.DispatcherID, store.Subscription) bool { return true })
		defer es.Refuse(nil)
	}
	gate := ss.BlockRegisterTable()
	defer ss.Unblock()
	op := &pendingOp{d: d, gate: gate, result: make(chan error, 1)}
	go func() { op.result <- p.svc.Do(context.Background(), req) }()
	select {
	case <-gate.Entered():
		p.pending = op
		return nil
	case err := <-op.result:
		return err
	}
}

// finish releases the held operation and returns its result.
func (c *Cluster) finish(remove bool) (int, error) {
	op := c.proc.pending
	if op == nil || op.remove != remove {
		return 0, fmt.Errorf("sim: no held %s", map[bool]string{false: "registration", true: "removal"}[remove])
	}
	op.gate.Release()
	err := <-op.result
	c.proc.pending = nil
	return op.d, err
}

// BrokerRegisterTable lets the held registration's RegisterTable succeed
// (TLA+ BrokerRegisterTable): the dispatcher is published.
func (c *Cluster) BrokerRegisterTable() error {
	d, err := c.finish(false)
	if err == nil {
		c.registered[d] = true
	}
	return err
}

// BrokerRegisterTableFails makes the held registration's RegisterTable
// fail (TLA+ BrokerRegisterTableFails, BrokerUnsubscribe, BrokerRollback;
// F-R1).
func (c *Cluster) BrokerRegisterTableFails() error {
	op := c.proc.pending
	if op == nil || op.remove {
		return errors.New("sim: no held registration")
	}
	_, ss := c.stores(op.d)
	ss.FailOnce(nil)
	_, err := c.finish(false)
	if err == nil {
		return errors.New("sim: RegisterTable failure not reported")
	}
	return nil
}

// CollectorRemove sends REMOVE(d) (TLA+ CollectorRemove). A table
// trigger's removal completes at once; an ordinary one is held inside
// EventStore.UnregisterDispatcher until BrokerRemoveFinish.
func (c *Cluster) CollectorRemove(d int) error {
	if c.Busy() {
		return ErrBusy
	}
	p := c.proc
	req := c.request(eventservice.Remove, d)
	c.registered[d] = false
	es, _ := c.stores(d)
	if c.isTT(d) || !es.Subscribed(Dispatcher(d)) {
		return p.svc.Do(context.Background(), req)
	}
	gate := es.BlockUnregister()
	defer es.Unblock()
	op := &pendingOp{d: d, remove: true, gate: gate, result: make(chan error, 1)}
	go func() { op.result <- p.svc.Do(context.Background(), req) }()
	select {
	case <-gate.Entered():
		p.pending = op
		return nil
	case err := <-op.result:
		return err
	}
}

// BrokerRemoveFinish lets the held removal release its stores and
// decrement (TLA+ BrokerRemoveFinish).
func (c *Cluster) BrokerRemoveFinish() error {
	_, err := c.finish(true)
	return err
}

// BrokenStreams returns the dispatchers T's current process still serves
// or holds: registered in the collectors' view, held between steps, or
// subscribed in its event store. A restart breaks their streams.
func (c *Cluster) BrokenStreams() int {
	ids := map[eventservice.DispatcherID]bool{}
	for d, r := range c.registered {
		if r {
			ids[Dispatcher(d)] = true
		}
	}
	if op := c.proc.pending; op != nil {
		ids[Dispatcher(op.d)] = true
	}
	for _, es := range c.proc.es {
		for _, id := range es.Subscribers() {
			ids[id] = true
		}
	}
	return len(ids)
}

// Restart ends T's process and starts the next (TLA+ Restart): a new
// epoch, ALIVE, no registrations. It returns the broken streams.
func (c *Cluster) Restart() (int, error) {
	broken := c.BrokenStreams()
	c.cutStreams()
	c.stop()
	return broken, c.start()
}

// ClusterOf returns the upstream cluster (0-based, see [ClusterID]) that
// dispatcher d belongs to: its broker in T's event service.
func (c *Cluster) ClusterOf(d int) int { return c.clusterOf(d) }

func unknownAnswer() logcoord.Answer { return logcoord.Unknown(Target) }
