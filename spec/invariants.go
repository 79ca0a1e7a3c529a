package spec

// This file holds the safety invariants and action properties of
// DrainRegistration.tla, with the same names.

// invariantNames lists the invariants Holds evaluates, by index: the six
// of docs/protocol.md §15, then the named parts they are made of.
var invariantNames = []string{
	"TypeOK",
	"DrainSafety",
	"CountAccuracy",
	"NoHiddenRegistration",
	"FailureLeavesNoTrace",
	"NoStaleObservation",
	"DrainSafetyClosed",
	"DrainSafetyEmpty",
	"NoTraceWhenIdle",
	"NoLiveNotifierWhenUnknown",
}

// Invariants lists the names of the state invariants.
func (m *Model) Invariants() []string { return append([]string(nil), invariantNames...) }

// Holds reports whether invariant i (an index into Invariants) holds in s.
func (m *Model) Holds(i int, s State) bool {
	switch i {
	case 0:
		return m.TypeOK(&s)
	case 1:
		return m.DrainSafety(&s)
	case 2:
		return m.CountAccuracy(&s)
	case 3:
		return m.NoHiddenRegistration(&s)
	case 4:
		return m.FailureLeavesNoTrace(&s)
	case 5:
		return m.NoStaleObservation(&s)
	case 6:
		return m.DrainSafetyClosed(&s)
	case 7:
		return m.DrainSafetyEmpty(&s)
	case 8:
		return m.NoTraceWhenIdle(&s)
	case 9:
		return m.NoLiveNotifierWhenUnknown(&s)
	}
	panic("spec: invariant index out of range")
}

// TypeOK is TLA+ TypeOK: every variable lies in its type.
func (m *Model) TypeOK(s *State) bool {
	inCounts := func(c int8) bool { return int(c) >= m.countLo && c <= m.maxReg }
	inEpochs := func(e int8) bool { return e >= 1 && e <= m.maxEpoch }
	if !inEpochs(s.Epoch) || s.Liveness > Stopping || s.Liveness < Alive || !inCounts(s.Count) {
		return false
	}
	for d := 0; d < m.nd; d++ {
		if s.Pc[d] < PcIdle || s.Pc[d] > PcRaced {
			return false
		}
	}
	for d := m.nd; d < MaxDispatchers; d++ {
		if s.Pc[d] != PcIdle {
			return false
		}
	}
	if (s.Subscribed|s.SchemaRef|s.Removed)&^m.all != 0 {
		return false
	}
	if s.Registrations < 0 || s.Registrations > m.maxReg || !inEpochs(s.CoordEpoch) ||
		s.CoordLiveness > Stopping || s.CoordLiveness < Alive || !inCounts(s.CoordCount) ||
		s.Work < 0 || s.Work > 1 || (s.DrainedEpoch != None && !inEpochs(s.DrainedEpoch)) {
		return false
	}
	if (s.Cache.Epoch != None && !inEpochs(s.Cache.Epoch)) || !inCounts(s.Cache.Count) {
		return false
	}
	if int8(s.NetLen) > m.maxMsgs {
		return false
	}
	for i := 0; i < int(s.NetLen); i++ {
		if int(s.Net[i]) >= len(m.msgs) {
			return false
		}
	}
	return true
}

// DrainSafetyClosed is TLA+ DrainSafetyClosed: while the process declared
// drained lives, admission is closed.
func (m *Model) DrainSafetyClosed(s *State) bool {
	return s.DrainedEpoch != s.Epoch || s.AdmissionClosed
}

// DrainSafetyEmpty is TLA+ DrainSafetyEmpty: while the process declared
// drained lives, its broker has no registered, in-flight or half-removed
// dispatcher and no store residue.
func (m *Model) DrainSafetyEmpty(s *State) bool {
	if s.DrainedEpoch != s.Epoch {
		return true
	}
	for d := 0; d < m.nd; d++ {
		if s.Pc[d] != PcIdle {
			return false
		}
	}
	return s.Subscribed == 0 && s.SchemaRef == 0
}

// DrainSafety is TLA+ DrainSafety (D5): no premature restart.
func (m *Model) DrainSafety(s *State) bool {
	return m.DrainSafetyClosed(s) && m.DrainSafetyEmpty(s)
}

// CountAccuracy is TLA+ CountAccuracy (R1/D6): outside an add or remove
// step the count is the number of registered dispatchers; never negative.
func (m *Model) CountAccuracy(s *State) bool {
	if s.Count < 0 {
		return false
	}
	if m.busy(s) {
		return true
	}
	n := int8(0)
	for d := 0; d < m.nd; d++ {
		if s.Pc[d] == PcRegistered {
			n++
		}
	}
	return s.Count == n
}

// NoHiddenRegistration is TLA+ NoHiddenRegistration (R2): while any
// dispatcher holds a store resource, is registered or is between steps,
// the count is at least 1.
func (m *Model) NoHiddenRegistration(s *State) bool {
	if s.Count >= 1 {
		return true
	}
	if s.Subscribed != 0 || s.SchemaRef != 0 {
		return false
	}
	for d := 0; d < m.nd; d++ {
		if s.Pc[d] != PcIdle {
			return false
		}
	}
	return true
}

// NoTraceWhenIdle is TLA+ NoTraceWhenIdle (R3): an idle dispatcher has no
// subscription, no schema reference and is marked removed.
func (m *Model) NoTraceWhenIdle(s *State) bool {
	for d := 0; d < m.nd; d++ {
		if s.Pc[d] == PcIdle && (bit(s.Subscribed, d) || bit(s.SchemaRef, d) || !bit(s.Removed, d)) {
			return false
		}
	}
	return true
}

// NoLiveNotifierWhenUnknown is TLA+ NoLiveNotifierWhenUnknown (R4): a live
// notifier exists only for a dispatcher subscribed-and-registering or
// registered.
func (m *Model) NoLiveNotifierWhenUnknown(s *State) bool {
	for d := 0; d < m.nd; d++ {
		if bit(s.Subscribed, d) && !bit(s.Removed, d) && s.Pc[d] != PcSubscribed && s.Pc[d] != PcRegistered {
			return false
		}
	}
	return true
}

// FailureLeavesNoTrace is TLA+ FailureLeavesNoTrace (R3/R4).
func (m *Model) FailureLeavesNoTrace(s *State) bool {
	return m.NoTraceWhenIdle(s) && m.NoLiveNotifierWhenUnknown(s)
}

// NoStaleObservation is TLA+ NoStaleObservation (D2/D8).
func (m *Model) NoStaleObservation(s *State) bool {
	if s.CoordEpoch > s.Epoch {
		return false
	}
	if s.CoordEpoch == s.Epoch && s.CoordLiveness > s.Liveness {
		return false
	}
	if s.CoordCount != None && s.CoordLiveness != Stopping {
		return false
	}
	if s.CoordEpoch == s.Epoch && s.CoordCount != None && !(s.AdmissionClosed && s.Count <= s.CoordCount) {
		return false
	}
	return true
}

var actionPropertyNames = []string{"NoAdmissionAfterClose", "MonotoneLiveness"}

// ActionProperties lists the names of the action properties.
func (m *Model) ActionProperties() []string {
	return append([]string(nil), actionPropertyNames...)
}

// ActionHolds reports whether action property i holds on the step
// from -> to.
func (m *Model) ActionHolds(i int, _ string, from, to State) bool {
	switch i {
	case 0:
		return m.NoAdmissionAfterCloseStep(&from, &to)
	case 1:
		return m.MonotoneLivenessStep(&from, &to)
	}
	panic("spec: action property index out of range")
}

// NoAdmissionAfterCloseStep is TLA+ NoAdmissionAfterCloseStep (D7/R8):
// once admission is closed, within the process no registration is
// admitted and the count never rises. NoAdmissionAfterClose is
// [][NoAdmissionAfterCloseStep]_vars.
func (m *Model) NoAdmissionAfterCloseStep(from, to *State) bool {
	if !from.AdmissionClosed || to.Epoch != from.Epoch {
		return true
	}
	if to.Count > from.Count {
		return false
	}
	for d := 0; d < m.nd; d++ {
		if from.Pc[d] == PcIdle && to.Pc[d] != PcIdle {
			return false
		}
	}
	return true
}

// MonotoneLivenessStep is TLA+ MonotoneLivenessStep (D1): within an epoch
// liveness moves one step forward or not at all; a new epoch starts
// ALIVE. MonotoneLiveness is [][MonotoneLivenessStep]_vars.
func (m *Model) MonotoneLivenessStep(from, to *State) bool {
	if to.Epoch == from.Epoch {
		return to.Liveness == from.Liveness || to.Liveness == from.Liveness.Succ()
	}
	return to.Epoch > from.Epoch && to.Liveness == Alive
}
