package sim_test

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/sim"
	"github.com/drainproof/drainproof/spec"
)

// toSpec is the abstraction of a bus message: the model's record.
func toSpec(msg sim.Msg) spec.Msg {
	switch msg.Kind {
	case sim.KindCmd:
		return spec.Cmd(int8(msg.Cmd.Epoch), spec.Liveness(msg.Cmd.Target))
	case sim.KindResp:
		return spec.Resp(int8(msg.Resp.Epoch), spec.Liveness(msg.Resp.Liveness))
	case sim.KindHb:
		if !msg.Hb.HasCount {
			return spec.Hb(int8(msg.Hb.Epoch), spec.Liveness(msg.Hb.Liveness), spec.None, false)
		}
		return spec.Hb(int8(msg.Hb.Epoch), spec.Liveness(msg.Hb.Liveness), int8(msg.Hb.Count), msg.Hb.AdmissionClosed)
	case sim.KindReport:
		return spec.Report(int8(msg.Report.Epoch), int8(msg.Report.Count), msg.Report.AdmissionClosed)
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

// abstract reads the cluster's observable state as a model state (the
// network left empty; nets are compared separately).
func abstract(m *spec.Model, c *sim.Cluster) spec.State {
	s := m.InitState()
	o := c.Observe()
	s.Epoch, s.Liveness, s.AdmissionClosed, s.Count = int8(o.Epoch), spec.Liveness(o.Liveness), o.AdmissionClosed, int8(o.Count)
	pd, removing, busy := c.Pending()
	s.Removed = 0
	for d := range o.Subscribed {
		switch {
		case busy && pd == d && removing:
			s.Pc[d] = spec.PcRemoving
		case busy && pd == d:
			s.Pc[d] = spec.PcSubscribed
		case c.Registered(d):
			s.Pc[d] = spec.PcRegistered
		default:
			s.Pc[d] = spec.PcIdle
		}
		if s.Pc[d] == spec.PcIdle || s.Pc[d] == spec.PcRemoving {
			s.Removed |= 1 << d
		}
		if o.Subscribed[d] {
			s.Subscribed |= 1 << d
		}
		if o.SchemaRef[d] {
			s.SchemaRef |= 1 << d
		}
	}
	s.Registrations = int8(c.Registrations())
	co := c.Coord.Observe(sim.Target)
	s.CoordEpoch, s.CoordLiveness, s.Work, s.DrainedEpoch = int8(co.Epoch), spec.Liveness(co.Liveness), int8(co.Work), optional(co.DrainedEpoch)
	s.CoordCount = spec.None
	if co.CountObserved {
		s.CoordCount = int8(co.Count)
	}
	if r, ok := c.LogCoord.Entry(sim.Target); ok {
		s.Cache = spec.CacheEntry{Epoch: int8(r.Epoch), Count: int8(r.Count), Closed: r.AdmissionClosed}
	}
	return s
}

// brokersAgree: the report's count is the sum of the brokers' counts,
// and admission is closed only once every broker's gate bit is.
func brokersAgree(o sim.Observation) bool {
	var sum int64
	for _, n := range o.Counts {
		sum += n
	}
	return sum == o.Count && (!o.AdmissionClosed || !slices.Contains(o.GateClosed, false))
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

// modelDecision is the model's DrainNode answer: 0 once drained or when
// CoordCompleteDrain is enabled; otherwise work plus the accepted count,
// at least 1.
func modelDecision(m *spec.Model, s *spec.State) (int64, bool) {
	if _, ok := m.CoordCompleteDrain(s); ok || s.DrainedEpoch != spec.None {
		return 0, true
	}
	r := int64(s.Work)
	if s.CoordCount != spec.None {
		r += int64(s.CoordCount)
	}
	return max(r, 1), false
}

type candidate struct {
	name string
	next spec.State
	do   func() error
}

// candidates lists the model's enabled steps with the cluster action that
// implements each.
func candidates(m *spec.Model, s *spec.State, c *sim.Cluster) []candidate {
	var out []candidate
	add := func(name string, t spec.State, ok bool, do func() error) {
		if ok {
			out = append(out, candidate{name, t, do})
		}
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
	for d := 0; d < 2; d++ {
		t1, ok := m.CollectorRegister(s, d)
		if ok && t1.Pc[d] == spec.PcAdmitted { // the cluster's register includes the subscribe step
			t2, ok2 := m.BrokerSubscribe(&t1, d)
			add(fmt.Sprintf("CollectorRegister(d%d)+BrokerSubscribe", d+1), t2, ok2, func() error { return c.CollectorRegister(d, false) })
			t3, ok3 := m.BrokerSubscribeRefused(&t1, d)
			add(fmt.Sprintf("CollectorRegister(d%d)+BrokerSubscribeRefused", d+1), t3, ok3, func() error { _ = c.CollectorRegister(d, true); return nil })
		} else {
			add(fmt.Sprintf("CollectorRegister(d%d)", d+1), t1, ok, func() error { _ = c.CollectorRegister(d, false); return nil })
		}
		t, ok := m.BrokerRegisterTable(s, d)
		add(fmt.Sprintf("BrokerRegisterTable(d%d)", d+1), t, ok, c.BrokerRegisterTable)
		t, ok = m.BrokerRegisterTableFails(s, d)
		add(fmt.Sprintf("BrokerRegisterTableFails(d%d)", d+1), t, ok, c.BrokerRegisterTableFails)
		t, ok = m.CollectorRemove(s, d)
		add(fmt.Sprintf("CollectorRemove(d%d)", d+1), t, ok, func() error { return c.CollectorRemove(d) })
		t, ok = m.BrokerRemoveFinish(s, d)
		add(fmt.Sprintf("BrokerRemoveFinish(d%d)", d+1), t, ok, c.BrokerRemoveFinish)
	}
	t, ok := m.NodeSendHeartbeat(s)
	add("NodeSendHeartbeat", t, ok, func() error { c.NodeSendHeartbeat(); return nil })
	t, ok = m.ServiceSendReport(s)
	add("ServiceSendReport", t, ok, func() error { c.ServiceSendReport(); return nil })
	restart := func() error { _, err := c.Restart(); return err }
	t, ok = m.NodeCrashRestart(s)
	add("NodeCrashRestart", t, ok, restart)
	t, ok = m.UpgradeRestart(s)
	add("UpgradeRestart", t, ok, restart)
	send := func() error {
		if _, ok := c.CoordSendCommand(); !ok {
			return fmt.Errorf("the coordinator has no command to send")
		}
		return nil
	}
	t, ok = m.CoordSendDraining(s)
	add("CoordSendDraining", t, ok, send)
	t, ok = m.CoordSendStopping(s)
	add("CoordSendStopping", t, ok, send)
	t, ok = m.MaintainerReportProgress(s)
	add("MaintainerReportProgress", t, ok, func() error {
		c.Coord.ReportProgress(sim.Target, coordinator.Progress{})
		return nil
	})
	t, ok = m.CoordCompleteDrain(s)
	add("CoordCompleteDrain", t, ok, func() error {
		d, err := c.Coord.DrainNode(sim.Target, c.Now())
		if err == nil && !d.Complete {
			err = fmt.Errorf("DrainNode = %+v, want complete", d)
		}
		return err
	})
	t, ok = m.LogCoordAnswer(s)
	add("LogCoordAnswer", t, ok, func() error {
		if !c.LogCoordAnswer(false) {
			return fmt.Errorf("the coordinator has no query")
		}
		return nil
	})
	t, ok = m.LogCoordExpire(s)
	add("LogCoordExpire", t, ok, func() error { c.LogCoord.RemoveNode(sim.Target); return nil })
	for _, id := range s.Net[:s.NetLen] {
		for _, keep := range []bool{false, true} {
			i := busIndex(id)
			name := fmt.Sprintf("%s keep=%v", m.Msg(id), keep)
			var t spec.State
			var ok bool
			var do func() error
			switch m.Msg(id).Kind {
			case spec.KindCmd:
				t, ok = m.NodeRecvCommand(s, id, keep)
				do = func() error { return c.NodeRecvCommand(i, keep, false) }
				name = "NodeRecvCommand " + name
			case spec.KindHb:
				t, ok = m.CoordRecvHeartbeat(s, id, keep)
				do = func() error { return c.CoordRecv(i, keep) }
				name = "CoordRecvHeartbeat " + name
			case spec.KindResp:
				t, ok = m.CoordRecvResponse(s, id, keep)
				do = func() error { return c.CoordRecv(i, keep) }
				name = "CoordRecvResponse " + name
			case spec.KindAns:
				t, ok = m.CoordRecvAnswer(s, id, keep)
				do = func() error { return c.CoordRecv(i, keep) }
				name = "CoordRecvAnswer " + name
			case spec.KindReport:
				t, ok = m.LogCoordRecvReport(s, id, keep)
				do = func() error { return c.LogCoordRecvReport(i, keep) }
				name = "LogCoordRecvReport " + name
			}
			add(name, t, ok, do)
		}
		t, ok := m.NetLose(s, id)
		i := busIndex(id)
		add("NetLose "+m.Msg(id).String(), t, ok, func() error { return c.NetLose(i) })
	}
	return out
}

// TestConformance is the rapid state-machine test of the simulated
// cluster against package spec: each step is a model action enabled in
// the model's state, applied to the model and to the cluster; after every
// step the cluster's observable state (T's epoch, liveness, admission
// gate and count, the stores, the coordinator's observation, the
// LogCoordinator's cache, the bus) abstracts to the model's state, the
// model's invariants and action properties hold on that abstraction, and
// the coordinator's decision (remaining, complete) equals the model's.
func TestConformance(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tr := rapid.SampledFrom([]string{spec.TransportHeartbeat, spec.TransportLogCoord}).Draw(rt, "transport")
		m, err := spec.New(spec.Config{Dispatchers: []string{"d1", "d2"}, TableTriggers: []string{"d2"},
			MaxEpoch: 3, MaxReg: 4, MaxMsgs: 3, Transport: tr})
		if err != nil {
			rt.Fatal(err)
		}
		c, err := sim.NewCluster(sim.ClusterConfig{Transport: node.Transport(tr), Dispatchers: 2, TableTriggers: 1, Clusters: 2, SetBus: true})
		if err != nil {
			rt.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Coord.DrainNode(sim.Target, 0); err != nil { // the model's drain is requested from Init
			rt.Fatal(err)
		}
		s := m.InitState()
		prev := abstract(m, c)
		check := func(step string) {
			a := abstract(m, c)
			if o := c.Observe(); !brokersAgree(o) {
				rt.Fatalf("after %s the brokers' counts %v and gate bits %v disagree with the report (%d, closed %v)",
					step, o.Counts, o.GateClosed, o.Count, o.AdmissionClosed)
			}
			if got, want := m.Vars(a), m.Vars(withoutNet(m, s)); !slices.Equal(got[:15], want[:15]) {
				rt.Fatalf("after %s the cluster diverges from the model:\n cluster %v\n model   %v", step, got[:15], want[:15])
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
			rem, complete := modelDecision(m, &s)
			if d.Remaining != rem || d.Complete != complete {
				rt.Fatalf("after %s the coordinator decides %+v, the model remaining %d complete %v", step, d, rem, complete)
			}
		}
		check("Init")
		n := rapid.IntRange(1, 100).Draw(rt, "steps")
		for i := 0; i < n; i++ {
			cands := candidates(m, &s, c)
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
