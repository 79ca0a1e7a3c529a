package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/store"
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

	_ struct{}
}

// Result counts what a run did. BrokenStreams is the protocol's failure
// measure: dispatchers still registered with T (published, held between
// store steps, or subscribed) at a restart that a completed drain
// authorised.
type Result struct {
	Seed            uint64 `json:"seed"`
	Steps           int    `json:"steps"`
	Transport       string `json:"transport"`
	DrainsCompleted int    `json:"drains_completed"`
	Restarts        int    `json:"restarts"`
	UpgradeRestarts int    `json:"upgrade_restarts"`
	CrashRestarts   int    `json:"crash_restarts"`
	LegacyRestarts  int    `json:"legacy_restarts"`
	BrokenStreams   int    `json:"broken_streams"`
	Registrations   int    `json:"registrations"`
	MessagesSent    int    `json:"messages_sent"`
	MessagesLost    int    `json:"messages_lost"`
	Duplicated      int    `json:"messages_duplicated"`
	// Store is T's event store; Delivery checks the changefeed's data.
	Store string `json:"store"`
	Delivery
}

// Add adds r's counts to s (Seed and Steps are kept, Transport too).
func (s *Result) Add(r Result) {
	s.DrainsCompleted += r.DrainsCompleted
	s.Restarts += r.Restarts
	s.UpgradeRestarts += r.UpgradeRestarts
	s.CrashRestarts += r.CrashRestarts
	s.LegacyRestarts += r.LegacyRestarts
	s.BrokenStreams += r.BrokenStreams
	s.Registrations += r.Registrations
	s.MessagesSent += r.MessagesSent
	s.MessagesLost += r.MessagesLost
	s.Duplicated += r.Duplicated
	s.Delivery.add(r.Delivery)
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

	work          int64 // maintainer work on T in the current session
	sessionSeen   bool
	versionKnown  bool
	legacyUntil   int // step until which the peer is legacy (-1: never)
	staleLCActive bool
	now           int // the current step
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
	if cfg.Steps < 0 {
		return Result{}, fmt.Errorf("sim: negative steps")
	}
	c, err := NewCluster(ClusterConfig{Transport: cfg.Transport, Dispatchers: cfg.Dispatchers,
		TableTriggers: cfg.TableTriggers, ResendInterval: 4, QueryInterval: 2, UnknownAfter: 40,
		HeartbeatInterval: 3, CacheTTL: 10, Store: cfg.Store})
	if err != nil {
		return Result{}, err
	}
	defer func() { err = errors.Join(err, c.Close()) }()
	r := &runner{c: c, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		res:          Result{Seed: cfg.Seed, Steps: cfg.Steps, Transport: string(cfg.Transport), Store: string(cfg.Store)},
		versionKnown: true, legacyUntil: -1}
	if r.rng.IntN(5) == 0 {
		r.legacyUntil = r.rng.IntN(max(cfg.Steps, 1))
	}
	c.Coord.AddNode(peer, 1, 0)
	c.Coord.ObserveVersion(peer, 1, r.peerVersion(0))
	for step := 0; step < cfg.Steps; step++ {
		if step%256 == 0 && ctx.Err() != nil {
			return r.res, ctx.Err()
		}
		r.now = step
		if err := r.step(step); err != nil {
			return r.res, fmt.Errorf("sim: seed %d step %d: %w", cfg.Seed, step, err)
		}
	}
	r.res.Registrations = c.Registrations()
	if r.res.Delivery, err = c.Check(); err != nil {
		return r.res, fmt.Errorf("sim: seed %d: %w", cfg.Seed, err)
	}
	return r.res, nil
}

func (r *runner) peerVersion(step int) node.Version {
	if step < r.legacyUntil {
		return node.VersionLegacy
	}
	return node.VersionBrokerDrain
}

func (r *runner) chance(p float64) bool { return r.rng.Float64() < p }

// step runs one event, chosen by weight.
func (r *runner) step(step int) error {
	c := r.c
	if step == r.legacyUntil {
		c.Coord.ObserveVersion(peer, 1, r.peerVersion(step)) // the peer was upgraded
	}
	draining := c.Coord.Observe(Target).Liveness >= node.Draining
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
	c.CoordSendCommand()
	if c.LogCoordAnswer(false) && r.staleLCActive {
		c.send(Msg{Kind: KindAns, Ans: unknownAnswer()})
	}
	c.NodeTick()
	if c.cfg.Transport == node.TransportLogCoord && r.chance(0.5) {
		c.ServiceSendReport()
	}
	c.LogCoord.Expire(c.now)
	if !r.versionKnown && r.chance(0.3) {
		r.versionKnown = true
		c.Coord.ObserveVersion(Target, c.Epoch(), node.VersionBrokerDrain)
	}
	if r.chance(0.02) {
		r.staleLCActive = !r.staleLCActive
	}
	r.sent(before)
	return nil
}

// deliver delivers a message chosen at random (reordering and delay), and
// sometimes keeps it in flight (duplication).
func (r *runner) deliver() error {
	c := r.c
	if len(c.bus) == 0 {
		return nil
	}
	i := r.rng.IntN(len(c.bus))
	keep := r.chance(0.1)
	if keep {
		r.res.Duplicated++
	}
	before := len(c.bus)
	if keep {
		before++ // the kept message is not a new one
	}
	var err error
	switch c.bus[i].Kind {
	case KindCmd:
		err = c.NodeRecvCommand(i, keep, true)
	case KindReport:
		err = c.LogCoordRecvReport(i, keep)
	default:
		err = c.CoordRecv(i, keep)
	}
	if !keep {
		before--
	}
	r.sent(before)
	return err
}

func (r *runner) lose() error {
	if len(r.c.bus) == 0 {
		return nil
	}
	r.res.MessagesLost++
	return r.c.NetLose(r.rng.IntN(len(r.c.bus)))
}

// register has a collector register a dispatcher that it does not hold
// (late registrations after STOPPING are refused by the gate).
func (r *runner) register() error {
	c := r.c
	if c.Busy() {
		return nil
	}
	d := r.rng.IntN(c.cfg.Dispatchers)
	err := c.CollectorRegister(d, r.chance(0.1))
	_ = err // refusals are the collectors' business: they try elsewhere
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
	case r.chance(0.2):
		return c.BrokerRegisterTableFails()
	}
	_ = c.BrokerRegisterTable()
	return nil
}

// maintainers move their work off T once they see the drain (DRAINING
// observed), one unit at a time.
func (r *runner) maintainers() error {
	c := r.c
	if _, ok := c.Coord.Target(); !ok || c.Coord.Observe(Target).Liveness < node.Draining || r.work == 0 {
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
			r.sessionSeen = true
			r.work = 1 + r.rng.Int64N(3)
			c.Coord.ReportProgress(Target, coordinator.Progress{Dispatchers: r.work})
		}
	}
	switch {
	case dec.Legacy:
		r.res.LegacyRestarts++
	case dec.Complete && dec.DrainedEpoch == c.Epoch():
		r.res.DrainsCompleted++
		r.res.UpgradeRestarts++
		r.res.Restarts++
		broken, err := c.RestartDrained(DrainRef{Number: r.res.DrainsCompleted, Epoch: c.Epoch(), Step: r.now})
		r.res.BrokenStreams += broken
		if err != nil {
			return err
		}
		r.rejoin()
		return nil
	case dec.Complete:
		// T crashed after the drain completed: the process declared
		// drained is gone, so this restart is not authorised; drain again.
		r.rejoin()
		return nil
	default:
		return nil
	}
	r.res.Restarts++
	if _, err := c.Restart(); err != nil {
		return err
	}
	r.rejoin()
	return nil
}

// rejoin: T's new process leaves and rejoins membership; its version is
// known only after its bootstrap.
func (r *runner) rejoin() {
	c := r.c
	c.Coord.RemoveNode(Target)
	c.LogCoord.RemoveNode(Target)
	c.Coord.AddNode(Target, c.Epoch(), c.now)
	r.versionKnown = false
	r.sessionSeen = false
}

// crash restarts T unplanned; the coordinator learns the new epoch from
// its messages.
func (r *runner) crash() error {
	if !r.chance(0.3) {
		return nil
	}
	r.res.Restarts++
	r.res.CrashRestarts++
	_, err := r.c.Restart()
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
// then a write batch fails (the puller retries at its next pull).
func (r *runner) pull() error {
	if r.chance(0.1) {
		r.c.InjectStoreFault([]store.Fault{store.FaultBatchSet, store.FaultBatchCommit}[r.rng.IntN(2)])
	}
	return transient(r.c.Pull(1 + r.rng.IntN(4)))
}

// consume has a random changefeed dispatcher read 1 to 3 events; now and
// then its iterator fails (it reads again later).
func (r *runner) consume() error {
	if n := r.c.ordinary(); n > 0 {
		if r.chance(0.05) {
			r.c.InjectStoreFault([]store.Fault{store.FaultIterOpen, store.FaultIterNext}[r.rng.IntN(2)])
		}
		_, err := r.c.Consume(r.rng.IntN(n), 1+r.rng.IntN(3))
		return transient(err)
	}
	return nil
}

// transient drops an injected store fault, which the caller retries.
func transient(err error) error {
	if errors.Is(err, store.ErrInjectedFault) {
		return nil
	}
	return err
}
