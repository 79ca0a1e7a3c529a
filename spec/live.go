package spec

// This file holds the liveness property DrainCompletes and the fairness
// of Spec (TLA+ Fairness), one instance per conjunct.

// fairness instances: per dispatcher WF BrokerSteps(d) and WF
// CollectorRemove(d), then the fixed ones below, in Fairness's order.
const (
	fairMaintainerReportProgress = iota
	fairNodeSendHeartbeat
	fairServiceSendReport
	fairCoordSendDraining
	fairCoordSendStopping
	fairLogCoordAnswer
	fairNodeTakesCommand
	fairCoordTakesHeartbeat
	fairCoordTakesResponse
	fairCoordTakesAnswer
	fairLogCoordTakesReport
	fairCoordCompleteDrain
	numFixedFair
)

var fixedFairKeys = [numFixedFair]string{
	"WF MaintainerReportProgress",
	"SF NodeSendHeartbeat",
	"SF ServiceSendReport",
	"SF CoordSendDraining",
	"SF CoordSendStopping",
	"SF LogCoordAnswer",
	"SF NodeTakesCommand",
	"SF CoordTakesHeartbeat",
	"SF CoordTakesResponse",
	"SF CoordTakesAnswer",
	"SF LogCoordTakesReport",
	"SF CoordCompleteDrain",
}

func (m *Model) buildFairKeys() []string {
	var keys []string
	for _, d := range m.cfg.Dispatchers {
		keys = append(keys, "WF BrokerSteps("+d+")")
	}
	for _, d := range m.cfg.Dispatchers {
		keys = append(keys, "WF CollectorRemove("+d+")")
	}
	return append(keys, fixedFairKeys[:]...)
}

// FairnessKeys lists the fairness instances of Spec, weak and strong.
func (m *Model) FairnessKeys() []string { return append([]string(nil), m.fairKeys...) }

// fairOf returns the fairness instance whose action the step belongs to,
// or -1. Receives are fair only when they take the message off the
// network (keep = FALSE).
func (m *Model) fairOf(st step) int {
	nd := m.nd
	fixed := func(i int) int { return 2*nd + i }
	switch st.act {
	case actBrokerSubscribe, actBrokerSubscribeRefused, actBrokerRegisterTable,
		actBrokerRegisterTableFails, actBrokerRemoveFinish:
		return int(st.d)
	case actCollectorRemove:
		return nd + int(st.d)
	case actMaintainerReportProgress:
		return fixed(fairMaintainerReportProgress)
	case actNodeSendHeartbeat:
		return fixed(fairNodeSendHeartbeat)
	case actServiceSendReport:
		return fixed(fairServiceSendReport)
	case actCoordSendDraining:
		return fixed(fairCoordSendDraining)
	case actCoordSendStopping:
		return fixed(fairCoordSendStopping)
	case actLogCoordAnswer:
		return fixed(fairLogCoordAnswer)
	case actCoordCompleteDrain:
		return fixed(fairCoordCompleteDrain)
	}
	if st.keep {
		return -1
	}
	switch st.act {
	case actNodeRecvCommand:
		return fixed(fairNodeTakesCommand)
	case actCoordRecvHeartbeat:
		return fixed(fairCoordTakesHeartbeat)
	case actCoordRecvResponse:
		return fixed(fairCoordTakesResponse)
	case actCoordRecvAnswer:
		return fixed(fairCoordTakesAnswer)
	case actLogCoordRecvReport:
		return fixed(fairLogCoordTakesReport)
	}
	return -1
}

// isStrong reports whether fairness instance i is strong (SF).
func (m *Model) isStrong(i int) bool {
	return i >= 2*m.nd && i != 2*m.nd+fairMaintainerReportProgress
}

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
// complete.
func (m *Model) DrainReported(s *State) bool { return s.DrainedEpoch != None }

// FairEnabled emits every fairness instance whose action, as TLA+'s
// ENABLED <<A>>_vars, is enabled in s (it has a successor other than s).
func (m *Model) FairEnabled(s State, emit func(key string, strong bool)) {
	var seen uint64
	m.succ(&s, func(st step, t State) {
		if i := m.fairOf(st); i >= 0 && t != s {
			seen |= 1 << i
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
	m.succ(&from, func(st step, t State) {
		if i := m.fairOf(st); i >= 0 && t == to {
			seen |= 1 << i
		}
	})
	for i, k := range m.fairKeys {
		if seen&(1<<i) != 0 {
			emit(k)
		}
	}
}
