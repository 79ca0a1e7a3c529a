package coordinator

import (
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/tla/names"
)

// This file is the coordinator's side of trace validation (docs/trace.md):
// with Config.Tracer set, the coordinator writes one line per model
// action about Config.TraceNode (the drained node), under its lock, with
// its view of that node after the action (coordEpoch, coordLiveness,
// coordCount, work, drainedEpoch).
//
//	ObserveHeartbeat   CoordRecvHeartbeat
//	ObserveJoin        none (a stutter: the join of the epoch AddNode took), or
//	                   CoordRecvHeartbeat if it changes the view
//	ObserveResponse    CoordRecvResponse
//	ObserveAnswer      CoordRecvAnswer
//	NextCommand        CoordSendDraining, CoordSendStopping
//	NextQuery          CoordSendQuery       the query it returns is sent
//	ReportProgress     MaintainerReportProgress  when the session's work changes
//	DrainNode          CoordCompleteDrain   when it records the drained epoch
//	                   CoordLegacyRestart   when it gives the legacy answer
//	ObserveVersion, and after an observation of a newer epoch
//	                   CoordLearnVersion    (the version is kept per node)
//	AddNode            CoordRejoin          the node rejoins after RemoveNode: a
//	                                        refinement step, not a model action
//	                                        (docs/trace.md, "Every run"); after
//	                                        TraceRestart also its first AddNode
//
// work is the session's remaining work, or None (-1) while no session
// drains the node: the model's coordinator drains T from Init, so a run
// that starts its session later (the upgrade client's first poll) is
// validated with the refinement mapping of docs/trace.md, which reads
// None as the one unit the model's session starts with.

// trace writes action about node id (c.mu held); m is the message taken
// or sent.
func (c *Coordinator) trace(action names.Action, id node.ID, m *trace.Msg) {
	t := c.cfg.Tracer
	if t == nil || id != c.cfg.TraceNode {
		return
	}
	var epoch, count int64
	count = trace.None
	work := int64(trace.None) // no session drains id
	drained := int64(trace.None)
	live := node.Alive
	if n := c.nodes[id]; n != nil {
		epoch, live = int64(n.epoch), n.liveness
		if n.counted {
			count = n.count
		}
	}
	if s := c.session; s != nil && s.target == id {
		work = s.progress.max()
		if s.drainedEpoch != 0 {
			drained = int64(s.drainedEpoch)
		}
	}
	t.Trace(&trace.Line{Action: action, M: m, Vars: []trace.Var{trace.Int("coordEpoch", epoch),
		trace.Str("coordLiveness", live.String()), trace.Int("coordCount", count), trace.Int("work", work),
		trace.Int("drainedEpoch", drained)}})
	c.traceLearn(id)
}

// traceLearn traces CoordLearnVersion when the coordinator knows the
// version of the node it tracks at an epoch it has not traced it for:
// the model's coordinator forgets the version at a newer epoch and reads
// it again from the membership; this one keeps it per node.
func (c *Coordinator) traceLearn(id node.ID) {
	t := c.cfg.Tracer
	n := c.nodes[id]
	if t == nil || id != c.cfg.TraceNode || n == nil || !n.versionKnown || c.learned == n.epoch {
		return
	}
	c.learned = n.epoch
	v := "new"
	if n.version < c.cfg.RequiredVersion {
		v = "legacy"
	}
	t.Trace(&trace.Line{Action: names.CoordLearnVersion, Vars: []trace.Var{trace.Int("coordEpoch", int64(n.epoch)),
		trace.Str("coordVersion", v)}})
}

// commandAction names the model action that sends cmd.
func commandAction(cmd node.Command) names.Action {
	if cmd.Target == node.Stopping {
		return names.CoordSendStopping
	}
	return names.CoordSendDraining
}

// traceLegacy traces CoordLegacyRestart, the legacy hard-restart answer
// for the process of n (c.mu held), if n is the traced node.
func (c *Coordinator) traceLegacy(n *nodeState) {
	t := c.cfg.Tracer
	if t == nil || c.nodes[c.cfg.TraceNode] != n {
		return
	}
	t.Trace(&trace.Line{Action: names.CoordLegacyRestart, Vars: []trace.Var{trace.Int("coordEpoch", int64(n.epoch)),
		trace.Int("legacyEpoch", int64(n.epoch))}})
}

// TraceRestart makes the coordinator trace the first line of a
// coordinator process that succeeds a killed one (docs/trace.md, "Every
// run"): the new process knows nothing of the traced node until the node
// joins it (its Join: AddNode, at the epoch the node has), so that first
// AddNode is the refinement mapping's CoordRejoin, the coordinator's view
// and session back to Init's at that epoch, and it is the trace's first
// line. Call it on the new coordinator before it serves. Nothing is
// written until then: the new coordinator traces nothing about a node
// that is not its member.
func (c *Coordinator) TraceRestart() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.joined = true
}

// traceRejoin traces CoordRejoin when n, the traced node, rejoins the
// membership (c.mu held): the first AddNode of the traced node is the
// model's Init and is not traced. A rejoin may be at the epoch the node
// had (removed for silence, the same process back), so it also forgets
// the epoch CoordLearnVersion was traced for.
func (c *Coordinator) traceRejoin(id node.ID) {
	if c.cfg.Tracer == nil || id != c.cfg.TraceNode {
		return
	}
	if !c.joined {
		c.joined = true
		return
	}
	// CoordRejoin forgets the version (the model's coordVersion goes back
	// to unknown), as AddNode's new state does: the version learnt next is
	// a CoordLearnVersion again, even at an epoch it was learnt for before
	// (a member removed for silence rejoins with the same process).
	c.learned = 0
	c.trace(names.CoordRejoin, id, nil)
}
