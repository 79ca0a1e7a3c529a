package spec

import (
	"fmt"
	"strings"
)

// action numbers the TLA+ actions in the order of Next's disjuncts.
type action uint8

const (
	actCollectorRegister action = iota
	actCollectorRemove
	actBrokerSubscribe
	actBrokerSubscribeRefused
	actBrokerRegisterTable
	actBrokerRegisterTableFails
	actBrokerRemoveFinish
	actBrokerInactivityCleanup
	actNodeSendHeartbeat
	actNodeRecvCommand
	actServiceSendReport
	actNodeCrashRestart
	actUpgradeRestart
	actCoordSendDraining
	actCoordSendStopping
	actMaintainerReportProgress
	actCoordRecvHeartbeat
	actCoordRecvResponse
	actCoordRecvAnswer
	actCoordCompleteDrain
	actLogCoordRecvReport
	actLogCoordAnswer
	actLogCoordExpire
	actNetLose
	numActions
)

// actionNames are the TLA+ action operators' names.
var actionNames = [numActions]string{
	"CollectorRegister",
	"CollectorRemove",
	"BrokerSubscribe",
	"BrokerSubscribeRefused",
	"BrokerRegisterTable",
	"BrokerRegisterTableFails",
	"BrokerRemoveFinish",
	"BrokerInactivityCleanup",
	"NodeSendHeartbeat",
	"NodeRecvCommand",
	"ServiceSendReport",
	"NodeCrashRestart",
	"UpgradeRestart",
	"CoordSendDraining",
	"CoordSendStopping",
	"MaintainerReportProgress",
	"CoordRecvHeartbeat",
	"CoordRecvResponse",
	"CoordRecvAnswer",
	"CoordCompleteDrain",
	"LogCoordRecvReport",
	"LogCoordAnswer",
	"LogCoordExpire",
	"NetLose",
}

// ActionNames lists the names of the TLA+ actions, in Next's order.
func ActionNames() []string { return append([]string(nil), actionNames[:]...) }

// step names one instance of an action: the action and its arguments.
type step struct {
	act  action
	d    int8  // dispatcher index, for dispatcher actions
	msg  msgID // message, for receive and loss actions
	keep bool  // receive keeps the message (duplication)
}

// succ calls f for every successor of s, in a fixed order: Next's
// disjuncts in order, dispatchers in sorted order, messages in ID order,
// keep = FALSE before TRUE. Every enabled instance is emitted, self-loops
// and repeated successors included, as TLC generates them.
func (m *Model) succ(s *State, f func(st step, t State)) {
	var t State
	var ok bool
	for d := 0; d < m.nd; d++ {
		if t, ok = m.CollectorRegister(s, d); ok {
			f(step{act: actCollectorRegister, d: int8(d)}, t)
		}
	}
	for d := 0; d < m.nd; d++ {
		if t, ok = m.CollectorRemove(s, d); ok {
			f(step{act: actCollectorRemove, d: int8(d)}, t)
		}
	}
	for d := 0; d < m.nd; d++ { // BrokerSteps(d)
		if t, ok = m.BrokerSubscribe(s, d); ok {
			f(step{act: actBrokerSubscribe, d: int8(d)}, t)
		}
		if t, ok = m.BrokerSubscribeRefused(s, d); ok {
			f(step{act: actBrokerSubscribeRefused, d: int8(d)}, t)
		}
		if t, ok = m.BrokerRegisterTable(s, d); ok {
			f(step{act: actBrokerRegisterTable, d: int8(d)}, t)
		}
		if t, ok = m.BrokerRegisterTableFails(s, d); ok {
			f(step{act: actBrokerRegisterTableFails, d: int8(d)}, t)
		}
		if t, ok = m.BrokerRemoveFinish(s, d); ok {
			f(step{act: actBrokerRemoveFinish, d: int8(d)}, t)
		}
	}
	if m.has(DoubleDecrement) {
		for d := 0; d < m.nd; d++ {
			if t, ok = m.BrokerInactivityCleanup(s, d); ok {
				f(step{act: actBrokerInactivityCleanup, d: int8(d)}, t)
			}
		}
	}
	if t, ok = m.NodeSendHeartbeat(s); ok {
		f(step{act: actNodeSendHeartbeat}, t)
	}
	m.recv(s, actNodeRecvCommand, KindCmd, f)
	if t, ok = m.ServiceSendReport(s); ok {
		f(step{act: actServiceSendReport}, t)
	}
	if t, ok = m.NodeCrashRestart(s); ok {
		f(step{act: actNodeCrashRestart}, t)
	}
	if t, ok = m.UpgradeRestart(s); ok {
		f(step{act: actUpgradeRestart}, t)
	}
	if t, ok = m.CoordSendDraining(s); ok {
		f(step{act: actCoordSendDraining}, t)
	}
	if t, ok = m.CoordSendStopping(s); ok {
		f(step{act: actCoordSendStopping}, t)
	}
	if t, ok = m.MaintainerReportProgress(s); ok {
		f(step{act: actMaintainerReportProgress}, t)
	}
	m.recv(s, actCoordRecvHeartbeat, KindHb, f)
	m.recv(s, actCoordRecvResponse, KindResp, f)
	m.recv(s, actCoordRecvAnswer, KindAns, f)
	if t, ok = m.CoordCompleteDrain(s); ok {
		f(step{act: actCoordCompleteDrain}, t)
	}
	m.recv(s, actLogCoordRecvReport, KindReport, f)
	if t, ok = m.LogCoordAnswer(s); ok {
		f(step{act: actLogCoordAnswer}, t)
	}
	if t, ok = m.LogCoordExpire(s); ok {
		f(step{act: actLogCoordExpire}, t)
	}
	for i := 0; i < int(s.NetLen); i++ { // NetLoses
		if t, ok = m.NetLose(s, s.Net[i]); ok {
			f(step{act: actNetLose, msg: s.Net[i]}, t)
		}
	}
}

// recv emits the receive action a for every message of kind k in flight,
// taking it off the network (keep = FALSE) and keeping it (keep = TRUE).
func (m *Model) recv(s *State, a action, k Kind, f func(st step, t State)) {
	for i := 0; i < int(s.NetLen); i++ {
		id := s.Net[i]
		if m.msgs[id].Kind != k {
			continue
		}
		for _, keep := range [2]bool{false, true} {
			var t State
			var ok bool
			switch a {
			case actNodeRecvCommand:
				t, ok = m.NodeRecvCommand(s, id, keep)
			case actCoordRecvHeartbeat:
				t, ok = m.CoordRecvHeartbeat(s, id, keep)
			case actCoordRecvResponse:
				t, ok = m.CoordRecvResponse(s, id, keep)
			case actCoordRecvAnswer:
				t, ok = m.CoordRecvAnswer(s, id, keep)
			case actLogCoordRecvReport:
				t, ok = m.LogCoordRecvReport(s, id, keep)
			}
			if ok {
				f(step{act: a, msg: id, keep: keep}, t)
			}
		}
	}
}

// Next emits every successor of s with the TLA+ action's name (TLA+ Next).
func (m *Model) Next(s State, emit func(action string, next State)) {
	m.succ(&s, func(st step, t State) { emit(actionNames[st.act], t) })
}

// Describe labels the step from -> to that action produced as a protocol
// event, e.g. "NodeSendHeartbeat  hb{epoch:1 liveness:STOPPING count:0
// closed:TRUE}" or "CoordRecvHeartbeat  hb{...} (kept)".
func (m *Model) Describe(actionName string, from, to State) string {
	label := actionName
	found := false
	m.succ(&from, func(st step, t State) {
		if found || actionNames[st.act] != actionName || t != to {
			return
		}
		found = true
		label = m.describeStep(st, &from, &t)
	})
	return label
}

func (m *Model) describeStep(st step, from, to *State) string {
	name := actionNames[st.act]
	switch st.act {
	case actCollectorRegister, actCollectorRemove, actBrokerSubscribe, actBrokerSubscribeRefused,
		actBrokerRegisterTable, actBrokerRegisterTableFails, actBrokerRemoveFinish, actBrokerInactivityCleanup:
		label := fmt.Sprintf("%s(%s)", name, m.cfg.Dispatchers[st.d])
		if st.act == actCollectorRegister && to.Pc == from.Pc && to.Count == from.Count {
			label += "  rejected"
		}
		return label
	case actNodeRecvCommand, actCoordRecvHeartbeat, actCoordRecvResponse, actCoordRecvAnswer, actLogCoordRecvReport:
		var b strings.Builder
		fmt.Fprintf(&b, "%s  %s", name, m.msgs[st.msg])
		if st.act == actNodeRecvCommand {
			fmt.Fprintf(&b, " -> %s", Resp(from.Epoch, to.Liveness))
		}
		if st.keep {
			b.WriteString(" (kept)")
		}
		return b.String()
	case actNetLose:
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
