package names

import "fmt"

// Action is an action of tla/DrainRegistration.tla: the operator a trace
// line names, a step of the checker's traces and a transition of spec.
// The values follow the order of Next's disjuncts, the order in which TLC
// (and spec) generate successors.
type Action uint8

// The actions, in Next's order.
const (
	// CollectorSendRegister is the TLA+ action CollectorSendRegister.
	CollectorSendRegister Action = iota
	// ServiceRecvRegister is the TLA+ action ServiceRecvRegister.
	ServiceRecvRegister
	// NetLoseRegister is the TLA+ action NetLoseRegister.
	NetLoseRegister
	// CollectorRemove is the TLA+ action CollectorRemove.
	CollectorRemove
	// BrokerAdmit is the TLA+ action BrokerAdmit.
	BrokerAdmit
	// BrokerReleaseOld is the TLA+ action BrokerReleaseOld.
	BrokerReleaseOld
	// BrokerSubscribe is the TLA+ action BrokerSubscribe.
	BrokerSubscribe
	// BrokerSubscribeRefused is the TLA+ action BrokerSubscribeRefused.
	BrokerSubscribeRefused
	// BrokerRegisterTable is the TLA+ action BrokerRegisterTable.
	BrokerRegisterTable
	// BrokerRegisterTableFails is the TLA+ action BrokerRegisterTableFails.
	BrokerRegisterTableFails
	// BrokerUnsubscribe is the TLA+ action BrokerUnsubscribe.
	BrokerUnsubscribe
	// BrokerRollback is the TLA+ action BrokerRollback.
	BrokerRollback
	// BrokerRemoveFinish is the TLA+ action BrokerRemoveFinish.
	BrokerRemoveFinish
	// BrokerInactivityCleanup is the TLA+ action BrokerInactivityCleanup.
	BrokerInactivityCleanup
	// ServiceStartClose is the TLA+ action ServiceStartClose.
	ServiceStartClose
	// ServiceCloseBroker is the TLA+ action ServiceCloseBroker.
	ServiceCloseBroker
	// ServiceFinishClose is the TLA+ action ServiceFinishClose.
	ServiceFinishClose
	// NodeStartHeartbeat is the TLA+ action NodeStartHeartbeat.
	NodeStartHeartbeat
	// ServiceStartReport is the TLA+ action ServiceStartReport.
	ServiceStartReport
	// ServiceReadBroker is the TLA+ action ServiceReadBroker.
	ServiceReadBroker
	// NodeSendHeartbeat is the TLA+ action NodeSendHeartbeat.
	NodeSendHeartbeat
	// ServiceSendReport is the TLA+ action ServiceSendReport.
	ServiceSendReport
	// NodeRecvCommand is the TLA+ action NodeRecvCommand.
	NodeRecvCommand
	// NodeCrashRestart is the TLA+ action NodeCrashRestart.
	NodeCrashRestart
	// UpgradeRestart is the TLA+ action UpgradeRestart.
	UpgradeRestart
	// CoordLearnVersion is the TLA+ action CoordLearnVersion.
	CoordLearnVersion
	// CoordSendDraining is the TLA+ action CoordSendDraining.
	CoordSendDraining
	// CoordSendStopping is the TLA+ action CoordSendStopping.
	CoordSendStopping
	// CoordSendQuery is the TLA+ action CoordSendQuery.
	CoordSendQuery
	// CoordLegacyRestart is the TLA+ action CoordLegacyRestart.
	CoordLegacyRestart
	// MaintainerReportProgress is the TLA+ action MaintainerReportProgress.
	MaintainerReportProgress
	// CoordRecvHeartbeat is the TLA+ action CoordRecvHeartbeat.
	CoordRecvHeartbeat
	// CoordRecvResponse is the TLA+ action CoordRecvResponse.
	CoordRecvResponse
	// CoordRecvAnswer is the TLA+ action CoordRecvAnswer.
	CoordRecvAnswer
	// CoordCompleteDrain is the TLA+ action CoordCompleteDrain.
	CoordCompleteDrain
	// LogCoordRecvReport is the TLA+ action LogCoordRecvReport.
	LogCoordRecvReport
	// LogCoordAnswer is the TLA+ action LogCoordAnswer.
	LogCoordAnswer
	// LogCoordAnswerUnknown is the TLA+ action LogCoordAnswerUnknown.
	LogCoordAnswerUnknown
	// LogCoordExpire is the TLA+ action LogCoordExpire.
	LogCoordExpire
	// NetLose is the TLA+ action NetLose.
	NetLose

	// NumActions is the number of actions; it is not an action.
	NumActions
)

var actionNames = [NumActions]string{
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
	"CoordSendQuery",
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

// The refinement steps: lines of a full run's trace that are not actions
// of the model but steps of the refinement mapping the trace validator
// applies to it (docs/trace.md, "Every run: the refinement mapping").
// They are numbered past the model's actions, so that no iteration over
// the actions (0..NumActions-1) meets them.
const (
	// CoordRejoin is the refinement step of the drained node rejoining the
	// coordinator's membership after a restart: the coordinator forgets
	// the node's old process and its drain session, and a new session
	// begins (the model's coordinator state at Init, at the new epoch).
	CoordRejoin Action = 128 + iota
)

var refinementNames = [...]string{"CoordRejoin"}

// Refinements lists the refinement steps.
func Refinements() []Action {
	out := make([]Action, len(refinementNames))
	for i := range out {
		out[i] = CoordRejoin + Action(i)
	}
	return out
}

// IsRefinement reports whether a is a refinement step, not an action of
// the model.
func (a Action) IsRefinement() bool {
	return a >= CoordRejoin && int(a-CoordRejoin) < len(refinementNames)
}

// String returns the action's TLA+ name (a refinement step's name).
func (a Action) String() string {
	if a < NumActions {
		return actionNames[a]
	}
	return a.otherString()
}

// otherString is String for a refinement step or an unknown action, apart
// so that String stays small enough to be inlined: the model checker asks
// an action's name for each of the model's successors (1.9% of a one-worker
// search of the LogCoord model went to the call).
func (a Action) otherString() string {
	if a.IsRefinement() {
		return refinementNames[a-CoordRejoin]
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// ParseAction returns the action with the TLA+ name s, or the refinement
// step named s.
func ParseAction(s string) (Action, bool) {
	for i, n := range actionNames {
		if n == s {
			return Action(i), true
		}
	}
	for i, n := range refinementNames {
		if n == s {
			return CoordRejoin + Action(i), true
		}
	}
	return 0, false
}

// Actions lists every action, in Next's order.
func Actions() []Action {
	out := make([]Action, NumActions)
	for i := range out {
		out[i] = Action(i)
	}
	return out
}

// The variables of tla/DrainRegistration.tla, as trace lines and reports
// name them.
const (
	// VarEpoch is the TLA+ variable epoch.
	VarEpoch = "epoch"
	// VarVersion is the TLA+ variable version.
	VarVersion = "version"
	// VarLiveness is the TLA+ variable liveness.
	VarLiveness = "liveness"
	// VarClosing is the TLA+ variable closing.
	VarClosing = "closing"
	// VarGateClosed is the TLA+ variable gateClosed.
	VarGateClosed = "gateClosed"
	// VarAdmissionClosed is the TLA+ variable admissionClosed.
	VarAdmissionClosed = "admissionClosed"
	// VarPc is the TLA+ variable pc.
	VarPc = "pc"
	// VarBrk is the TLA+ variable brk.
	VarBrk = "brk"
	// VarCount is the TLA+ variable count.
	VarCount = "count"
	// VarSubscribed is the TLA+ variable subscribed.
	VarSubscribed = "subscribed"
	// VarSchemaRef is the TLA+ variable schemaRef.
	VarSchemaRef = "schemaRef"
	// VarRemoved is the TLA+ variable removed.
	VarRemoved = "removed"
	// VarSample is the TLA+ variable sample.
	VarSample = "sample"
	// VarLastReport is the TLA+ variable lastReport.
	VarLastReport = "lastReport"
	// VarRegistrations is the TLA+ variable registrations.
	VarRegistrations = "registrations"
	// VarRegs is the TLA+ variable regs.
	VarRegs = "regs"
	// VarCoordEpoch is the TLA+ variable coordEpoch.
	VarCoordEpoch = "coordEpoch"
	// VarCoordVersion is the TLA+ variable coordVersion.
	VarCoordVersion = "coordVersion"
	// VarCoordLiveness is the TLA+ variable coordLiveness.
	VarCoordLiveness = "coordLiveness"
	// VarCoordCount is the TLA+ variable coordCount.
	VarCoordCount = "coordCount"
	// VarWork is the TLA+ variable work.
	VarWork = "work"
	// VarDrainedEpoch is the TLA+ variable drainedEpoch.
	VarDrainedEpoch = "drainedEpoch"
	// VarLegacyEpoch is the TLA+ variable legacyEpoch.
	VarLegacyEpoch = "legacyEpoch"
	// VarCache is the TLA+ variable cache.
	VarCache = "cache"
	// VarNet is the TLA+ variable net.
	VarNet = "net"
)

// Variables lists the variables in the order of the module's VARIABLES.
func Variables() []string {
	return []string{
		VarEpoch, VarVersion, VarLiveness, VarClosing, VarGateClosed, VarAdmissionClosed, VarPc, VarBrk, VarCount, VarSubscribed, VarSchemaRef, VarRemoved, VarSample, VarLastReport, VarRegistrations, VarRegs, VarCoordEpoch, VarCoordVersion, VarCoordLiveness, VarCoordCount, VarWork, VarDrainedEpoch, VarLegacyEpoch, VarCache, VarNet,
	}
}

// The bugs: the model's (the elements of the TLA+ set BugNames, each with
// a Bugs switch, a tla/MCDrainRegistrationBug<name>.cfg and a fault point
// in impl/ under the build tag bugs), then the implementation-only ones,
// which the model cannot see.
const (
	// BugIgnoreBrokerCount names the bug whose drain completion ignores the broker count.
	BugIgnoreBrokerCount = "IgnoreBrokerCount"
	// BugTrustLivenessResponse names the bug that reads a missing count as 0.
	BugTrustLivenessResponse = "TrustLivenessResponse"
	// BugAcceptStaleEpoch names the bug that applies observations of an older epoch.
	BugAcceptStaleEpoch = "AcceptStaleEpoch"
	// BugCountAfterPublish names the bug whose count rises only at publish.
	BugCountAfterPublish = "CountAfterPublish"
	// BugNoAdmissionGate names the bug that admits registrations after close.
	BugNoAdmissionGate = "NoAdmissionGate"
	// BugDecrementBeforeCleanup names the bug that decrements before cleanup.
	BugDecrementBeforeCleanup = "DecrementBeforeCleanup"
	// BugLeakOnSchemaFailure names the bug that leaks a failed registration.
	BugLeakOnSchemaFailure = "LeakOnSchemaFailure"
	// BugDoubleDecrement names the bug whose removers both decrement.
	BugDoubleDecrement = "DoubleDecrement"
	// BugDoubleIncrement names the bug that counts a repeated registration twice.
	BugDoubleIncrement = "DoubleIncrement"
	// BugUnknownErasesCount names the bug whose "unknown" LogCoordinator answer replaces the accepted count with 0.
	BugUnknownErasesCount = "UnknownErasesCount"
	// BugSampleBeforeClose names the bug whose report sums the brokers' counts before it closes admission.
	BugSampleBeforeClose = "SampleBeforeClose"
	// BugClosedBeforeBrokers names the bug whose close of admission sets the service's closed flag before it closes each broker's gate bit.
	BugClosedBeforeBrokers = "ClosedBeforeBrokers"
	// BugRollbackBeforeUnsubscribe names the bug whose failed registration rolls its count back before it releases its event-store subscription.
	BugRollbackBeforeUnsubscribe = "RollbackBeforeUnsubscribe"
	// BugSkipDraining names the bug whose coordinator sends STOPPING without having observed DRAINING and no maintainer work.
	BugSkipDraining = "SkipDraining"
	// BugNodeAcceptsSkip names the bug whose node takes any forward liveness step, a skip (ALIVE to STOPPING) included.
	BugNodeAcceptsSkip = "NodeAcceptsSkip"
	// BugLegacyOnUnknown names the bug whose coordinator gives the legacy hard-restart answer while a node's version is still unknown.
	BugLegacyOnUnknown = "LegacyOnUnknown"
	// BugNoReReport names the bug whose event service reports to the LogCoordinator only when its report changed, so that a cache entry expired by its TTL is never refreshed.
	BugNoReReport = "NoReReport"
	// BugLeakBatchOnError names the implementation-only bug whose event store does not close a write batch when the write fails (TiCDC PR #4366's defer batch.Close()); it has no counterpart in the TLA+ model.
	BugLeakBatchOnError = "LeakBatchOnError"
	// BugRefreshOnOlderReport names the implementation-only bug whose LogCoordinator refreshes a cache entry's age when a report older than the cached one arrives late (TiCDC #6155: an observation dated at receipt, not at sampling); the model's TTL expiry has no clock, so it has no counterpart there.
	BugRefreshOnOlderReport = "RefreshOnOlderReport"
)

// ModelBugs lists the model's bugs in the order of the TLA+ set BugNames.
func ModelBugs() []string {
	return []string{
		BugIgnoreBrokerCount,
		BugTrustLivenessResponse,
		BugAcceptStaleEpoch,
		BugCountAfterPublish,
		BugNoAdmissionGate,
		BugDecrementBeforeCleanup,
		BugLeakOnSchemaFailure,
		BugDoubleDecrement,
		BugDoubleIncrement,
		BugUnknownErasesCount,
		BugSampleBeforeClose,
		BugClosedBeforeBrokers,
		BugRollbackBeforeUnsubscribe,
		BugSkipDraining,
		BugNodeAcceptsSkip,
		BugLegacyOnUnknown,
		BugNoReReport,
	}
}

// ImplOnlyBugs lists the implementation-only bugs: fault points in impl/
// with no counterpart in the model.
func ImplOnlyBugs() []string { return []string{BugLeakBatchOnError, BugRefreshOnOlderReport} }
