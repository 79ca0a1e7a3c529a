package node

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/trace"
)

// Liveness is a node's liveness. The order is the model's Rank. It is
// the one definition of liveness in impl: the coordinator's view, the
// simulator and the traces use it.
type Liveness int32

// The liveness values (TLA+ "ALIVE", "DRAINING", "STOPPING"), and
// NoLiveness, the liveness of a message that carries none (TLA+ "NONE":
// a report, an answer).
const (
	Alive Liveness = iota
	Draining
	Stopping

	NoLiveness Liveness = -1
)

// String returns the TLA+ spelling of l.
func (l Liveness) String() string {
	switch l {
	case Alive:
		return "ALIVE"
	case Draining:
		return "DRAINING"
	case Stopping:
		return "STOPPING"
	case NoLiveness:
		return "NONE"
	}
	return fmt.Sprintf("Liveness(%d)", int32(l))
}

// Valid reports whether l is a node's liveness: Alive, Draining or
// Stopping (not NoLiveness).
func (l Liveness) Valid() bool { return l >= Alive && l <= Stopping }

// Kind is a message kind of the drain protocol (TLA+ Kinds), the one
// definition in impl: the simulator's bus and the traces use it.
type Kind int8

// The message kinds, named as in TLA+: "cmd" ([Command]), "resp"
// ([Response]), "hb" ([Heartbeat]), "report" ([Report]), "query" (the
// coordinator's count query to the LogCoordinator) and "ans" (the
// LogCoordinator's answer, package logcoord).
const (
	KindCmd Kind = iota
	KindResp
	KindHb
	KindReport
	KindAns
	KindQuery
)

// String returns the TLA+ spelling of k.
func (k Kind) String() string {
	switch k {
	case KindCmd:
		return "cmd"
	case KindResp:
		return "resp"
	case KindHb:
		return "hb"
	case KindReport:
		return "report"
	case KindAns:
		return "ans"
	case KindQuery:
		return "query"
	}
	return fmt.Sprintf("Kind(%d)", int8(k))
}

// LivenessStore holds a node's liveness. Its zero value is ALIVE. It only
// moves one step forward (D1).
type LivenessStore struct {
	v atomic.Int32
}

// Load returns the current liveness.
func (s *LivenessStore) Load() Liveness { return Liveness(s.v.Load()) }

// Advance moves the liveness to target if target is exactly one step
// ahead of the current value, by compare-and-swap, and reports whether it
// did. A skip (ALIVE → STOPPING), a step back, a repeat and an invalid
// value are refused.
func (s *LivenessStore) Advance(target Liveness) bool {
	if !target.Valid() || target == Alive {
		return false
	}
	if bugs.NodeAcceptsSkipOn() {
		// The bug: any forward step, a skip included.
		for {
			cur := s.v.Load()
			if int32(target) <= cur {
				return false
			}
			if s.v.CompareAndSwap(cur, int32(target)) {
				return true
			}
		}
	}
	return s.v.CompareAndSwap(int32(target-1), int32(target))
}

// Version is the drain protocol version a node announces in its bootstrap
// response (docs/protocol.md §9).
type Version int

// The version ladder.
const (
	// VersionLegacy does not support coordinator-driven drain: any alive
	// legacy node means the legacy hard-restart answer.
	VersionLegacy Version = 0
	// VersionDrain supports the drain control messages only.
	VersionDrain Version = 1
	// VersionBrokerDrain also reports the event broker count; it is the
	// version a drain session requires.
	VersionBrokerDrain Version = 2
)

// Transport says how the broker count reaches the coordinator.
type Transport string

// The transports (the TLA+ constant Transport).
const (
	// TransportHeartbeat carries the count on the node heartbeat
	// (Variant H).
	TransportHeartbeat Transport = "heartbeat"
	// TransportLogCoord carries the count through the LogCoordinator
	// (Variant L).
	TransportLogCoord Transport = "logcoord"
)

// ParseTransport returns the transport named s.
func ParseTransport(s string) (Transport, error) {
	switch Transport(s) {
	case TransportHeartbeat, TransportLogCoord:
		return Transport(s), nil
	}
	return "", fmt.Errorf("node: unknown transport %q (want %q or %q)", s, TransportHeartbeat, TransportLogCoord)
}

// ID names a node (a capture).
type ID string

// Command is the coordinator's SetNodeLivenessRequest (TLA+ Cmd): move
// node To's liveness to Target, for the process of Epoch.
type Command struct {
	To     ID
	Epoch  uint64
	Target Liveness
}

// Response is the node's SetNodeLivenessResponse (TLA+ Resp): its own
// epoch and its liveness after the command. It never carries a count.
type Response struct {
	From     ID
	Epoch    uint64
	Liveness Liveness
}

// Heartbeat is the node's NodeHeartbeat (TLA+ Hb). In the heartbeat
// transport it carries the event service's count and whether admission
// was closed when it was sampled (HasCount true); otherwise HasCount is
// false and Count and AdmissionClosed are zero.
type Heartbeat struct {
	From            ID
	Epoch           uint64
	Liveness        Liveness
	HasCount        bool
	Count           int64
	AdmissionClosed bool
}

// Report is the event service's EventBrokerDispatcherCount to the
// LogCoordinator (TLA+ Report), tagged with the node's epoch.
type Report struct {
	From            ID
	Epoch           uint64
	Count           int64
	AdmissionClosed bool
	// Seq is the report's place among its process's reports (1, 2, …;
	// 0: not numbered). The LogCoordinator dates an entry by the newest
	// sample it holds, so a copy of an older report delivered late must
	// be recognisable as older (TiCDC #6155). It is not part of the
	// model's message: the model's expiry has no clock.
	Seq uint64
}

// Sample returns r without its sequence number: what was sampled.
func (r Report) Sample() Report {
	r.Seq = 0
	return r
}

// Counter is the part of the event service the node reads: the sum of
// its brokers' counts and whether admission is closed. Sample closes
// admission first when the node is STOPPING (eventservice.Service
// implements it).
type Counter interface {
	Sample() (count int64, admissionClosed bool)
}

// Config configures a [Node].
type Config struct {
	// ID is the node's name.
	ID ID
	// Epoch is the process epoch (≥ 1); a restart uses a larger one.
	Epoch uint64
	// Version is the drain protocol version the node announces.
	Version Version
	// Transport selects where the broker count travels.
	Transport Transport
	// Service is the node's event service; nil reports a zero count with
	// admission open.
	Service Counter
	// Liveness is the liveness store shared with the event service (its
	// Stopping callback); nil gives the node its own.
	Liveness *LivenessStore
	// HeartbeatInterval is the throttle of unforced heartbeats, in ticks
	// (1 if 0).
	HeartbeatInterval int64
	// Tracer, if set, receives the model actions the node takes
	// (docs/trace.md; see trace.go). Nil: no tracing.
	Tracer trace.Tracer

	_ struct{}
}

// Node is the drained node's process: one epoch, one liveness.
type Node struct {
	cfg  Config
	live *LivenessStore

	mu        sync.Mutex
	lastHB    int64
	sentHB    bool
	reportSeq uint64 // the Seq of the last Report
}

// New returns the process described by cfg, ALIVE.
func New(cfg Config) (*Node, error) {
	if cfg.Epoch == 0 {
		return nil, fmt.Errorf("node: epoch must be ≥ 1")
	}
	if cfg.Transport == "" {
		cfg.Transport = TransportHeartbeat
	}
	if _, err := ParseTransport(string(cfg.Transport)); err != nil {
		return nil, err
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = 1
	}
	live := cfg.Liveness
	if live == nil {
		live = new(LivenessStore)
	}
	return &Node{cfg: cfg, live: live}, nil
}

// ID returns the node's name.
func (n *Node) ID() ID { return n.cfg.ID }

// Epoch returns the process epoch.
func (n *Node) Epoch() uint64 { return n.cfg.Epoch }

// Version returns the announced drain protocol version.
func (n *Node) Version() Version { return n.cfg.Version }

// Liveness returns the node's liveness.
func (n *Node) Liveness() Liveness { return n.live.Load() }

// Stopping reports whether the node is STOPPING (the event service's
// Stopping callback).
func (n *Node) Stopping() bool { return n.live.Load() == Stopping }

// RecvCommand applies cmd (TLA+ NodeRecvCommand, N1). For the node's own
// epoch it takes the one step forward cmd asks for; a command for another
// epoch, a skip or a step back changes nothing. It returns the response
// (the node's real epoch and liveness) and whether liveness changed: then
// the caller sends a forced heartbeat ([Node.Heartbeat]) before the
// response. Building that heartbeat is a separate step because in the
// heartbeat transport it samples the event service, which closes
// admission when STOPPING (TLA+ NodeSendHeartbeat).
func (n *Node) RecvCommand(cmd Command) (resp Response, changed bool) {
	changed = cmd.Epoch == n.cfg.Epoch && n.live.Advance(cmd.Target)
	resp = Response{From: n.cfg.ID, Epoch: n.cfg.Epoch, Liveness: n.live.Load()}
	n.traceCommand(cmd, resp)
	return resp, changed
}

// Heartbeat builds a forced heartbeat (TLA+ NodeSendHeartbeat) and moves
// the throttle. It samples liveness first, then (heartbeat transport) the
// event service's report, which closes admission when STOPPING, so a
// STOPPING heartbeat's count is always sampled with admission closed.
func (n *Node) Heartbeat(now int64) Heartbeat {
	n.mu.Lock()
	n.lastHB, n.sentHB = now, true
	n.mu.Unlock()
	hb := Heartbeat{From: n.cfg.ID, Epoch: n.cfg.Epoch, Liveness: n.live.Load()}
	if n.cfg.Transport == TransportHeartbeat {
		hb.HasCount = true
		n.traceStartHeartbeat(hb.Liveness)
		if n.cfg.Service != nil {
			hb.Count, hb.AdmissionClosed = n.cfg.Service.Sample()
		}
	}
	n.traceHeartbeat(hb)
	return hb
}

// Tick returns a heartbeat if the heartbeat interval has passed since the
// last one (N2), and false otherwise.
func (n *Node) Tick(now int64) (Heartbeat, bool) {
	n.mu.Lock()
	due := !n.sentHB || now-n.lastHB >= n.cfg.HeartbeatInterval
	n.mu.Unlock()
	if !due {
		return Heartbeat{}, false
	}
	return n.Heartbeat(now), true
}

// Report is the event service's answer to the LogCoordinator's broadcast
// (TLA+ ServiceSendReport): the count and admission state, tagged with
// the node's epoch. The caller sends one periodically whether or not it
// changed: the LogCoordinator's TTL expires the entry of a live node too,
// and a node that reports only changes (the NoReReport bug) leaves the
// coordinator with "unknown" answers and its drain stalls.
func (n *Node) Report() Report {
	r := Report{From: n.cfg.ID, Epoch: n.cfg.Epoch}
	if n.cfg.Service != nil {
		r.Count, r.AdmissionClosed = n.cfg.Service.Sample()
	}
	// Numbered after sampling: a later number is a later sample.
	n.mu.Lock()
	n.reportSeq++
	r.Seq = n.reportSeq
	n.mu.Unlock()
	n.traceReport(r)
	return r
}
