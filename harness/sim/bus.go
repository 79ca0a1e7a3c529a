package sim

import (
	"fmt"
	"slices"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/logcoord"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
)

// This file is the cluster's message bus and the model's actions that
// send or receive a message: each exported step is one TLA+ action of
// that name.

// Msg is one message on the bus; only the field of its Kind is set.
type Msg struct {
	Kind   node.Kind
	Cmd    node.Command
	Resp   node.Response
	Hb     node.Heartbeat
	Report node.Report
	Query  node.ID // the node a query asks about
	Ans    logcoord.Answer
	// Clock is the stamp of the line that sent the message (a run traced
	// per process): the receiver's line depends on it.
	Clock trace.Stamp
}

// String renders m like the model's messages.
func (m Msg) String() string {
	switch m.Kind {
	case node.KindCmd:
		return fmt.Sprintf("cmd{epoch:%d liveness:%s}", m.Cmd.Epoch, m.Cmd.Target)
	case node.KindResp:
		return fmt.Sprintf("resp{epoch:%d liveness:%s}", m.Resp.Epoch, m.Resp.Liveness)
	case node.KindHb:
		return fmt.Sprintf("hb{epoch:%d liveness:%s count:%d closed:%t}", m.Hb.Epoch, m.Hb.Liveness, m.Hb.Count, m.Hb.AdmissionClosed)
	case node.KindReport:
		return fmt.Sprintf("report{epoch:%d count:%d closed:%t}", m.Report.Epoch, m.Report.Count, m.Report.AdmissionClosed)
	case node.KindQuery:
		return fmt.Sprintf("query{%s}", m.Query)
	}
	if !m.Ans.Known {
		return "ans{unknown}"
	}
	return fmt.Sprintf("ans{epoch:%d count:%d closed:%t}", m.Ans.Epoch, m.Ans.Count, m.Ans.AdmissionClosed)
}

// send puts m on the bus, stamped with the last line of w, the sender's
// trace: the line that sent it.
func (c *Cluster) send(m Msg, w *trace.Writer) {
	m.Clock = last(w)
	c.put(m)
}

// put puts the stamped message m on the bus.
func (c *Cluster) put(m Msg) {
	if c.cfg.SetBus && slices.ContainsFunc(c.bus, m.sameAs) {
		return
	}
	c.bus = append(c.bus, m)
}

// sameAs reports whether m and x are the same message, whatever lines
// sent them (the model's messages are their contents).
func (m Msg) sameAs(x Msg) bool {
	x.Clock = m.Clock
	return x == m
}

// Bus returns the messages in flight, in sending order.
func (c *Cluster) Bus() []Msg { return slices.Clone(c.bus) }

// take returns message i and removes it unless keep (duplication).
func (c *Cluster) take(i int, keep bool) (Msg, error) {
	if i < 0 || i >= len(c.bus) {
		return Msg{}, fmt.Errorf("sim: no message %d in flight", i)
	}
	m := c.bus[i]
	if !keep {
		c.bus = slices.Delete(c.bus, i, i+1)
	}
	return m, nil
}

// NetLose loses message i (TLA+ NetLose).
func (c *Cluster) NetLose(i int) error {
	_, err := c.take(i, false)
	return err
}

// NodeSendHeartbeat sends T's heartbeat (TLA+ NodeSendHeartbeat).
func (c *Cluster) NodeSendHeartbeat() {
	c.send(Msg{Kind: node.KindHb, Hb: c.proc.node.Heartbeat(c.now)}, c.tW())
}

// NodeTick sends T's heartbeat if its interval has passed (N2).
func (c *Cluster) NodeTick() {
	if hb, ok := c.proc.node.Tick(c.now); ok {
		c.send(Msg{Kind: node.KindHb, Hb: hb}, c.tW())
	}
}

// NodeRecvCommand delivers command i to T (TLA+ NodeRecvCommand); T
// replies, after its forced heartbeat when forced is set and liveness
// changed.
func (c *Cluster) NodeRecvCommand(i int, keep, forced bool) error {
	m, err := c.recv(i, keep, node.KindCmd)
	if err != nil {
		return err
	}
	receive(c.tW(), m.Clock)
	resp, changed := c.proc.node.RecvCommand(m.Cmd)
	reply := Msg{Kind: node.KindResp, Resp: resp, Clock: last(c.tW())}
	if changed && forced {
		c.NodeSendHeartbeat()
	}
	c.put(reply)
	return nil
}

// ServiceSendReport sends T's event service report to the LogCoordinator
// (TLA+ ServiceSendReport). The service reports periodically whether or
// not its report changed: the LogCoordinator's TTL expires the entry of a
// live process that stops reporting.
func (c *Cluster) ServiceSendReport() {
	r := c.proc.node.Report()
	if bugs.NoReReportOn() {
		// The bug: report only what changed since the last report.
		if last := c.proc.lastReport; last != nil && last.Sample() == r.Sample() {
			return
		}
		c.proc.lastReport = &r
	}
	c.send(Msg{Kind: node.KindReport, Report: r}, c.tW())
}

// coordSend sends the coordinator's liveness command, if its periodic
// task has one now: DRAINING or STOPPING (the runner's tick; a step of
// TLA+ CoordSendDraining or CoordSendStopping).
func (c *Cluster) coordSend() {
	if cmd, ok := c.Coord.NextCommand(c.now); ok {
		c.send(Msg{Kind: node.KindCmd, Cmd: cmd}, c.coordW())
	}
}

// CoordSendDraining sends the coordinator's DRAINING command (TLA+
// CoordSendDraining) if DRAINING is the command its periodic task has
// now, and reports whether it did.
func (c *Cluster) CoordSendDraining() bool { return c.coordSendCommand(node.Draining) }

// CoordSendStopping sends the coordinator's STOPPING command (TLA+
// CoordSendStopping) if STOPPING is the command its periodic task has
// now, and reports whether it did.
func (c *Cluster) CoordSendStopping() bool { return c.coordSendCommand(node.Stopping) }

func (c *Cluster) coordSendCommand(target node.Liveness) bool {
	if cmd, ok := c.Coord.PendingCommand(c.now); !ok || cmd.Target != target {
		return false
	}
	cmd, ok := c.Coord.NextCommand(c.now)
	if ok {
		c.send(Msg{Kind: node.KindCmd, Cmd: cmd}, c.coordW())
	}
	return ok
}

// recv takes message i of kind k (keeping it in flight if keep).
func (c *Cluster) recv(i int, keep bool, k node.Kind) (Msg, error) {
	if i < 0 || i >= len(c.bus) || c.bus[i].Kind != k {
		return Msg{}, fmt.Errorf("sim: message %d is not a %s", i, k)
	}
	return c.take(i, keep)
}

// CoordRecvHeartbeat delivers heartbeat i to the coordinator (TLA+
// CoordRecvHeartbeat).
func (c *Cluster) CoordRecvHeartbeat(i int, keep bool) error {
	m, err := c.recv(i, keep, node.KindHb)
	if err == nil {
		receive(c.coordW(), m.Clock)
		c.Coord.ObserveHeartbeat(m.Hb, c.now)
	}
	return err
}

// CoordRecvResponse delivers response i to the coordinator (TLA+
// CoordRecvResponse).
func (c *Cluster) CoordRecvResponse(i int, keep bool) error {
	m, err := c.recv(i, keep, node.KindResp)
	if err == nil {
		receive(c.coordW(), m.Clock)
		c.Coord.ObserveResponse(m.Resp, c.now)
	}
	return err
}

// CoordRecvAnswer delivers the LogCoordinator's answer i to the
// coordinator (TLA+ CoordRecvAnswer).
func (c *Cluster) CoordRecvAnswer(i int, keep bool) error {
	m, err := c.recv(i, keep, node.KindAns)
	if err == nil {
		receive(c.coordW(), m.Clock)
		c.Coord.ObserveAnswer(m.Ans, c.now)
	}
	return err
}

// LogCoordRecvReport delivers report i to the LogCoordinator (TLA+
// LogCoordRecvReport).
func (c *Cluster) LogCoordRecvReport(i int, keep bool) error {
	m, err := c.recv(i, keep, node.KindReport)
	if err != nil {
		return err
	}
	receive(c.lcW(), m.Clock)
	c.LogCoord.OnReport(m.Report, c.now)
	return nil
}

// CoordSendQuery sends the coordinator's count query to the
// LogCoordinator (TLA+ CoordSendQuery), if its periodic task has one
// now, and reports whether it did.
func (c *Cluster) CoordSendQuery() bool {
	target, ok := c.Coord.NextQuery(c.now)
	if ok {
		c.send(Msg{Kind: node.KindQuery, Query: target}, c.coordW())
	}
	return ok
}

// LogCoordAnswer delivers query i to the LogCoordinator, which replies
// with its answer (TLA+ LogCoordAnswer, or LogCoordAnswerUnknown when
// nothing is cached). The answer reads the cache only: the coordinator
// may have taken any number of steps since it sent the query.
func (c *Cluster) LogCoordAnswer(i int, keep bool) error {
	m, err := c.recv(i, keep, node.KindQuery)
	if err != nil {
		return err
	}
	receive(c.lcW(), m.Clock)
	a := c.LogCoord.Answer(m.Query, c.now)
	c.send(Msg{Kind: node.KindAns, Ans: a}, c.lcW())
	return nil
}
