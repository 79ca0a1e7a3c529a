package spec

import (
	"math/bits"

	"github.com/drainproof/drainproof/tla/names"
)

// This file holds the liveness property DrainCompletes and the fairness
// of Spec (TLA+ Fairness), one instance per conjunct.

// fairness lists the conjuncts of Spec's Fairness, in its order: the
// key, whether it is strong (SF), the actions whose steps satisfy it
// (receives only when they take the message off the network) and, for a
// conjunct that only some of those steps satisfy, the test of a step
// from the state from. A step may satisfy several conjuncts (a known
// answer taken satisfies two).
var fairness = []struct {
	key    string
	strong bool
	acts   []action
	only   func(m *Model, st step, from *State) bool
}{
	{"WF BrokerStepsAny", false, []action{names.BrokerAdmit, names.BrokerReleaseOld, names.BrokerSubscribe, names.BrokerSubscribeRefused,
		names.BrokerRegisterTable, names.BrokerRegisterTableFails, names.BrokerUnsubscribe, names.BrokerRollback, names.BrokerRemoveFinish}, nil},
	{"WF CollectorRemoves", false, []action{names.CollectorRemove}, nil},
	{"WF ServiceCloses", false, []action{names.ServiceStartClose, names.ServiceCloseBroker, names.ServiceFinishClose}, nil},
	{"WF CoordSteps", false, []action{names.CoordLearnVersion, names.MaintainerReportProgress}, nil},
	{"SF ReportSteps", true, []action{names.NodeStartHeartbeat, names.ServiceStartReport, names.ServiceReadBroker, names.ServiceSendReport}, nil},
	{"SF NodeSendHeartbeat", true, []action{names.NodeSendHeartbeat}, nil},
	// CoordSends: the commands, and the query only while an entry is
	// cached (TLA+ CoordSendQueryCached).
	{"SF CoordSends", true, []action{names.CoordSendDraining, names.CoordSendStopping, names.CoordSendQuery},
		func(_ *Model, st step, from *State) bool {
			return st.act != names.CoordSendQuery || from.Cache.Epoch != None
		}},
	{"SF CoordAnswersDrainNode", true, []action{names.CoordCompleteDrain, names.CoordLegacyRestart}, nil},
	{"SF LogCoordTakesQuery", true, []action{names.LogCoordAnswer, names.LogCoordAnswerUnknown}, nil},
	{"SF LogCoordTakesQueryCached", true, []action{names.LogCoordAnswer}, nil},
	{"SF NodeTakesCommand", true, []action{names.NodeRecvCommand}, nil},
	{"SF CoordTakesObservation", true, []action{names.CoordRecvHeartbeat, names.CoordRecvResponse}, nil},
	{"SF CoordTakesAnswer", true, []action{names.CoordRecvAnswer}, nil},
	{"SF CoordTakesKnownAnswer", true, []action{names.CoordRecvAnswer},
		func(m *Model, st step, _ *State) bool { return m.msgs[st.msg].Epoch != None }},
	{"SF LogCoordTakesReport", true, []action{names.LogCoordRecvReport}, nil},
}

// fairMasks maps an action to the fairness conjuncts its steps may
// satisfy; fairTested holds the conjuncts that test each step (only).
var fairMasks, fairTested = func() (all [names.NumActions]uint64, tested uint64) {
	for i, f := range fairness {
		for _, a := range f.acts {
			all[a] |= 1 << i
		}
		if f.only != nil {
			tested |= 1 << i
		}
	}
	return all, tested
}()

// isReceive reports whether a is a receive action (fair only when it
// takes the message off the network).
func isReceive(a action) bool {
	switch a {
	case names.NodeRecvCommand, names.CoordRecvHeartbeat, names.CoordRecvResponse, names.CoordRecvAnswer, names.LogCoordRecvReport,
		names.LogCoordAnswer, names.LogCoordAnswerUnknown:
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
// step from the state from satisfies.
func (m *Model) fairOf(st step, from *State) uint64 {
	if isReceive(st.act) && st.keep {
		return 0
	}
	mask := fairMasks[st.act]
	for t := mask & fairTested; t != 0; t &= t - 1 {
		i := bits.TrailingZeros64(t)
		if !fairness[i].only(m, st, from) {
			mask &^= 1 << i
		}
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
			seen |= m.fairOf(st, &s)
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
			seen |= m.fairOf(st, &from)
		}
	})
	for i, k := range m.fairKeys {
		if seen&(1<<i) != 0 {
			emit(k)
		}
	}
}
