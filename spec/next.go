package spec

import (
	"fmt"
	"github.com/drainproof/drainproof/tla/names"
	"strings"
)

// action numbers the TLA+ actions in the order of Next's disjuncts: the
// model's names (package names) are the transcription's.
type action = names.Action

// ActionNames lists the names of the TLA+ actions, in Next's order.
func ActionNames() []string {
	out := make([]string, names.NumActions)
	for i := range out {
		out[i] = action(i).String()
	}
	return out
}

// ActionNames lists the names of the TLA+ actions, in Next's order (for
// reports that list every action, such as check --coverage).
func (m *Model) ActionNames() []string { return ActionNames() }

// step names one instance of an action: the action and its arguments.
type step struct {
	act  action
	d    int8    // dispatcher index, for dispatcher and REGISTER actions
	b    int8    // broker index, for broker and REGISTER actions
	v    Version // the new process's version, for restarts
	msg  msgID   // message, for receive and loss actions
	keep bool    // receive keeps the message (duplication)
}

// brokerSteps emits the disjuncts of TLA+ BrokerSteps(d), in its order.
// The calls are direct, not through a table of functions: through a table
// the compiler cannot see that the actions do not keep s, and every Next
// then allocated its state on the heap.
func (m *Model) brokerSteps(s *State, d int, next *State, f func(st step)) {
	emit := func(a action, ok bool) {
		if ok {
			f(step{act: a, d: int8(d)})
		}
	}
	emit(names.BrokerAdmit, m.brokerAdmit(s, next, d))
	emit(names.BrokerReleaseOld, m.brokerReleaseOld(s, next, d))
	emit(names.BrokerSubscribe, m.brokerSubscribe(s, next, d))
	emit(names.BrokerSubscribeRefused, m.brokerSubscribeRefused(s, next, d))
	emit(names.BrokerRegisterTable, m.brokerRegisterTable(s, next, d))
	emit(names.BrokerRegisterTableFails, m.brokerRegisterTableFails(s, next, d))
	emit(names.BrokerUnsubscribe, m.brokerUnsubscribe(s, next, d))
	emit(names.BrokerRollback, m.brokerRollback(s, next, d))
	emit(names.BrokerRemoveFinish, m.brokerRemoveFinish(s, next, d))
}

// succ calls f for every successor of s, in the order TLC generates them
// (Next's disjuncts in order; within a disjunct, dispatchers, brokers and
// versions in order, messages in ID order, keep = FALSE before TRUE), so
// that a search stopped at a violation has explored what TLC's has. Every
// enabled instance is emitted, self-loops and repeated successors
// included, as TLC generates them. The actions are called directly, as in
// brokerSteps: through closures over the action methods, each of the 14
// single actions cost an indirect call per state (large model, one worker:
// 6.22-6.31 s of user CPU then, 5.99-6.12 s now, alternated three
// times).
func (m *Model) succ(s *State, next *State, f func(st step)) {
	m.succCollectorsBrokers(s, next, f)
	m.succServiceNode(s, next, f)
	m.succCoord(s, next, f)
}

// succCollectorsBrokers emits the successors of Next's disjuncts from
// CollectorSendRegister to BrokerInactivityCleanup.
func (m *Model) succCollectorsBrokers(s *State, next *State, f func(st step)) {
	for d := 0; d < m.nd; d++ {
		for b := 0; b < m.nb; b++ {
			if m.collectorSendRegister(s, next, d, b) {
				f(step{act: names.CollectorSendRegister, d: int8(d), b: int8(b)})
			}
		}
	}
	if s.Regs != 0 {
		for d := 0; d < m.nd; d++ {
			for b := 0; b < m.nb; b++ {
				if m.serviceRecvRegister(s, next, d, b) {
					f(step{act: names.ServiceRecvRegister, d: int8(d), b: int8(b)})
				}
			}
		}
		for d := 0; d < m.nd; d++ {
			for b := 0; b < m.nb; b++ {
				if m.netLoseRegister(s, next, d, b) {
					f(step{act: names.NetLoseRegister, d: int8(d), b: int8(b)})
				}
			}
		}
	}
	for d := 0; d < m.nd; d++ {
		if m.collectorRemove(s, next, d) {
			f(step{act: names.CollectorRemove, d: int8(d)})
		}
	}
	for d := 0; d < m.nd; d++ { // BrokerStepsAny
		if s.Pc[d] == PcIdle || s.Pc[d] == PcRegistered {
			continue // no broker step is enabled for d
		}
		m.brokerSteps(s, d, next, f)
	}
	if m.has(DoubleDecrement) {
		for d := 0; d < m.nd; d++ {
			if m.brokerInactivityCleanup(s, next, d) {
				f(step{act: names.BrokerInactivityCleanup, d: int8(d)})
			}
		}
	}
}

// succServiceNode emits the successors of Next's disjuncts from
// ServiceStartClose to UpgradeRestart.
func (m *Model) succServiceNode(s *State, next *State, f func(st step)) {
	if m.serviceStartClose(s, next) {
		f(step{act: names.ServiceStartClose})
	}
	for b := 0; b < m.nb; b++ {
		if m.serviceCloseBroker(s, next, b) {
			f(step{act: names.ServiceCloseBroker, b: int8(b)})
		}
	}
	if m.serviceFinishClose(s, next) {
		f(step{act: names.ServiceFinishClose})
	}
	if m.nodeStartHeartbeat(s, next) {
		f(step{act: names.NodeStartHeartbeat})
	}
	if m.serviceStartReport(s, next) {
		f(step{act: names.ServiceStartReport})
	}
	for b := 0; b < m.nb; b++ {
		if m.serviceReadBroker(s, next, b) {
			f(step{act: names.ServiceReadBroker, b: int8(b)})
		}
	}
	if m.nodeSendHeartbeat(s, next) {
		f(step{act: names.NodeSendHeartbeat})
	}
	if m.serviceSendReport(s, next) {
		f(step{act: names.ServiceSendReport})
	}
	m.recvAll(s, KindCmd, next, f)
	for _, v := range m.versions {
		if m.nodeCrashRestart(s, next, v) {
			f(step{act: names.NodeCrashRestart, v: v})
		}
	}
	for _, v := range m.versions {
		if m.upgradeRestart(s, next, v) {
			f(step{act: names.UpgradeRestart, v: v})
		}
	}
}

// succCoord emits the successors of Next's disjuncts from
// CoordLearnVersion to the end (NetLoses).
func (m *Model) succCoord(s *State, next *State, f func(st step)) {
	if m.coordLearnVersion(s, next) {
		f(step{act: names.CoordLearnVersion})
	}
	if m.coordSendDraining(s, next) {
		f(step{act: names.CoordSendDraining})
	}
	if m.coordSendStopping(s, next) {
		f(step{act: names.CoordSendStopping})
	}
	if m.coordSendQuery(s, next) {
		f(step{act: names.CoordSendQuery})
	}
	if m.coordLegacyRestart(s, next) {
		f(step{act: names.CoordLegacyRestart})
	}
	if m.maintainerReportProgress(s, next) {
		f(step{act: names.MaintainerReportProgress})
	}
	m.recvAll(s, KindHb, next, f)
	m.recvAll(s, KindResp, next, f)
	m.recvAll(s, KindAns, next, f)
	if m.coordCompleteDrain(s, next) {
		f(step{act: names.CoordCompleteDrain})
	}
	m.recvAll(s, KindReport, next, f)
	m.recvAll(s, KindQuery, next, f)
	if m.logCoordExpire(s, next) {
		f(step{act: names.LogCoordExpire})
	}
	for i := 0; i < int(s.NetLen); i++ { // NetLoses
		if m.netLose(s, next, s.Net[i]) {
			f(step{act: names.NetLose, msg: s.Net[i]})
		}
	}
}

// recvAll emits the receive action of every message of kind k in flight.
func (m *Model) recvAll(s *State, k Kind, next *State, f func(st step)) {
	for i := 0; i < int(s.NetLen); i++ {
		if id := s.Net[i]; m.msgs[id].Kind == k {
			m.recv(s, id, next, f)
		}
	}
}

// recvAction is the receive action of a message of kind k.
var recvAction = [numKinds]action{
	KindCmd:    names.NodeRecvCommand,
	KindResp:   names.CoordRecvResponse,
	KindHb:     names.CoordRecvHeartbeat,
	KindReport: names.LogCoordRecvReport,
	KindQuery:  names.LogCoordAnswer,
	KindAns:    names.CoordRecvAnswer,
}

// recv emits the receive action of message id (in flight), taking it off
// the network (keep = FALSE) and keeping it (keep = TRUE).
func (m *Model) recv(s *State, id msgID, next *State, f func(st step)) {
	a := recvAction[m.msgs[id].Kind]
	if a == names.LogCoordAnswer && s.Cache.Epoch == None {
		a = names.LogCoordAnswerUnknown
	}
	for _, keep := range [2]bool{false, true} {
		var ok bool
		switch a {
		case names.NodeRecvCommand:
			ok = m.nodeRecvCommand(s, next, id, keep)
		case names.CoordRecvHeartbeat:
			ok = m.coordRecvHeartbeat(s, next, id, keep)
		case names.CoordRecvResponse:
			ok = m.coordRecvResponse(s, next, id, keep)
		case names.CoordRecvAnswer:
			ok = m.coordRecvAnswer(s, next, id, keep)
		case names.LogCoordRecvReport:
			ok = m.logCoordRecvReport(s, next, id, keep)
		case names.LogCoordAnswer:
			ok = m.logCoordAnswer(s, next, id, keep)
		case names.LogCoordAnswerUnknown:
			ok = m.logCoordAnswerUnknown(s, next, id, keep)
		}
		if ok {
			f(step{act: a, msg: id, keep: keep})
		}
	}
}

// Next emits every successor of s with the TLA+ action's name (TLA+ Next).
func (m *Model) Next(s State, emit func(action string, next State)) {
	var t State
	m.succ(&s, &t, func(st step) { emit(st.act.String(), t) })
}

// NextInto is Next for the model checker's search: it writes each
// successor of *s into *next and then calls emit with the action's name,
// so a successor is not copied through the calls (see modelcheck's
// InPlace). It keeps neither pointer.
func (m *Model) NextInto(s, next *State, emit func(action string)) {
	m.succ(s, next, func(st step) { emit(st.act.String()) })
}

// Describe labels the step from -> to that action produced as a protocol
// event, e.g. "NodeSendHeartbeat  hb{epoch:1 liveness:STOPPING count:0
// closed:TRUE}" or "CoordRecvHeartbeat  hb{...} (kept)".
func (m *Model) Describe(actionName string, from, to State) string {
	label := actionName
	found := false
	var t State
	m.succ(&from, &t, func(st step) {
		if found || st.act.String() != actionName || t != to {
			return
		}
		found = true
		label = m.describeStep(st, &from, &t)
	})
	return label
}

func (m *Model) describeStep(st step, from, to *State) string {
	name := st.act.String()
	switch st.act {
	case names.CollectorSendRegister, names.ServiceRecvRegister, names.NetLoseRegister:
		label := fmt.Sprintf("%s(%s, %s)", name, m.cfg.Dispatchers[st.d], m.cfg.Brokers[st.b])
		if st.act == names.ServiceRecvRegister && to.Pc[st.d] == from.Pc[st.d] {
			label += "  refused by the service's gate check"
		}
		return label
	case names.CollectorRemove, names.BrokerAdmit, names.BrokerReleaseOld, names.BrokerSubscribe, names.BrokerSubscribeRefused,
		names.BrokerRegisterTable, names.BrokerRegisterTableFails, names.BrokerUnsubscribe, names.BrokerRollback,
		names.BrokerRemoveFinish, names.BrokerInactivityCleanup:
		label := fmt.Sprintf("%s(%s)", name, m.cfg.Dispatchers[st.d])
		if st.act == names.BrokerAdmit && to.Count == from.Count && to.Pc[st.d] != PcAdmitted && to.Pc[st.d] != PcReplacing {
			label += "  refused by the gate bit"
		}
		return label
	case names.ServiceCloseBroker, names.ServiceReadBroker:
		label := fmt.Sprintf("%s(%s)", name, m.cfg.Brokers[st.b])
		if st.act == names.ServiceReadBroker {
			label += fmt.Sprintf("  count %d, sum %d", from.Count[st.b], to.Sample.Sum)
		}
		return label
	case names.NodeCrashRestart, names.UpgradeRestart:
		return fmt.Sprintf("%s  epoch %d, version %s", name, to.Epoch, to.Version)
	case names.NodeRecvCommand, names.CoordRecvHeartbeat, names.CoordRecvResponse, names.CoordRecvAnswer, names.LogCoordRecvReport,
		names.LogCoordAnswer, names.LogCoordAnswerUnknown:
		var b strings.Builder
		fmt.Fprintf(&b, "%s  %s", name, m.msgs[st.msg])
		switch st.act {
		case names.NodeRecvCommand:
			fmt.Fprintf(&b, " -> %s", Resp(from.Epoch, to.Liveness))
		case names.LogCoordAnswer:
			fmt.Fprintf(&b, " -> %s", Ans(from.Cache.Epoch, from.Cache.Count, from.Cache.Closed))
		case names.LogCoordAnswerUnknown:
			fmt.Fprintf(&b, " -> %s", Ans(None, None, false))
		}
		if st.keep {
			b.WriteString(" (kept)")
		}
		return b.String()
	case names.NetLose:
		return fmt.Sprintf("%s  %s", name, m.msgs[st.msg])
	}
	// A send: name the message that appeared.
	for i := 0; i < int(to.NetLen); i++ {
		if !from.netHas(to.Net[i]) {
			return fmt.Sprintf("%s  %s", name, m.msgs[to.Net[i]])
		}
	}
	return name
}
