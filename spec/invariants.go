package spec

// This file holds the safety invariants and action properties of
// DrainRegistration.tla, with the same names.

// The invariants Holds evaluates, by index: the eight a cfg names, then
// the named parts they are made of. An index is only ever one of these
// constants, which key both the names and the dispatch in holds.
const (
	invTypeOK = iota
	invDrainSafety
	invCountAccuracy
	invNoHiddenRegistration
	invFailureLeavesNoTrace
	invNoStaleObservation
	invStopAfterWorkMoved
	invVersionSafety
	invDrainSafetyClosed
	invDrainSafetyEmpty
	invNoTraceWhenIdle
	invNoLiveNotifierWhenUnknown
	numInvariants
)

// invariantNames are the invariants' TLA+ names, by index.
var invariantNames = [numInvariants]string{
	invTypeOK:                    "TypeOK",
	invDrainSafety:               "DrainSafety",
	invCountAccuracy:             "CountAccuracy",
	invNoHiddenRegistration:      "NoHiddenRegistration",
	invFailureLeavesNoTrace:      "FailureLeavesNoTrace",
	invNoStaleObservation:        "NoStaleObservation",
	invStopAfterWorkMoved:        "StopAfterWorkMoved",
	invVersionSafety:             "VersionSafety",
	invDrainSafetyClosed:         "DrainSafetyClosed",
	invDrainSafetyEmpty:          "DrainSafetyEmpty",
	invNoTraceWhenIdle:           "NoTraceWhenIdle",
	invNoLiveNotifierWhenUnknown: "NoLiveNotifierWhenUnknown",
}

// Invariants lists the names of the state invariants.
func (m *Model) Invariants() []string { return append([]string(nil), invariantNames[:]...) }

// Holds reports whether invariant i (an index into Invariants) holds in s.
func (m *Model) Holds(i int, s State) bool { return m.holds(i, &s) }

// holds evaluates invariant i. The direct calls of the switch keep s off
// the heap: through a table of functions the compiler cannot see that the
// invariants do not keep s, and Holds allocated a State per call (8 per
// distinct state, a tenth of the checker's time).
func (m *Model) holds(i int, s *State) bool {
	switch i {
	case invTypeOK:
		return m.TypeOK(s)
	case invDrainSafety:
		return m.DrainSafety(s)
	case invCountAccuracy:
		return m.CountAccuracy(s)
	case invNoHiddenRegistration:
		return m.NoHiddenRegistration(s)
	case invFailureLeavesNoTrace:
		return m.FailureLeavesNoTrace(s)
	case invNoStaleObservation:
		return m.NoStaleObservation(s)
	case invStopAfterWorkMoved:
		return m.StopAfterWorkMoved(s)
	case invVersionSafety:
		return m.VersionSafety(s)
	case invDrainSafetyClosed:
		return m.DrainSafetyClosed(s)
	case invDrainSafetyEmpty:
		return m.DrainSafetyEmpty(s)
	case invNoTraceWhenIdle:
		return m.NoTraceWhenIdle(s)
	case invNoLiveNotifierWhenUnknown:
		return m.NoLiveNotifierWhenUnknown(s)
	}
	panic("spec: invariant index out of range")
}

// TypeOK is TLA+ TypeOK: every variable lies in its type. Counts are
// never negative (a count below zero is a type error, as it would be for
// the unsigned word of the implementation).
func (m *Model) TypeOK(s *State) bool {
	inCounts := func(c int8) bool { return int(c) >= m.countLo && c <= m.maxReg }
	inEpochs := func(e int8) bool { return e >= 1 && e <= m.maxEpoch }
	inLiveness := func(l Liveness) bool { return l >= Alive && l <= Stopping }
	if !inEpochs(s.Epoch) || !inLiveness(s.Liveness) || (s.Version != VersionNew && s.Version != VersionLegacy) {
		return false
	}
	if s.GateClosed&^m.allB != 0 || (s.Subscribed|s.SchemaRef|s.Removed)&^m.all != 0 {
		return false
	}
	for d := 0; d < MaxDispatchers; d++ {
		if d >= m.nd {
			if s.Pc[d] != PcIdle || s.Brk[d] != NoBroker {
				return false
			}
			continue
		}
		if s.Pc[d] < PcIdle || s.Pc[d] >= numPc || s.Brk[d] < NoBroker || int(s.Brk[d]) >= m.nb {
			return false
		}
	}
	for b := 0; b < MaxBrokers; b++ {
		if (b < m.nb && (s.Count[b] < 0 || s.Count[b] > m.maxReg)) || (b >= m.nb && s.Count[b] != 0) {
			return false
		}
	}
	sm := s.Sample
	if sm.Phase < PhaseIdle || sm.Phase > PhaseReading || sm.Liveness < Alive || sm.Liveness > NoLiveness ||
		sm.Read&^m.allB != 0 || sm.Sum < 0 || sm.Sum > m.maxReg || !inCounts(s.LastReport.Count) {
		return false
	}
	if s.Registrations < 0 || s.Registrations > m.maxReg || s.Regs>>(MaxBrokers*m.nd) != 0 {
		return false
	}
	for d := 0; d < m.nd; d++ {
		for b := m.nb; b < MaxBrokers; b++ {
			if s.Regs&regBit(d, b) != 0 {
				return false
			}
		}
	}
	if !inEpochs(s.CoordEpoch) || s.CoordVersion < VersionUnknown || s.CoordVersion > VersionLegacy ||
		!inLiveness(s.CoordLiveness) || !inCounts(s.CoordCount) || s.Work < 0 || s.Work > 1 ||
		(s.DrainedEpoch != None && !inEpochs(s.DrainedEpoch)) || (s.LegacyEpoch != None && !inEpochs(s.LegacyEpoch)) {
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
// drained lives, admission is closed, at the service and at every broker.
func (m *Model) DrainSafetyClosed(s *State) bool {
	return s.DrainedEpoch != s.Epoch || (s.AdmissionClosed && s.GateClosed == m.allB)
}

// DrainSafetyEmpty is TLA+ DrainSafetyEmpty: while the process declared
// drained lives, its brokers have no registered, admitted or half-removed
// dispatcher and no store residue.
func (m *Model) DrainSafetyEmpty(s *State) bool {
	if s.DrainedEpoch != s.Epoch {
		return true
	}
	for d := 0; d < m.nd; d++ {
		if s.Pc[d] != PcIdle && s.Pc[d] != PcGated {
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
// step each broker's count is the number of dispatchers registered there.
func (m *Model) CountAccuracy(s *State) bool {
	if m.busy(s) {
		return true
	}
	var n [MaxBrokers]int8
	for d := 0; d < m.nd; d++ {
		if s.Pc[d] == PcRegistered {
			n[s.Brk[d]]++
		}
	}
	return s.Count == n
}

// NoHiddenRegistration is TLA+ NoHiddenRegistration (R2): while a
// dispatcher holds a store resource, is registered, or is admitted and
// between steps at broker b, b's count is at least 1.
func (m *Model) NoHiddenRegistration(s *State) bool {
	for d := 0; d < m.nd; d++ {
		if (s.Pc[d] != PcIdle && s.Pc[d] != PcGated) || bit(s.Subscribed, d) || bit(s.SchemaRef, d) {
			if s.Brk[d] == NoBroker || s.Count[s.Brk[d]] < 1 {
				return false
			}
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
// notifier exists only for a dispatcher subscribed and registering,
// registered, or whose old registration is being replaced.
func (m *Model) NoLiveNotifierWhenUnknown(s *State) bool {
	for d := 0; d < m.nd; d++ {
		if bit(s.Subscribed, d) && !bit(s.Removed, d) {
			switch s.Pc[d] {
			case PcSubscribed, PcRegistered, PcRegated, PcReplacing:
			default:
				return false
			}
		}
	}
	return true
}

// FailureLeavesNoTrace is TLA+ FailureLeavesNoTrace (R3/R4).
func (m *Model) FailureLeavesNoTrace(s *State) bool {
	return m.NoTraceWhenIdle(s) && m.NoLiveNotifierWhenUnknown(s)
}

// NoStaleObservation is TLA+ NoStaleObservation (D2/D8): the coordinator
// never believes more of T's current process than is true, and a count it
// holds for it was sampled with admission closed and bounds the brokers'
// total from above.
func (m *Model) NoStaleObservation(s *State) bool {
	if s.CoordEpoch != s.Epoch {
		return true
	}
	if s.CoordLiveness > s.Liveness {
		return false
	}
	return s.CoordCount == None || (s.AdmissionClosed && m.totalCount(s) <= int(s.CoordCount))
}

// StopAfterWorkMoved is TLA+ StopAfterWorkMoved (C3): T goes STOPPING only
// after the maintainers moved their work off it.
func (m *Model) StopAfterWorkMoved(s *State) bool {
	return s.Liveness != Stopping || s.CoordEpoch != s.Epoch || s.Work == 0
}

// VersionSafety is TLA+ VersionSafety (mixed versions): no drain is
// declared through a process that cannot report a count, and only a
// legacy process is given the legacy hard restart.
func (m *Model) VersionSafety(s *State) bool {
	return (s.DrainedEpoch != s.Epoch || s.Version == VersionNew) &&
		(s.LegacyEpoch != s.Epoch || s.Version == VersionLegacy)
}

// The action properties ActionHolds evaluates, by index.
const (
	propNoAdmissionAfterClose = iota
	propMonotoneLiveness
	numActionProperties
)

// actionPropertyNames are the action properties' TLA+ names, by index.
var actionPropertyNames = [numActionProperties]string{
	propNoAdmissionAfterClose: "NoAdmissionAfterClose",
	propMonotoneLiveness:      "MonotoneLiveness",
}

// ActionProperties lists the names of the action properties.
func (m *Model) ActionProperties() []string {
	return append([]string(nil), actionPropertyNames[:]...)
}

// ActionHolds reports whether action property i holds on the step
// from -> to.
func (m *Model) ActionHolds(i int, _ string, from, to State) bool {
	return m.actionHolds(i, &from, &to)
}

// FailingPtr returns the first of invariants (indexes into Invariants)
// that fails in *s, or -1 (modelcheck.PointerChecked: the checker's one
// call per new state).
func (m *Model) FailingPtr(invariants []int, s *State) int {
	for _, i := range invariants {
		if !m.holds(i, s) {
			return i
		}
	}
	return -1
}

// FailingStepPtr returns the first of props (indexes into
// ActionProperties) that the step *from -> *to breaks, or -1
// (modelcheck.PointerChecked: the checker's one call per step). A step on
// which every action property holds by its form (quietStep, most steps) is
// answered without a call per property.
func (m *Model) FailingStepPtr(props []int, _ string, from, to *State) int {
	if quietStep(from, to) {
		return -1
	}
	for _, i := range props {
		if !m.actionHolds(i, from, to) {
			return i
		}
	}
	return -1
}

// quietStep reports whether every action property holds on the step
// from -> to without evaluating them: it keeps the epoch and the
// liveness (MonotoneLivenessStep holds), and starts where no gate bit is
// set or keeps every count and program counter (NoAdmissionAfterCloseStep
// holds). It knows both properties; the array below stops the build when
// a property is added, so that the new one is added here too.
func quietStep(from, to *State) bool {
	return to.Epoch == from.Epoch && to.Liveness == from.Liveness &&
		(from.GateClosed == 0 || (to.Count == from.Count && to.Pc == from.Pc))
}

// The build fails here unless there are exactly two action properties,
// the two quietStep knows.
var _ = [1]struct{}{}[numActionProperties-2]

// actionHolds evaluates action property i; as in holds, the direct calls
// keep the states off the heap.
func (m *Model) actionHolds(i int, from, to *State) bool {
	switch i {
	case propNoAdmissionAfterClose:
		return m.NoAdmissionAfterCloseStep(from, to)
	case propMonotoneLiveness:
		return m.MonotoneLivenessStep(from, to)
	}
	panic("spec: action property index out of range")
}

// NoAdmissionAfterCloseStep is TLA+ NoAdmissionAfterCloseStep (D7/R8):
// once broker b's gate bit is set, within the process b admits no
// registration and its count never rises. NoAdmissionAfterClose is
// [][NoAdmissionAfterCloseStep]_vars.
func (m *Model) NoAdmissionAfterCloseStep(from, to *State) bool {
	if to.Epoch != from.Epoch || from.GateClosed == 0 {
		return true // a new process, or no broker's gate bit is set
	}
	for b := 0; b < m.nb; b++ {
		if !bit(from.GateClosed, b) {
			continue
		}
		if to.Count[b] > from.Count[b] {
			return false
		}
		for d := 0; d < m.nd; d++ {
			if (from.Pc[d] == PcGated || from.Pc[d] == PcRegated) && from.Brk[d] == int8(b) {
				switch to.Pc[d] {
				case PcGated, PcRegated, PcIdle, PcRegistered:
				default:
					return false
				}
			}
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
