package node

import (
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/tla/names"
)

// This file is the node's side of trace validation (docs/trace.md): with
// Config.Tracer set, the node writes one line per model action it takes.
//
//	Heartbeat     NodeStartHeartbeat  after reading liveness (heartbeat transport)
//	              NodeSendHeartbeat   after the service's report
//	RecvCommand   NodeRecvCommand     after the liveness step, with the response as reply
//	Report        ServiceSendReport   after the service's report (logcoord transport)

// TraceMsg returns hb as the model's record (TLA+ Hb): without a count in
// the logcoord transport (count None, closed FALSE).
func (hb Heartbeat) TraceMsg() *trace.Msg {
	m := &trace.Msg{Kind: KindHb.String(), Epoch: int64(hb.Epoch), Liveness: hb.Liveness.String(), Count: trace.None}
	if hb.HasCount {
		m.Count, m.Closed = hb.Count, hb.AdmissionClosed
	}
	return m
}

// TraceMsg returns c as the model's record (TLA+ Cmd).
func (c Command) TraceMsg() *trace.Msg {
	return &trace.Msg{Kind: KindCmd.String(), Epoch: int64(c.Epoch), Liveness: c.Target.String(), Count: trace.None}
}

// TraceMsg returns r as the model's record (TLA+ Resp).
func (r Response) TraceMsg() *trace.Msg {
	return &trace.Msg{Kind: KindResp.String(), Epoch: int64(r.Epoch), Liveness: r.Liveness.String(), Count: trace.None}
}

// TraceMsg returns r as the model's record (TLA+ Report).
func (r Report) TraceMsg() *trace.Msg {
	return &trace.Msg{Kind: KindReport.String(), Epoch: int64(r.Epoch), Liveness: NoLiveness.String(), Count: r.Count, Closed: r.AdmissionClosed}
}

// traceStartHeartbeat traces the start of a heartbeat of the heartbeat
// transport: the node read its liveness l (the report comes next).
func (n *Node) traceStartHeartbeat(l Liveness) {
	if t := n.cfg.Tracer; t != nil {
		t.Trace(&trace.Line{Action: names.NodeStartHeartbeat, Vars: []trace.Var{trace.At("sample", "phase", "liveness"),
			trace.At("sample", "liveness", l.String())}})
	}
}

// traceHeartbeat traces the heartbeat hb the node just built.
func (n *Node) traceHeartbeat(hb Heartbeat) {
	if t := n.cfg.Tracer; t != nil {
		vars := []trace.Var{trace.Int("epoch", int64(hb.Epoch))}
		if hb.HasCount {
			vars = append(vars, trace.At("sample", "phase", "idle")) // the sample is sent
		} else {
			vars = append(vars, trace.Str("liveness", hb.Liveness.String()))
		}
		t.Trace(&trace.Line{Action: names.NodeSendHeartbeat, M: hb.TraceMsg(), Vars: vars})
	}
}

// traceCommand traces the command cmd the node took and its response.
func (n *Node) traceCommand(cmd Command, resp Response) {
	if t := n.cfg.Tracer; t != nil {
		t.Trace(&trace.Line{Action: names.NodeRecvCommand, M: cmd.TraceMsg(), Reply: resp.TraceMsg(),
			Vars: []trace.Var{trace.Int("epoch", int64(resp.Epoch)), trace.Str("liveness", resp.Liveness.String())}})
	}
}

// traceReport traces the report r the node just built.
func (n *Node) traceReport(r Report) {
	if t := n.cfg.Tracer; t != nil && n.cfg.Service != nil {
		t.Trace(&trace.Line{Action: names.ServiceSendReport, M: r.TraceMsg(), Vars: []trace.Var{
			trace.Int("epoch", int64(r.Epoch)), trace.At("sample", "phase", "idle")}})
	}
}
