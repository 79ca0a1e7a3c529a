package sim

import (
	"context"
	"errors"
	"fmt"
	"github.com/drainproof/drainproof/tla/names"
	"math/rand/v2"

	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
	"github.com/drainproof/drainproof/impl/trace"
)

// Config configures one seeded simulation ([Run]).
type Config struct {
	// Seed selects the run; the same seed gives the same run.
	Seed uint64
	// Steps is the number of events the run simulates.
	Steps int
	// Transport of the broker count (heartbeat if empty).
	Transport node.Transport
	// Dispatchers (default 4) and TableTriggers (default 1) the collectors
	// register with T.
	Dispatchers, TableTriggers int
	// Store is T's event store (memory if empty).
	Store StoreKind
	// Clusters is the number of upstream clusters, so of event brokers in
	// T's event service (default 2).
	Clusters int
	// Settle, if positive, follows the Steps events with up to Settle
	// events without faults (no loss, duplication, crash, store fault or
	// stale LogCoordinator) while a drain open at the end of the Steps is
	// still open: Result.SettledDrains and StalledDrains say whether it
	// completed.
	Settle int
	// Tracer, if set, receives the run's model actions (docs/trace.md):
	// every component of the cluster traces into it. A traced run that is
	// not ModelScope (a full run, validated through the refinement mapping
	// its header names) stays within the model's bounds: T restarts up to
	// TraceMaxEpoch, at most four distinct messages are in flight before
	// each event, and the peer never runs a legacy version.
	Tracer trace.Tracer
	// Traces, if set instead of Tracer, gives each process of the run its
	// own trace (see ClusterConfig.Traces and TraceWriters).
	Traces func(proc, after string, clock uint64) (*trace.Writer, error)
	// ModelScope keeps the run within what the TLA+ model describes, so
	// that its trace can be validated: see modelScope in trace.go.
	ModelScope bool

	_ struct{}
}

// The peer that hosts the LogCoordinator; it may run a legacy version for
// a while (mixed versions, docs/protocol.md §9).
const peer node.ID = "P1"

// runner is one run's environment: the collectors, the maintainers, the
// network's faults, the upgrade controller and the peers, all choosing
// from one seeded generator.
type runner struct {
	c   *Cluster
	rng *rand.Rand
	res Result

	model         bool  // Config.ModelScope
	bounded       bool  // model scope, or a traced full run: within the model's bounds (trace.go)
	work          int64 // maintainer work on T in the current session
	sessionSeen   bool
	versionKnown  bool
	legacyUntil   int // step until which the peer is legacy (-1: never)
	staleLCActive bool

	step       int  // the event being run
	drainStart int  // the event whose poll started the open drain's session; -1: none open
	calm       bool // the fault-free events after the Steps (Config.Settle)
}

// Run simulates cfg.Steps events of a cluster draining T again and again
// (each completed drain is followed by an upgrade restart and a new
// drain), with collectors registering and removing dispatchers (late ones
// too), maintainers draining their work, a bus that loses, duplicates,
// delays and reorders messages, unplanned restarts, a peer of a legacy
// version for a while, T rejoining with a version not yet known, store
// faults and a stale LogCoordinator answering "unknown". It is
// deterministic for a seed: no clock, no map order, one generator.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	if cfg.Transport == "" {
		cfg.Transport = node.TransportHeartbeat
	}
	if cfg.Dispatchers == 0 {
		cfg.Dispatchers, cfg.TableTriggers = 4, 1
	}
	if cfg.Store == "" {
		cfg.Store = StoreMemory
	}
	if cfg.Clusters == 0 {
		cfg.Clusters = 2
	}
	if cfg.Steps < 0 || cfg.Settle < 0 {
		return Result{}, fmt.Errorf("sim: negative steps")
	}
	c, err := NewCluster(ClusterConfig{Transport: cfg.Transport, Dispatchers: cfg.Dispatchers,
		TableTriggers: cfg.TableTriggers, Clusters: cfg.Clusters, ResendInterval: 4, QueryInterval: 2, UnknownAfter: 40,
		HeartbeatInterval: 3, CacheTTL: cacheTTL(cfg), Store: cfg.Store, Tracer: cfg.Tracer, Traces: cfg.Traces})
	if err != nil {
		return Result{}, err
	}
	defer func() { err = errors.Join(err, c.Close()) }()
	r := &runner{c: c, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		res:          Result{Seed: cfg.Seed, Steps: cfg.Steps, Transport: string(cfg.Transport), Store: string(cfg.Store)},
		versionKnown: true, legacyUntil: -1, drainStart: -1}
	r.model = cfg.ModelScope
	r.bounded = cfg.ModelScope || cfg.Tracer != nil || cfg.Traces != nil
	if r.rng.IntN(5) == 0 && !r.bounded {
		r.legacyUntil = r.rng.IntN(max(cfg.Steps, 1))
	}
	if err := r.startModelScope(); err != nil {
		return r.res, err
	}
	c.Coord.AddNode(peer, 1, 0)
	c.Coord.ObserveVersion(peer, 1, r.peerVersion(0))
	for ; r.step < cfg.Steps; r.step++ {
		if r.step%256 == 0 && ctx.Err() != nil {
			return r.res, ctx.Err()
		}
		if err := r.event(); err != nil {
			return r.res, fmt.Errorf("sim: seed %d step %d: %w", cfg.Seed, r.step, err)
		}
	}
	if r.drainStart >= 0 {
		r.res.OpenDrains++
		if err := r.settle(ctx, cfg.Settle); err != nil {
			return r.res, fmt.Errorf("sim: seed %d settle step %d: %w", cfg.Seed, r.step, err)
		}
	}
	r.res.Registrations = c.Registrations()
	r.res.TraceLinesLost = c.Lost()
	if r.res.Delivery, err = c.Check(); err != nil {
		return r.res, fmt.Errorf("sim: seed %d: %w", cfg.Seed, err)
	}
	return r.res, nil
}

// settle runs up to n fault-free events while the drain open at the end of
// the Steps is still open.
func (r *runner) settle(ctx context.Context, n int) error {
	if n == 0 {
		return nil
	}
	r.calm, r.staleLCActive = true, false
	for end := r.step + n; r.step < end; r.step++ {
		if r.step%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := r.event(); err != nil {
			return err
		}
		if r.res.SettledDrains > 0 { // completed, and T restarted
			return nil
		}
	}
	r.res.StalledDrains++
	return nil
}

func (r *runner) peerVersion(step int) node.Version {
	if step < r.legacyUntil {
		return node.VersionLegacy
	}
	return node.VersionBrokerDrain
}

func (r *runner) chance(p float64) bool { return r.rng.Float64() < p }

// event runs one event, chosen by weight; once calm, no fault.
func (r *runner) event() error {
	c := r.c
	r.trimBus()
	if r.step == r.legacyUntil {
		c.Coord.ObserveVersion(peer, 1, r.peerVersion(r.step)) // the peer was upgraded
	}
	draining := c.Coord.NodeView(Target).Liveness >= node.Draining
	type event struct {
		w  int
		do func() error
	}
	events := []event{
		{30, r.tick},
		{25, r.deliver},
		{3, r.lose},
		{12, r.register},
		{10, r.remove},
		{15, r.brokerStep},
		{5, r.maintainers},
		{4, r.upgradeController},
		{1, r.crash},
		{8, r.produce},
		{5, r.pull},
		{8, r.consume},
	}
	if draining {
		events = append(events, event{4, r.remove}) // collectors move off a draining node
	}
	if r.calm {
		events[2].w, events[8].w = 0, 0 // no loss, no crash
	}
	total := 0
	for _, e := range events {
		total += e.w
	}
	n := r.rng.IntN(total)
	for _, e := range events {
		if n < e.w {
			return e.do()
		}
		n -= e.w
	}
	return nil
}

func (r *runner) sent(before int) { r.res.MessagesSent += max(0, len(r.c.bus)-before) }

// tick advances time one tick and runs the periodic tasks: the
// coordinator's commands and queries (a stale LogCoordinator also
// answers, "unknown"), T's heartbeat, the LogCoordinator's broadcast and
// T's report, the cache's expiry, and T's bootstrap after a rejoin.
func (r *runner) tick() error {
	c := r.c
	c.Advance(1)
	before := len(c.bus)
	c.coordSend()
	if c.CoordSendQuery() && r.staleLCActive {
		c.send(Msg{Kind: node.KindAns, Ans: unknownAnswer()}, c.lcW())
	}
	c.NodeTick()
	if c.cfg.Transport == node.TransportLogCoord && r.chance(0.5) {
		c.ServiceSendReport()
	}
	c.LogCoord.Expire(c.now)
	if !r.versionKnown && r.chance(0.3) {
		// T's bootstrap, announced again (as the membership does) until
		// the coordinator, which must first see T's epoch, takes it.
		c.observeVersion(node.VersionBrokerDrain)
		o := c.Coord.NodeView(Target)
		r.versionKnown = o.VersionKnown && o.Epoch == c.Epoch()
	}
	if r.chance(0.02) && !r.calm && !r.model {
		r.staleLCActive = !r.staleLCActive
	}
	r.sent(before)
	return nil
}

// inFlightPerDelivery sets the network's parallelism: a delivery event
// delivers one message for every inFlightPerDelivery messages in flight,
// at least one.
const inFlightPerDelivery = 8

// deliver delivers messages chosen at random (reordering and delay). The
// network carries messages in parallel, so the more are in flight the
// more one event delivers (inFlightPerDelivery): with one message per
// event, a transport that sends more messages per tick than the events
// deliver (the LogCoordinator's reports and answers beside the
// heartbeats) piles hundreds of messages up on the bus, and every
// message then waits hundreds of events for its turn.
func (r *runner) deliver() error {
	for k := 1 + r.inFlight()/inFlightPerDelivery; k > 0; k-- {
		if err := r.deliverOne(); err != nil {
			return err
		}
	}
	return nil
}

// inFlight counts the messages in flight: the bus and the REGISTERs.
func (r *runner) inFlight() int { return len(r.c.bus) + len(r.c.regs) }

// deliverOne delivers a message chosen at random, and sometimes keeps it
// in flight (duplication). A REGISTER waits while the event service's
// loop is busy.
func (r *runner) deliverOne() error {
	c := r.c
	if r.inFlight() == 0 {
		return nil
	}
	i := r.rng.IntN(r.inFlight())
	keep := r.chance(0.1) && !r.calm
	if i >= len(c.bus) {
		if c.Busy() {
			return nil
		}
		if keep {
			r.res.Duplicated++
		}
		err := c.ServiceRecvRegister(i-len(c.bus), keep, r.chance(0.1) && !r.calm)
		if errors.Is(err, ErrBusy) {
			return err // checked above: a bug of the cluster
		}
		return nil // refusals are the collectors' business: they try again or elsewhere
	}
	if keep {
		r.res.Duplicated++
	}
	before := len(c.bus)
	if keep {
		before++ // the kept message is not a new one
	}
	var err error
	switch c.bus[i].Kind {
	case node.KindCmd:
		err = c.NodeRecvCommand(i, keep, true)
	case node.KindReport:
		err = c.LogCoordRecvReport(i, keep)
	case node.KindHb:
		err = c.CoordRecvHeartbeat(i, keep)
	case node.KindResp:
		err = c.CoordRecvResponse(i, keep)
	case node.KindAns:
		err = c.CoordRecvAnswer(i, keep)
	case node.KindQuery:
		err = c.LogCoordAnswer(i, keep)
	}
	if !keep {
		before--
	}
	r.sent(before)
	return err
}

func (r *runner) lose() error {
	if r.inFlight() == 0 {
		return nil
	}
	r.res.MessagesLost++
	i := r.rng.IntN(r.inFlight())
	if i >= len(r.c.bus) {
		return r.c.NetLoseRegister(i - len(r.c.bus))
	}
	return r.c.NetLose(i)
}

// register has a collector send a REGISTER for a dispatcher, registered
// or not (a retry, or a re-registration), which the bus delivers later,
// maybe after T's liveness changed (late registrations after STOPPING are
// refused by the gate), maybe twice, maybe never.
func (r *runner) register() error {
	r.c.CollectorSendRegister(r.rng.IntN(r.c.cfg.Dispatchers))
	r.res.MessagesSent++
	return nil
}

func (r *runner) remove() error {
	c := r.c
	if c.Busy() {
		return nil
	}
	var held []int
	for d, ok := range c.registered {
		if ok {
			held = append(held, d)
		}
	}
	if len(held) == 0 {
		return nil
	}
	return c.CollectorRemove(held[r.rng.IntN(len(held))])
}

// brokerStep finishes the held store call; a RegisterTable fails now and
// then (the schema store still initialising, F-R1).
func (r *runner) brokerStep() error {
	c := r.c
	_, removing, ok := c.Pending()
	switch {
	case !ok:
		return nil
	case removing:
		return c.BrokerRemoveFinish()
	case r.chance(0.2) && !r.calm:
		return c.BrokerRegisterTableFails()
	}
	_ = c.BrokerRegisterTable()
	return nil
}

// maintainers move their work off T once they see the drain (DRAINING
// observed), one unit at a time.
func (r *runner) maintainers() error {
	c := r.c
	if _, ok := c.Coord.Target(); !ok || c.Coord.NodeView(Target).Liveness < node.Draining || r.work == 0 {
		return nil
	}
	r.work--
	c.Coord.ReportProgress(Target, coordinator.Progress{Dispatchers: r.work})
	return nil
}

// upgradeController polls DrainNode(T) and restarts T once the drain is
// complete (only the process declared drained: UpgradeRestart) or the
// legacy answer comes.
func (r *runner) upgradeController() error {
	c := r.c
	dec, err := c.Coord.DrainNode(Target, c.now)
	if err != nil {
		return err
	}
	if !r.sessionSeen {
		if _, ok := c.Coord.Target(); ok {
			r.sessionSeen, r.drainStart = true, r.step
			r.work = 1 + r.rng.Int64N(3)
			c.Coord.ReportProgress(Target, coordinator.Progress{Dispatchers: r.work})
		}
	}
	switch {
	case dec.Legacy && dec.LegacyEpoch == c.Epoch():
		return r.legacyRestart()
	case dec.Complete && dec.DrainedEpoch == c.Epoch():
		if r.calm {
			r.res.SettledDrains++
			r.res.SettleSteps = append(r.res.SettleSteps, r.step-r.res.Steps+1)
		} else {
			r.res.DrainsCompleted++
			r.res.DrainSteps = append(r.res.DrainSteps, r.step-r.drainStart)
		}
		if !r.mayRestart() {
			// Model scope, past its epochs: the drained process stays;
			// the streams a restart would break are still counted.
			r.res.BrokenStreams += c.BrokenStreams()
			r.drainStart = -1 // complete, not open
			return nil
		}
		r.res.UpgradeRestarts++
		r.res.Restarts++
		broken, err := c.RestartDrained(DrainRef{Number: r.res.DrainsCompleted, Epoch: c.Epoch(), Step: r.step})
		r.res.BrokenStreams += broken
		if err != nil {
			return err
		}
		r.restarted(names.UpgradeRestart)
		r.rejoin()
		return nil
	case dec.Complete:
		// T crashed after the drain completed: the process declared
		// drained is gone, so this restart is not authorised; drain again.
		r.rejoin()
		return nil
	}
	return nil
}

// legacyRestart is the upgrade controller's hard restart of T after the
// legacy answer (UpgradeRestart of the process legacyEpoch names). The
// legacy answer is for a cluster where some alive process cannot be
// drained; one given while every process runs the drain protocol (T
// always does here; the peer after legacyUntil) authorises a restart
// that no drain and no legacy process justifies (VersionSafety), so the
// streams it breaks count as broken.
func (r *runner) legacyRestart() error {
	c := r.c
	r.res.LegacyRestarts++
	if !r.mayRestart() {
		return nil
	}
	r.res.Restarts++
	broken, err := c.Restart()
	if r.peerVersion(r.step) >= node.VersionBrokerDrain {
		r.res.BrokenStreams += broken
	}
	if err != nil {
		return err
	}
	r.restarted(names.UpgradeRestart)
	r.rejoin()
	return nil
}

// rejoin: T's new process leaves and rejoins membership; its version is
// known only after its bootstrap.
func (r *runner) rejoin() {
	if r.model {
		return // one drain session, as in the model
	}
	c := r.c
	c.Coord.RemoveNode(Target)
	c.LogCoord.RemoveNode(Target)
	c.addTarget()
	r.versionKnown = false
	r.sessionSeen, r.drainStart = false, -1
}

// crash restarts T unplanned; the coordinator learns the new epoch from
// its messages.
func (r *runner) crash() error {
	if !r.chance(0.3) || !r.mayRestart() {
		return nil
	}
	r.res.Restarts++
	r.res.CrashRestarts++
	r.c.killed = true // a crash: T's trace loses its unsent tail
	_, err := r.c.Restart()
	r.restarted(names.NodeCrashRestart)
	r.forgetOldProcess()
	r.versionKnown = false // the new process announces its version at bootstrap
	return err
}

// produce commits a change event to a random ordinary dispatcher's table.
func (r *runner) produce() error {
	if n := r.c.ordinary(); n > 0 {
		r.c.Commit(r.rng.IntN(n))
	}
	return nil
}

// pull runs T's puller with a batch of 1 to 4 events per table; now and
// then, unless calm, a write batch fails (the puller retries at its next
// pull).
func (r *runner) pull() error {
	if r.chance(0.1) && !r.calm {
		r.c.InjectStoreFault([]store.Fault{store.FaultBatchSet, store.FaultBatchCommit}[r.rng.IntN(2)])
	}
	return transient(r.c.Pull(1 + r.rng.IntN(4)))
}

// consume has a random changefeed dispatcher read 1 to 3 events; now and
// then, unless calm, its iterator fails (it reads again later).
func (r *runner) consume() error {
	if n := r.c.ordinary(); n > 0 {
		if r.chance(0.05) && !r.calm {
			r.c.InjectStoreFault([]store.Fault{store.FaultIterOpen, store.FaultIterNext}[r.rng.IntN(2)])
		}
		_, err := r.c.Consume(r.rng.IntN(n), 1+r.rng.IntN(3))
		return transient(err)
	}
	return nil
}

// transient drops an injected store fault, which the caller retries.
func transient(err error) error {
	if errors.Is(err, storetest.ErrInjectedFault) {
		return nil
	}
	return err
}
