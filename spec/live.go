package spec

// This file holds the liveness property DrainCompletes and the fairness
// of Spec (TLA+ Fairness), one instance per conjunct.

// fixedFair lists the fairness conjuncts of Spec that take no parameter,
// in Fairness's order, after the per-dispatcher and per-broker ones:
// their key, whether they are strong, and the action whose steps satisfy
// them (receives only when they take the message off the network).
var fixedFair = []struct {
	key    string
	strong bool
	act    action
}{
	{"WF ServiceStartClose", false, actServiceStartClose},
	{"WF ServiceFinishClose", false, actServiceFinishClose},
	{"WF MaintainerReportProgress", false, actMaintainerReportProgress},
	{"WF CoordLearnVersion", false, actCoordLearnVersion},
	{"SF NodeStartHeartbeat", true, actNodeStartHeartbeat},
	{"SF ServiceStartReport", true, actServiceStartReport},
	{"SF NodeSendHeartbeat", true, actNodeSendHeartbeat},
	{"SF ServiceSendReport", true, actServiceSendReport},
	{"SF CoordSendDraining", true, actCoordSendDraining},
	{"SF CoordSendStopping", true, actCoordSendStopping},
	{"SF CoordLegacyRestart", true, actCoordLegacyRestart},
	{"SF LogCoordAnswer", true, actLogCoordAnswer},
	{"SF NodeTakesCommand", true, actNodeRecvCommand},
	{"SF CoordTakesHeartbeat", true, actCoordRecvHeartbeat},
	{"SF CoordTakesResponse", true, actCoordRecvResponse},
	{"SF CoordTakesAnswer", true, actCoordRecvAnswer},
	{"SF CoordTakesKnownAnswer", true, actCoordRecvAnswer},
	{"SF LogCoordTakesReport", true, actLogCoordRecvReport},
	{"SF CoordCompleteDrain", true, actCoordCompleteDrain},
}

// fixedFairOf maps an action to its (first) index in fixedFair, or -1.
var fixedFairOf = func() [numActions]int {
	var idx [numActions]int
	for i := range idx {
		idx[i] = -1
	}
	for i := len(fixedFair) - 1; i >= 0; i-- {
		idx[fixedFair[i].act] = i
	}
	return idx
}()

// fairKnownAnswer is the index of "SF CoordTakesKnownAnswer" in fixedFair.
var fairKnownAnswer = func() int {
	for i, f := range fixedFair {
		if f.key == "SF CoordTakesKnownAnswer" {
			return i
		}
	}
	panic("spec: no SF CoordTakesKnownAnswer")
}()

// buildFairKeys lists the fairness instances: per dispatcher WF
// BrokerSteps(d) and WF CollectorRemove(d), per broker WF
// ServiceCloseBroker(b) and WF ServiceReadBroker(b), then fixedFair.
func (m *Model) buildFairKeys() []string {
	var keys []string
	for _, d := range m.cfg.Dispatchers {
		keys = append(keys, "WF BrokerSteps("+d+")")
	}
	for _, d := range m.cfg.Dispatchers {
		keys = append(keys, "WF CollectorRemove("+d+")")
	}
	for _, b := range m.cfg.Brokers {
		keys = append(keys, "WF ServiceCloseBroker("+b+")")
	}
	for _, b := range m.cfg.Brokers {
		keys = append(keys, "WF ServiceReadBroker("+b+")")
	}
	for _, f := range fixedFair {
		keys = append(keys, f.key)
	}
	return keys
}

// FairnessKeys lists the fairness instances of Spec, weak and strong.
func (m *Model) FairnessKeys() []string { return append([]string(nil), m.fairKeys...) }

// fairOf returns the fairness instances whose actions the step belongs
// to, as a bitmask. Receives are fair only when they take the message off
// the network (keep = FALSE); a known answer belongs to both
// CoordTakesAnswer and CoordTakesKnownAnswer.
func (m *Model) fairOf(st step) uint64 {
	i := m.fairIndex(st)
	if i < 0 {
		return 0
	}
	mask := uint64(1) << i
	if st.act == actCoordRecvAnswer && m.msgs[st.msg].Epoch != None {
		mask |= 1 << (2*m.nd + 2*m.nb + fairKnownAnswer)
	}
	return mask
}

// fairIndex returns the one fairness instance (the first, for answers)
// whose action the step belongs to, or -1.
func (m *Model) fairIndex(st step) int {
	nd, nb := m.nd, m.nb
	switch st.act {
	case actBrokerAdmit, actBrokerReleaseOld, actBrokerSubscribe, actBrokerSubscribeRefused,
		actBrokerRegisterTable, actBrokerRegisterTableFails, actBrokerUnsubscribe, actBrokerRollback,
		actBrokerRemoveFinish:
		return int(st.d)
	case actCollectorRemove:
		return nd + int(st.d)
	case actServiceCloseBroker:
		return 2*nd + int(st.b)
	case actServiceReadBroker:
		return 2*nd + nb + int(st.b)
	case actNodeRecvCommand, actCoordRecvHeartbeat, actCoordRecvResponse, actLogCoordRecvReport, actCoordRecvAnswer:
		if st.keep {
			return -1
		}
	}
	if i := fixedFairOf[st.act]; i >= 0 {
		return 2*nd + 2*nb + i
	}
	return -1
}

// isStrong reports whether fairness instance i is strong (SF).
func (m *Model) isStrong(i int) bool {
	j := i - 2*m.nd - 2*m.nb
	return j >= 0 && fixedFair[j].strong
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
// complete (or a legacy process was given the legacy hard restart).
func (m *Model) DrainReported(s *State) bool { return s.DrainedEpoch != None || s.LegacyEpoch != None }

// FairEnabled emits every fairness instance whose action, as TLA+'s
// ENABLED <<A>>_vars, is enabled in s (it has a successor other than s).
func (m *Model) FairEnabled(s State, emit func(key string, strong bool)) {
	var seen uint64
	m.succ(&s, func(st step, t State) {
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
	m.succ(&from, func(st step, t State) {
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
