package spec

// This file holds one method per TLA+ action of DrainRegistration.tla, in
// the module's order. Each takes the current state (never modified) and
// the action's parameters, and returns the successor and whether the
// action is enabled. Message parameters are IDs of messages in s.Net.

// busy is TLA+ Busy: the serial request loop is inside an add or remove.
func (m *Model) busy(s *State) bool {
	for d := 0; d < m.nd; d++ {
		if p := s.Pc[d]; p != PcIdle && p != PcRegistered {
			return true
		}
	}
	return false
}

// gateOpen is TLA+ GateOpen.
func (m *Model) gateOpen(s *State) bool {
	return m.has(NoAdmissionGate) || (!s.AdmissionClosed && s.Liveness != Stopping)
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

// restart is TLA+ Restart.
func (m *Model) restart(s *State) (State, bool) {
	if s.Epoch >= m.maxEpoch {
		return State{}, false
	}
	t := *s
	t.Epoch++
	t.Liveness = Alive
	t.AdmissionClosed = false
	for d := 0; d < m.nd; d++ {
		t.Pc[d] = PcIdle
	}
	t.Count = 0
	t.Subscribed = 0
	t.SchemaRef = 0
	t.Removed = m.all
	return t, true
}

// observe is TLA+ Observe(msg): it sets t's coordinator fields from s's.
func (m *Model) observe(t, s *State, msg Msg) {
	usesCount := m.heartbeat && msg.Kind == KindHb && msg.Liveness == Stopping && msg.Closed
	switch {
	case msg.Epoch > s.CoordEpoch:
		t.CoordEpoch = msg.Epoch
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

// CollectorRegister is TLA+ CollectorRegister(d): a collector sends
// REGISTER(d) and T's event service loop takes it; past the admission gate
// the broker counts d at once (early count); after STOPPING the request
// closes admission and is dropped.
func (m *Model) CollectorRegister(s *State, d int) (State, bool) {
	if m.busy(s) || s.Registrations >= m.maxReg || (s.Pc[d] != PcIdle && s.Pc[d] != PcRegistered) {
		return State{}, false
	}
	t := *s
	t.Registrations++
	switch {
	case !m.gateOpen(s):
		t.AdmissionClosed = true
	case s.Pc[d] == PcRegistered:
		if m.has(DoubleIncrement) {
			t.Count++
		}
	case m.isTT(d):
		t.Pc[d] = PcRegistered
		t.Removed = setBit(t.Removed, d, false)
		t.Count++
	default:
		t.Pc[d] = PcAdmitted
		t.Removed = setBit(t.Removed, d, false)
		if !m.has(CountAfterPublish) {
			t.Count++
		}
	}
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
// EventStore.RegisterDispatcher refuses; the count is rolled back.
func (m *Model) BrokerSubscribeRefused(s *State, d int) (State, bool) {
	if s.Pc[d] != PcAdmitted {
		return State{}, false
	}
	t := *s
	t.Pc[d] = PcIdle
	t.Removed = setBit(t.Removed, d, true)
	if !m.has(CountAfterPublish) {
		t.Count--
	}
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
		t.Count++
	}
	return t, true
}

// BrokerRegisterTableFails is TLA+ BrokerRegisterTableFails(d):
// SchemaStore.RegisterTable fails; the broker marks d removed, unregisters
// it from the event store and rolls the count back last.
func (m *Model) BrokerRegisterTableFails(s *State, d int) (State, bool) {
	if s.Pc[d] != PcSubscribed {
		return State{}, false
	}
	t := *s
	t.Pc[d] = PcIdle
	if !m.has(LeakOnSchemaFailure) {
		t.Subscribed = setBit(t.Subscribed, d, false)
		t.Removed = setBit(t.Removed, d, true)
	}
	if !m.has(CountAfterPublish) {
		t.Count--
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
	t.Removed = setBit(t.Removed, d, true)
	if m.isTT(d) {
		t.Pc[d] = PcIdle
		t.Count--
	} else {
		t.Pc[d] = PcRemoving
		if m.has(DecrementBeforeCleanup) {
			t.Count--
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
	t.Subscribed = setBit(t.Subscribed, d, false)
	t.SchemaRef = setBit(t.SchemaRef, d, false)
	if !m.has(DecrementBeforeCleanup) {
		t.Count--
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
	t.Count--
	return t, true
}

// NodeSendHeartbeat is TLA+ NodeSendHeartbeat: T sends a heartbeat; in the
// heartbeat transport its event service first closes admission if T is
// STOPPING and the heartbeat carries (count, closed).
func (m *Model) NodeSendHeartbeat(s *State) (State, bool) {
	t := *s
	if m.heartbeat {
		cl := s.AdmissionClosed || s.Liveness == Stopping
		if !m.send(&t, Hb(s.Epoch, s.Liveness, s.Count, cl)) {
			return State{}, false
		}
		t.AdmissionClosed = cl
		return t, true
	}
	if !m.send(&t, Hb(s.Epoch, s.Liveness, None, false)) {
		return State{}, false
	}
	return t, true
}

// NodeRecvCommand is TLA+ NodeRecvCommand(m, keep): T receives a
// SetNodeLivenessRequest, takes the one step forward it asks for if it is
// for T's epoch, and replies with its epoch and liveness.
func (m *Model) NodeRecvCommand(s *State, id msgID, keep bool) (State, bool) {
	msg := m.msgs[id]
	if msg.Kind != KindCmd {
		return State{}, false
	}
	t := *s
	l := s.Liveness
	if msg.Epoch == s.Epoch && msg.Liveness == s.Liveness.Succ() {
		l = msg.Liveness
	}
	t.Liveness = l
	if !m.reply(&t, id, keep, Resp(s.Epoch, l)) {
		return State{}, false
	}
	return t, true
}

// ServiceSendReport is TLA+ ServiceSendReport (logcoord transport): T's
// event service closes admission if T is STOPPING and reports (epoch,
// count, closed) to the LogCoordinator.
func (m *Model) ServiceSendReport(s *State) (State, bool) {
	if m.heartbeat {
		return State{}, false
	}
	t := *s
	cl := s.AdmissionClosed || s.Liveness == Stopping
	if !m.send(&t, Report(s.Epoch, s.Count, cl)) {
		return State{}, false
	}
	t.AdmissionClosed = cl
	return t, true
}

// NodeCrashRestart is TLA+ NodeCrashRestart: T crashes and restarts.
func (m *Model) NodeCrashRestart(s *State) (State, bool) {
	return m.restart(s)
}

// UpgradeRestart is TLA+ UpgradeRestart: the upgrade controller restarts
// the process that DrainNode declared drained.
func (m *Model) UpgradeRestart(s *State) (State, bool) {
	if s.DrainedEpoch != s.Epoch {
		return State{}, false
	}
	return m.restart(s)
}

// CoordSendDraining is TLA+ CoordSendDraining: the coordinator asks T to go
// DRAINING at the epoch it tracks.
func (m *Model) CoordSendDraining(s *State) (State, bool) {
	if s.DrainedEpoch != None || s.CoordLiveness != Alive {
		return State{}, false
	}
	t := *s
	if !m.send(&t, Cmd(s.CoordEpoch, Draining)) {
		return State{}, false
	}
	return t, true
}

// CoordSendStopping is TLA+ CoordSendStopping: the coordinator asks T to
// go STOPPING once DRAINING is observed and no maintainer work is left.
func (m *Model) CoordSendStopping(s *State) (State, bool) {
	if s.DrainedEpoch != None || s.CoordLiveness != Draining || s.Work != 0 {
		return State{}, false
	}
	t := *s
	if !m.send(&t, Cmd(s.CoordEpoch, Stopping)) {
		return State{}, false
	}
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
	if s.DrainedEpoch != None || s.CoordLiveness != Stopping || s.Work != 0 {
		return State{}, false
	}
	if !(s.CoordCount == 0 || m.has(IgnoreBrokerCount) || (m.has(TrustLivenessResponse) && s.CoordCount == None)) {
		return State{}, false
	}
	t := *s
	t.DrainedEpoch = s.CoordEpoch
	return t, true
}

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

// LogCoordAnswer is TLA+ LogCoordAnswer: the coordinator's query reaches
// the LogCoordinator, which answers with its cache (or unknown).
func (m *Model) LogCoordAnswer(s *State) (State, bool) {
	if m.heartbeat || s.DrainedEpoch != None || s.CoordLiveness != Stopping || s.CoordCount == 0 {
		return State{}, false
	}
	t := *s
	if !m.send(&t, Ans(s.Cache.Epoch, s.Cache.Count, s.Cache.Closed)) {
		return State{}, false
	}
	return t, true
}

// LogCoordExpire is TLA+ LogCoordExpire: the cached report of a process
// that no longer reports expires.
func (m *Model) LogCoordExpire(s *State) (State, bool) {
	if s.Cache.Epoch == None || s.Cache.Epoch >= s.Epoch {
		return State{}, false
	}
	t := *s
	t.Cache = noReport
	return t, true
}

// NetLose is TLA+ NetLose(m): a message in flight is lost.
func (m *Model) NetLose(s *State, id msgID) (State, bool) {
	t := *s
	t.netDel(id)
	return t, true
}
