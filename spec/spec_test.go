package spec

import (
	"strings"
	"testing"
)

func mustModel(t *testing.T, mod func(*Config)) *Model {
	t.Helper()
	c := DefaultConfig()
	if mod != nil {
		mod(&c)
	}
	m, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// withMsg returns s with msg in flight.
func withMsg(m *Model, s State, msg Msg) State {
	s.netAdd(m.msgID(msg))
	return s
}

// Spec: DrainRegistration.tla, one case per action and branch.
func TestActions(t *testing.T) {
	hb := mustModel(t, nil)
	lc := mustModel(t, func(c *Config) { c.Transport = TransportLogCoord })
	bug := func(b Bug) *Model { return mustModel(t, func(c *Config) { c.Bugs = b }) }
	init := hb.InitState()
	stopping := init
	stopping.Liveness = Stopping
	reg := init // d1 (ordinary) registered
	reg.Pc[0], reg.Count, reg.Subscribed, reg.SchemaRef, reg.Removed = PcRegistered, 1, 1, 1, 0b10
	reg.Registrations = 1
	type tc struct {
		name  string
		m     *Model
		do    func(m *Model, s *State) (State, bool)
		from  State
		ok    bool
		check func(t State) bool
	}
	cases := []tc{
		{"CollectorRegister admits ordinary with early count", hb,
			func(m *Model, s *State) (State, bool) { return m.CollectorRegister(s, 0) }, init, true,
			func(t State) bool {
				return t.Pc[0] == PcAdmitted && t.Count == 1 && !bit(t.Removed, 0) && t.Registrations == 1
			}},
		{"CollectorRegister publishes a table trigger at once", hb,
			func(m *Model, s *State) (State, bool) { return m.CollectorRegister(s, 1) }, init, true,
			func(t State) bool { return t.Pc[1] == PcRegistered && t.Count == 1 }},
		{"CollectorRegister after STOPPING closes admission and drops", hb,
			func(m *Model, s *State) (State, bool) { return m.CollectorRegister(s, 0) }, stopping, true,
			func(t State) bool { return t.Pc[0] == PcIdle && t.AdmissionClosed && t.Count == 0 }},
		{"CollectorRegister CountAfterPublish does not count", bug(CountAfterPublish),
			func(m *Model, s *State) (State, bool) { return m.CollectorRegister(s, 0) }, init, true,
			func(t State) bool { return t.Pc[0] == PcAdmitted && t.Count == 0 }},
		{"CollectorRegister NoAdmissionGate admits after STOPPING", bug(NoAdmissionGate),
			func(m *Model, s *State) (State, bool) { return m.CollectorRegister(s, 0) }, stopping, true,
			func(t State) bool { return t.Pc[0] == PcAdmitted }},
		{"CollectorRegister repeated is idempotent", hb,
			func(m *Model, s *State) (State, bool) { return m.CollectorRegister(s, 0) }, reg, true,
			func(t State) bool { return t.Count == 1 && t.Registrations == 2 }},
		{"CollectorRegister DoubleIncrement counts twice", bug(DoubleIncrement),
			func(m *Model, s *State) (State, bool) { return m.CollectorRegister(s, 0) }, reg, true,
			func(t State) bool { return t.Count == 2 }},
		{"BrokerSubscribe", hb,
			func(m *Model, s *State) (State, bool) {
				a, _ := m.CollectorRegister(s, 0)
				return m.BrokerSubscribe(&a, 0)
			}, init, true,
			func(t State) bool { return t.Pc[0] == PcSubscribed && bit(t.Subscribed, 0) }},
		{"BrokerSubscribeRefused rolls back", hb,
			func(m *Model, s *State) (State, bool) {
				a, _ := m.CollectorRegister(s, 0)
				return m.BrokerSubscribeRefused(&a, 0)
			}, init, true,
			func(t State) bool { return t.Pc[0] == PcIdle && t.Count == 0 && bit(t.Removed, 0) }},
		{"BrokerRegisterTableFails cleans up", hb,
			func(m *Model, s *State) (State, bool) {
				a, _ := m.CollectorRegister(s, 0)
				b, _ := m.BrokerSubscribe(&a, 0)
				return m.BrokerRegisterTableFails(&b, 0)
			}, init, true,
			func(t State) bool {
				return t.Pc[0] == PcIdle && t.Count == 0 && !bit(t.Subscribed, 0) && bit(t.Removed, 0)
			}},
		{"BrokerRegisterTableFails LeakOnSchemaFailure leaks", bug(LeakOnSchemaFailure),
			func(m *Model, s *State) (State, bool) {
				a, _ := m.CollectorRegister(s, 0)
				b, _ := m.BrokerSubscribe(&a, 0)
				return m.BrokerRegisterTableFails(&b, 0)
			}, init, true,
			func(t State) bool { return t.Pc[0] == PcIdle && bit(t.Subscribed, 0) && !bit(t.Removed, 0) }},
		{"BrokerRegisterTable publishes", hb,
			func(m *Model, s *State) (State, bool) {
				a, _ := m.CollectorRegister(s, 0)
				b, _ := m.BrokerSubscribe(&a, 0)
				return m.BrokerRegisterTable(&b, 0)
			}, init, true,
			func(t State) bool { return t == reg }},
		{"CollectorRemove keeps the count until cleanup", hb,
			func(m *Model, s *State) (State, bool) { return m.CollectorRemove(s, 0) }, reg, true,
			func(t State) bool { return t.Pc[0] == PcRemoving && t.Count == 1 && bit(t.Removed, 0) }},
		{"CollectorRemove DecrementBeforeCleanup", bug(DecrementBeforeCleanup),
			func(m *Model, s *State) (State, bool) { return m.CollectorRemove(s, 0) }, reg, true,
			func(t State) bool { return t.Count == 0 && bit(t.Subscribed, 0) }},
		{"BrokerRemoveFinish decrements last", hb,
			func(m *Model, s *State) (State, bool) {
				a, _ := m.CollectorRemove(s, 0)
				return m.BrokerRemoveFinish(&a, 0)
			}, reg, true,
			func(t State) bool { return t.Pc[0] == PcIdle && t.Count == 0 && t.Subscribed == 0 && t.SchemaRef == 0 }},
		{"BrokerInactivityCleanup disabled without the bug", hb,
			func(m *Model, s *State) (State, bool) {
				a, _ := m.CollectorRemove(s, 0)
				return m.BrokerInactivityCleanup(&a, 0)
			}, reg, false, nil},
		{"BrokerInactivityCleanup DoubleDecrement", bug(DoubleDecrement),
			func(m *Model, s *State) (State, bool) {
				a, _ := m.CollectorRemove(s, 0)
				return m.BrokerInactivityCleanup(&a, 0)
			}, reg, true,
			func(t State) bool { return t.Pc[0] == PcRaced && t.Count == 0 }},
		{"NodeSendHeartbeat STOPPING closes admission first", hb,
			func(m *Model, s *State) (State, bool) { return m.NodeSendHeartbeat(s) }, stopping, true,
			func(t State) bool { return t.AdmissionClosed && t.netHas(hb.msgID(Hb(1, Stopping, 0, true))) }},
		{"NodeSendHeartbeat logcoord carries no count", lc,
			func(m *Model, s *State) (State, bool) { return m.NodeSendHeartbeat(s) }, init, true,
			func(t State) bool { return t.netHas(lc.msgID(Hb(1, Alive, None, false))) }},
		{"NodeRecvCommand takes one step and replies", hb,
			func(m *Model, s *State) (State, bool) {
				return m.NodeRecvCommand(s, m.msgID(Cmd(1, Draining)), false)
			}, withMsg(hb, init, Cmd(1, Draining)), true,
			func(t State) bool {
				return t.Liveness == Draining && t.NetLen == 1 && t.netHas(hb.msgID(Resp(1, Draining)))
			}},
		{"NodeRecvCommand refuses a skip", hb,
			func(m *Model, s *State) (State, bool) {
				return m.NodeRecvCommand(s, m.msgID(Cmd(1, Stopping)), true)
			}, withMsg(hb, init, Cmd(1, Stopping)), true,
			func(t State) bool { return t.Liveness == Alive && t.NetLen == 2 }},
		{"ServiceSendReport disabled in heartbeat", hb,
			func(m *Model, s *State) (State, bool) { return m.ServiceSendReport(s) }, init, false, nil},
		{"ServiceSendReport closes and reports", lc,
			func(m *Model, s *State) (State, bool) { return m.ServiceSendReport(s) }, stopping, true,
			func(t State) bool { return t.AdmissionClosed && t.netHas(lc.msgID(Report(1, 0, true))) }},
		{"NodeCrashRestart clears the broker", hb,
			func(m *Model, s *State) (State, bool) { return m.NodeCrashRestart(s) }, reg, true,
			func(t State) bool {
				return t.Epoch == 2 && t.Pc[0] == PcIdle && t.Count == 0 && t.Removed == 0b11 && t.Subscribed == 0
			}},
		{"UpgradeRestart needs the drained epoch", hb,
			func(m *Model, s *State) (State, bool) { return m.UpgradeRestart(s) }, init, false, nil},
		{"CoordSendDraining", hb,
			func(m *Model, s *State) (State, bool) { return m.CoordSendDraining(s) }, init, true,
			func(t State) bool { return t.netHas(hb.msgID(Cmd(1, Draining))) }},
		{"CoordSendStopping waits for maintainers", hb,
			func(m *Model, s *State) (State, bool) { s.CoordLiveness = Draining; return m.CoordSendStopping(s) }, init, false, nil},
		{"CoordCompleteDrain needs an accepted zero", hb,
			func(m *Model, s *State) (State, bool) {
				s.CoordLiveness, s.Work = Stopping, 0
				return m.CoordCompleteDrain(s)
			}, init, false, nil},
		{"CoordCompleteDrain TrustLivenessResponse reads none as zero", bug(TrustLivenessResponse),
			func(m *Model, s *State) (State, bool) {
				s.CoordLiveness, s.Work = Stopping, 0
				return m.CoordCompleteDrain(s)
			}, init, true, func(t State) bool { return t.DrainedEpoch == 1 }},
		{"CoordRecvHeartbeat accepts a STOPPING closed count", hb,
			func(m *Model, s *State) (State, bool) {
				return m.CoordRecvHeartbeat(s, m.msgID(Hb(1, Stopping, 0, true)), false)
			}, withMsg(hb, init, Hb(1, Stopping, 0, true)), true,
			func(t State) bool { return t.CoordLiveness == Stopping && t.CoordCount == 0 && t.NetLen == 0 }},
		{"CoordRecvHeartbeat newer epoch resets", hb,
			func(m *Model, s *State) (State, bool) {
				s.CoordLiveness, s.CoordCount = Stopping, 1
				return m.CoordRecvHeartbeat(s, m.msgID(Hb(2, Alive, 0, false)), false)
			}, withMsg(hb, init, Hb(2, Alive, 0, false)), true,
			func(t State) bool { return t.CoordEpoch == 2 && t.CoordLiveness == Alive && t.CoordCount == None }},
		{"CoordRecvResponse never sets a count", hb,
			func(m *Model, s *State) (State, bool) {
				return m.CoordRecvResponse(s, m.msgID(Resp(1, Draining)), false)
			}, withMsg(hb, init, Resp(1, Draining)), true,
			func(t State) bool { return t.CoordLiveness == Draining && t.CoordCount == None }},
		{"CoordRecvAnswer ignores unknown", lc,
			func(m *Model, s *State) (State, bool) {
				s.CoordLiveness = Stopping
				return m.CoordRecvAnswer(s, m.msgID(Ans(None, None, false)), false)
			}, withMsg(lc, init, Ans(None, None, false)), true,
			func(t State) bool { return t.CoordCount == None }},
		{"LogCoordRecvReport never regresses closed", lc,
			func(m *Model, s *State) (State, bool) {
				s.Cache = CacheEntry{1, 0, true}
				return m.LogCoordRecvReport(s, m.msgID(Report(1, 1, false)), false)
			}, withMsg(lc, init, Report(1, 1, false)), true,
			func(t State) bool { return t.Cache == CacheEntry{1, 0, true} }},
		{"LogCoordAnswer answers unknown when empty", lc,
			func(m *Model, s *State) (State, bool) { s.CoordLiveness = Stopping; return m.LogCoordAnswer(s) }, init, true,
			func(t State) bool { return t.netHas(lc.msgID(Ans(None, None, false))) }},
		{"LogCoordExpire only for a dead process", lc,
			func(m *Model, s *State) (State, bool) { s.Cache = CacheEntry{1, 0, true}; return m.LogCoordExpire(s) }, init, false, nil},
		{"NetLose", hb,
			func(m *Model, s *State) (State, bool) { return m.NetLose(s, m.msgID(Cmd(1, Draining))) },
			withMsg(hb, init, Cmd(1, Draining)), true, func(t State) bool { return t.NetLen == 0 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			from := c.from
			got, ok := c.do(c.m, &from)
			if ok != c.ok {
				t.Fatalf("enabled = %v, want %v", ok, c.ok)
			}
			if ok && !c.check(got) {
				t.Errorf("unexpected successor:\n%v", c.m.Vars(got))
			}
		})
	}
}

func TestInvariants(t *testing.T) {
	m := mustModel(t, nil)
	init := m.InitState()
	for i := range m.Invariants() {
		if !m.Holds(i, init) {
			t.Errorf("%s fails in Init", m.Invariants()[i])
		}
	}
	type tc struct {
		name string
		mod  func(s *State)
		inv  string
	}
	cases := []tc{
		{"drained while admission open", func(s *State) { s.DrainedEpoch = 1 }, "DrainSafety"},
		{"drained with a registration", func(s *State) {
			s.DrainedEpoch, s.AdmissionClosed, s.Pc[1], s.Count = 1, true, PcRegistered, 1
		}, "DrainSafety"},
		{"over-count", func(s *State) { s.Count = 1 }, "CountAccuracy"},
		{"negative count", func(s *State) { s.Count = -1 }, "CountAccuracy"},
		{"hidden in-flight", func(s *State) { s.Pc[0] = PcAdmitted }, "NoHiddenRegistration"},
		{"leaked subscription", func(s *State) { s.Subscribed = 1 }, "FailureLeavesNoTrace"},
		{"coordinator ahead", func(s *State) { s.CoordLiveness = Draining }, "NoStaleObservation"},
		{"count without STOPPING", func(s *State) { s.CoordCount = 0 }, "NoStaleObservation"},
		{"epoch out of range", func(s *State) { s.Epoch = 9 }, "TypeOK"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := init
			c.mod(&s)
			i := indexOf(m.Invariants(), c.inv)
			if m.Holds(i, s) {
				t.Errorf("%s holds, want it violated:\n%v", c.inv, m.Vars(s))
			}
		})
	}
}

func indexOf(names []string, n string) int {
	for i, x := range names {
		if x == n {
			return i
		}
	}
	panic(n)
}

func TestActionProperties(t *testing.T) {
	m := mustModel(t, nil)
	s := m.InitState()
	s.AdmissionClosed = true
	admitted := s
	admitted.Pc[0], admitted.Count = PcAdmitted, 1
	if m.ActionHolds(0, "CollectorRegister", s, admitted) {
		t.Error("NoAdmissionAfterClose holds for an admission after close")
	}
	skip := m.InitState()
	skip.Liveness = Stopping
	if m.ActionHolds(1, "NodeRecvCommand", m.InitState(), skip) {
		t.Error("MonotoneLiveness holds for ALIVE -> STOPPING")
	}
	restarted, _ := m.NodeCrashRestart(&skip)
	if !m.ActionHolds(1, "NodeCrashRestart", skip, restarted) {
		t.Error("MonotoneLiveness fails for a restart")
	}
}

func TestSetConstant(t *testing.T) {
	var c Config
	good := []struct {
		name string
		v    any
	}{
		{"d1", "d1"}, {"Dispatchers", []any{"d2", "d1"}}, {"TableTriggers", []any{"d2"}},
		{"MaxEpoch", int64(2)}, {"MaxReg", 2}, {"MaxMsgs", int64(2)},
		{"Transport", "heartbeat"}, {"Bugs", []any{}},
	}
	for _, g := range good {
		if err := c.SetConstant(g.name, g.v); err != nil {
			t.Fatalf("SetConstant(%s): %v", g.name, err)
		}
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		name string
		v    any
		want string
	}{
		{"Nodes", int64(1), "unknown constant"},
		{"MaxEpoch", "two", "must be an integer"},
		{"Transport", "carrier-pigeon", "must be"},
		{"Bugs", []any{"NoSuchBug"}, "unknown bug"},
		{"Dispatchers", int64(3), "must be a set"},
		{"d1", "d2", "model value"},
	}
	for _, b := range bad {
		err := c.SetConstant(b.name, b.v)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("SetConstant(%s, %v) = %v, want error containing %q", b.name, b.v, err, b.want)
		}
	}
	c.TableTriggers = []string{"d9"}
	if err := c.Validate(); err == nil {
		t.Error("Validate accepts TableTriggers outside Dispatchers")
	}
}

func TestEncodeAndDescribe(t *testing.T) {
	m := mustModel(t, nil)
	s := m.InitState()
	seen := map[string]State{}
	m.Next(s, func(a string, t2 State) {
		seen[string(m.Encode(nil, t2))] = t2
		if d := m.Describe(a, s, t2); !strings.HasPrefix(d, a) {
			t.Errorf("Describe(%s) = %q", a, d)
		}
	})
	for k, v := range seen {
		if string(m.Encode(nil, v)) != k {
			t.Error("Encode is not deterministic")
		}
	}
	st, _ := m.NodeSendHeartbeat(&s)
	if got := m.Describe("NodeSendHeartbeat", s, st); got != "NodeSendHeartbeat  hb{epoch:1 liveness:ALIVE count:0 closed:FALSE}" {
		t.Errorf("Describe = %q", got)
	}
	vars := m.Vars(st)
	if vars[0][0] != "epoch" || vars[len(vars)-1][0] != "net" {
		t.Errorf("Vars = %v", vars)
	}
}
