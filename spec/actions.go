package spec

// This file holds the helpers of the actions and the actions of the
// collectors and the brokers; actions_node.go and actions_coord.go hold the
// rest. There is one method per TLA+ action of DrainRegistration.tla, in
// the module's order. Each takes the current state (never modified) and
// the action's parameters, and returns the successor and whether the
// action is enabled. Message parameters are IDs of messages in s.Net;
// dispatchers and brokers are indexes into Config.Dispatchers and
// Config.Brokers.
//
// Each action is written in place, as the unexported method of the same
// name (serviceStartClose for ServiceStartClose): it writes the successor
// into *t, which must not be s, and reports whether the action is enabled
// (*t is then undefined when it is not). The exported method returns the
// successor as a value; Next's successor generation calls the in-place
// one, which writes into the checker's memory: returning each successor
// by value cost two copies of the state per successor and the zeroed
// result of every disabled action (large model, one worker, 3 runs
// alternated: 3.48-3.59 s wall in place, 4.07-4.29 s by value).

// value is an exported action's result from its in-place form: the
// successor written into *t when ok, none when not.
func value(ok bool, t *State) (State, bool) {
	if !ok {
		return State{}, false
	}
	return *t, true
}

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

// restart is TLA+ Restart, in place, for the new process's version v (the
// caller ranges v over Versions).
func (m *Model) restart(s, t *State, v Version) bool {
	if s.Epoch >= m.maxEpoch {
		return false
	}
	*t = *s
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
	return true
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
	var t State
	return value(m.collectorSendRegister(s, &t, d, b), &t)
}

// collectorSendRegister is CollectorSendRegister in place (see actions.go).
func (m *Model) collectorSendRegister(s, t *State, d, b int) bool {
	r := regBit(d, b)
	if s.Registrations >= m.maxReg || s.Regs&r != 0 {
		return false
	}
	*t = *s
	t.Registrations++
	t.Regs |= r
	return true
}

// NetLoseRegister is TLA+ NetLoseRegister(r): a REGISTER in flight is lost.
func (m *Model) NetLoseRegister(s *State, d, b int) (State, bool) {
	var t State
	return value(m.netLoseRegister(s, &t, d, b), &t)
}

// netLoseRegister is NetLoseRegister in place (see actions.go).
func (m *Model) netLoseRegister(s, t *State, d, b int) bool {
	r := regBit(d, b)
	if s.Regs&r == 0 {
		return false
	}
	*t = *s
	t.Regs &^= r
	return true
}

// ServiceRecvRegister is TLA+ ServiceRecvRegister(r): the request loop
// takes REGISTER(d) for broker b and runs the service-level gate check.
func (m *Model) ServiceRecvRegister(s *State, d, b int) (State, bool) {
	var t State
	return value(m.serviceRecvRegister(s, &t, d, b), &t)
}

// serviceRecvRegister is ServiceRecvRegister in place (see actions.go).
func (m *Model) serviceRecvRegister(s, t *State, d, b int) bool {
	r := regBit(d, b)
	if s.Regs&r == 0 || m.busy(s) {
		return false
	}
	if s.Pc[d] != PcIdle && !(s.Pc[d] == PcRegistered && s.Brk[d] == int8(b)) {
		return false
	}
	*t = *s
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
	return true
}

// BrokerAdmit is TLA+ BrokerAdmit(d): the one compare-and-swap on the
// broker's count word (gate bit and count).
func (m *Model) BrokerAdmit(s *State, d int) (State, bool) {
	var t State
	return value(m.brokerAdmit(s, &t, d), &t)
}

// brokerAdmit is BrokerAdmit in place (see actions.go).
func (m *Model) brokerAdmit(s, t *State, d int) bool {
	if s.Pc[d] != PcGated && s.Pc[d] != PcRegated {
		return false
	}
	b := s.Brk[d]
	again := s.Pc[d] == PcRegated
	*t = *s
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
	return true
}

// BrokerReleaseOld is TLA+ BrokerReleaseOld(d): a re-registration releases
// the old registration's stores and count.
func (m *Model) BrokerReleaseOld(s *State, d int) (State, bool) {
	var t State
	return value(m.brokerReleaseOld(s, &t, d), &t)
}

// brokerReleaseOld is BrokerReleaseOld in place (see actions.go).
func (m *Model) brokerReleaseOld(s, t *State, d int) bool {
	if s.Pc[d] != PcReplacing {
		return false
	}
	*t = *s
	if m.isTT(d) {
		t.Pc[d] = PcRegistered
	} else {
		t.Pc[d] = PcAdmitted
	}
	t.Subscribed = setBit(t.Subscribed, d, false)
	t.SchemaRef = setBit(t.SchemaRef, d, false)
	t.Removed = setBit(t.Removed, d, false)
	t.Count[s.Brk[d]]--
	return true
}

// BrokerSubscribe is TLA+ BrokerSubscribe(d): EventStore.RegisterDispatcher
// succeeds.
func (m *Model) BrokerSubscribe(s *State, d int) (State, bool) {
	var t State
	return value(m.brokerSubscribe(s, &t, d), &t)
}

// brokerSubscribe is BrokerSubscribe in place (see actions.go).
func (m *Model) brokerSubscribe(s, t *State, d int) bool {
	if s.Pc[d] != PcAdmitted {
		return false
	}
	*t = *s
	t.Pc[d] = PcSubscribed
	t.Subscribed = setBit(t.Subscribed, d, true)
	return true
}

// BrokerSubscribeRefused is TLA+ BrokerSubscribeRefused(d):
// EventStore.RegisterDispatcher refuses; d is marked removed and the
// count's rollback comes next.
func (m *Model) BrokerSubscribeRefused(s *State, d int) (State, bool) {
	var t State
	return value(m.brokerSubscribeRefused(s, &t, d), &t)
}

// brokerSubscribeRefused is BrokerSubscribeRefused in place (see actions.go).
func (m *Model) brokerSubscribeRefused(s, t *State, d int) bool {
	if s.Pc[d] != PcAdmitted {
		return false
	}
	*t = *s
	t.Pc[d] = PcRollback
	t.Removed = setBit(t.Removed, d, true)
	return true
}

// BrokerRegisterTable is TLA+ BrokerRegisterTable(d):
// SchemaStore.RegisterTable succeeds and the broker publishes d.
func (m *Model) BrokerRegisterTable(s *State, d int) (State, bool) {
	var t State
	return value(m.brokerRegisterTable(s, &t, d), &t)
}

// brokerRegisterTable is BrokerRegisterTable in place (see actions.go).
func (m *Model) brokerRegisterTable(s, t *State, d int) bool {
	if s.Pc[d] != PcSubscribed {
		return false
	}
	*t = *s
	t.Pc[d] = PcRegistered
	t.SchemaRef = setBit(t.SchemaRef, d, true)
	if m.has(CountAfterPublish) {
		t.Count[s.Brk[d]]++
	}
	return true
}

// BrokerRegisterTableFails is TLA+ BrokerRegisterTableFails(d):
// SchemaStore.RegisterTable fails; d is marked removed first (under
// LeakOnSchemaFailure: no mark and no release, only the rollback).
func (m *Model) BrokerRegisterTableFails(s *State, d int) (State, bool) {
	var t State
	return value(m.brokerRegisterTableFails(s, &t, d), &t)
}

// brokerRegisterTableFails is BrokerRegisterTableFails in place (see actions.go).
func (m *Model) brokerRegisterTableFails(s, t *State, d int) bool {
	if s.Pc[d] != PcSubscribed {
		return false
	}
	*t = *s
	if m.has(LeakOnSchemaFailure) {
		t.Pc[d] = PcRollback
	} else {
		t.Pc[d] = PcFailed
		t.Removed = setBit(t.Removed, d, true)
	}
	return true
}

// BrokerUnsubscribe is TLA+ BrokerUnsubscribe(d): a failed add releases
// d's subscription (EventStore.UnregisterDispatcher).
func (m *Model) BrokerUnsubscribe(s *State, d int) (State, bool) {
	var t State
	return value(m.brokerUnsubscribe(s, &t, d), &t)
}

// brokerUnsubscribe is BrokerUnsubscribe in place (see actions.go).
func (m *Model) brokerUnsubscribe(s, t *State, d int) bool {
	p := s.Pc[d]
	if !(p == PcFailed && !m.has(RollbackBeforeUnsubscribe)) && p != PcUnsubscribe {
		return false
	}
	*t = *s
	if p == PcFailed {
		t.Pc[d] = PcRollback
	} else {
		t.Pc[d] = PcIdle
		t.Brk[d] = NoBroker
	}
	t.Subscribed = setBit(t.Subscribed, d, false)
	return true
}

// BrokerRollback is TLA+ BrokerRollback(d): a failed add rolls its early
// count back, last (under RollbackBeforeUnsubscribe, before the release).
func (m *Model) BrokerRollback(s *State, d int) (State, bool) {
	var t State
	return value(m.brokerRollback(s, &t, d), &t)
}

// brokerRollback is BrokerRollback in place (see actions.go).
func (m *Model) brokerRollback(s, t *State, d int) bool {
	p := s.Pc[d]
	if p != PcRollback && !(p == PcFailed && m.has(RollbackBeforeUnsubscribe)) {
		return false
	}
	*t = *s
	if p == PcRollback {
		t.Pc[d] = PcIdle
		t.Brk[d] = NoBroker
	} else {
		t.Pc[d] = PcUnsubscribe
	}
	if !m.has(CountAfterPublish) {
		t.Count[s.Brk[d]]--
	}
	return true
}

// CollectorRemove is TLA+ CollectorRemove(d): a collector sends REMOVE(d)
// and T's event service loop takes it; the broker marks d removed and
// deletes it (a table trigger's removal is one step).
func (m *Model) CollectorRemove(s *State, d int) (State, bool) {
	var t State
	return value(m.collectorRemove(s, &t, d), &t)
}

// collectorRemove is CollectorRemove in place (see actions.go).
func (m *Model) collectorRemove(s, t *State, d int) bool {
	if m.busy(s) || s.Pc[d] != PcRegistered {
		return false
	}
	*t = *s
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
	return true
}

// BrokerRemoveFinish is TLA+ BrokerRemoveFinish(d): the broker releases
// d's stores and then decrements.
func (m *Model) BrokerRemoveFinish(s *State, d int) (State, bool) {
	var t State
	return value(m.brokerRemoveFinish(s, &t, d), &t)
}

// brokerRemoveFinish is BrokerRemoveFinish in place (see actions.go).
func (m *Model) brokerRemoveFinish(s, t *State, d int) bool {
	if s.Pc[d] != PcRemoving && s.Pc[d] != PcRaced {
		return false
	}
	*t = *s
	t.Pc[d] = PcIdle
	t.Brk[d] = NoBroker
	t.Subscribed = setBit(t.Subscribed, d, false)
	t.SchemaRef = setBit(t.SchemaRef, d, false)
	if !m.has(DecrementBeforeCleanup) {
		t.Count[s.Brk[d]]--
	}
	return true
}

// BrokerInactivityCleanup is TLA+ BrokerInactivityCleanup(d) (enabled only
// under DoubleDecrement): the unserialised background cleanup also deletes
// d and decrements.
func (m *Model) BrokerInactivityCleanup(s *State, d int) (State, bool) {
	var t State
	return value(m.brokerInactivityCleanup(s, &t, d), &t)
}

// brokerInactivityCleanup is BrokerInactivityCleanup in place (see actions.go).
func (m *Model) brokerInactivityCleanup(s, t *State, d int) bool {
	if !m.has(DoubleDecrement) || s.Pc[d] != PcRemoving {
		return false
	}
	*t = *s
	t.Pc[d] = PcRaced
	t.Count[s.Brk[d]]--
	return true
}
