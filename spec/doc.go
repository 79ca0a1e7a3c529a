// Package spec is the executable transcription of the TLA+ module
// tla/DrainRegistration.tla: the drain of one TiCDC capture T during a
// rolling upgrade, together with the registration of dispatchers with
// T's event broker (docs/protocol.md).
//
// It is the same model written twice: the same constants ([Config], set
// from a TLC cfg with [Config.SetConstant]), the same variables ([State],
// a comparable value), the same actions with the same names (one method of
// [Model] per TLA+ action), the same invariants, action properties,
// liveness property and fairness. For the same constants our checker and
// TLC find the same number of distinct and generated states; the test
// TestModelsMatchTLC holds every model of tla/models.json to TLC's
// figures. The package does not import modelcheck: [*Model] satisfies its
// Model, ActionPropertied, Describer, VarLister and Live interfaces
// structurally.
//
// # Actions
//
// Collectors and T's broker: [Model.CollectorRegister],
// [Model.CollectorRemove], [Model.BrokerSubscribe],
// [Model.BrokerSubscribeRefused], [Model.BrokerRegisterTable],
// [Model.BrokerRegisterTableFails], [Model.BrokerRemoveFinish],
// [Model.BrokerInactivityCleanup] (DoubleDecrement only).
//
// The drained node T: [Model.NodeSendHeartbeat], [Model.NodeRecvCommand],
// [Model.ServiceSendReport], [Model.NodeCrashRestart],
// [Model.UpgradeRestart].
//
// The coordinator and maintainers: [Model.CoordSendDraining],
// [Model.CoordSendStopping], [Model.MaintainerReportProgress],
// [Model.CoordRecvHeartbeat], [Model.CoordRecvResponse],
// [Model.CoordRecvAnswer], [Model.CoordCompleteDrain].
//
// The LogCoordinator and the network: [Model.LogCoordRecvReport],
// [Model.LogCoordAnswer], [Model.LogCoordExpire], [Model.NetLose].
//
// # Invariants and properties
//
// State invariants: [Model.TypeOK], [Model.DrainSafety] (parts
// [Model.DrainSafetyClosed], [Model.DrainSafetyEmpty]),
// [Model.CountAccuracy], [Model.NoHiddenRegistration],
// [Model.FailureLeavesNoTrace] (parts [Model.NoTraceWhenIdle],
// [Model.NoLiveNotifierWhenUnknown]), [Model.NoStaleObservation].
//
// Action properties ([][P]_vars): NoAdmissionAfterClose
// ([Model.NoAdmissionAfterCloseStep]) and MonotoneLiveness
// ([Model.MonotoneLivenessStep]).
//
// Liveness: DrainCompletes == TRUE ~> DrainReported ([Model.LeadsTo]),
// under the fairness of Spec ([Model.FairnessKeys], [Model.FairEnabled],
// [Model.FairTaken]).
//
// # Bugs
//
// Each [Bug] switches on one historical or plausible defect; the
// configurations tla/MCDrainRegistrationBug*.cfg show the checker catching
// each one.
package spec
