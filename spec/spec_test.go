package spec

import (
	"slices"
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

// act is one action instance applied to a state.
type act func(m *Model, s *State) (State, bool)

// after applies the setup steps to from, failing the test if one of them
// is disabled (a row must not pass because its setup went wrong).
func after(t *testing.T, m *Model, from State, steps ...act) State {
	t.Helper()
	s := from
	for i, a := range steps {
		next, ok := a(m, &s)
		if !ok {
			t.Fatalf("setup step %d is disabled in:\n%v", i, m.Vars(s))
		}
		s = next
	}
	return s
}

func send(d, b int) act {
	return func(m *Model, s *State) (State, bool) { return m.CollectorSendRegister(s, d, b) }
}
func recvReg(d, b int) act {
	return func(m *Model, s *State) (State, bool) { return m.ServiceRecvRegister(s, d, b) }
}
func onD(f func(m *Model, s *State, d int) (State, bool), d int) act {
	return func(m *Model, s *State) (State, bool) { return f(m, s, d) }
}
func onB(f func(m *Model, s *State, b int) (State, bool), b int) act {
	return func(m *Model, s *State) (State, bool) { return f(m, s, b) }
}

// Spec: DrainRegistration.tla, one case per action and branch. Every row
// reaches its start state through enabled steps (after), so a row
// "disabled" means disabled in a state the model can be in.
func TestActions(t *testing.T) {
	hb := mustModel(t, nil)
	lc := mustModel(t, func(c *Config) { c.Transport = TransportLogCoord })
	two := mustModel(t, func(c *Config) { c.Brokers = []string{"b1", "b2"} })
	bug := func(b Bug) *Model { return mustModel(t, func(c *Config) { c.Bugs = b }) }
	bugLC := func(b Bug) *Model {
		return mustModel(t, func(c *Config) { c.Bugs, c.Transport = b, TransportLogCoord })
	}
	mixed := mustModel(t, func(c *Config) { c.Versions = []string{"new", "legacy"} })
	admit := []act{send(0, 0), recvReg(0, 0), onD((*Model).BrokerAdmit, 0)}
	subscribe := append(admit[:3:3], onD((*Model).BrokerSubscribe, 0))
	register := append(subscribe[:4:4], onD((*Model).BrokerRegisterTable, 0))
	failed := append(subscribe[:4:4], onD((*Model).BrokerRegisterTableFails, 0))
	stopping := func(m *Model) State {
		s := m.InitState()
		s.Liveness = Stopping
		return s
	}
	closed := func(m *Model) State {
		return after(t, m, stopping(m), (*Model).ServiceStartClose, onB((*Model).ServiceCloseBroker, 0), (*Model).ServiceFinishClose)
	}
	type tc struct {
		name  string
		m     *Model
		from  func(m *Model) State
		setup []act
		do    act
		ok    bool
		check func(s, t State) bool
	}
	init := func(m *Model) State { return m.InitState() }
	cases := []tc{
		{"CollectorSendRegister spends the budget", hb, init, nil, send(0, 0), true,
			func(_, t State) bool { return t.Registrations == 1 && t.Regs == regBit(0, 0) }},
		{"CollectorSendRegister needs budget", hb, init, []act{send(0, 0), send(1, 0)}, send(0, 0), false, nil},
		{"ServiceRecvRegister passes the gate check", hb, init, []act{send(0, 0)}, recvReg(0, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcGated && t.Brk[0] == 0 && t.Regs == 0 && t.Count[0] == 0 }},
		{"ServiceRecvRegister after STOPPING refuses and starts the close", hb, stopping, []act{send(0, 0)}, recvReg(0, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcIdle && t.Closing && !t.AdmissionClosed }},
		{"ServiceRecvRegister waits while the loop is busy", hb, init, append(admit[:3:3], send(1, 0)), recvReg(1, 0), false, nil},
		{"BrokerAdmit counts at once", hb, init, admit[:2], onD((*Model).BrokerAdmit, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcAdmitted && t.Count[0] == 1 && !bit(t.Removed, 0) }},
		{"BrokerAdmit publishes a table trigger", hb, init, []act{send(1, 0), recvReg(1, 0)}, onD((*Model).BrokerAdmit, 1), true,
			func(_, t State) bool { return t.Pc[1] == PcRegistered && t.Count[0] == 1 }},
		{"BrokerAdmit refused by the gate bit", hb, init,
			[]act{send(0, 0), recvReg(0, 0), func(m *Model, s *State) (State, bool) {
				t := *s // T goes STOPPING and the close sets the bit while the request waits
				t.Liveness = Stopping
				return t, true
			}, (*Model).ServiceStartClose, onB((*Model).ServiceCloseBroker, 0)},
			onD((*Model).BrokerAdmit, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcIdle && t.Brk[0] == NoBroker && t.Count[0] == 0 }},
		{"BrokerAdmit CountAfterPublish does not count", bug(CountAfterPublish), init, admit[:2], onD((*Model).BrokerAdmit, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcAdmitted && t.Count[0] == 0 }},
		{"BrokerAdmit of a re-registration replaces", hb, init, append(register[:5:5], send(0, 0), recvReg(0, 0)),
			onD((*Model).BrokerAdmit, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcReplacing && t.Count[0] == 2 }},
		{"BrokerAdmit DoubleIncrement keeps the old one", bug(DoubleIncrement), init, append(register[:5:5], send(0, 0), recvReg(0, 0)),
			onD((*Model).BrokerAdmit, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcRegistered && t.Count[0] == 2 }},
		{"BrokerReleaseOld releases and decrements", hb, init,
			append(register[:5:5], send(0, 0), recvReg(0, 0), onD((*Model).BrokerAdmit, 0)),
			onD((*Model).BrokerReleaseOld, 0), true,
			func(_, t State) bool {
				return t.Pc[0] == PcAdmitted && t.Count[0] == 1 && t.Subscribed == 0 && t.SchemaRef == 0
			}},
		{"BrokerSubscribe", hb, init, admit, onD((*Model).BrokerSubscribe, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcSubscribed && bit(t.Subscribed, 0) }},
		{"BrokerSubscribeRefused marks removed, rollback next", hb, init, admit, onD((*Model).BrokerSubscribeRefused, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcRollback && t.Count[0] == 1 && bit(t.Removed, 0) }},
		{"BrokerRegisterTable publishes", hb, init, subscribe, onD((*Model).BrokerRegisterTable, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcRegistered && bit(t.SchemaRef, 0) && t.Count[0] == 1 }},
		{"BrokerRegisterTableFails marks removed first", hb, init, subscribe, onD((*Model).BrokerRegisterTableFails, 0), true,
			func(_, t State) bool {
				return t.Pc[0] == PcFailed && bit(t.Subscribed, 0) && bit(t.Removed, 0) && t.Count[0] == 1
			}},
		{"BrokerRegisterTableFails LeakOnSchemaFailure skips mark and release", bug(LeakOnSchemaFailure), init, subscribe,
			onD((*Model).BrokerRegisterTableFails, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcRollback && bit(t.Subscribed, 0) && !bit(t.Removed, 0) }},
		{"BrokerUnsubscribe before the rollback", hb, init, failed, onD((*Model).BrokerUnsubscribe, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcRollback && t.Subscribed == 0 && t.Count[0] == 1 }},
		{"BrokerRollback waits for the release", hb, init, failed, onD((*Model).BrokerRollback, 0), false, nil},
		{"BrokerRollback last", hb, init, append(failed[:5:5], onD((*Model).BrokerUnsubscribe, 0)), onD((*Model).BrokerRollback, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcIdle && t.Count[0] == 0 && t.Brk[0] == NoBroker }},
		{"BrokerRollback RollbackBeforeUnsubscribe comes first", bug(RollbackBeforeUnsubscribe), init, failed,
			onD((*Model).BrokerRollback, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcUnsubscribe && t.Count[0] == 0 && bit(t.Subscribed, 0) }},
		{"CollectorRemove keeps the count until cleanup", hb, init, register, onD((*Model).CollectorRemove, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcRemoving && t.Count[0] == 1 && bit(t.Removed, 0) }},
		{"CollectorRemove DecrementBeforeCleanup", bug(DecrementBeforeCleanup), init, register, onD((*Model).CollectorRemove, 0), true,
			func(_, t State) bool { return t.Count[0] == 0 && bit(t.Subscribed, 0) }},
		{"BrokerRemoveFinish decrements last", hb, init, append(register[:5:5], onD((*Model).CollectorRemove, 0)),
			onD((*Model).BrokerRemoveFinish, 0), true,
			func(_, t State) bool {
				return t.Pc[0] == PcIdle && t.Count[0] == 0 && t.Subscribed == 0 && t.SchemaRef == 0
			}},
		{"BrokerInactivityCleanup disabled without the bug", hb, init, append(register[:5:5], onD((*Model).CollectorRemove, 0)),
			onD((*Model).BrokerInactivityCleanup, 0), false, nil},
		{"BrokerInactivityCleanup DoubleDecrement", bug(DoubleDecrement), init, append(register[:5:5], onD((*Model).CollectorRemove, 0)),
			onD((*Model).BrokerInactivityCleanup, 0), true,
			func(_, t State) bool { return t.Pc[0] == PcRaced && t.Count[0] == 0 }},
		{"ServiceStartClose needs STOPPING", hb, init, nil, (*Model).ServiceStartClose, false, nil},
		{"ServiceCloseBroker sets one bit", two, stopping, []act{(*Model).ServiceStartClose}, onB((*Model).ServiceCloseBroker, 1), true,
			func(_, t State) bool { return t.GateClosed == 0b10 && !t.AdmissionClosed }},
		{"ServiceFinishClose waits for every broker", two, stopping,
			[]act{(*Model).ServiceStartClose, onB((*Model).ServiceCloseBroker, 0)}, (*Model).ServiceFinishClose, false, nil},
		{"ServiceFinishClose ClosedBeforeBrokers does not wait",
			mustModel(t, func(c *Config) { c.Brokers, c.Bugs = []string{"b1", "b2"}, ClosedBeforeBrokers }), stopping,
			[]act{(*Model).ServiceStartClose}, (*Model).ServiceFinishClose, true,
			func(_, t State) bool { return t.AdmissionClosed && t.GateClosed == 0 }},
		{"NodeStartHeartbeat reads liveness", hb, init, nil, (*Model).NodeStartHeartbeat, true,
			func(_, t State) bool { return t.Sample.Phase == PhaseLiveness && t.Sample.Liveness == Alive }},
		{"ServiceStartReport waits for the close when STOPPING", hb, stopping, []act{(*Model).NodeStartHeartbeat},
			(*Model).ServiceStartReport, false, nil},
		{"ServiceStartReport SampleBeforeClose does not wait", bug(SampleBeforeClose), stopping, []act{(*Model).NodeStartHeartbeat},
			(*Model).ServiceStartReport, true, func(_, t State) bool { return t.Sample.Phase == PhaseReading }},
		{"ServiceReadBroker adds one broker", two, init,
			append(register[:5:5], (*Model).NodeStartHeartbeat, (*Model).ServiceStartReport), onB((*Model).ServiceReadBroker, 0), true,
			func(_, t State) bool { return t.Sample.Read == 0b01 && t.Sample.Sum == 1 }},
		{"NodeSendHeartbeat needs every broker read", two, init,
			[]act{(*Model).NodeStartHeartbeat, (*Model).ServiceStartReport, onB((*Model).ServiceReadBroker, 0)},
			(*Model).NodeSendHeartbeat, false, nil},
		{"NodeSendHeartbeat STOPPING carries the closed sample", hb, closed,
			[]act{(*Model).NodeStartHeartbeat, (*Model).ServiceStartReport, onB((*Model).ServiceReadBroker, 0)},
			(*Model).NodeSendHeartbeat, true,
			func(_, t State) bool { return t.netHas(hb.msgID(Hb(1, Stopping, 0, true))) && t.Sample == noSample }},
		{"NodeSendHeartbeat logcoord carries no count", lc, init, nil, (*Model).NodeSendHeartbeat, true,
			func(_, t State) bool { return t.netHas(lc.msgID(Hb(1, Alive, None, false))) }},
		{"ServiceSendReport disabled in heartbeat", hb, init,
			[]act{(*Model).NodeStartHeartbeat, (*Model).ServiceStartReport, onB((*Model).ServiceReadBroker, 0)},
			(*Model).ServiceSendReport, false, nil},
		{"ServiceSendReport reports the sample", lc, closed,
			[]act{(*Model).ServiceStartReport, onB((*Model).ServiceReadBroker, 0)}, (*Model).ServiceSendReport, true,
			func(_, t State) bool { return t.netHas(lc.msgID(Report(1, 0, true))) }},
		{"ServiceSendReport NoReReport does not repeat", bugLC(NoReReport), closed,
			[]act{(*Model).ServiceStartReport, onB((*Model).ServiceReadBroker, 0), (*Model).ServiceSendReport,
				(*Model).ServiceStartReport, onB((*Model).ServiceReadBroker, 0)},
			(*Model).ServiceSendReport, false, nil},
		{"NodeRecvCommand takes one step and replies", hb, func(m *Model) State { return withMsg(m, m.InitState(), Cmd(1, Draining)) }, nil,
			func(m *Model, s *State) (State, bool) { return m.NodeRecvCommand(s, m.msgID(Cmd(1, Draining)), false) }, true,
			func(_, t State) bool {
				return t.Liveness == Draining && t.NetLen == 1 && t.netHas(hb.msgID(Resp(1, Draining)))
			}},
		{"NodeRecvCommand refuses a skip", hb, func(m *Model) State { return withMsg(m, m.InitState(), Cmd(1, Stopping)) }, nil,
			func(m *Model, s *State) (State, bool) { return m.NodeRecvCommand(s, m.msgID(Cmd(1, Stopping)), true) }, true,
			func(_, t State) bool { return t.Liveness == Alive && t.NetLen == 2 }},
		{"NodeRecvCommand NodeAcceptsSkip takes a skip", bug(NodeAcceptsSkip),
			func(m *Model) State { return withMsg(m, m.InitState(), Cmd(1, Stopping)) }, nil,
			func(m *Model, s *State) (State, bool) { return m.NodeRecvCommand(s, m.msgID(Cmd(1, Stopping)), false) }, true,
			func(_, t State) bool { return t.Liveness == Stopping }},
		{"NodeRecvCommand legacy process takes no step", mixed,
			func(m *Model) State {
				s := withMsg(m, m.InitState(), Cmd(1, Draining))
				s.Version = VersionLegacy
				return s
			}, nil,
			func(m *Model, s *State) (State, bool) { return m.NodeRecvCommand(s, m.msgID(Cmd(1, Draining)), false) }, true,
			func(_, t State) bool { return t.Liveness == Alive }},
		{"NodeCrashRestart clears the brokers", hb, init, register,
			func(m *Model, s *State) (State, bool) { return m.NodeCrashRestart(s, VersionNew) }, true,
			func(_, t State) bool {
				return t.Epoch == 2 && t.Pc[0] == PcIdle && t.Count[0] == 0 && t.Removed == 0b11 && t.Subscribed == 0 && t.Brk[0] == NoBroker
			}},
		{"UpgradeRestart needs the drained epoch", hb, init, nil,
			func(m *Model, s *State) (State, bool) { return m.UpgradeRestart(s, VersionNew) }, false, nil},
		{"CoordLearnVersion", mixed, func(m *Model) State { s := m.InitState(); s.Version = VersionLegacy; return s }, nil,
			(*Model).CoordLearnVersion, true, func(_, t State) bool { return t.CoordVersion == VersionLegacy }},
		{"CoordSendDraining waits on an unknown version", hb, init, nil, (*Model).CoordSendDraining, false, nil},
		{"CoordSendDraining", hb, init, []act{(*Model).CoordLearnVersion}, (*Model).CoordSendDraining, true,
			func(_, t State) bool { return t.netHas(hb.msgID(Cmd(1, Draining))) }},
		{"CoordSendStopping waits for DRAINING", hb, init, []act{(*Model).CoordLearnVersion}, (*Model).CoordSendStopping, false, nil},
		{"CoordSendStopping SkipDraining sends at once", bug(SkipDraining), init, []act{(*Model).CoordLearnVersion},
			(*Model).CoordSendStopping, true, func(_, t State) bool { return t.netHas(hb.msgID(Cmd(1, Stopping))) }},
		{"CoordSendStopping once DRAINING is seen and work is 0", hb,
			func(m *Model) State {
				s := m.InitState()
				s.Liveness = Draining
				return withMsg(m, s, Resp(1, Draining))
			},
			[]act{(*Model).CoordLearnVersion,
				func(m *Model, s *State) (State, bool) {
					return m.CoordRecvResponse(s, m.msgID(Resp(1, Draining)), false)
				},
				(*Model).MaintainerReportProgress},
			(*Model).CoordSendStopping, true, func(_, t State) bool { return t.netHas(hb.msgID(Cmd(1, Stopping))) }},
		{"CoordLegacyRestart for a legacy process", mixed, func(m *Model) State { s := m.InitState(); s.Version = VersionLegacy; return s },
			[]act{(*Model).CoordLearnVersion}, (*Model).CoordLegacyRestart, true, func(_, t State) bool { return t.LegacyEpoch == 1 }},
		{"CoordLegacyRestart waits on an unknown version", mixed, init, nil, (*Model).CoordLegacyRestart, false, nil},
		{"CoordLegacyRestart LegacyOnUnknown does not wait", bug(LegacyOnUnknown), init, nil, (*Model).CoordLegacyRestart, true,
			func(_, t State) bool { return t.LegacyEpoch == 1 }},
		{"CoordCompleteDrain needs an accepted zero", hb,
			func(m *Model) State { s := m.InitState(); s.CoordLiveness, s.Work = Stopping, 0; return s }, nil,
			(*Model).CoordCompleteDrain, false, nil},
		{"CoordCompleteDrain TrustLivenessResponse reads none as zero", bug(TrustLivenessResponse),
			func(m *Model) State { s := m.InitState(); s.CoordLiveness, s.Work = Stopping, 0; return s }, nil,
			(*Model).CoordCompleteDrain, true, func(_, t State) bool { return t.DrainedEpoch == 1 }},
		{"CoordCompleteDrain on an accepted zero", hb,
			func(m *Model) State {
				s := m.InitState()
				s.CoordLiveness, s.Work, s.CoordCount = Stopping, 0, 0
				return s
			}, nil,
			(*Model).CoordCompleteDrain, true, func(_, t State) bool { return t.DrainedEpoch == 1 }},
		{"CoordRecvHeartbeat accepts a STOPPING closed count", hb, func(m *Model) State { return withMsg(m, m.InitState(), Hb(1, Stopping, 0, true)) }, nil,
			func(m *Model, s *State) (State, bool) {
				return m.CoordRecvHeartbeat(s, m.msgID(Hb(1, Stopping, 0, true)), false)
			}, true,
			func(_, t State) bool { return t.CoordLiveness == Stopping && t.CoordCount == 0 && t.NetLen == 0 }},
		{"CoordRecvHeartbeat newer epoch resets, version unknown", hb,
			func(m *Model) State {
				s := withMsg(m, m.InitState(), Hb(2, Alive, 0, false))
				s.CoordLiveness, s.CoordCount, s.CoordVersion = Stopping, 1, VersionNew
				return s
			}, nil,
			func(m *Model, s *State) (State, bool) {
				return m.CoordRecvHeartbeat(s, m.msgID(Hb(2, Alive, 0, false)), false)
			}, true,
			func(_, t State) bool {
				return t.CoordEpoch == 2 && t.CoordLiveness == Alive && t.CoordCount == None && t.CoordVersion == VersionUnknown
			}},
		{"CoordRecvResponse never sets a count", hb, func(m *Model) State { return withMsg(m, m.InitState(), Resp(1, Draining)) }, nil,
			func(m *Model, s *State) (State, bool) {
				return m.CoordRecvResponse(s, m.msgID(Resp(1, Draining)), false)
			}, true,
			func(_, t State) bool { return t.CoordLiveness == Draining && t.CoordCount == None }},
		{"CoordRecvAnswer ignores unknown", lc,
			func(m *Model) State {
				s := withMsg(m, m.InitState(), Ans(None, None, false))
				s.CoordLiveness = Stopping
				return s
			}, nil,
			func(m *Model, s *State) (State, bool) {
				return m.CoordRecvAnswer(s, m.msgID(Ans(None, None, false)), false)
			}, true,
			func(_, t State) bool { return t.CoordCount == None }},
		{"LogCoordRecvReport never regresses closed", lc,
			func(m *Model) State {
				s := withMsg(m, m.InitState(), Report(1, 1, false))
				s.Cache = CacheEntry{1, 0, true}
				return s
			}, nil,
			func(m *Model, s *State) (State, bool) {
				return m.LogCoordRecvReport(s, m.msgID(Report(1, 1, false)), false)
			}, true,
			func(_, t State) bool { return t.Cache == CacheEntry{1, 0, true} }},
		{"CoordSendQuery after STOPPING is observed", lc, func(m *Model) State { s := m.InitState(); s.CoordLiveness = Stopping; return s }, nil,
			(*Model).CoordSendQuery, true, func(_, t State) bool { return t.netHas(lc.msgID(Query)) }},
		{"CoordSendQuery waits for STOPPING", lc, init, nil, (*Model).CoordSendQuery, false, nil},
		{"CoordSendQuery stops once a zero is accepted", lc,
			func(m *Model) State { s := m.InitState(); s.CoordLiveness, s.CoordCount = Stopping, 0; return s }, nil,
			(*Model).CoordSendQuery, false, nil},
		{"CoordSendQuery not in the heartbeat transport", hb,
			func(m *Model) State { s := m.InitState(); s.CoordLiveness = Stopping; return s }, nil,
			(*Model).CoordSendQuery, false, nil},
		{"LogCoordAnswerUnknown when empty replies unknown", lc, func(m *Model) State { return withMsg(m, m.InitState(), Query) }, nil,
			func(m *Model, s *State) (State, bool) { return m.LogCoordAnswerUnknown(s, m.msgID(Query), false) }, true,
			func(_, t State) bool { return t.netHas(lc.msgID(Ans(None, None, false))) && !t.netHas(lc.msgID(Query)) }},
		{"LogCoordAnswer needs an entry", lc, func(m *Model) State { return withMsg(m, m.InitState(), Query) }, nil,
			func(m *Model, s *State) (State, bool) { return m.LogCoordAnswer(s, m.msgID(Query), false) }, false, nil},
		{"LogCoordAnswer replies with the entry, whatever the coordinator's state", lc,
			func(m *Model) State {
				s := withMsg(m, m.InitState(), Query)
				s.Cache, s.DrainedEpoch = CacheEntry{1, 0, true}, 1
				return s
			}, nil,
			func(m *Model, s *State) (State, bool) { return m.LogCoordAnswer(s, m.msgID(Query), false) }, true,
			func(_, t State) bool { return t.netHas(lc.msgID(Ans(1, 0, true))) && t.NetLen == 1 }},
		{"LogCoordExpire also expires a live entry", lc, func(m *Model) State { s := m.InitState(); s.Cache = CacheEntry{1, 0, true}; return s }, nil,
			(*Model).LogCoordExpire, true, func(_, t State) bool { return t.Cache == noReport }},
		{"NetLose", hb, func(m *Model) State { return withMsg(m, m.InitState(), Cmd(1, Draining)) }, nil,
			func(m *Model, s *State) (State, bool) { return m.NetLose(s, m.msgID(Cmd(1, Draining))) }, true,
			func(_, t State) bool { return t.NetLen == 0 }},
		{"NetLoseRegister", hb, init, []act{send(0, 0)}, onD(func(m *Model, s *State, d int) (State, bool) { return m.NetLoseRegister(s, d, 0) }, 0), true,
			func(_, t State) bool { return t.Regs == 0 && t.Registrations == 1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			from := after(t, c.m, c.from(c.m), c.setup...)
			got, ok := c.do(c.m, &from)
			if ok != c.ok {
				t.Fatalf("enabled = %v, want %v in:\n%v", ok, c.ok, c.m.Vars(from))
			}
			if ok && !c.check(from, got) {
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
		{"drained with the flag but not the bit", func(s *State) { s.DrainedEpoch, s.AdmissionClosed = 1, true }, "DrainSafety"},
		{"drained with a registration", func(s *State) {
			s.DrainedEpoch, s.AdmissionClosed, s.GateClosed, s.Pc[1], s.Brk[1], s.Count[0] = 1, true, 1, PcRegistered, 0, 1
		}, "DrainSafety"},
		{"over-count", func(s *State) { s.Count[0] = 1 }, "CountAccuracy"},
		{"negative count", func(s *State) { s.Count[0] = -1 }, "TypeOK"},
		{"hidden in-flight", func(s *State) { s.Pc[0], s.Brk[0] = PcAdmitted, 0 }, "NoHiddenRegistration"},
		{"leaked subscription", func(s *State) { s.Subscribed = 1 }, "FailureLeavesNoTrace"},
		{"coordinator ahead", func(s *State) { s.CoordLiveness = Draining }, "NoStaleObservation"},
		{"count below the total", func(s *State) {
			s.CoordLiveness, s.Liveness, s.CoordCount, s.AdmissionClosed, s.Count[0] = Stopping, Stopping, 0, true, 1
		}, "NoStaleObservation"},
		{"STOPPING with work left", func(s *State) { s.Liveness = Stopping }, "StopAfterWorkMoved"},
		{"drained a legacy process", func(s *State) {
			s.DrainedEpoch, s.AdmissionClosed, s.GateClosed, s.Version = 1, true, 1, VersionLegacy
		}, "VersionSafety"},
		{"legacy answer to a new process", func(s *State) { s.LegacyEpoch = 1 }, "VersionSafety"},
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
	s.GateClosed = 1
	s.Pc[0], s.Brk[0] = PcGated, 0
	admitted := s
	admitted.Pc[0], admitted.Count[0] = PcAdmitted, 1
	if m.ActionHolds(0, "BrokerAdmit", s, admitted) {
		t.Error("NoAdmissionAfterClose holds for an admission after the bit is set")
	}
	refused := s
	refused.Pc[0], refused.Brk[0] = PcIdle, NoBroker
	if !m.ActionHolds(0, "BrokerAdmit", s, refused) {
		t.Error("NoAdmissionAfterClose fails for a refusal")
	}
	skip := m.InitState()
	skip.Liveness = Stopping
	if m.ActionHolds(1, "NodeRecvCommand", m.InitState(), skip) {
		t.Error("MonotoneLiveness holds for ALIVE -> STOPPING")
	}
	restarted, _ := m.NodeCrashRestart(&skip, VersionNew)
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
		{"b1", "b1"}, {"Brokers", []any{"b1", "b2"}}, {"Versions", []any{"new", "legacy"}},
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
	for _, bad := range []func(c *Config){
		func(c *Config) { c.TableTriggers = []string{"d9"} },
		func(c *Config) { c.Brokers = nil },
		func(c *Config) { c.Brokers = []string{"a", "b", "c", "d", "e"} },
		func(c *Config) { c.Versions = []string{"old"} },
		func(c *Config) { c.Bugs = NoReReport },
	} {
		c2 := c
		bad(&c2)
		if err := c2.Validate(); err == nil {
			t.Errorf("Validate accepts %+v", c2)
		}
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
	s = after(t, m, s, (*Model).NodeStartHeartbeat, (*Model).ServiceStartReport, onB((*Model).ServiceReadBroker, 0))
	st, _ := m.NodeSendHeartbeat(&s)
	if got := m.Describe("NodeSendHeartbeat", s, st); got != "NodeSendHeartbeat  hb{epoch:1 liveness:ALIVE count:0 closed:FALSE}" {
		t.Errorf("Describe = %q", got)
	}
	vars := m.Vars(st)
	if vars[0][0] != "epoch" || vars[len(vars)-1][0] != "net" {
		t.Errorf("Vars = %v", vars)
	}
}

// NextInto gives Next's successors, with their actions, in Next's order,
// on the first 20,000 states of the default model, of one with the bug
// that adds an action, and of the LogCoordinator transport with both
// versions; and leaves *s as it was.
func TestNextIntoIsNext(t *testing.T) {
	for _, mod := range []func(*Config){nil, func(c *Config) { c.Bugs = DoubleDecrement | NoAdmissionGate }, func(c *Config) {
		c.Transport = TransportLogCoord
		c.Versions = []string{"new", "legacy"}
	}} {
		m := mustModel(t, mod)
		seen := map[State]bool{}
		queue := []State{m.InitState()}
		for n := 0; n < len(queue) && n < 20000; n++ {
			s := queue[n]
			type succ struct {
				a string
				t State
			}
			var want, got []succ
			m.Next(s, func(a string, t State) {
				want = append(want, succ{a, t})
				if !seen[t] {
					seen[t] = true
					queue = append(queue, t)
				}
			})
			in, next := s, State{}
			m.NextInto(&in, &next, func(a string) {
				got = append(got, succ{a, next})
				next = State{Epoch: 99} // emit may change *next
			})
			if in != s {
				t.Fatalf("NextInto changed its state")
			}
			if !slices.Equal(want, got) {
				t.Fatalf("state %d: NextInto gives %d successors, Next %d, or others", n, len(got), len(want))
			}
		}
	}
}

// FailingPtr and FailingStepPtr give the first failing invariant and
// action property that Holds and ActionHolds give, for every
// selection order, on the first 20,000 states and their steps of a model
// whose bugs break both kinds (both action properties: SkipDraining with
// NodeAcceptsSkip breaks MonotoneLiveness where no gate bit is set, which
// FailingStepPtr's shortcut must not pass).
func TestFailingIsFirstFailing(t *testing.T) {
	m := mustModel(t, func(c *Config) {
		c.Bugs = NoAdmissionGate | DecrementBeforeCleanup | IgnoreBrokerCount | SkipDraining | NodeAcceptsSkip
	})
	allInv := make([]int, len(m.Invariants()))
	for i := range allInv {
		allInv[i] = i
	}
	allProps := make([]int, len(m.ActionProperties()))
	for i := range allProps {
		allProps[i] = i
	}
	selections := func(all []int) [][]int {
		rev := slices.Clone(all)
		slices.Reverse(rev)
		return [][]int{all, rev, all[:1], nil}
	}
	first := func(sel []int, holds func(i int) bool) int {
		for _, i := range sel {
			if !holds(i) {
				return i
			}
		}
		return -1
	}
	failedInv, failedStep := 0, 0
	brokeProp := make([]bool, len(allProps))
	seen := map[State]bool{}
	queue := []State{m.InitState()}
	for n := 0; n < len(queue) && n < 20000; n++ {
		s := queue[n]
		for _, sel := range selections(allInv) {
			want := first(sel, func(i int) bool { return m.Holds(i, s) })
			if got := m.FailingPtr(sel, &s); got != want {
				t.Fatalf("FailingPtr(%v) = %d, want %d", sel, got, want)
			}
			failedInv += min(want+1, 1)
		}
		m.Next(s, func(a string, t2 State) {
			for _, sel := range selections(allProps) {
				want := first(sel, func(i int) bool { return m.ActionHolds(i, a, s, t2) })
				if got := m.FailingStepPtr(sel, a, &s, &t2); got != want {
					t.Fatalf("FailingStepPtr(%v, %s) = %d, want %d", sel, a, got, want)
				}
				failedStep += min(want+1, 1)
				if want >= 0 {
					brokeProp[want] = true
				}
			}
			if !seen[t2] {
				seen[t2] = true
				queue = append(queue, t2)
			}
		})
	}
	// Steps no action takes: each of the fields the properties read moved
	// alone, from the states above.
	moves := []func(s *State){
		func(s *State) { s.Epoch++ }, func(s *State) { s.Epoch-- },
		func(s *State) { s.Liveness++ }, func(s *State) { s.Liveness-- },
		func(s *State) { s.Count[0]++ }, func(s *State) { s.Pc[0] = PcAdmitted },
	}
	for n := 0; n < len(queue) && n < 2000; n++ {
		from := queue[n]
		for _, move := range moves {
			to := from
			move(&to)
			for _, sel := range selections(allProps) {
				want := first(sel, func(i int) bool { return m.ActionHolds(i, "", from, to) })
				if got := m.FailingStepPtr(sel, "", &from, &to); got != want {
					t.Fatalf("FailingStepPtr(%v) on %+v -> %+v = %d, want %d", sel, from, to, got, want)
				}
			}
		}
	}
	if failedInv == 0 || failedStep == 0 || slices.Contains(brokeProp, false) {
		t.Fatalf("the bugs broke %d invariant selections and %d step selections, action properties %v: the test saw too few failures",
			failedInv, failedStep, brokeProp)
	}
}
