package coordinator_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/logcoord"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/tla/names"
)

// This file is the coordinator's interleaving explorer, the drain
// controller's counterpart of impl/eventservice/explore_test.go. The
// coordinator has no goroutines: what interleaves is the arrival of
// messages (commands at the node; heartbeats, liveness responses and the
// LogCoordinator's answers at the coordinator; reports at the
// LogCoordinator), the clock, the maintainers, the collectors, restarts
// of the drained node T (a new process, a new epoch, its own event
// service) and of the coordinator. A scenario runs a fixed prefix and then
// a few threads, each a list of steps; a step waits while its guard is
// false (a delivery waits for the send of its message). The explorer runs
// the real code (coordinator, node, logcoord, eventservice) through every
// interleaving of the threads' steps, each on a fresh system, and:
//
//   - at every step checks the protocol's invariants on the real state
//     (named after docs/protocol.md: D5, D2/D8, C4, C5, C7, C8, §9
//     VersionSafety, C3 StopAfterWorkMoved, L2–L4 with the TTL), see
//     xWorld.check;
//   - at the end validates the run's trace (every component writes its
//     own lines into one writer; the explorer writes the restarts) with
//     harness/tracecheck, except in scenarios with a coordinator restart,
//     which the model does not have.
//
// Messages are named; a delivery step names the message it delivers, so
// a scenario says which messages are reordered (two deliveries in
// different threads), duplicated (two deliveries of one message), late
// (a delivery after a restart) or lost (never delivered). Runs are
// deterministic: a schedule is the list of threads chosen at each step,
// and a failure prints it with the steps taken.

// xTarget is the drained node.
const xTarget node.ID = "T"

// xStep is one step of a thread: what one actor does at once.
type xStep struct {
	name  string
	guard func(*xWorld) bool // nil: always enabled
	do    func(*xWorld) error
}

// xThread is a thread of a scenario: its steps run in order.
type xThread struct {
	name  string
	steps []xStep
}

// xScenario is a small scenario of the explorer.
type xScenario struct {
	name      string
	transport node.Transport
	ttl       int64 // the LogCoordinator's TTL (0: never expires)
	legacy    bool  // a process of T may run the legacy version (the trace header's Versions)
	// untraced: the scenario leaves the model (a coordinator restart), so
	// its trace is not validated.
	untraced bool
	// setup runs before the threads, with no interleaving.
	setup   []xStep
	threads []xThread
	// final, if set, checks the end of every run.
	final func(*xWorld) error
}

// xProc is one process of T: an epoch, a version, its own event service.
type xProc struct {
	epoch   uint64
	version node.Version
	live    *node.LivenessStore
	svc     *eventservice.Service
	node    *node.Node
	stop    func()
	maxLive node.Liveness // the highest liveness seen (D1)
}

// xMsg is a message in flight (it stays after a delivery: a later
// delivery of it is a duplicate).
type xMsg struct {
	kind node.Kind
	cmd  node.Command
	resp node.Response
	hb   node.Heartbeat
	rep  node.Report
	ans  logcoord.Answer
	boot uint64 // a bootstrap of the process of this epoch (kind -1)
}

// xGhost is the explorer's own record of the LogCoordinator's entry for
// T, kept by the rules of docs/protocol.md L2–L4: the value is monotone
// within an epoch, and the entry is fresh for TTL ticks after the arrival
// of the newest sample it has had (by Report.Seq).
type xGhost struct {
	present bool
	rep     node.Report
	seq     uint64
	recvAt  int64
}

// xWorld is one run's system.
type xWorld struct {
	sc    *xScenario
	now   int64
	buf   bytes.Buffer
	tw    *trace.Writer
	coord *coordinator.Coordinator
	gen   int // coordinator incarnations so far (1 before any restart)
	cache *logcoord.Cache
	procs []*xProc // T's processes, oldest first; the last is alive
	net   map[string]xMsg
	ghost xGhost

	// What the current coordinator showed: its view of T and its
	// decisions, for the monotonicity checks.
	view           coordinator.NodeView
	decisions      []coordinator.Decision
	legacyRecorded uint64 // the epoch of a legacy answer recorded in the session (final)
	log            []string
}

func (w *xWorld) proc() *xProc { return w.procs[len(w.procs)-1] }

// xHeader is the trace header of a scenario: dispatchers d1 (on T's first
// process) and d2 (on its second), one broker c1.
func xHeader(sc *xScenario) trace.Header {
	versions := []string{"new"}
	if sc.legacy {
		versions = append(versions, "legacy")
	}
	bs := bugs.Reference()
	if bs == nil {
		bs = []string{}
	}
	return trace.Header{Source: "coordinator explorer " + sc.name, Model: map[string]any{
		"Dispatchers": []string{"d1", "d2"}, "TableTriggers": []string{}, "Brokers": []string{"c1"},
		"Versions": versions, "MaxEpoch": 4, "MaxReg": 15, "MaxMsgs": 8, "Transport": string(sc.transport), "Bugs": bs}}
}

func newXWorld(sc *xScenario) (*xWorld, error) {
	w := &xWorld{sc: sc, net: map[string]xMsg{}}
	var tr trace.Tracer
	if !sc.untraced {
		var err error
		if w.tw, err = trace.NewWriter(&w.buf, xHeader(sc)); err != nil {
			return nil, err
		}
		tr = w.tw
	}
	w.cache = logcoord.New(logcoord.Config{TTL: sc.ttl, Tracer: tr, TraceNode: xTarget})
	if err := w.startProc(1, node.VersionBrokerDrain); err != nil {
		return nil, err
	}
	if err := w.newCoordinator(); err != nil {
		return nil, err
	}
	return w, nil
}

// tracer is the run's trace writer, nil when the scenario is untraced.
func (w *xWorld) tracer() trace.Tracer {
	if w.tw == nil {
		return nil
	}
	return w.tw
}

// newCoordinator starts a coordinator (the first, or one after a
// failover: it knows T from the membership at T's current epoch and
// learns the version from a bootstrap). Only the first is traced.
func (w *xWorld) newCoordinator() error {
	var tr trace.Tracer
	if w.gen == 0 {
		tr = w.tracer()
	}
	c, err := coordinator.New(coordinator.Config{Transport: w.sc.transport, ResendInterval: 100,
		Tracer: tr, TraceNode: xTarget})
	if err != nil {
		return err
	}
	w.coord, w.gen = c, w.gen+1
	w.coord.AddNode(xTarget, w.proc().epoch, w.now)
	w.view, w.decisions, w.legacyRecorded = w.coord.NodeView(xTarget), nil, 0
	return nil
}

// startProc starts T's process of epoch e with version v.
func (w *xWorld) startProc(e uint64, v node.Version) error {
	p := &xProc{epoch: e, version: v, live: new(node.LivenessStore)}
	es, ss := storetest.NewMemEventStore(), storetest.NewMemSchemaStore()
	var err error
	p.svc, err = eventservice.New(eventservice.Config{
		NewStores: func(eventservice.ClusterID) (store.EventStore, store.SchemaStore) { return es, ss },
		Stopping:  func() bool { return p.live.Load() == node.Stopping },
		Now:       func() time.Time { return time.Unix(0, 0) },
		Tracer:    w.tracer(),
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := p.svc.Start(ctx)
	p.stop = func() { cancel(); _ = wait() }
	if p.node, err = node.New(node.Config{ID: xTarget, Epoch: e, Version: v, Transport: w.sc.transport,
		Service: p.svc, Liveness: p.live, Tracer: w.tracer()}); err != nil {
		p.stop()
		return err
	}
	w.procs = append(w.procs, p)
	w.net[fmt.Sprintf("boot%d", e)] = xMsg{kind: -1, boot: e}
	return nil
}

func (w *xWorld) close() {
	for _, p := range w.procs {
		if p.stop != nil {
			p.stop()
			p.stop = nil
		}
	}
}

// count is the sum of p's brokers' counts, read without closing admission.
func (p *xProc) count() int64 {
	var n int64
	for _, b := range p.svc.BrokerCounts() {
		n += b.Count
	}
	return n
}

// closed reports whether p's admission is closed at the service and at
// every broker.
func (p *xProc) closed() bool {
	if !p.svc.AdmissionClosed() {
		return false
	}
	for _, b := range p.svc.BrokerCounts() {
		if !b.GateClosed {
			return false
		}
	}
	return true
}

// versionName is the model's name of v.
func versionName(v node.Version) string {
	if v < node.VersionBrokerDrain {
		return "legacy"
	}
	return "new"
}

// The steps.

func sent(label string) func(*xWorld) bool {
	return func(w *xWorld) bool { _, ok := w.net[label]; return ok }
}

// coordSend: the coordinator's periodic task sends its pending command
// (DRAINING or STOPPING, C3) as label; it waits until one is pending.
func coordSend(label string) xStep {
	return xStep{name: "coord.send " + label,
		guard: func(w *xWorld) bool { _, ok := w.coord.PendingCommand(w.now); return ok },
		do: func(w *xWorld) error {
			cmd, ok := w.coord.NextCommand(w.now)
			if !ok {
				return fmt.Errorf("PendingCommand had a command, NextCommand none")
			}
			w.net[label] = xMsg{kind: node.KindCmd, cmd: cmd}
			return nil
		}}
}

// nodeRecv: T's current process takes the command label (N1) and sends
// its response as resp:label and, if its liveness changed, a forced
// heartbeat as hb:label.
func nodeRecv(label string) xStep {
	return xStep{name: "T.recv " + label, guard: sent(label), do: func(w *xWorld) error {
		m := w.net[label]
		if m.kind != node.KindCmd {
			return fmt.Errorf("%s is not a command", label)
		}
		p := w.proc()
		resp, changed := p.node.RecvCommand(m.cmd)
		if changed {
			w.net["hb:"+label] = xMsg{kind: node.KindHb, hb: p.node.Heartbeat(w.now)}
		}
		w.net["resp:"+label] = xMsg{kind: node.KindResp, resp: resp}
		return nil
	}}
}

// nodeBeat: T's current process sends a heartbeat as label (N2).
func nodeBeat(label string) xStep {
	return xStep{name: "T.beat " + label, do: func(w *xWorld) error {
		w.net[label] = xMsg{kind: node.KindHb, hb: w.proc().node.Heartbeat(w.now)}
		return nil
	}}
}

// nodeReport: T's current event service sends its report as label (E3).
func nodeReport(label string) xStep {
	return xStep{name: "T.report " + label, do: func(w *xWorld) error {
		w.net[label] = xMsg{kind: node.KindReport, rep: w.proc().node.Report()}
		return nil
	}}
}

// coordRecv: the coordinator takes message label (a heartbeat, a
// response, an answer or a bootstrap).
func coordRecv(label string) xStep {
	return xStep{name: "coord.recv " + label, guard: sent(label), do: func(w *xWorld) error {
		m := w.net[label]
		switch m.kind {
		case node.KindHb:
			w.coord.ObserveHeartbeat(m.hb, w.now)
		case node.KindResp:
			w.coord.ObserveResponse(m.resp, w.now)
		case node.KindAns:
			w.coord.ObserveAnswer(m.ans, w.now)
		case -1:
			v := node.VersionBrokerDrain
			for _, p := range w.procs {
				if p.epoch == m.boot {
					v = p.version
				}
			}
			w.coord.ObserveVersion(xTarget, m.boot, v)
		default:
			return fmt.Errorf("the coordinator got %s", m.kind)
		}
		return nil
	}}
}

// lcRecv: the LogCoordinator takes report label (L2).
func lcRecv(label string) xStep {
	return xStep{name: "lc.recv " + label, guard: sent(label), do: func(w *xWorld) error {
		m := w.net[label]
		if m.kind != node.KindReport {
			return fmt.Errorf("%s is not a report", label)
		}
		w.cache.OnReport(m.rep, w.now)
		w.ghostReport(m.rep)
		return w.checkEntry("after the report " + label)
	}}
}

// lcAnswer: the coordinator's periodic task asks the LogCoordinator about
// T (C6) and the LogCoordinator answers as label (L3); when the
// coordinator does not ask, nothing is sent.
func lcAnswer(label string) xStep {
	return xStep{name: "lc.answer " + label, do: func(w *xWorld) error { return w.answer(label) }}
}

// lcAnswered: lcAnswer, and the coordinator takes the answer at once.
func lcAnswered(label string) xStep {
	return xStep{name: "lc.answer+coord.recv " + label, do: func(w *xWorld) error {
		if err := w.answer(label); err != nil {
			return err
		}
		if m, ok := w.net[label]; ok {
			w.coord.ObserveAnswer(m.ans, w.now)
		}
		return nil
	}}
}

// answer is lcAnswer's step: the coordinator's query, the
// LogCoordinator's answer checked against the ghost (L3), sent as label.
func (w *xWorld) answer(label string) error {
	if _, ok := w.coord.NextQuery(w.now); !ok {
		return nil
	}
	fresh := w.ghostFresh()
	a := w.cache.Answer(xTarget, w.now)
	if a.Known != fresh {
		return fmt.Errorf("L3: at tick %d the answer is known=%v, the entry (newest sample received at tick %d, TTL %d) is fresh=%v",
			w.now, a.Known, w.ghost.recvAt, w.sc.ttl, fresh)
	}
	if !fresh {
		w.ghost = xGhost{}
	} else if a.Epoch != w.ghost.rep.Epoch || a.Count != w.ghost.rep.Count || a.AdmissionClosed != w.ghost.rep.AdmissionClosed {
		return fmt.Errorf("L3: answered %+v, the entry is %+v", a, w.ghost.rep)
	}
	w.net[label] = xMsg{kind: node.KindAns, ans: a}
	return nil
}

// lcExpire: the LogCoordinator's expiry pass (L4).
func lcExpire() xStep {
	return xStep{name: "lc.expire", do: func(w *xWorld) error {
		stale := w.ghost.present && !w.ghostFresh()
		n := w.cache.Expire(w.now)
		if (n == 1) != stale {
			return fmt.Errorf("L4: at tick %d Expire deleted %d entries, the entry (newest sample received at tick %d, TTL %d) is stale=%v",
				w.now, n, w.ghost.recvAt, w.sc.ttl, stale)
		}
		if stale {
			w.ghost = xGhost{}
		}
		return nil
	}}
}

// tick: the clock advances one tick.
func tick() xStep {
	return xStep{name: "tick", do: func(w *xWorld) error { w.now++; return nil }}
}

// progress: the maintainers report no work left on T (MaintainerReportProgress).
func progress() xStep {
	return xStep{name: "maint.progress0", do: func(w *xWorld) error {
		w.coord.ReportProgress(xTarget, coordinator.Progress{})
		return nil
	}}
}

// poll: the upgrade client's DrainNode(T) (C1).
func poll() xStep {
	return xStep{name: "client.poll", do: func(w *xWorld) error {
		d, err := w.coord.DrainNode(xTarget, w.now)
		if err != nil {
			return err
		}
		return w.decided(d)
	}}
}

// register: a collector registers dispatcher d on T's current process.
func register(d eventservice.DispatcherID, tbl eventservice.TableID) xStep {
	return xStep{name: "collector.register " + string(d), do: func(w *xWorld) error {
		err := w.proc().svc.Do(context.Background(), eventservice.Request{Action: eventservice.Register,
			Cluster: "c1", Changefeed: "cf1", Dispatcher: d, Table: tbl, StartTs: 100})
		if err != nil && !errors.Is(err, eventservice.ErrAdmissionClosed) {
			return err
		}
		return nil
	}}
}

// remove: a collector removes dispatcher d from T's current process.
func remove(d eventservice.DispatcherID) xStep {
	return xStep{name: "collector.remove " + string(d), do: func(w *xWorld) error {
		return w.proc().svc.Do(context.Background(), eventservice.Request{Action: eventservice.Remove, Cluster: "c1", Dispatcher: d})
	}}
}

// restart: T's process ends and a new one of the next epoch starts,
// running version v (NodeCrashRestart; UpgradeRestart when the
// coordinator declared the old process drained or gave it the legacy
// answer). Its bootstrap is sent as boot<epoch>. What the old process
// sent stays in flight.
func restart(v node.Version) xStep {
	return xStep{name: "T.restart " + versionName(v), do: func(w *xWorld) error {
		old := w.proc()
		old.stop()
		old.stop = nil
		action := names.NodeCrashRestart
		if d := w.lastDecision(); d != nil && (d.Complete && d.DrainedEpoch == old.epoch || d.Legacy && d.LegacyEpoch == old.epoch) {
			action = names.UpgradeRestart
		}
		if err := w.startProc(old.epoch+1, v); err != nil {
			return err
		}
		if w.tw != nil {
			p := w.proc()
			w.tw.Trace(&trace.Line{Action: action, V: versionName(v), Vars: []trace.Var{
				trace.Int("epoch", int64(p.epoch)), trace.Str("liveness", node.Alive.String()),
				trace.Bool("admissionClosed", false), trace.At("count", "c1", int64(0)),
				trace.At("pc", "d1", "idle"), trace.At("pc", "d2", "idle"),
				trace.At("removed", "d1", true), trace.At("removed", "d2", true)}})
		}
		return nil
	}}
}

// rejoin: T's process leaves and rejoins the membership (C9: the session
// ends; the LogCoordinator forgets T, L4); the coordinator knows T at its
// current epoch, its version unknown until a bootstrap. A new session may
// start: the earlier decisions are forgotten.
func rejoin() xStep {
	return xStep{name: "membership.rejoin", do: func(w *xWorld) error {
		w.coord.RemoveNode(xTarget)
		w.cache.RemoveNode(xTarget)
		w.ghost = xGhost{}
		w.coord.AddNode(xTarget, w.proc().epoch, w.now)
		w.view, w.decisions, w.legacyRecorded = w.coord.NodeView(xTarget), nil, 0
		return nil
	}}
}

// coordRestart: the coordinator fails over: a new one knows T at its
// current epoch from the membership and nothing else.
func coordRestart() xStep {
	return xStep{name: "coord.restart", do: func(w *xWorld) error { return w.newCoordinator() }}
}

func (w *xWorld) lastDecision() *coordinator.Decision {
	if len(w.decisions) == 0 {
		return nil
	}
	return &w.decisions[len(w.decisions)-1]
}

// The LogCoordinator's ghost (L2–L4).

func (w *xWorld) ghostReport(r node.Report) {
	g := &w.ghost
	switch {
	case !g.present || r.Epoch > g.rep.Epoch:
		*g = xGhost{present: true, rep: r, seq: r.Seq, recvAt: w.now}
		return
	case r.Epoch < g.rep.Epoch:
		return
	}
	if !g.rep.AdmissionClosed || r.AdmissionClosed && r.Count < g.rep.Count {
		g.rep = r
	}
	if r.Seq > g.seq {
		g.seq, g.recvAt = r.Seq, w.now
	}
}

func (w *xWorld) ghostFresh() bool {
	return w.ghost.present && (w.sc.ttl == 0 || w.now-w.ghost.recvAt <= w.sc.ttl)
}

// checkEntry checks the cached entry's value against the ghost's (L2).
func (w *xWorld) checkEntry(when string) error {
	r, ok := w.cache.Entry(xTarget)
	if ok != w.ghost.present || ok && r.Sample() != w.ghost.rep.Sample() {
		return fmt.Errorf("L2: %s the LogCoordinator holds %+v (%v), the rule gives %+v (%v)", when, r.Sample(), ok, w.ghost.rep.Sample(), w.ghost.present)
	}
	return nil
}

// decided checks a DrainNode decision (C7, C8, §9) and its place among
// the current coordinator's earlier ones (a decision is final).
func (w *xWorld) decided(d coordinator.Decision) error {
	if prev := w.lastDecision(); prev != nil {
		switch {
		case prev.Complete && (!d.Complete || d.DrainedEpoch != prev.DrainedEpoch):
			return fmt.Errorf("C8: the drain completed for epoch %d, then DrainNode answered %+v", prev.DrainedEpoch, d)
		}
	}
	if e := w.legacyRecorded; e != 0 && (!d.Legacy || d.LegacyEpoch != e) {
		return fmt.Errorf("§9: the legacy answer was given for epoch %d, then DrainNode answered %+v", e, d)
	}
	if prev := w.lastDecision(); prev == nil || !prev.Complete && !prev.Legacy {
		// The first final answer names the process the coordinator
		// tracks (C8: drainedEpoch' = coordEpoch; §9: legacyEpoch' =
		// coordEpoch), never one it forgot (C9: a removal ends the
		// session).
		e := w.coord.NodeView(xTarget).Epoch
		if d.Complete && d.DrainedEpoch != e || d.Legacy && d.LegacyEpoch != e {
			return fmt.Errorf("C8/§9: DrainNode answered %+v while the coordinator tracks epoch %d", d, e)
		}
	}
	if !d.Complete && !d.Legacy && d.Remaining < 1 {
		return fmt.Errorf("C7: DrainNode answered %+v: remaining work below 1 while the drain is not complete", d)
	}
	if d.Complete {
		// C8/D5: the process declared drained reached STOPPING, and if it
		// still lives, its brokers are closed and count nothing.
		var p *xProc
		for _, q := range w.procs {
			if q.epoch == d.DrainedEpoch {
				p = q
			}
		}
		switch {
		case p == nil:
			return fmt.Errorf("C8: the drain completed for epoch %d, which no process of T had", d.DrainedEpoch)
		case p.live.Load() != node.Stopping:
			return fmt.Errorf("D5: the drain completed for epoch %d, whose process is %v", d.DrainedEpoch, p.live.Load())
		case p == w.proc() && p.version < node.VersionBrokerDrain:
			return fmt.Errorf("VersionSafety: the drain completed for epoch %d, a legacy process", d.DrainedEpoch)
		}
	}
	if d.Legacy && w.coord.NodeView(xTarget).LegacyEpoch == d.LegacyEpoch {
		// Recorded in the session (T restarted as a legacy process
		// mid-drain): final. A legacy answer with no session (some alive
		// process is legacy, §9) is not recorded: it changes once that
		// process is gone.
		w.legacyRecorded = d.LegacyEpoch
	}
	w.decisions = append(w.decisions, d)
	return nil
}

// check checks the invariants after a step.
func (w *xWorld) check() error {
	p := w.proc()
	// D1: within a process liveness never goes back.
	for _, q := range w.procs {
		l := q.live.Load()
		if l < q.maxLive {
			return fmt.Errorf("D1: the process of epoch %d went from %v to %v", q.epoch, q.maxLive, l)
		}
		q.maxLive = l
	}
	// D5 (DrainSafety): while the process declared drained lives, its
	// admission is closed and its brokers count nothing.
	if d := w.lastDecision(); d != nil && d.Complete && d.DrainedEpoch == p.epoch {
		if !p.closed() || p.count() != 0 {
			return fmt.Errorf("D5: the drain completed for epoch %d; that process has admission closed=%v and %d registered",
				p.epoch, p.closed(), p.count())
		}
	}
	// §9 VersionSafety: only a legacy process gets the legacy answer.
	if d := w.lastDecision(); d != nil && d.Legacy && d.LegacyEpoch == p.epoch && p.version >= node.VersionBrokerDrain {
		return fmt.Errorf("VersionSafety: the legacy hard-restart answer names epoch %d, whose process runs the drain protocol", p.epoch)
	}
	v := w.coord.NodeView(xTarget)
	// D2/D8 (NoStaleObservation): the coordinator believes no more of T's
	// current process than is true, and a count it holds bounds the
	// process's from above, sampled with admission closed.
	if v.Epoch == p.epoch {
		if v.Liveness > p.live.Load() {
			return fmt.Errorf("D2: the coordinator believes epoch %d is %v, it is %v", v.Epoch, v.Liveness, p.live.Load())
		}
		if v.CountObserved && (!p.closed() || p.count() > v.Count) {
			return fmt.Errorf("D8: the coordinator holds count %d for epoch %d; the process has admission closed=%v and %d registered",
				v.Count, v.Epoch, p.closed(), p.count())
		}
	}
	if v.Epoch > p.epoch {
		return fmt.Errorf("D2: the coordinator tracks epoch %d, T runs %d", v.Epoch, p.epoch)
	}
	// C4/C5: per coordinator, the epoch tracked never falls; within an
	// epoch liveness never goes back and an accepted count only falls and
	// is never erased (F7, F8).
	o := w.view
	switch {
	case v.Epoch < o.Epoch:
		return fmt.Errorf("C4: the coordinator's epoch went from %d to %d", o.Epoch, v.Epoch)
	case v.Epoch == o.Epoch && v.Liveness < o.Liveness:
		return fmt.Errorf("C4: the coordinator's liveness of epoch %d went from %v to %v", v.Epoch, o.Liveness, v.Liveness)
	case v.Epoch == o.Epoch && o.CountObserved && !v.CountObserved:
		return fmt.Errorf("C5/F7: the coordinator's count %d of epoch %d was erased", o.Count, v.Epoch)
	case v.Epoch == o.Epoch && o.CountObserved && v.Count > o.Count:
		return fmt.Errorf("C5/F8: the coordinator's count of epoch %d rose from %d to %d", v.Epoch, o.Count, v.Count)
	}
	w.view = v
	// C3 (StopAfterWorkMoved): T's process goes STOPPING only after the
	// maintainers moved their work (not after a failover: the new
	// coordinator's session waits for the maintainers' report again).
	if w.gen == 1 && p.live.Load() == node.Stopping && v.Epoch == p.epoch && v.Work != 0 {
		return fmt.Errorf("C3: T is STOPPING at epoch %d while the coordinator counts %d work", p.epoch, v.Work)
	}
	return nil
}

// Exploration.

// xDecision is one choice of a run: the threads that could go, and the
// one chosen.
type xDecision struct {
	enabled []int
	chosen  int
}

// xRun runs sc once, taking prefix's choices and then the first enabled
// thread, and returns the decisions taken.
func xRun(sc *xScenario, prefix []int) (ds []xDecision, err error) {
	w, err := newXWorld(sc)
	if err != nil {
		return nil, err
	}
	defer w.close()
	fail := func(err error) ([]xDecision, error) {
		return ds, fmt.Errorf("%w\n  steps: %s", err, strings.Join(w.log, "; "))
	}
	for _, st := range sc.setup {
		if st.guard != nil && !st.guard(w) {
			// The scripted drain did not get this far: a stall (the
			// model's DrainCompletes), not a safety violation.
			return fail(fmt.Errorf("stall: setup step %s not enabled (the drain did not progress as scripted)", st.name))
		}
		if err := st.do(w); err != nil {
			return fail(fmt.Errorf("setup %s: %w", st.name, err))
		}
		if err := w.check(); err != nil {
			return fail(fmt.Errorf("after setup %s: %w", st.name, err))
		}
	}
	w.log = append(w.log, "|")
	pc := make([]int, len(sc.threads))
	for {
		var enabled []int
		for i, t := range sc.threads {
			if pc[i] < len(t.steps) && (t.steps[pc[i]].guard == nil || t.steps[pc[i]].guard(w)) {
				enabled = append(enabled, i)
			}
		}
		if len(enabled) == 0 {
			break // the rest wait for messages never sent
		}
		d := xDecision{enabled: enabled, chosen: enabled[0]}
		if k := len(ds); k < len(prefix) {
			d.chosen = prefix[k]
		}
		ds = append(ds, d)
		st := sc.threads[d.chosen].steps[pc[d.chosen]]
		pc[d.chosen]++
		w.log = append(w.log, fmt.Sprintf("t%d@%d %s", d.chosen, w.now, st.name))
		if err := st.do(w); err != nil {
			return fail(err)
		}
		if err := w.check(); err != nil {
			return fail(err)
		}
	}
	if sc.final != nil {
		if err := sc.final(w); err != nil {
			return fail(err)
		}
	}
	if w.tw == nil {
		return ds, nil
	}
	w.close()
	if err := w.tw.Close(); err != nil {
		return ds, err
	}
	res, err := tracecheck.CheckBytes(w.buf.Bytes(), sc.name, nil, tracecheck.Options{})
	if err != nil {
		return ds, err
	}
	if res.Verdict != tracecheck.OK {
		return fail(fmt.Errorf("trace %s at line %d: %s\n  %s\n%s", res.Verdict, res.Line, res.Reason, res.Text, w.buf.String()))
	}
	return ds, nil
}

// xExploration is what an exploration found.
type xExploration struct {
	runs     int
	complete bool // every interleaving ran (no limit reached)
	elapsed  time.Duration
	fail     error
}

// xExplore runs every interleaving of run's threads (depth first: each
// alternative at each decision past a run's prefix becomes a prefix to
// run), stopping at the first failure, or after limit runs (0: no
// limit). Each interleaving runs once (TestCoordExplorerEnumerates).
func xExplore(limit int, run func(prefix []int) ([]xDecision, error)) xExploration {
	start := time.Now()
	var ex xExploration
	stack := [][]int{nil}
	for len(stack) > 0 && (limit == 0 || ex.runs < limit) {
		prefix := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ds, err := run(prefix)
		ex.runs++
		if err != nil {
			ex.fail = fmt.Errorf("schedule %s: %w", xDescribe(ds), err)
			break
		}
		for i := len(prefix); i < len(ds); i++ {
			at := slices.Index(ds[i].enabled, ds[i].chosen)
			for _, c := range ds[i].enabled[at+1:] {
				next := make([]int, i+1)
				for k := range i {
					next[k] = ds[k].chosen
				}
				next[i] = c
				stack = append(stack, next)
			}
		}
	}
	ex.complete = len(stack) == 0
	ex.elapsed = time.Since(start)
	return ex
}

// xDescribe prints a schedule: the thread chosen at each step.
func xDescribe(ds []xDecision) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprint(d.chosen)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// xWide reports whether the wider scenarios run (DRAINPROOF_EXPLORE=wide).
func xWide() bool { return os.Getenv("DRAINPROOF_EXPLORE") == "wide" }
