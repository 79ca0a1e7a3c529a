package logcoord

import (
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/tla/names"
)

// This file is the LogCoordinator's side of trace validation
// (docs/trace.md): with Config.Tracer set, the cache writes one line per
// model action about Config.TraceNode (every node if empty), under its
// lock.
//
//	OnReport  LogCoordRecvReport   after caching
//	Answer    LogCoordAnswer       the coordinator's query taken and the answer replied
//	                               (an expired entry: LogCoordExpire first);
//	          LogCoordAnswerUnknown  when nothing is cached
//	Expire      LogCoordExpire     per entry deleted
//	RemoveNode  LogCoordExpire     the node left membership (its process is gone)
//	TraceRestart LogCoordExpire    the first line of a LogCoordinator that
//	                               succeeds a killed one: its cache is empty

// QueryTraceMsg returns the coordinator's count query as the model's
// record (TLA+ Query): it names the node only, so every field but the
// kind is None. The coordinator's CoordSendQuery line sends it and
// Answer's line takes it.
func QueryTraceMsg() *trace.Msg {
	return &trace.Msg{Kind: node.KindQuery.String(), Epoch: trace.None, Liveness: node.NoLiveness.String(), Count: trace.None}
}

// TraceMsg returns a as the model's record (TLA+ Ans; unknown is
// Ans(None, None, FALSE)).
func (a Answer) TraceMsg() *trace.Msg {
	if !a.Known {
		return &trace.Msg{Kind: node.KindAns.String(), Epoch: trace.None, Liveness: node.NoLiveness.String(), Count: trace.None}
	}
	return &trace.Msg{Kind: node.KindAns.String(), Epoch: int64(a.Epoch), Liveness: node.NoLiveness.String(), Count: a.Count, Closed: a.AdmissionClosed}
}

// TraceRestart writes the first line of a LogCoordinator process that
// succeeds a killed one (docs/trace.md, "Every run"): the new process
// starts with an empty cache, so the traced node's entry is gone, the
// model's LogCoordExpire (or no step at all if the model's cache held no
// entry; the validator's refinement mapping reads it so). Call it on the
// new, empty cache before it serves. It writes the line about
// Config.TraceNode, and nothing if that is empty (no node is named).
func (c *Cache) TraceRestart() {
	if c.cfg.TraceNode == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trace(names.LogCoordExpire, c.cfg.TraceNode, nil)
}

// trace writes action about node n (c.mu held), with the cache entry
// after it and m, the message taken or sent.
func (c *Cache) trace(action names.Action, n node.ID, m *trace.Msg) { c.traceReply(action, n, m, nil) }

// traceReply is trace for a receive that replies: m is the message taken,
// reply the one sent.
func (c *Cache) traceReply(action names.Action, n node.ID, m, reply *trace.Msg) {
	t := c.cfg.Tracer
	if t == nil || (c.cfg.TraceNode != "" && n != c.cfg.TraceNode) {
		return
	}
	e, ok := c.entries[n]
	vars := []trace.Var{trace.At("cache", "epoch", int64(trace.None)), trace.At("cache", "count", int64(trace.None)),
		trace.At("cache", "closed", false)}
	if ok {
		vars[0].Value, vars[1].Value, vars[2].Value = int64(e.report.Epoch), e.report.Count, e.report.AdmissionClosed
	}
	t.Trace(&trace.Line{Action: action, M: m, Reply: reply, Vars: vars})
}
