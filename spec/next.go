package spec

import (
	"fmt"
	"strings"
)

// action numbers the TLA+ actions in the order of Next's disjuncts.
type action uint8

const (
	actCollectorSendRegister action = iota
	actServiceRecvRegister
	actNetLoseRegister
	actCollectorRemove
	actBrokerAdmit
	actBrokerReleaseOld
	actBrokerSubscribe
	actBrokerSubscribeRefused
	actBrokerRegisterTable
	actBrokerRegisterTableFails
	actBrokerUnsubscribe
	actBrokerRollback
	actBrokerRemoveFinish
	actBrokerInactivityCleanup
	actServiceStartClose
	actServiceCloseBroker
	actServiceFinishClose
	actNodeStartHeartbeat
	actServiceStartReport
	actServiceReadBroker
	actNodeSendHeartbeat
	actServiceSendReport
	actNodeRecvCommand
	actNodeCrashRestart
	actUpgradeRestart
	actCoordLearnVersion
	actCoordSendDraining
	actCoordSendStopping
	actCoordLegacyRestart
	actMaintainerReportProgress
	actCoordRecvHeartbeat
	actCoordRecvResponse
	actCoordRecvAnswer
	actCoordCompleteDrain
	actLogCoordRecvReport
	actLogCoordAnswer
	actLogCoordAnswerUnknown
	actLogCoordExpire
	actNetLose
	numActions
)

// actionNames are the TLA+ action operators' names.
var actionNames = [numActions]string{
	"CollectorSendRegister",
	"ServiceRecvRegister",
	"NetLoseRegister",
	"CollectorRemove",
	"BrokerAdmit",
	"BrokerReleaseOld",
	"BrokerSubscribe",
	"BrokerSubscribeRefused",
	"BrokerRegisterTable",
	"BrokerRegisterTableFails",
	"BrokerUnsubscribe",
	"BrokerRollback",
	"BrokerRemoveFinish",
	"BrokerInactivityCleanup",
	"ServiceStartClose",
	"ServiceCloseBroker",
	"ServiceFinishClose",
	"NodeStartHeartbeat",
	"ServiceStartReport",
	"ServiceReadBroker",
	"NodeSendHeartbeat",
	"ServiceSendReport",
	"NodeRecvCommand",
	"NodeCrashRestart",
	"UpgradeRestart",
	"CoordLearnVersion",
	"CoordSendDraining",
	"CoordSendStopping",
	"CoordLegacyRestart",
	"MaintainerReportProgress",
	"CoordRecvHeartbeat",
	"CoordRecvResponse",
	"CoordRecvAnswer",
	"CoordCompleteDrain",
	"LogCoordRecvReport",
	"LogCoordAnswer",
	"LogCoordAnswerUnknown",
	"LogCoordExpire",
	"NetLose",
}

// ActionNames lists the names of the TLA+ actions, in Next's order.
func ActionNames() []string { return append([]string(nil), actionNames[:]...) }

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

// brokerSteps are the disjuncts of TLA+ BrokerSteps(d), in its order.
var brokerSteps = [...]struct {
	act action
	fn  func(m *Model, s *State, d int) (State, bool)
}{
	{actBrokerAdmit, (*Model).BrokerAdmit},
	{actBrokerReleaseOld, (*Model).BrokerReleaseOld},
	{actBrokerSubscribe, (*Model).BrokerSubscribe},
	{actBrokerSubscribeRefused, (*Model).BrokerSubscribeRefused},
	{actBrokerRegisterTable, (*Model).BrokerRegisterTable},
	{actBrokerRegisterTableFails, (*Model).BrokerRegisterTableFails},
	{actBrokerUnsubscribe, (*Model).BrokerUnsubscribe},
	{actBrokerRollback, (*Model).BrokerRollback},
	{actBrokerRemoveFinish, (*Model).BrokerRemoveFinish},
}

// singleSteps are the parameterless actions of T, the coordinator and
// the LogCoordinator, in Next's order.
var singleSteps = [...]struct {
	act action
	fn  func(m *Model, s *State) (State, bool)
}{
	{actServiceStartClose, (*Model).ServiceStartClose},
	{actServiceFinishClose, (*Model).ServiceFinishClose},
	{actNodeStartHeartbeat, (*Model).NodeStartHeartbeat},
	{actServiceStartReport, (*Model).ServiceStartReport},
	{actNodeSendHeartbeat, (*Model).NodeSendHeartbeat},
	{actServiceSendReport, (*Model).ServiceSendReport},
	{actCoordLearnVersion, (*Model).CoordLearnVersion},
	{actCoordSendDraining, (*Model).CoordSendDraining},
	{actCoordSendStopping, (*Model).CoordSendStopping},
	{actCoordLegacyRestart, (*Model).CoordLegacyRestart},
	{actMaintainerReportProgress, (*Model).MaintainerReportProgress},
	{actCoordCompleteDrain, (*Model).CoordCompleteDrain},
	{actLogCoordAnswer, (*Model).LogCoordAnswer},
	{actLogCoordAnswerUnknown, (*Model).LogCoordAnswerUnknown},
	{actLogCoordExpire, (*Model).LogCoordExpire},
}

// succ calls f for every successor of s. Every enabled instance is
// emitted, self-loops and repeated successors included, as TLC generates
// them; the order (Next's disjuncts, then dispatchers, brokers, messages
// in index order, keep = FALSE before TRUE) only fixes which of several
// shortest counterexamples is found.
func (m *Model) succ(s *State, f func(st step, t State)) {
	var t State
	var ok bool
	for d := 0; d < m.nd; d++ {
		for b := 0; b < m.nb; b++ {
			if t, ok = m.CollectorSendRegister(s, d, b); ok {
				f(step{act: actCollectorSendRegister, d: int8(d), b: int8(b)}, t)
			}
		}
	}
	if s.Regs != 0 {
		for d := 0; d < m.nd; d++ {
			for b := 0; b < m.nb; b++ {
				if s.Regs&regBit(d, b) == 0 {
					continue
				}
				if t, ok = m.ServiceRecvRegister(s, d, b); ok {
					f(step{act: actServiceRecvRegister, d: int8(d), b: int8(b)}, t)
				}
				if t, ok = m.NetLoseRegister(s, d, b); ok {
					f(step{act: actNetLoseRegister, d: int8(d), b: int8(b)}, t)
				}
			}
		}
	}
	for d := 0; d < m.nd; d++ {
		if s.Pc[d] == PcIdle {
			continue // no dispatcher action is enabled for an idle d
		}
		if t, ok = m.CollectorRemove(s, d); ok {
			f(step{act: actCollectorRemove, d: int8(d)}, t)
		}
		for _, bs := range brokerSteps {
			if t, ok = bs.fn(m, s, d); ok {
				f(step{act: bs.act, d: int8(d)}, t)
			}
		}
		if t, ok = m.BrokerInactivityCleanup(s, d); ok {
			f(step{act: actBrokerInactivityCleanup, d: int8(d)}, t)
		}
	}
	for b := 0; b < m.nb; b++ {
		if t, ok = m.ServiceCloseBroker(s, b); ok {
			f(step{act: actServiceCloseBroker, b: int8(b)}, t)
		}
		if t, ok = m.ServiceReadBroker(s, b); ok {
			f(step{act: actServiceReadBroker, b: int8(b)}, t)
		}
	}
	for _, ss := range singleSteps {
		if t, ok = ss.fn(m, s); ok {
			f(step{act: ss.act}, t)
		}
	}
	for _, v := range m.versions {
		if t, ok = m.NodeCrashRestart(s, v); ok {
			f(step{act: actNodeCrashRestart, v: v}, t)
		}
		if t, ok = m.UpgradeRestart(s, v); ok {
			f(step{act: actUpgradeRestart, v: v}, t)
		}
	}
	for i := 0; i < int(s.NetLen); i++ {
		id := s.Net[i]
		m.recv(s, id, f)
		if t, ok = m.NetLose(s, id); ok {
			f(step{act: actNetLose, msg: id}, t)
		}
	}
}

// recvAction is the receive action of a message of kind k.
var recvAction = [numKinds]action{
	KindCmd:    actNodeRecvCommand,
	KindResp:   actCoordRecvResponse,
	KindHb:     actCoordRecvHeartbeat,
	KindReport: actLogCoordRecvReport,
	KindAns:    actCoordRecvAnswer,
}

// recv emits the receive action of message id (in flight), taking it off
// the network (keep = FALSE) and keeping it (keep = TRUE).
func (m *Model) recv(s *State, id msgID, f func(st step, t State)) {
	a := recvAction[m.msgs[id].Kind]
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
	case actCollectorSendRegister, actServiceRecvRegister, actNetLoseRegister:
		label := fmt.Sprintf("%s(%s, %s)", name, m.cfg.Dispatchers[st.d], m.cfg.Brokers[st.b])
		if st.act == actServiceRecvRegister && to.Pc[st.d] == from.Pc[st.d] {
			label += "  refused by the service's gate check"
		}
		return label
	case actCollectorRemove, actBrokerAdmit, actBrokerReleaseOld, actBrokerSubscribe, actBrokerSubscribeRefused,
		actBrokerRegisterTable, actBrokerRegisterTableFails, actBrokerUnsubscribe, actBrokerRollback,
		actBrokerRemoveFinish, actBrokerInactivityCleanup:
		label := fmt.Sprintf("%s(%s)", name, m.cfg.Dispatchers[st.d])
		if st.act == actBrokerAdmit && to.Count == from.Count && to.Pc[st.d] != PcAdmitted && to.Pc[st.d] != PcReplacing {
			label += "  refused by the gate bit"
		}
		return label
	case actServiceCloseBroker, actServiceReadBroker:
		label := fmt.Sprintf("%s(%s)", name, m.cfg.Brokers[st.b])
		if st.act == actServiceReadBroker {
			label += fmt.Sprintf("  count %d, sum %d", from.Count[st.b], to.Sample.Sum)
		}
		return label
	case actNodeCrashRestart, actUpgradeRestart:
		return fmt.Sprintf("%s  epoch %d, version %s", name, to.Epoch, to.Version)
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
