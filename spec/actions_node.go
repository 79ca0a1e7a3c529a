package spec

// This file holds the actions of T's process that are not about one
// dispatcher: closing admission and sampling the count broker by broker,
// the liveness commands, the restarts (DrainRegistration.tla, in the
// module's order).

// --- Closing admission, step by step ---

// ServiceStartClose is TLA+ ServiceStartClose: a goroutine that finds T
// STOPPING begins to close admission.
func (m *Model) ServiceStartClose(s *State) (State, bool) {
	var t State
	return value(m.serviceStartClose(s, &t), &t)
}

// serviceStartClose is ServiceStartClose in place (see actions.go).
func (m *Model) serviceStartClose(s, t *State) bool {
	if s.Liveness != Stopping || s.Closing {
		return false
	}
	*t = *s
	t.Closing = true
	return true
}

// ServiceCloseBroker is TLA+ ServiceCloseBroker(b): the close sets broker
// b's gate bit.
func (m *Model) ServiceCloseBroker(s *State, b int) (State, bool) {
	var t State
	return value(m.serviceCloseBroker(s, &t, b), &t)
}

// serviceCloseBroker is ServiceCloseBroker in place (see actions.go).
func (m *Model) serviceCloseBroker(s, t *State, b int) bool {
	if !s.Closing || bit(s.GateClosed, b) {
		return false
	}
	*t = *s
	t.GateClosed = setBit(t.GateClosed, b, true)
	return true
}

// ServiceFinishClose is TLA+ ServiceFinishClose: the close sets the
// service's closed flag, after every broker's bit (under
// ClosedBeforeBrokers, whenever).
func (m *Model) ServiceFinishClose(s *State) (State, bool) {
	var t State
	return value(m.serviceFinishClose(s, &t), &t)
}

// serviceFinishClose is ServiceFinishClose in place (see actions.go).
func (m *Model) serviceFinishClose(s, t *State) bool {
	if !s.Closing || s.AdmissionClosed || (!m.has(ClosedBeforeBrokers) && s.GateClosed != m.allB) {
		return false
	}
	*t = *s
	t.AdmissionClosed = true
	return true
}

// --- The count report, step by step ---

// NodeStartHeartbeat is TLA+ NodeStartHeartbeat: (heartbeat transport, new
// version) T's heartbeat reads T's liveness first.
func (m *Model) NodeStartHeartbeat(s *State) (State, bool) {
	var t State
	return value(m.nodeStartHeartbeat(s, &t), &t)
}

// nodeStartHeartbeat is NodeStartHeartbeat in place (see actions.go).
func (m *Model) nodeStartHeartbeat(s, t *State) bool {
	if !m.heartbeat || s.Version != VersionNew || s.Sample.Phase != PhaseIdle {
		return false
	}
	*t = *s
	t.Sample = noSample
	t.Sample.Phase = PhaseLiveness
	t.Sample.Liveness = s.Liveness
	return true
}

// ServiceStartReport is TLA+ ServiceStartReport: Service.Sample begins;
// when T is STOPPING it waits for the close of admission, then reads the
// gate.
func (m *Model) ServiceStartReport(s *State) (State, bool) {
	var t State
	return value(m.serviceStartReport(s, &t), &t)
}

// serviceStartReport is ServiceStartReport in place (see actions.go).
func (m *Model) serviceStartReport(s, t *State) bool {
	want := PhaseIdle
	if m.heartbeat {
		want = PhaseLiveness
	}
	if s.Version != VersionNew || s.Sample.Phase != want {
		return false
	}
	if !m.has(SampleBeforeClose) && s.Liveness == Stopping && !s.AdmissionClosed {
		return false
	}
	*t = *s
	t.Sample.Phase = PhaseReading
	t.Sample.Closed = s.AdmissionClosed
	return true
}

// ServiceReadBroker is TLA+ ServiceReadBroker(b): the report reads broker
// b's count into its sum.
func (m *Model) ServiceReadBroker(s *State, b int) (State, bool) {
	var t State
	return value(m.serviceReadBroker(s, &t, b), &t)
}

// serviceReadBroker is ServiceReadBroker in place (see actions.go).
func (m *Model) serviceReadBroker(s, t *State, b int) bool {
	if s.Sample.Phase != PhaseReading || bit(s.Sample.Read, b) {
		return false
	}
	*t = *s
	t.Sample.Read = setBit(t.Sample.Read, b, true)
	t.Sample.Sum += s.Count[b]
	return true
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
	var t State
	return value(m.nodeSendHeartbeat(s, &t), &t)
}

// nodeSendHeartbeat is NodeSendHeartbeat in place (see actions.go).
func (m *Model) nodeSendHeartbeat(s, t *State) bool {
	*t = *s
	if m.heartbeat && s.Version == VersionNew {
		if !m.sampleDone(s) || !m.send(t, Hb(s.Epoch, s.Sample.Liveness, s.Sample.Sum, m.sampleClosed(s))) {
			return false
		}
		t.Sample = noSample
		return true
	}
	return m.send(t, Hb(s.Epoch, s.Liveness, None, false))
}

// ServiceSendReport is TLA+ ServiceSendReport (logcoord transport): T's
// event service sends its sampled report to the LogCoordinator.
func (m *Model) ServiceSendReport(s *State) (State, bool) {
	var t State
	return value(m.serviceSendReport(s, &t), &t)
}

// serviceSendReport is ServiceSendReport in place (see actions.go).
func (m *Model) serviceSendReport(s, t *State) bool {
	if m.heartbeat || !m.sampleDone(s) {
		return false
	}
	r := LastReport{Count: s.Sample.Sum, Closed: m.sampleClosed(s)}
	if m.has(NoReReport) && r == s.LastReport {
		return false
	}
	*t = *s
	if !m.send(t, Report(s.Epoch, r.Count, r.Closed)) {
		return false
	}
	if m.has(NoReReport) {
		t.LastReport = r
	}
	t.Sample = noSample
	return true
}

// --- The drained node T ---

// NodeRecvCommand is TLA+ NodeRecvCommand(m, keep): T receives a
// SetNodeLivenessRequest; a new-version process takes, for its own epoch,
// the one step forward it asks for; T replies with its epoch and liveness.
func (m *Model) NodeRecvCommand(s *State, id msgID, keep bool) (State, bool) {
	var t State
	return value(m.nodeRecvCommand(s, &t, id, keep), &t)
}

// nodeRecvCommand is NodeRecvCommand in place (see actions.go).
func (m *Model) nodeRecvCommand(s, t *State, id msgID, keep bool) bool {
	msg := m.msgs[id]
	if msg.Kind != KindCmd {
		return false
	}
	*t = *s
	forward := msg.Liveness == s.Liveness.Succ()
	if m.has(NodeAcceptsSkip) {
		forward = msg.Liveness != NoLiveness && msg.Liveness > s.Liveness
	}
	l := s.Liveness
	if msg.Epoch == s.Epoch && s.Version == VersionNew && forward {
		l = msg.Liveness
	}
	t.Liveness = l
	return m.reply(t, id, keep, Resp(s.Epoch, l))
}

// NodeCrashRestart is TLA+ NodeCrashRestart: T crashes and restarts as a
// process of version v.
func (m *Model) NodeCrashRestart(s *State, v Version) (State, bool) {
	var t State
	return value(m.nodeCrashRestart(s, &t, v), &t)
}

// nodeCrashRestart is NodeCrashRestart in place (see actions.go).
func (m *Model) nodeCrashRestart(s, t *State, v Version) bool {
	return m.restart(s, t, v)
}

// UpgradeRestart is TLA+ UpgradeRestart: the upgrade controller restarts
// the process that DrainNode declared drained or gave the legacy answer.
func (m *Model) UpgradeRestart(s *State, v Version) (State, bool) {
	var t State
	return value(m.upgradeRestart(s, &t, v), &t)
}

// upgradeRestart is UpgradeRestart in place (see actions.go).
func (m *Model) upgradeRestart(s, t *State, v Version) bool {
	if s.DrainedEpoch != s.Epoch && s.LegacyEpoch != s.Epoch {
		return false
	}
	return m.restart(s, t, v)
}
