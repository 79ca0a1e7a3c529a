package spec

// This file holds one method per TLA+ action of DrainRegistration.tla, in
// the module's order. Each takes the current state (never modified) and
// the action's parameters, and returns the successor and whether the
// action is enabled. Message parameters are IDs of messages in s.Net;
// dispatchers and brokers are indexes into Config.Dispatchers and
// Config.Brokers.

// busy is TLA+ Busy: the serial request loop is inside an add or remove.
func (m *Model) busy(s *State) bool {
	for d := 0; d < m.nd; d++ {
		if p := s.Pc[d]; p != PcIdle && p != PcRegistered {
			return true
		}
	}
	return false
}

// gateCheckOpen is TLA+ GateCheckOpen: the service-level gate check of a
// REGISTER lets it through to the broker.
func (m *Model) gateCheckOpen(s *State) bool {
	return m.has(NoAdmissionGate) || (!s.AdmissionClosed && s.Liveness != Stopping)
}

// brokerRefuses is TLA+ BrokerRefuses(b).
func (m *Model) brokerRefuses(s *State, b int8) bool {
	return bit(s.GateClosed, int(b)) && !m.has(NoAdmissionGate)
}

// totalCount is TLA+ TotalCount: the sum of the brokers' counts.
func (m *Model) totalCount(s *State) int {
	n := 0
	for b := 0; b < m.nb; b++ {
		n += int(s.Count[b])
	}
	return n
}

// send is TLA+ Send(msg) applied to t.
func (m *Model) send(t *State, msg Msg) bool {
	id := m.msgID(msg)
	if t.netHas(id) || int8(t.NetLen) >= m.maxMsgs {
		return false
	}
	t.netAdd(id)
	return true
}

// consume is TLA+ Consume(m, keep) applied to t.
func consume(t *State, id msgID, keep bool) {
	if !keep {
		t.netDel(id)
	}
}

// reply is TLA+ Reply(m, keep, r) applied to t.
func (m *Model) reply(t *State, id msgID, keep bool, r Msg) bool {
	consume(t, id, keep)
	rid := m.msgID(r)
	if t.netHas(rid) {
		return true
	}
	if int8(t.NetLen)+1 > m.maxMsgs {
		return false
	}
	t.netAdd(rid)
	return true
}

// restart is TLA+ Restart for the new process's version v (the caller
// ranges v over Versions).
func (m *Model) restart(s *State, v Version) (State, bool) {
	if s.Epoch >= m.maxEpoch {
		return State{}, false
	}
	t := *s
	t.Epoch++
	t.Version = v
	t.Liveness = Alive
	t.Closing = false
	t.GateClosed = 0
	t.AdmissionClosed = false
	for d := 0; d < m.nd; d++ {
		t.Pc[d] = PcIdle
		t.Brk[d] = NoBroker
	}
	t.Count = [MaxBrokers]int8{}
	t.Subscribed = 0
	t.SchemaRef = 0
	t.Removed = m.all
	t.Sample = noSample
	t.LastReport = noLastReport
	return t, true
}

// observe is TLA+ Observe(msg): it sets t's coordinator fields from s's.
// Like the TLA+, it leaves out the code's test of a heartbeat's closed
// flag, which is dead (tla/README.md, divergence log).
func (m *Model) observe(t, s *State, msg Msg) {
	usesCount := m.heartbeat && msg.Kind == KindHb && msg.Count != None && msg.Liveness == Stopping
	switch {
	case msg.Epoch > s.CoordEpoch:
		t.CoordEpoch = msg.Epoch
		t.CoordVersion = VersionUnknown
		t.CoordLiveness = msg.Liveness
		if usesCount {
			t.CoordCount = msg.Count
		} else {
			t.CoordCount = None
		}
	case msg.Epoch == s.CoordEpoch || (m.has(AcceptStaleEpoch) && msg.Epoch < s.CoordEpoch):
		t.CoordLiveness = max(s.CoordLiveness, msg.Liveness)
		if usesCount && (s.CoordCount == None || msg.Count < s.CoordCount) {
			t.CoordCount = msg.Count
		}
	}
}

// --- Collectors and T's event service (brokers) ---

// CollectorSendRegister is TLA+ CollectorSendRegister(d, b): a collector
// sends REGISTER(d) for broker b (a first registration, a retry, or a
// re-registration).
func (m *Model) CollectorSendRegister(s *State, d, b int) (State, bool) {
	r := regBit(d, b)
	if s.Registrations >= m.maxReg || s.Regs&r != 0 {
		return State{}, false
	}
	t := *s
	t.Registrations++
	t.Regs |= r
	return t, true
}

// NetLoseRegister is TLA+ NetLoseRegister(r): a REGISTER in flight is lost.
func (m *Model) NetLoseRegister(s *State, d, b int) (State, bool) {
	r := regBit(d, b)
	if s.Regs&r == 0 {
		return State{}, false
	}
	t := *s
	t.Regs &^= r
	return t, true
}

// ServiceRecvRegister is TLA+ ServiceRecvRegister(r): the request loop
// takes REGISTER(d) for broker b and runs the service-level gate check.
func (m *Model) ServiceRecvRegister(s *State, d, b int) (State, bool) {
	r := regBit(d, b)
	if s.Regs&r == 0 || m.busy(s) {
		return State{}, false
	}
	if s.Pc[d] != PcIdle && !(s.Pc[d] == PcRegistered && s.Brk[d] == int8(b)) {
		return State{}, false
	}
	t := *s
	t.Regs &^= r
	if m.gateCheckOpen(s) {
		if s.Pc[d] == PcIdle {
			t.Pc[d] = PcGated
		} else {
			t.Pc[d] = PcRegated
		}
		t.Brk[d] = int8(b)
	} else {
		t.Closing = s.Closing || s.Liveness == Stopping
	}
	return t, true
}

// BrokerAdmit is TLA+ BrokerAdmit(d): the one compare-and-swap on the
// broker's count word (gate bit and count).
func (m *Model) BrokerAdmit(s *State, d int) (State, bool) {
	if s.Pc[d] != PcGated && s.Pc[d] != PcRegated {
		return State{}, false
	}
	b := s.Brk[d]
	again := s.Pc[d] == PcRegated
	t := *s
	switch {
	case m.brokerRefuses(s, b):
		if again {
			t.Pc[d] = PcRegistered
		} else {
			t.Pc[d] = PcIdle
			t.Brk[d] = NoBroker
		}
	case again && m.has(DoubleIncrement):
		t.Pc[d] = PcRegistered
		t.Count[b]++
	default:
		switch {
		case again:
			t.Pc[d] = PcReplacing
		case m.isTT(d):
			t.Pc[d] = PcRegistered
		default:
			t.Pc[d] = PcAdmitted
		}
		if !again {
			t.Removed = setBit(t.Removed, d, false)
		}
		if !m.has(CountAfterPublish) || (m.isTT(d) && !again) {
			t.Count[b]++
		}
	}
	return t, true
}

// BrokerReleaseOld is TLA+ BrokerReleaseOld(d): a re-registration releases
// the old registration's stores and count.
func (m *Model) BrokerReleaseOld(s *State, d int) (State, bool) {
	if s.Pc[d] != PcReplacing {
		return State{}, false
	}
	t := *s
	if m.isTT(d) {
		t.Pc[d] = PcRegistered
	} else {
		t.Pc[d] = PcAdmitted
	}
	t.Subscribed = setBit(t.Subscribed, d, false)
	t.SchemaRef = setBit(t.SchemaRef, d, false)
	t.Removed = setBit(t.Removed, d, false)
	t.Count[s.Brk[d]]--
	return t, true
}

// BrokerSubscribe is TLA+ BrokerSubscribe(d): EventStore.RegisterDispatcher
// succeeds.
func (m *Model) BrokerSubscribe(s *State, d int) (State, bool) {
	if s.Pc[d] != PcAdmitted {
		return State{}, false
	}
	t := *s
	t.Pc[d] = PcSubscribed
	t.Subscribed = setBit(t.Subscribed, d, true)
	return t, true
}

// BrokerSubscribeRefused is TLA+ BrokerSubscribeRefused(d):
// EventStore.RegisterDispatcher refuses; d is marked removed and the
// count's rollback comes next.
func (m *Model) BrokerSubscribeRefused(s *State, d int) (State, bool) {
	if s.Pc[d] != PcAdmitted {
		return State{}, false
	}
	t := *s
	t.Pc[d] = PcRollback
	t.Removed = setBit(t.Removed, d, true)
	return t, true
}

// BrokerRegisterTable is TLA+ BrokerRegisterTable(d):
// SchemaStore.RegisterTable succeeds and the broker publishes d.
func (m *Model) BrokerRegisterTable(s *State, d int) (State, bool) {
	if s.Pc[d] != PcSubscribed {
		return State{}, false
	}
	t := *s
	t.Pc[d] = PcRegistered
	t.SchemaRef = setBit(t.SchemaRef, d, true)
	if m.has(CountAfterPublish) {
		t.Count[s.Brk[d]]++
	}
	return t, true
}

// BrokerRegisterTableFails is TLA+ BrokerRegisterTableFails(d):
// SchemaStore.RegisterTable fails; d is marked removed first (under
// LeakOnSchemaFailure: no mark and no release, only the rollback).
func (m *Model) BrokerRegisterTableFails(s *State, d int) (State, bool) {
	if s.Pc[d] != PcSubscribed {
		return State{}, false
	}
	t := *s
	if m.has(LeakOnSchemaFailure) {
		t.Pc[d] = PcRollback
	} else {
		t.Pc[d] = PcFailed
		t.Removed = setBit(t.Removed, d, true)
	}
	return t, true
}

// BrokerUnsubscribe is TLA+ BrokerUnsubscribe(d): a failed add releases
// d's subscription (EventStore.UnregisterDispatcher).
func (m *Model) BrokerUnsubscribe(s *State, d int) (State, bool) {
	p := s.Pc[d]
	if !(p == PcFailed && !m.has(RollbackBeforeUnsubscribe)) && p != PcUnsubscribe {
		return State{}, false
	}
	t := *s
	if p == PcFailed {
		t.Pc[d] = PcRollback
	} else {
		t.Pc[d] = PcIdle
		t.Brk[d] = NoBroker
	}
	t.Subscribed = setBit(t.Subscribed, d, false)
	return t, true
}

// BrokerRollback is TLA+ BrokerRollback(d): a failed add rolls its early
// count back, last (under RollbackBeforeUnsubscribe, before the release).
func (m *Model) BrokerRollback(s *State, d int) (State, bool) {
	p := s.Pc[d]
	if p != PcRollback && !(p == PcFailed && m.has(RollbackBeforeUnsubscribe)) {
		return State{}, false
	}
	t := *s
	if p == PcRollback {
		t.Pc[d] = PcIdle
		t.Brk[d] = NoBroker
	} else {
		t.Pc[d] = PcUnsubscribe
	}
	if !m.has(CountAfterPublish) {
		t.Count[s.Brk[d]]--
	}
	return t, true
}

// CollectorRemove is TLA+ CollectorRemove(d): a collector sends REMOVE(d)
// and T's event service loop takes it; the broker marks d removed and
// deletes it (a table trigger's removal is one step).
func (m *Model) CollectorRemove(s *State, d int) (State, bool) {
	if m.busy(s) || s.Pc[d] != PcRegistered {
		return State{}, false
	}
	t := *s
	b := s.Brk[d]
	t.Removed = setBit(t.Removed, d, true)
	if m.isTT(d) {
		t.Pc[d] = PcIdle
		t.Brk[d] = NoBroker
		t.Count[b]--
	} else {
		t.Pc[d] = PcRemoving
		if m.has(DecrementBeforeCleanup) {
			t.Count[b]--
		}
	}
	return t, true
}

// BrokerRemoveFinish is TLA+ BrokerRemoveFinish(d): the broker releases
// d's stores and then decrements.
func (m *Model) BrokerRemoveFinish(s *State, d int) (State, bool) {
	if s.Pc[d] != PcRemoving && s.Pc[d] != PcRaced {
		return State{}, false
	}
	t := *s
	t.Pc[d] = PcIdle
	t.Brk[d] = NoBroker
	t.Subscribed = setBit(t.Subscribed, d, false)
	t.SchemaRef = setBit(t.SchemaRef, d, false)
	if !m.has(DecrementBeforeCleanup) {
		t.Count[s.Brk[d]]--
	}
	return t, true
}

// BrokerInactivityCleanup is TLA+ BrokerInactivityCleanup(d) (enabled only
// under DoubleDecrement): the unserialised background cleanup also deletes
// d and decrements.
func (m *Model) BrokerInactivityCleanup(s *State, d int) (State, bool) {
	if !m.has(DoubleDecrement) || s.Pc[d] != PcRemoving {
		return State{}, false
	}
	t := *s
	t.Pc[d] = PcRaced
	t.Count[s.Brk[d]]--
	return t, true
}

// --- Closing admission, step by step ---

// ServiceStartClose is TLA+ ServiceStartClose: a goroutine that finds T
// STOPPING begins to close admission.
func (m *Model) ServiceStartClose(s *State) (State, bool) {
	if s.Liveness != Stopping || s.Closing {
		return State{}, false
	}
	t := *s
	t.Closing = true
	return t, true
}

// ServiceCloseBroker is TLA+ ServiceCloseBroker(b): the close sets broker
// b's gate bit.
func (m *Model) ServiceCloseBroker(s *State, b int) (State, bool) {
	if !s.Closing || bit(s.GateClosed, b) {
		return State{}, false
	}
	t := *s
	t.GateClosed = setBit(t.GateClosed, b, true)
	return t, true
}

// ServiceFinishClose is TLA+ ServiceFinishClose: the close sets the
// service's closed flag, after every broker's bit (under
// ClosedBeforeBrokers, whenever).
func (m *Model) ServiceFinishClose(s *State) (State, bool) {
	if !s.Closing || s.AdmissionClosed || (!m.has(ClosedBeforeBrokers) && s.GateClosed != m.allB) {
		return State{}, false
	}
	t := *s
	t.AdmissionClosed = true
	return t, true
}

// --- The count report, step by step ---

// NodeStartHeartbeat is TLA+ NodeStartHeartbeat: (heartbeat transport, new
// version) T's heartbeat reads T's liveness first.
func (m *Model) NodeStartHeartbeat(s *State) (State, bool) {
	if !m.heartbeat || s.Version != VersionNew || s.Sample.Phase != PhaseIdle {
		return State{}, false
	}
	t := *s
	t.Sample = noSample
	t.Sample.Phase = PhaseLiveness
	t.Sample.Liveness = s.Liveness
	return t, true
}

// ServiceStartReport is TLA+ ServiceStartReport: Service.Report begins;
// when T is STOPPING it waits for the close of admission, then reads the
// gate.
func (m *Model) ServiceStartReport(s *State) (State, bool) {
	want := PhaseIdle
	if m.heartbeat {
		want = PhaseLiveness
	}
	if s.Version != VersionNew || s.Sample.Phase != want {
		return State{}, false
	}
	if !m.has(SampleBeforeClose) && s.Liveness == Stopping && !s.AdmissionClosed {
		return State{}, false
	}
	t := *s
	t.Sample.Phase = PhaseReading
	t.Sample.Closed = s.AdmissionClosed
	return t, true
}

// ServiceReadBroker is TLA+ ServiceReadBroker(b): the report reads broker
// b's count into its sum.
func (m *Model) ServiceReadBroker(s *State, b int) (State, bool) {
	if s.Sample.Phase != PhaseReading || bit(s.Sample.Read, b) {
		return State{}, false
	}
	t := *s
	t.Sample.Read = setBit(t.Sample.Read, b, true)
	t.Sample.Sum += s.Count[b]
	return t, true
}

// sampleDone is TLA+ SampleDone.
func (m *Model) sampleDone(s *State) bool {
	return s.Sample.Phase == PhaseReading && s.Sample.Read == m.allB &&
		!(m.has(SampleBeforeClose) && s.Liveness == Stopping && !s.AdmissionClosed)
}

// sampleClosed is TLA+ SampleClosed.
func (m *Model) sampleClosed(s *State) bool {
	if m.has(SampleBeforeClose) {
		return s.AdmissionClosed
	}
	return s.Sample.Closed
}

// NodeSendHeartbeat is TLA+ NodeSendHeartbeat: T sends a heartbeat; in the
// heartbeat transport (new version) it carries the sampled count and gate.
func (m *Model) NodeSendHeartbeat(s *State) (State, bool) {
	t := *s
	if m.heartbeat && s.Version == VersionNew {
		if !m.sampleDone(s) || !m.send(&t, Hb(s.Epoch, s.Sample.Liveness, s.Sample.Sum, m.sampleClosed(s))) {
			return State{}, false
		}
		t.Sample = noSample
		return t, true
	}
	if !m.send(&t, Hb(s.Epoch, s.Liveness, None, false)) {
		return State{}, false
	}
	return t, true
}

// ServiceSendReport is TLA+ ServiceSendReport (logcoord transport): T's
// event service sends its sampled report to the LogCoordinator.
func (m *Model) ServiceSendReport(s *State) (State, bool) {
	if m.heartbeat || !m.sampleDone(s) {
		return State{}, false
	}
	r := LastReport{Count: s.Sample.Sum, Closed: m.sampleClosed(s)}
	if m.has(NoReReport) && r == s.LastReport {
		return State{}, false
	}
	t := *s
	if !m.send(&t, Report(s.Epoch, r.Count, r.Closed)) {
		return State{}, false
	}
	if m.has(NoReReport) {
		t.LastReport = r
	}
	t.Sample = noSample
	return t, true
}

// --- The drained node T ---

// NodeRecvCommand is TLA+ NodeRecvCommand(m, keep): T receives a
// SetNodeLivenessRequest; a new-version process takes, for its own epoch,
// the one step forward it asks for; T replies with its epoch and liveness.
func (m *Model) NodeRecvCommand(s *State, id msgID, keep bool) (State, bool) {
	msg := m.msgs[id]
	if msg.Kind != KindCmd {
		return State{}, false
	}
	t := *s
	forward := msg.Liveness == s.Liveness.Succ()
	if m.has(NodeAcceptsSkip) {
		forward = msg.Liveness != NoLiveness && msg.Liveness > s.Liveness
	}
	l := s.Liveness
	if msg.Epoch == s.Epoch && s.Version == VersionNew && forward {
		l = msg.Liveness
	}
	t.Liveness = l
	if !m.reply(&t, id, keep, Resp(s.Epoch, l)) {
		return State{}, false
	}
	return t, true
}

// NodeCrashRestart is TLA+ NodeCrashRestart: T crashes and restarts as a
// process of version v.
func (m *Model) NodeCrashRestart(s *State, v Version) (State, bool) {
	return m.restart(s, v)
}

// UpgradeRestart is TLA+ UpgradeRestart: the upgrade controller restarts
// the process that DrainNode declared drained or gave the legacy answer.
func (m *Model) UpgradeRestart(s *State, v Version) (State, bool) {
	if s.DrainedEpoch != s.Epoch && s.LegacyEpoch != s.Epoch {
		return State{}, false
	}
	return m.restart(s, v)
}

// --- The coordinator and the maintainers ---

// CoordLearnVersion is TLA+ CoordLearnVersion: the coordinator reads the
// version of the process it tracks from the membership.
func (m *Model) CoordLearnVersion(s *State) (State, bool) {
	if s.CoordVersion != VersionUnknown || s.CoordEpoch != s.Epoch {
		return State{}, false
	}
	t := *s
	t.CoordVersion = s.Version
	return t, true
}

// CoordSendDraining is TLA+ CoordSendDraining: the coordinator asks a
// new-version T to go DRAINING at the epoch it tracks.
func (m *Model) CoordSendDraining(s *State) (State, bool) {
	if s.DrainedEpoch != None || s.LegacyEpoch != None || s.CoordVersion != VersionNew || s.CoordLiveness != Alive {
		return State{}, false
	}
	t := *s
	if !m.send(&t, Cmd(s.CoordEpoch, Draining)) {
		return State{}, false
	}
	return t, true
}

// CoordSendStopping is TLA+ CoordSendStopping: the coordinator asks T to
// go STOPPING once DRAINING is observed and no maintainer work is left
// (under SkipDraining, at any time before STOPPING is observed).
func (m *Model) CoordSendStopping(s *State) (State, bool) {
	if s.DrainedEpoch != None || s.LegacyEpoch != None || s.CoordVersion != VersionNew {
		return State{}, false
	}
	if m.has(SkipDraining) {
		if s.CoordLiveness == Stopping {
			return State{}, false
		}
	} else if s.CoordLiveness != Draining || s.Work != 0 {
		return State{}, false
	}
	t := *s
	if !m.send(&t, Cmd(s.CoordEpoch, Stopping)) {
		return State{}, false
	}
	return t, true
}

// CoordLegacyRestart is TLA+ CoordLegacyRestart: the legacy hard-restart
// answer for a legacy process (under LegacyOnUnknown, also for one of
// unknown version).
func (m *Model) CoordLegacyRestart(s *State) (State, bool) {
	if s.DrainedEpoch != None || s.LegacyEpoch != None {
		return State{}, false
	}
	if s.CoordVersion != VersionLegacy && !(m.has(LegacyOnUnknown) && s.CoordVersion == VersionUnknown) {
		return State{}, false
	}
	t := *s
	t.LegacyEpoch = s.CoordEpoch
	return t, true
}

// MaintainerReportProgress is TLA+ MaintainerReportProgress: the
// maintainers move their work off T.
func (m *Model) MaintainerReportProgress(s *State) (State, bool) {
	if s.Work <= 0 || s.CoordLiveness != Draining {
		return State{}, false
	}
	t := *s
	t.Work--
	return t, true
}

// CoordRecvHeartbeat is TLA+ CoordRecvHeartbeat(m, keep): the coordinator
// observes T's heartbeat.
func (m *Model) CoordRecvHeartbeat(s *State, id msgID, keep bool) (State, bool) {
	msg := m.msgs[id]
	if msg.Kind != KindHb {
		return State{}, false
	}
	t := *s
	consume(&t, id, keep)
	m.observe(&t, s, msg)
	return t, true
}

// CoordRecvResponse is TLA+ CoordRecvResponse(m, keep): the coordinator
// observes T's SetNodeLivenessResponse (liveness only).
func (m *Model) CoordRecvResponse(s *State, id msgID, keep bool) (State, bool) {
	msg := m.msgs[id]
	if msg.Kind != KindResp {
		return State{}, false
	}
	t := *s
	consume(&t, id, keep)
	m.observe(&t, s, msg)
	return t, true
}

// CoordRecvAnswer is TLA+ CoordRecvAnswer(m, keep): the coordinator takes
// the LogCoordinator's answer; it accepts a known, closed report of the
// epoch it tracks, after STOPPING, if it lowers the accepted count.
func (m *Model) CoordRecvAnswer(s *State, id msgID, keep bool) (State, bool) {
	msg := m.msgs[id]
	if msg.Kind != KindAns {
		return State{}, false
	}
	t := *s
	consume(&t, id, keep)
	switch {
	case msg.Epoch != None && msg.Closed && s.CoordLiveness == Stopping &&
		(msg.Epoch == s.CoordEpoch || (m.has(AcceptStaleEpoch) && msg.Epoch < s.CoordEpoch)) &&
		(s.CoordCount == None || msg.Count < s.CoordCount):
		t.CoordCount = msg.Count
	case m.has(UnknownErasesCount) && msg.Epoch == None && s.CoordLiveness == Stopping:
		t.CoordCount = 0
	}
	return t, true
}

// CoordCompleteDrain is TLA+ CoordCompleteDrain: DrainNode returns 0.
func (m *Model) CoordCompleteDrain(s *State) (State, bool) {
	if s.DrainedEpoch != None || s.LegacyEpoch != None || s.CoordLiveness != Stopping || s.Work != 0 {
		return State{}, false
	}
	if !(s.CoordCount == 0 || m.has(IgnoreBrokerCount) || (m.has(TrustLivenessResponse) && s.CoordCount == None)) {
		return State{}, false
	}
	t := *s
	t.DrainedEpoch = s.CoordEpoch
	return t, true
}

// --- The LogCoordinator ---

// LogCoordRecvReport is TLA+ LogCoordRecvReport(m, keep): the
// LogCoordinator caches T's report, monotonically within an epoch.
func (m *Model) LogCoordRecvReport(s *State, id msgID, keep bool) (State, bool) {
	msg := m.msgs[id]
	if msg.Kind != KindReport {
		return State{}, false
	}
	t := *s
	consume(&t, id, keep)
	c := s.Cache
	if c.Epoch == None || msg.Epoch > c.Epoch ||
		(msg.Epoch == c.Epoch && (!c.Closed || (msg.Closed && msg.Count < c.Count))) {
		t.Cache = CacheEntry{Epoch: msg.Epoch, Count: msg.Count, Closed: msg.Closed}
	}
	return t, true
}

// logCoordQueries is the common guard of the two answers: the coordinator
// queries after STOPPING is observed, until a zero is accepted.
func (m *Model) logCoordQueries(s *State) bool {
	return !m.heartbeat && s.DrainedEpoch == None && s.CoordLiveness == Stopping && s.CoordCount != 0
}

// LogCoordAnswer is TLA+ LogCoordAnswer: the query reaches the
// LogCoordinator while it has an entry for T: it answers with it.
func (m *Model) LogCoordAnswer(s *State) (State, bool) {
	if !m.logCoordQueries(s) || s.Cache.Epoch == None {
		return State{}, false
	}
	t := *s
	if !m.send(&t, Ans(s.Cache.Epoch, s.Cache.Count, s.Cache.Closed)) {
		return State{}, false
	}
	return t, true
}

// LogCoordAnswerUnknown is TLA+ LogCoordAnswerUnknown: the same query
// while nothing is cached: the answer is unknown.
func (m *Model) LogCoordAnswerUnknown(s *State) (State, bool) {
	if !m.logCoordQueries(s) || s.Cache.Epoch != None {
		return State{}, false
	}
	t := *s
	if !m.send(&t, Ans(None, None, false)) {
		return State{}, false
	}
	return t, true
}

// LogCoordExpire is TLA+ LogCoordExpire: the cached entry's TTL runs out
// (a restarted process's, or a live one's whose refresh is late).
func (m *Model) LogCoordExpire(s *State) (State, bool) {
	if s.Cache.Epoch == None {
		return State{}, false
	}
	t := *s
	t.Cache = noReport
	return t, true
}

// --- The network ---

// NetLose is TLA+ NetLose(m): a message in flight is lost.
func (m *Model) NetLose(s *State, id msgID) (State, bool) {
	t := *s
	t.netDel(id)
	return t, true
}
