package coordinator

import (
	"errors"
	"fmt"
	"github.com/drainproof/drainproof/tla/names"
	"maps"
	"slices"
	"sync"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/logcoord"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
)

// ErrNodeNotExist is returned by [Coordinator.DrainNode] for a target that
// is not a member and has no session and no completed drain (C1,
// upstream ErrCaptureNotExist).
var ErrNodeNotExist = errors.New("coordinator: node does not exist")

// Config configures a [Coordinator]. Times are logical ticks.
type Config struct {
	// Transport selects where the broker count comes from.
	Transport node.Transport
	// ResendInterval throttles the resend of a DRAINING or STOPPING
	// command (0: no throttle).
	ResendInterval int64
	// QueryInterval throttles the LogCoordinator queries (0: no
	// throttle).
	QueryInterval int64
	// UnknownAfter makes a node's state Unknown when nothing was observed
	// from it for this many ticks; an Unknown target neither goes
	// STOPPING nor completes (C3, C8). 0 disables it.
	UnknownAfter int64
	// RequiredVersion is the drain protocol version every alive node must
	// have for a session to start (node.VersionBrokerDrain if 0).
	RequiredVersion node.Version
	// Tracer, if set, receives the model actions about TraceNode
	// (docs/trace.md, see trace.go). Nil: no tracing.
	Tracer trace.Tracer
	// TraceNode is the drained node whose actions are traced.
	TraceNode node.ID

	_ struct{}
}

// Progress is the maintainer-reported work still on a drain target (the
// terms of C7 other than the broker count). Remaining work is the max of
// the terms plus the broker count.
type Progress struct {
	// Maintainers on the target.
	Maintainers int64
	// Dispatchers of tracked changefeeds still on the target.
	Dispatchers int64
	// InflightMoves of dispatchers off the target.
	InflightMoves int64
	// PendingStatus counts tracked changefeeds that have not reported for
	// this drain yet.
	PendingStatus int64
}

func (p Progress) max() int64 {
	return max(p.Maintainers, p.Dispatchers, p.InflightMoves, p.PendingStatus)
}

// Decision is DrainNode's answer to the upgrade client.
type Decision struct {
	// Remaining is the work left; 0 means the client may restart the
	// target now (Complete or Legacy).
	Remaining int64
	// Complete is set when the drain completed (C8); DrainedEpoch is the
	// epoch of the process declared drained.
	Complete     bool
	DrainedEpoch uint64
	// Legacy is set for the legacy hard-restart answer (TLA+
	// CoordLegacyRestart): some alive node does not support the protocol,
	// so no session was created, or the session's target restarted as a
	// process that does not (docs/protocol.md §9). LegacyEpoch is the
	// epoch of the target's process it authorises the upgrade controller
	// to restart (TLA+ legacyEpoch).
	Legacy      bool
	LegacyEpoch uint64
	// Waiting is set while some alive node's version is unknown (docs/protocol.md §9).
	Waiting bool
}

// NodeView is the coordinator's view of one node: the model's
// coordEpoch, coordLiveness, coordCount (CountObserved false is None),
// work, drainedEpoch and legacyEpoch (0 is None).
type NodeView struct {
	Epoch         uint64
	Liveness      node.Liveness
	CountObserved bool
	Count         int64
	Work          int64
	DrainedEpoch  uint64
	LegacyEpoch   uint64
	Member        bool
	VersionKnown  bool
	Version       node.Version
}

// nodeState is drain.Controller's per-node state, keyed by epoch.
type nodeState struct {
	versionKnown bool
	version      node.Version

	epoch    uint64
	liveness node.Liveness // max observed for epoch (draining/stoppingObserved)
	counted  bool          // a broker count was accepted for epoch
	count    int64
	lastSeen int64

	lastCmdAt   int64
	lastCmdKind node.Liveness
	cmdSent     bool
	lastQueryAt int64
	querySent   bool
}

// resetEpoch starts the observations of a newer epoch (C4): everything
// but the drain request (held by the session) goes, the version too: a
// restarted process may run another version (a rolling upgrade restarts
// a legacy process as a new one), so until its bootstrap is observed the
// coordinator waits (TLA+ Observe sets coordVersion to "unknown").
func (n *nodeState) resetEpoch(e uint64, l node.Liveness) {
	n.epoch, n.liveness = e, l
	n.counted, n.count = false, 0
	n.cmdSent, n.querySent = false, false
	n.versionKnown, n.version = false, 0
}

type session struct {
	target       node.ID
	progress     Progress
	drainedEpoch uint64 // 0 until complete
	legacyEpoch  uint64 // 0 until the legacy answer (TLA+ legacyEpoch)
}

// Coordinator is the coordinator's drain controller.
type Coordinator struct {
	cfg Config

	mu        sync.Mutex
	nodes     map[node.ID]*nodeState
	session   *session
	completed node.ID // drainCompleted tombstone: a removed target that completed
	learned   uint64  // the epoch CoordLearnVersion was last traced for (Config.Tracer; 0 none, and after CoordRejoin)
	joined    bool    // the traced node was added once, or TraceRestart (Config.Tracer): a later AddNode is CoordRejoin
}

// New returns a coordinator with no members and no session.
func New(cfg Config) (*Coordinator, error) {
	if cfg.Transport == "" {
		cfg.Transport = node.TransportHeartbeat
	}
	if _, err := node.ParseTransport(string(cfg.Transport)); err != nil {
		return nil, err
	}
	if cfg.RequiredVersion == 0 {
		cfg.RequiredVersion = node.VersionBrokerDrain
	}
	if cfg.ResendInterval < 0 || cfg.QueryInterval < 0 || cfg.UnknownAfter < 0 {
		return nil, fmt.Errorf("coordinator: negative interval")
	}
	return &Coordinator{cfg: cfg, nodes: make(map[node.ID]*nodeState)}, nil
}

// AddNode makes id a member whose process has epoch (known from
// membership or bootstrap), its version not yet known. A member's state
// is kept.
func (c *Coordinator) AddNode(id node.ID, epoch uint64, now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.completed == id {
		c.completed = "" // the completed tombstone goes when the target rejoins
	}
	if _, ok := c.nodes[id]; ok {
		return
	}
	c.nodes[id] = &nodeState{epoch: epoch, lastSeen: now}
	c.traceRejoin(id)
}

// ObserveVersion records the drain protocol version of id's process of
// the given epoch, from its bootstrap response (docs/protocol.md §9; TLA+
// CoordLearnVersion, which needs the epoch tracked to be the process's).
// The version belongs to that process: a bootstrap of another epoch than
// the one tracked is dropped (the caller announces it again, as the
// membership does), and a newer epoch seen in a message forgets the
// version until the new process's bootstrap is observed.
func (c *Coordinator) ObserveVersion(id node.ID, epoch uint64, v node.Version) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[id]
	if n == nil || epoch != n.epoch {
		// An older process's bootstrap is stale; a newer one's waits until
		// the coordinator has seen that epoch in the process's messages
		// (C4): the membership announces it again.
		return
	}
	n.versionKnown, n.version = true, v
	c.traceLearn(id)
}

// RemoveNode handles id leaving membership (C9): if id is the session's
// target the session ends, and a completed one leaves the completed
// tombstone; id's state is deleted.
func (c *Coordinator) RemoveNode(id node.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.session; s != nil && s.target == id {
		if s.drainedEpoch != 0 {
			c.completed = id
		}
		c.session = nil
	}
	delete(c.nodes, id)
}

// observe is TLA+ Observe (C4, and C5 for Variant H): it applies liveness
// l of epoch e, and a count when usesCount.
func (c *Coordinator) observe(n *nodeState, e uint64, l node.Liveness, usesCount bool, cnt int64, now int64) {
	switch {
	case e > n.epoch:
		n.resetEpoch(e, l)
		if usesCount {
			n.counted, n.count = true, cnt
		}
	case e == n.epoch || bugs.AcceptStaleEpochOn():
		n.liveness = max(n.liveness, l)
		if usesCount && (!n.counted || cnt < n.count) {
			n.counted, n.count = true, cnt
		}
	default:
		return // an older epoch: dropped (D2, F3)
	}
	n.lastSeen = max(n.lastSeen, now)
}

// ObserveHeartbeat applies hb (TLA+ CoordRecvHeartbeat). In the heartbeat
// transport the count is accepted only from a STOPPING heartbeat sampled
// with admission closed, of the epoch tracked or a newer one (C5,
// Variant H); within an epoch it only falls.
func (c *Coordinator) ObserveHeartbeat(hb node.Heartbeat, now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[hb.From]
	if n == nil || !hb.Liveness.Valid() {
		return
	}
	usesCount := c.cfg.Transport == node.TransportHeartbeat && hb.HasCount &&
		hb.Liveness == node.Stopping && hb.AdmissionClosed && hb.Count >= 0
	c.observe(n, hb.Epoch, hb.Liveness, usesCount, hb.Count, now)
	c.trace(names.CoordRecvHeartbeat, hb.From, hb.TraceMsg())
}

// ObserveJoin applies a node's join (its bootstrap's first message, N4)
// as a heartbeat of its epoch, ALIVE, without a count. The join is the
// membership's announcement, not a message of the model: the model's
// coordinator knows T's process from Init, or from CoordRejoin (AddNode).
// So it writes no trace line when the observation changes nothing the
// trace observes (epoch, liveness, count: a stutter step); if it does
// change one, it is traced as the CoordRecvHeartbeat it then is, for the
// validator to judge.
func (c *Coordinator) ObserveJoin(from node.ID, epoch uint64, now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[from]
	if n == nil {
		return
	}
	before := *n
	c.observe(n, epoch, node.Alive, false, 0, now)
	if n.epoch != before.epoch || n.liveness != before.liveness || n.counted != before.counted || n.count != before.count {
		hb := node.Heartbeat{From: from, Epoch: epoch, Liveness: node.Alive}
		c.trace(names.CoordRecvHeartbeat, from, hb.TraceMsg())
	}
}

// ObserveResponse applies a SetNodeLivenessResponse (TLA+
// CoordRecvResponse): liveness only, never a count (F2).
func (c *Coordinator) ObserveResponse(r node.Response, now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[r.From]
	if n == nil || !r.Liveness.Valid() {
		return
	}
	c.observe(n, r.Epoch, r.Liveness, false, 0, now)
	c.trace(names.CoordRecvResponse, r.From, r.TraceMsg())
}

// ObserveAnswer applies the LogCoordinator's answer (TLA+
// CoordRecvAnswer, C5 Variant L): a known report of the epoch tracked,
// taken with admission closed, after STOPPING was observed, is accepted
// if it lowers the count (a zero is terminal, F8). An unknown answer
// changes nothing (F7).
func (c *Coordinator) ObserveAnswer(a logcoord.Answer, now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[a.Target]
	if n == nil || c.cfg.Transport != node.TransportLogCoord {
		return
	}
	switch {
	case a.Known && a.AdmissionClosed && n.liveness == node.Stopping && a.Count >= 0 &&
		(a.Epoch == n.epoch || (bugs.AcceptStaleEpochOn() && a.Epoch < n.epoch)) &&
		(!n.counted || a.Count < n.count):
		n.counted, n.count = true, a.Count
	case !a.Known && bugs.UnknownErasesCountOn() && n.liveness == node.Stopping:
		n.counted, n.count = true, 0
	}
	c.trace(names.CoordRecvAnswer, a.Target, a.TraceMsg())
}

// ReportProgress records the maintainers' progress on target's drain
// (TLA+ MaintainerReportProgress). It is ignored when no session drains
// target.
func (c *Coordinator) ReportProgress(target node.ID, p Progress) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.session; s != nil && s.target == target {
		before := s.progress.max()
		s.progress = p
		// A report that leaves the work as it was (a maintainer that
		// reports with every heartbeat) changes no variable the trace
		// observes: a stutter step, not a line.
		if s.progress.max() != before {
			c.trace(names.MaintainerReportProgress, target, nil)
		}
	}
}

// unknown reports whether n's derived state is Unknown.
func (c *Coordinator) unknown(n *nodeState, now int64) bool {
	return c.cfg.UnknownAfter > 0 && now-n.lastSeen > c.cfg.UnknownAfter
}

// brokerTerm is the broker count's term of remaining work.
func (c *Coordinator) brokerTerm(n *nodeState) int64 {
	if bugs.IgnoreBrokerCountOn() || !n.counted {
		return 0
	}
	return n.count
}

// complete is the completion predicate (TLA+ CoordCompleteDrain's guard,
// C8): STOPPING observed for the epoch tracked, no maintainer work, and
// an accepted broker count of zero.
func (c *Coordinator) complete(s *session, n *nodeState, now int64) bool {
	if n.liveness != node.Stopping || s.progress.max() != 0 || c.unknown(n, now) {
		return false
	}
	switch {
	case bugs.IgnoreBrokerCountOn():
		return true
	case bugs.TrustLivenessResponseOn() && !n.counted:
		return true // the bug: a missing count reads as 0
	}
	return n.counted && n.count == 0
}

// DrainNode is the upgrade client's poll (C1, C7, C8). It starts a
// session for target if there is none (after the capability check of
// docs/protocol.md §9), evaluates completion, and on completion records the drained
// epoch (TLA+ CoordCompleteDrain). A new session expects one report from
// the maintainers (PendingStatus 1).
func (c *Coordinator) DrainNode(target node.ID, now int64) (Decision, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.evaluate(target, now, true)
}

// Evaluate is DrainNode without side effects: it neither starts a session
// nor records a drained epoch.
func (c *Coordinator) Evaluate(target node.ID, now int64) (Decision, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.evaluate(target, now, false)
}

func (c *Coordinator) evaluate(target node.ID, now int64, act bool) (Decision, error) {
	n := c.nodes[target]
	s := c.session
	if n == nil {
		if c.completed == target {
			return Decision{Complete: true}, nil
		}
		return Decision{}, fmt.Errorf("%w: %s", ErrNodeNotExist, target)
	}
	if s != nil && s.target != target {
		return Decision{Remaining: 1, Waiting: true}, nil // one drain at a time (D3)
	}
	if s == nil {
		if d, ok := c.versionGate(n, act); ok {
			return d, nil
		}
		s = &session{target: target, progress: Progress{PendingStatus: 1}}
		if act {
			c.session = s
		}
	}
	switch {
	case s.drainedEpoch != 0:
		return Decision{Complete: true, DrainedEpoch: s.drainedEpoch}, nil
	case s.legacyEpoch != 0:
		return Decision{Legacy: true, LegacyEpoch: s.legacyEpoch}, nil
	case c.legacy(n):
		// The target restarted as a process that cannot be drained.
		if act {
			s.legacyEpoch = n.epoch
		}
		return c.legacyAnswer(n, act), nil
	case c.complete(s, n, now):
		if act {
			s.drainedEpoch = n.epoch
			c.trace(names.CoordCompleteDrain, target, nil)
		}
		return Decision{Complete: true, DrainedEpoch: n.epoch}, nil
	}
	return Decision{Remaining: max(1, s.progress.max()+c.brokerTerm(n))}, nil
}

// versionGate is the capability check before a session starts
// (docs/protocol.md §9): it waits while some alive node's version is
// unknown and gives the legacy answer when some alive node is legacy;
// ok is false when every node runs the drain protocol.
func (c *Coordinator) versionGate(target *nodeState, act bool) (Decision, bool) {
	ids := slices.Sorted(maps.Keys(c.nodes))
	for _, id := range ids {
		if !c.nodes[id].versionKnown && !bugs.LegacyOnUnknownOn() {
			return Decision{Remaining: 1, Waiting: true}, true
		}
	}
	for _, id := range ids {
		if c.legacy(c.nodes[id]) {
			return c.legacyAnswer(target, act), true
		}
	}
	return Decision{}, false
}

// legacy reports whether the session's target n runs a process known not
// to support the drain protocol (TLA+ CoordLegacyRestart's guard
// coordVersion = "legacy"); under LegacyOnUnknown also one whose version
// is not known yet.
func (c *Coordinator) legacy(n *nodeState) bool {
	if !n.versionKnown {
		return bugs.LegacyOnUnknownOn() // the bug: unknown read as legacy
	}
	return n.version < c.cfg.RequiredVersion
}

// legacyAnswer is the legacy hard-restart answer for the target n's
// process (TLA+ CoordLegacyRestart), traced when act.
func (c *Coordinator) legacyAnswer(n *nodeState, act bool) Decision {
	if act {
		c.traceLegacy(n)
	}
	return Decision{Legacy: true, LegacyEpoch: n.epoch}
}

// NextCommand returns the liveness command the periodic task sends now
// (C3, TLA+ CoordSendDraining and CoordSendStopping), if any: DRAINING
// until DRAINING is observed, then STOPPING once the maintainers report
// no work, each at the epoch tracked and resent at most every
// ResendInterval. The readiness check and the epoch are read in one
// critical section (F9), so a restart observed in between cannot send a
// new epoch STOPPING.
func (c *Coordinator) NextCommand(now int64) (node.Command, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cmd, ok := c.command(now)
	if !ok {
		return node.Command{}, false
	}
	n := c.nodes[cmd.To]
	n.cmdSent, n.lastCmdKind, n.lastCmdAt = true, cmd.Target, now
	c.trace(commandAction(cmd), cmd.To, cmd.TraceMsg())
	return cmd, true
}

// PendingCommand returns the command [Coordinator.NextCommand] would send
// now, without sending it (no throttle moves, nothing is traced).
func (c *Coordinator) PendingCommand(now int64) (node.Command, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.command(now)
}

// command is NextCommand's decision (c.mu held).
func (c *Coordinator) command(now int64) (node.Command, bool) {
	s := c.session
	if s == nil || s.drainedEpoch != 0 || s.legacyEpoch != 0 {
		return node.Command{}, false
	}
	n := c.nodes[s.target]
	if n == nil || !n.versionKnown || n.version < c.cfg.RequiredVersion {
		// Only a process known to run the drain protocol is driven (TLA+
		// CoordSendDraining and CoordSendStopping need coordVersion
		// "new"): after a restart the session waits for the new
		// process's bootstrap.
		return node.Command{}, false
	}
	var target node.Liveness
	switch {
	case bugs.SkipDrainingOn() && n.liveness != node.Stopping:
		target = node.Stopping // the bug: neither DRAINING observed nor the work awaited
	case n.liveness == node.Alive:
		target = node.Draining
	case n.liveness == node.Draining && s.progress.max() == 0 && !c.unknown(n, now):
		target = node.Stopping
	default:
		return node.Command{}, false
	}
	if n.cmdSent && n.lastCmdKind == target && now-n.lastCmdAt < c.cfg.ResendInterval {
		return node.Command{}, false
	}
	return node.Command{To: s.target, Epoch: n.epoch, Target: target}, true
}

// NextQuery returns the node whose broker count the coordinator asks the
// LogCoordinator for now (C6), if any: in the LogCoordinator transport,
// while a session is active, STOPPING is observed and no zero is
// accepted, at most every QueryInterval.
func (c *Coordinator) NextQuery(now int64) (node.ID, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.session
	if c.cfg.Transport != node.TransportLogCoord || s == nil || s.drainedEpoch != 0 || s.legacyEpoch != 0 {
		return "", false
	}
	n := c.nodes[s.target]
	if n == nil || n.liveness != node.Stopping || (n.counted && n.count == 0) {
		return "", false
	}
	if n.querySent && now-n.lastQueryAt < c.cfg.QueryInterval {
		return "", false
	}
	n.querySent, n.lastQueryAt = true, now
	c.trace(names.CoordSendQuery, s.target, logcoord.QueryTraceMsg())
	return s.target, true
}

// NodeView returns the coordinator's view of id.
func (c *Coordinator) NodeView(id node.ID) NodeView {
	c.mu.Lock()
	defer c.mu.Unlock()
	var o NodeView
	if n := c.nodes[id]; n != nil {
		o = NodeView{Epoch: n.epoch, Liveness: n.liveness, CountObserved: n.counted, Count: n.count,
			Member: true, VersionKnown: n.versionKnown, Version: n.version}
	}
	if s := c.session; s != nil && s.target == id {
		o.Work = s.progress.max()
		o.DrainedEpoch = s.drainedEpoch
		o.LegacyEpoch = s.legacyEpoch
	}
	return o
}

// Target returns the session's target, if a session is active.
func (c *Coordinator) Target() (node.ID, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == nil {
		return "", false
	}
	return c.session.target, true
}
