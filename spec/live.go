package spec

import "github.com/drainproof/drainproof/tla/names"

// This file holds the liveness property DrainCompletes and the fairness
// of Spec (TLA+ Fairness), one instance per conjunct.

// fairness lists the conjuncts of Spec's Fairness, in its order: the
// key, whether it is strong (SF), and the actions whose steps satisfy it
// (receives only when they take the message off the network; the last
// conjunct only for known answers). A step may satisfy several
// conjuncts (a known answer taken satisfies two).
var fairness = []struct {
	key       string
	strong    bool
	acts      []action
	knownOnly bool
}{
	{"WF BrokerStepsAny", false, []action{names.BrokerAdmit, names.BrokerReleaseOld, names.BrokerSubscribe, names.BrokerSubscribeRefused,
		names.BrokerRegisterTable, names.BrokerRegisterTableFails, names.BrokerUnsubscribe, names.BrokerRollback, names.BrokerRemoveFinish}, false},
	{"WF CollectorRemoves", false, []action{names.CollectorRemove}, false},
	{"WF ServiceCloses", false, []action{names.ServiceStartClose, names.ServiceCloseBroker, names.ServiceFinishClose}, false},
	{"WF CoordSteps", false, []action{names.CoordLearnVersion, names.MaintainerReportProgress}, false},
	{"SF ReportSteps", true, []action{names.NodeStartHeartbeat, names.ServiceStartReport, names.ServiceReadBroker, names.ServiceSendReport}, false},
	{"SF NodeSendHeartbeat", true, []action{names.NodeSendHeartbeat}, false},
	{"SF CoordSendsCommand", true, []action{names.CoordSendDraining, names.CoordSendStopping}, false},
	{"SF CoordAnswersDrainNode", true, []action{names.CoordCompleteDrain, names.CoordLegacyRestart}, false},
	{"SF LogCoordAnswer", true, []action{names.LogCoordAnswer}, false},
	{"SF NodeTakesCommand", true, []action{names.NodeRecvCommand}, false},
	{"SF CoordTakesObservation", true, []action{names.CoordRecvHeartbeat, names.CoordRecvResponse}, false},
	{"SF CoordTakesAnswer", true, []action{names.CoordRecvAnswer}, false},
	{"SF CoordTakesKnownAnswer", true, []action{names.CoordRecvAnswer}, true},
	{"SF LogCoordTakesReport", true, []action{names.LogCoordRecvReport}, false},
}

// fairMasks maps an action to the fairness conjuncts its steps satisfy:
// all, and those that only a known answer satisfies.
var fairMasks, fairKnownMasks = func() (all, known [names.NumActions]uint64) {
	for i, f := range fairness {
		for _, a := range f.acts {
			if f.knownOnly {
				known[a] |= 1 << i
			} else {
				all[a] |= 1 << i
			}
		}
	}
	return all, known
}()

// isReceive reports whether a is a receive action (fair only when it
// takes the message off the network).
func isReceive(a action) bool {
	switch a {
	case names.NodeRecvCommand, names.CoordRecvHeartbeat, names.CoordRecvResponse, names.CoordRecvAnswer, names.LogCoordRecvReport:
		return true
	}
	return false
}

func (m *Model) buildFairKeys() []string {
	keys := make([]string, len(fairness))
	for i, f := range fairness {
		keys[i] = f.key
	}
	return keys
}

// FairnessKeys lists the fairness conjuncts of Spec, weak and strong.
func (m *Model) FairnessKeys() []string { return append([]string(nil), m.fairKeys...) }

// fairOf returns, as a bitmask, the fairness conjuncts whose actions the
// step satisfies.
func (m *Model) fairOf(st step) uint64 {
	if isReceive(st.act) && st.keep {
		return 0
	}
	mask := fairMasks[st.act]
	if st.act == names.CoordRecvAnswer && m.msgs[st.msg].Epoch != None {
		mask |= fairKnownMasks[st.act]
	}
	return mask
}

// isStrong reports whether fairness conjunct i is strong (SF).
func (m *Model) isStrong(i int) bool { return fairness[i].strong }

// LivenessProperties lists the liveness properties: DrainCompletes.
func (m *Model) LivenessProperties() []string { return []string{"DrainCompletes"} }

// LeadsTo evaluates DrainCompletes == TRUE ~> DrainReported in s.
func (m *Model) LeadsTo(i int, s State) (p, q bool) {
	if i != 0 {
		panic("spec: liveness property index out of range")
	}
	return true, m.DrainReported(&s)
}

// DrainReported is TLA+ DrainReported: the drain has been reported
// complete (or a legacy process was given the legacy hard restart).
func (m *Model) DrainReported(s *State) bool { return s.DrainedEpoch != None || s.LegacyEpoch != None }

// FairEnabled emits every fairness instance whose action, as TLA+'s
// ENABLED <<A>>_vars, is enabled in s (it has a successor other than s).
func (m *Model) FairEnabled(s State, emit func(key string, strong bool)) {
	var seen uint64
	var t State
	m.succ(&s, &t, func(st step) {
		if t != s {
			seen |= m.fairOf(st)
		}
	})
	for i, k := range m.fairKeys {
		if seen&(1<<i) != 0 {
			emit(k, m.isStrong(i))
		}
	}
}

// FairTaken emits every fairness instance whose action the step from -> to
// satisfies as <<A>>_vars. It judges the step, not the label: a step that
// two actions can both produce takes both.
func (m *Model) FairTaken(_ string, from, to State, emit func(key string)) {
	if from == to {
		return
	}
	var seen uint64
	var t State
	m.succ(&from, &t, func(st step) {
		if t == to {
			seen |= m.fairOf(st)
		}
	})
	for i, k := range m.fairKeys {
		if seen&(1<<i) != 0 {
			emit(k)
		}
	}
}
