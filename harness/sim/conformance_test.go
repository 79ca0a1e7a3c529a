package sim_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/spec"
)

// toSpec is the abstraction of a bus message: the model's record.
func toSpec(msg sim.Msg) spec.Msg {
	switch msg.Kind {
	case node.KindCmd:
		return spec.Cmd(int8(msg.Cmd.Epoch), spec.Liveness(msg.Cmd.Target))
	case node.KindResp:
		return spec.Resp(int8(msg.Resp.Epoch), spec.Liveness(msg.Resp.Liveness))
	case node.KindHb:
		if !msg.Hb.HasCount {
			return spec.Hb(int8(msg.Hb.Epoch), spec.Liveness(msg.Hb.Liveness), spec.None, false)
		}
		return spec.Hb(int8(msg.Hb.Epoch), spec.Liveness(msg.Hb.Liveness), int8(msg.Hb.Count), msg.Hb.AdmissionClosed)
	case node.KindReport:
		return spec.Report(int8(msg.Report.Epoch), int8(msg.Report.Count), msg.Report.AdmissionClosed)
	case node.KindQuery:
		return spec.Query
	}
	if !msg.Ans.Known {
		return spec.Ans(spec.None, spec.None, false)
	}
	return spec.Ans(int8(msg.Ans.Epoch), int8(msg.Ans.Count), msg.Ans.AdmissionClosed)
}

func optional(v uint64) int8 {
	if v == 0 {
		return spec.None
	}
	return int8(v)
}

// Dispatchers and brokers of the model beside the cluster: d1 and d2 are
// ordinary, d3 a table trigger; the cluster's upstream clusters c1 and c2
// are the brokers b1 and b2, and dispatcher d belongs to cluster d mod 2
// (d1 and d3 to c1, d2 to c2), a subset of the model's behaviours, where a
// REGISTER may name any broker.
var (
	confDispatchers = []string{"d1", "d2", "d3"}
	confBrokers     = []string{"b1", "b2"}
)

// abstract reads the cluster's observable state as a model state, beside
// the model's state s (the network left empty; nets are compared
// separately). What the cluster cannot show is derived, and each is
// checked against the model elsewhere in check:
//   - closing and the brokers' gate bits: admission closes in one call
//     (Service.CloseAdmission) in the cluster, so closing and every
//     gate bit equal closed between steps;
//   - the per-broker counts: Report gives their sum, compared with the
//     model's sum; the brokers' own counts are read (Snapshot) only while
//     the request loop is idle, so the abstraction takes the model's and
//     check compares them with the cluster's when it can;
//   - coordVersion: the coordinator learns T's version once (bootstrap)
//     and keeps it across T's epochs, where the model forgets it on a new
//     epoch (CoordLearnVersion again): the abstraction takes the model's,
//     and check requires that the coordinator knows T's version whenever
//     the model does.
func abstract(m *spec.Model, c *sim.Cluster, s *spec.State) spec.State {
	a := m.InitState()
	o := c.Observe()
	a.Epoch, a.Version, a.Liveness, a.AdmissionClosed = int8(o.Epoch), spec.VersionNew, spec.Liveness(o.Liveness), o.AdmissionClosed
	a.Closing = o.AdmissionClosed
	if o.AdmissionClosed {
		a.GateClosed = 1<<len(confBrokers) - 1
	}
	a.Count = s.Count
	pd, removing, busy := c.Pending()
	a.Removed = 0
	for d := range o.Subscribed {
		switch {
		case busy && pd == d && removing:
			a.Pc[d] = spec.PcRemoving
		case busy && pd == d:
			a.Pc[d] = spec.PcSubscribed
		case c.Registered(d):
			a.Pc[d] = spec.PcRegistered
		default:
			a.Pc[d] = spec.PcIdle
		}
		if a.Pc[d] != spec.PcIdle {
			a.Brk[d] = int8(c.ClusterOf(d))
		}
		if a.Pc[d] == spec.PcIdle || a.Pc[d] == spec.PcRemoving {
			a.Removed |= 1 << d
		}
		if o.Subscribed[d] {
			a.Subscribed |= 1 << d
		}
		if o.SchemaRef[d] {
			a.SchemaRef |= 1 << d
		}
	}
	a.Registrations = int8(c.Registrations())
	co := c.Coord.NodeView(sim.Target)
	a.CoordEpoch, a.CoordLiveness, a.Work, a.DrainedEpoch = int8(co.Epoch), spec.Liveness(co.Liveness), int8(co.Work), optional(co.DrainedEpoch)
	a.LegacyEpoch = optional(co.LegacyEpoch)
	a.CoordVersion = s.CoordVersion
	a.CoordCount = spec.None
	if co.CountObserved {
		a.CoordCount = int8(co.Count)
	}
	if r, ok := c.LogCoord.Entry(sim.Target); ok {
		a.Cache = spec.CacheEntry{Epoch: int8(r.Epoch), Count: int8(r.Count), Closed: r.AdmissionClosed}
	}
	return a
}

// totalCount is TLA+ TotalCount: the sum of the brokers' counts.
func totalCount(s *spec.State) int64 {
	var n int64
	for b := range confBrokers {
		n += int64(s.Count[b])
	}
	return n
}

func withoutNet(m *spec.Model, s spec.State) spec.State {
	t := m.InitState()
	s.NetLen, s.Net = t.NetLen, t.Net
	return s
}

func netStrings(msgs []spec.Msg) []string {
	out := make([]string, len(msgs))
	for i, msg := range msgs {
		out[i] = msg.String()
	}
	slices.Sort(out)
	return out
}

// modelDecision is the model's DrainNode answer: the legacy answer once
// given or when CoordLegacyRestart is enabled; 0 once drained or when
// CoordCompleteDrain is enabled; otherwise work plus the accepted count,
// at least 1.
func modelDecision(m *spec.Model, s *spec.State) (rem int64, complete, legacy bool) {
	if _, ok := m.CoordLegacyRestart(s); ok || s.LegacyEpoch != spec.None {
		return 0, false, true
	}
	if _, ok := m.CoordCompleteDrain(s); ok || s.DrainedEpoch != spec.None {
		return 0, true, false
	}
	r := int64(s.Work)
	if s.CoordCount != spec.None {
		r += int64(s.CoordCount)
	}
	return max(r, 1), false, false
}

// steps applies model actions in sequence, as one call of the cluster
// performs them, and names the sequence; ok is false if one of them is
// not enabled.
type steps struct {
	m     *spec.Model
	s     spec.State
	names []string
	ok    bool
}

func newSteps(m *spec.Model, s *spec.State) *steps { return &steps{m: m, s: *s, ok: true} }

// then applies the action name, if the sequence is still enabled.
func (q *steps) then(name string, act func(*spec.State) (spec.State, bool)) *steps {
	if q.ok {
		q.s, q.ok = act(&q.s)
		q.names = append(q.names, name)
	}
	return q
}

// thenD applies a dispatcher action to d.
func (q *steps) thenD(name string, d int, act func(*spec.Model, *spec.State, int) (spec.State, bool)) *steps {
	return q.then(fmt.Sprintf("%s(%s)", name, confDispatchers[d]), func(s *spec.State) (spec.State, bool) { return act(q.m, s, d) })
}

// closeRest is the rest of a close of admission that the event service
// runs to its end in one call once it started (Service.CloseAdmission):
// ServiceCloseBroker for every broker still open, then ServiceFinishClose.
func (q *steps) closeRest() *steps {
	if !q.ok || !q.s.Closing {
		return q
	}
	for b := range confBrokers {
		if q.s.GateClosed&(1<<b) == 0 {
			q.then("ServiceCloseBroker("+confBrokers[b]+")", func(s *spec.State) (spec.State, bool) { return q.m.ServiceCloseBroker(s, b) })
		}
	}
	if !q.s.AdmissionClosed {
		q.then("ServiceFinishClose", q.m.ServiceFinishClose)
	}
	return q
}

// sample is Service.Sample: the close first when T is STOPPING and
// admission is open, then the gate, then each broker's count.
func (q *steps) sample() *steps {
	if q.ok && q.s.Liveness == spec.Stopping && !q.s.AdmissionClosed {
		if !q.s.Closing {
			q.then("ServiceStartClose", q.m.ServiceStartClose)
		}
		q.closeRest()
	}
	q.then("ServiceStartReport", q.m.ServiceStartReport)
	for b := range confBrokers {
		q.then("ServiceReadBroker("+confBrokers[b]+")", func(s *spec.State) (spec.State, bool) { return q.m.ServiceReadBroker(s, b) })
	}
	return q
}

func (q *steps) name() string { return strings.Join(q.names, ", ") }

type candidate struct {
	name string
	next spec.State
	do   func() error
}

// wantErr checks a refused registration's error.
func wantErr(err, want error) error {
	if !errors.Is(err, want) {
		return fmt.Errorf("got %v, want %v", err, want)
	}
	return nil
}

// registerCandidates lists the outcomes of REGISTER(d) to d's cluster that
// the model allows now, each the model's steps that the cluster's
// Register performs in one call.
func registerCandidates(m *spec.Model, s *spec.State, c *sim.Cluster, d int, add func(*steps, func() error)) {
	b := c.ClusterOf(d)
	q := newSteps(m, s)
	q.then(fmt.Sprintf("CollectorSendRegister(%s, %s)", confDispatchers[d], confBrokers[b]),
		func(s *spec.State) (spec.State, bool) { return m.CollectorSendRegister(s, d, b) })
	q.then(fmt.Sprintf("ServiceRecvRegister(%s, %s)", confDispatchers[d], confBrokers[b]),
		func(s *spec.State) (spec.State, bool) { return m.ServiceRecvRegister(s, d, b) })
	if !q.ok {
		return
	}
	if p := q.s.Pc[d]; p != spec.PcGated && p != spec.PcRegated {
		add(q.closeRest(), func() error { return wantErr(c.Register(d, false), eventservice.ErrAdmissionClosed) })
		return
	}
	again := q.s.Pc[d] == spec.PcRegated
	q.thenD("BrokerAdmit", d, (*spec.Model).BrokerAdmit)
	replaced := q.s.Pc[d] == spec.PcReplacing
	if replaced {
		q.thenD("BrokerReleaseOld", d, (*spec.Model).BrokerReleaseOld)
	}
	switch p := q.s.Pc[d]; {
	case p == spec.PcRegistered && (!again || replaced): // a table trigger
		add(q, func() error { return c.Register(d, false) })
	case p == spec.PcRegistered || p == spec.PcIdle: // refused by the broker's gate bit
		add(q, func() error { return wantErr(c.Register(d, false), eventservice.ErrAdmissionClosed) })
	case replaced: // the cluster completes a re-registration in one call
		q.thenD("BrokerSubscribe", d, (*spec.Model).BrokerSubscribe).thenD("BrokerRegisterTable", d, (*spec.Model).BrokerRegisterTable)
		add(q, func() error { return c.Register(d, false) })
	default: // held inside RegisterTable, or refused by the event store
		ok := *q
		ok.names = slices.Clone(q.names)
		ok.thenD("BrokerSubscribe", d, (*spec.Model).BrokerSubscribe)
		add(&ok, func() error { return c.Register(d, false) })
		q.thenD("BrokerSubscribeRefused", d, (*spec.Model).BrokerSubscribeRefused).thenD("BrokerRollback", d, (*spec.Model).BrokerRollback)
		add(q, func() error { return wantErr(c.Register(d, true), eventservice.ErrNotReusable) })
	}
}

// sendCandidates lists the coordinator's sends the model enables:
// CoordSendDraining and CoordSendStopping, each done by the cluster's
// step of that name. Where the model enables both (under SkipDraining)
// the coordinator's command decides which (a command in flight already
// is a choice too: sending it again changes nothing); a command the model
// does not enable, or none where the model sends one, fails the step.
func sendCandidates(m *spec.Model, s *spec.State, c *sim.Cluster, add func(*steps, func() error)) {
	pending, has := c.Coord.PendingCommand(c.Now())
	sends := []struct {
		name   string
		act    func(*spec.State) (spec.State, bool)
		target node.Liveness
		do     func() bool
	}{
		{"CoordSendDraining", m.CoordSendDraining, node.Draining, c.CoordSendDraining},
		{"CoordSendStopping", m.CoordSendStopping, node.Stopping, c.CoordSendStopping},
	}
	enabled := map[node.Liveness]bool{}
	for _, snd := range sends {
		_, enabled[snd.target] = snd.act(s)
	}
	if has && slices.Contains(c.Bus(), sim.Msg{Kind: node.KindCmd, Cmd: pending}) {
		enabled[pending.Target] = true // sent already: sending it again changes nothing (the model's set)
	}
	for _, snd := range sends {
		if !enabled[snd.target] || (has && pending.Target != snd.target && enabled[pending.Target]) {
			continue // not the model's, or the coordinator's choice is the other one
		}
		add(newSteps(m, s).then(snd.name, snd.act), func() error {
			if !snd.do() {
				return fmt.Errorf("the coordinator does not send %s (its command: %+v, %v)", snd.target, pending, has)
			}
			return nil
		})
	}
}

// candidates lists the model's enabled steps with the cluster action that
// implements each.
func candidates(m *spec.Model, s *spec.State, c *sim.Cluster) []candidate {
	var out []candidate
	add := func(q *steps, do func() error) {
		if q.ok {
			out = append(out, candidate{q.name(), q.s, do})
		}
	}
	one := func(name string, act func(*spec.State) (spec.State, bool)) *steps {
		return newSteps(m, s).then(name, act)
	}
	busIndex := func(id uint16) int {
		want := m.Msg(id)
		for i, b := range c.Bus() {
			if toSpec(b) == want {
				return i
			}
		}
		return -1
	}
	for d := range confDispatchers {
		registerCandidates(m, s, c, d, add)
		add(newSteps(m, s).thenD("BrokerRegisterTable", d, (*spec.Model).BrokerRegisterTable), c.BrokerRegisterTable)
		add(newSteps(m, s).thenD("BrokerRegisterTableFails", d, (*spec.Model).BrokerRegisterTableFails).
			thenD("BrokerUnsubscribe", d, (*spec.Model).BrokerUnsubscribe).
			thenD("BrokerRollback", d, (*spec.Model).BrokerRollback), c.BrokerRegisterTableFails)
		add(newSteps(m, s).thenD("CollectorRemove", d, (*spec.Model).CollectorRemove), func() error { return c.CollectorRemove(d) })
		add(newSteps(m, s).thenD("BrokerRemoveFinish", d, (*spec.Model).BrokerRemoveFinish), c.BrokerRemoveFinish)
	}
	hb := newSteps(m, s)
	if m.Config().Transport == spec.TransportHeartbeat {
		hb.then("NodeStartHeartbeat", m.NodeStartHeartbeat).sample()
	}
	add(hb.then("NodeSendHeartbeat", m.NodeSendHeartbeat), func() error { c.NodeSendHeartbeat(); return nil })
	add(newSteps(m, s).sample().then("ServiceSendReport", m.ServiceSendReport), func() error { c.ServiceSendReport(); return nil })
	restart := func() error { _, err := c.Restart(); return err }
	add(one("NodeCrashRestart", func(s *spec.State) (spec.State, bool) { return m.NodeCrashRestart(s, spec.VersionNew) }), restart)
	add(one("UpgradeRestart", func(s *spec.State) (spec.State, bool) { return m.UpgradeRestart(s, spec.VersionNew) }), restart)
	add(one("CoordLearnVersion", m.CoordLearnVersion), func() error {
		c.Coord.ObserveVersion(sim.Target, c.Epoch(), node.VersionBrokerDrain)
		return nil
	})
	sendCandidates(m, s, c, add)
	add(one("CoordLegacyRestart", m.CoordLegacyRestart), func() error {
		if d, err := c.Coord.DrainNode(sim.Target, c.Now()); err != nil || !d.Legacy {
			return errors.Join(err, fmt.Errorf("DrainNode = %+v, want the legacy answer", d))
		}
		return nil
	})
	add(one("MaintainerReportProgress", m.MaintainerReportProgress), func() error {
		c.Coord.ReportProgress(sim.Target, coordinator.Progress{})
		return nil
	})
	add(one("CoordCompleteDrain", m.CoordCompleteDrain), func() error {
		d, err := c.Coord.DrainNode(sim.Target, c.Now())
		if err == nil && !d.Complete {
			err = fmt.Errorf("DrainNode = %+v, want complete", d)
		}
		return err
	})
	add(one("CoordSendQuery", m.CoordSendQuery), func() error {
		if !c.CoordSendQuery() {
			return fmt.Errorf("the coordinator has no query")
		}
		return nil
	})
	add(one("LogCoordExpire", m.LogCoordExpire), func() error { c.LogCoord.RemoveNode(sim.Target); return nil })
	for _, id := range s.Net[:s.NetLen] {
		i := busIndex(id)
		for _, keep := range []bool{false, true} {
			var name string
			var act func(*spec.State, uint16, bool) (spec.State, bool)
			var do func() error
			switch m.Msg(id).Kind {
			case spec.KindCmd:
				name, act = "NodeRecvCommand", m.NodeRecvCommand
				do = func() error { return c.NodeRecvCommand(i, keep, false) }
			case spec.KindHb:
				name, act = "CoordRecvHeartbeat", m.CoordRecvHeartbeat
				do = func() error { return c.CoordRecvHeartbeat(i, keep) }
			case spec.KindResp:
				name, act = "CoordRecvResponse", m.CoordRecvResponse
				do = func() error { return c.CoordRecvResponse(i, keep) }
			case spec.KindAns:
				name, act = "CoordRecvAnswer", m.CoordRecvAnswer
				do = func() error { return c.CoordRecvAnswer(i, keep) }
			case spec.KindReport:
				name, act = "LogCoordRecvReport", m.LogCoordRecvReport
				do = func() error { return c.LogCoordRecvReport(i, keep) }
			case spec.KindQuery:
				name, act = "LogCoordAnswer", m.LogCoordAnswer
				if s.Cache.Epoch == spec.None {
					name, act = "LogCoordAnswerUnknown", m.LogCoordAnswerUnknown
				}
				do = func() error { return c.LogCoordAnswer(i, keep) }
			}
			add(one(fmt.Sprintf("%s %s keep=%v", name, m.Msg(id), keep), func(s *spec.State) (spec.State, bool) { return act(s, id, keep) }), do)
		}
		add(one("NetLose "+m.Msg(id).String(), func(s *spec.State) (spec.State, bool) { return m.NetLose(s, id) }),
			func() error { return c.NetLose(i) })
	}
	return out
}

// referenceBugs is the model's Bugs: those a bug under test requires
// (bugs.Reference: SkipDraining beside NodeAcceptsSkip), none otherwise,
// so that the test catches the bug's own fault.
func referenceBugs(rt *rapid.T) spec.Bug {
	var b spec.Bug
	for _, n := range bugs.Reference() {
		x, err := spec.ParseBug(n)
		if err != nil {
			rt.Fatal(err)
		}
		b |= x
	}
	return b
}

// TestConformance is the rapid state-machine test of the simulated
// cluster, with two upstream clusters (brokers), against package spec
// with Brokers = {b1, b2}: each step is a sequence of model actions
// enabled in the model's state that one call of the cluster performs
// (see candidates: a REGISTER is CollectorSendRegister, ServiceRecvRegister,
// BrokerAdmit, ...; a heartbeat NodeStartHeartbeat, the close when
// STOPPING, ServiceStartReport, ServiceReadBroker per broker,
// NodeSendHeartbeat), applied to the model and to the cluster; after every
// step the cluster's observable state (T's epoch, liveness, admission
// gate, the stores of each cluster, the coordinator's observation, the
// LogCoordinator's cache, the bus) abstracts to the model's state, the
// service's reported count equals the sum of the model's per-broker
// counts and, while the request loop is idle, each broker's count equals
// the model's, the model's invariants and action properties hold on the
// abstraction, and the coordinator's decision (remaining, complete)
// equals the model's.
func TestConformance(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tr := rapid.SampledFrom([]string{spec.TransportHeartbeat, spec.TransportLogCoord}).Draw(rt, "transport")
		m, err := spec.New(spec.Config{Dispatchers: confDispatchers, TableTriggers: []string{"d3"},
			Brokers: confBrokers, Versions: []string{"new"}, MaxEpoch: 3, MaxReg: 6, MaxMsgs: 3, Transport: tr,
			Bugs: referenceBugs(rt)})
		if err != nil {
			rt.Fatal(err)
		}
		c, err := sim.NewCluster(sim.ClusterConfig{Transport: node.Transport(tr), Dispatchers: len(confDispatchers),
			TableTriggers: 1, Clusters: len(confBrokers), SetBus: true})
		if err != nil {
			rt.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Coord.DrainNode(sim.Target, 0); err != nil { // the model's drain is requested from Init
			rt.Fatal(err)
		}
		s := m.InitState()
		prev := abstract(m, c, &s)
		check := func(step string) {
			a := abstract(m, c, &s)
			got, want := m.Vars(a), m.Vars(withoutNet(m, s))
			for i := range want {
				if got[i] != want[i] {
					rt.Fatalf("after %s the cluster diverges from the model in %s:\n cluster %v\n model   %v", step, want[i][0], got, want)
				}
			}
			if n, want := c.Observe().Count, totalCount(&s); n != want {
				rt.Fatalf("after %s the service reports %d, the brokers' counts add up to %d in the model", step, n, want)
			}
			for b, n := range c.Observe().Counts {
				if want := int64(s.Count[b]); n != want {
					rt.Fatalf("after %s broker %s counts %d, the model's count[%s] %d", step, sim.ClusterID(b), n, confBrokers[b], want)
				}
			}
			if co := c.Coord.NodeView(sim.Target); s.CoordVersion == spec.VersionNew && (!co.VersionKnown || co.Version != node.VersionBrokerDrain) {
				rt.Fatalf("after %s the model's coordinator knows T's version, the coordinator does not: %+v", step, co)
			}
			var bus []spec.Msg
			for _, b := range c.Bus() {
				bus = append(bus, toSpec(b))
			}
			if got, want := netStrings(bus), netStrings(m.NetMsgs(s)); !slices.Equal(got, want) {
				rt.Fatalf("after %s the bus %v differs from the model's net %v", step, got, want)
			}
			for i, name := range m.Invariants() {
				if !m.Holds(i, a) {
					rt.Fatalf("after %s invariant %s fails on the cluster: %v", step, name, m.Vars(a))
				}
			}
			for i, name := range m.ActionProperties() {
				if !m.ActionHolds(i, step, prev, a) {
					rt.Fatalf("step %s breaks %s on the cluster", step, name)
				}
			}
			prev = a
			d, err := c.Coord.Evaluate(sim.Target, c.Now())
			if err != nil {
				rt.Fatal(err)
			}
			rem, complete, legacy := modelDecision(m, &s)
			if d.Remaining != rem || d.Complete != complete || d.Legacy != legacy {
				rt.Fatalf("after %s the coordinator decides %+v, the model remaining %d complete %v", step, d, rem, complete)
			}
		}
		check("Init")
		n := rapid.IntRange(1, 100).Draw(rt, "steps")
		for i := 0; i < n; i++ {
			cands := candidates(m, &s, c)
			// An unplanned restart is possible at almost every step: left
			// as likely as any other step it would use up the epochs
			// before a drain completes, and UpgradeRestart would never
			// be drawn.
			if rapid.IntRange(0, 9).Draw(rt, "crash") != 0 {
				cands = slices.DeleteFunc(cands, func(cd candidate) bool { return cd.name == "NodeCrashRestart" })
			}
			// The same for REGISTERs (several candidates per dispatcher):
			// they would use up the collectors' budget before T is
			// STOPPING, and the gate's refusal would never be drawn.
			if rapid.IntRange(0, 2).Draw(rt, "register") != 0 {
				cands = slices.DeleteFunc(cands, func(cd candidate) bool { return strings.HasPrefix(cd.name, "CollectorSendRegister") })
			}
			if len(cands) == 0 {
				break
			}
			k := rapid.IntRange(0, len(cands)-1).Draw(rt, "action")
			if err := cands[k].do(); err != nil {
				rt.Fatalf("%s: %v", cands[k].name, err)
			}
			s = cands[k].next
			check(cands[k].name)
		}
	})
}
