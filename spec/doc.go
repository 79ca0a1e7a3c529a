// Package spec is the executable transcription of the TLA+ module
// tla/DrainRegistration.tla: the drain of one TiCDC capture T during a
// rolling upgrade, together with the registration of dispatchers with
// T's event brokers, one per upstream cluster (docs/protocol.md).
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
// structurally, and its Plain, InPlace and PointerChecked interfaces for
// speed ([Model.PlainState]: a [State] is fingerprinted as its bytes;
// [Model.NextInto]: successors written where the checker reads them;
// [Model.FailingPtr], [Model.FailingStepPtr]: the selected checks in one
// call, without copies).
//
// # Actions
//
// The actions take the steps the implementation takes: where Go code does
// several things that another goroutine can observe in between, the model
// has one action per thing (tla/README.md names the Go code of each).
//
// Collectors and T's event service: [Model.CollectorSendRegister],
// [Model.ServiceRecvRegister] (the service-level gate check),
// [Model.NetLoseRegister], [Model.CollectorRemove].
//
// One broker's steps for a dispatcher (TLA+ BrokerSteps(d)):
// [Model.BrokerAdmit] (the one compare-and-swap of gate bit and count),
// [Model.BrokerReleaseOld], [Model.BrokerSubscribe],
// [Model.BrokerSubscribeRefused], [Model.BrokerRegisterTable],
// [Model.BrokerRegisterTableFails], [Model.BrokerUnsubscribe],
// [Model.BrokerRollback], [Model.BrokerRemoveFinish];
// [Model.BrokerInactivityCleanup] (DoubleDecrement only).
//
// Closing admission broker by broker: [Model.ServiceStartClose],
// [Model.ServiceCloseBroker], [Model.ServiceFinishClose]. Sampling the
// count broker by broker: [Model.NodeStartHeartbeat],
// [Model.ServiceStartReport], [Model.ServiceReadBroker], then
// [Model.NodeSendHeartbeat] or [Model.ServiceSendReport].
//
// The drained node T: [Model.NodeRecvCommand], [Model.NodeCrashRestart],
// [Model.UpgradeRestart].
//
// The coordinator and maintainers: [Model.CoordLearnVersion],
// [Model.CoordSendDraining], [Model.CoordSendStopping],
// [Model.CoordSendQuery], [Model.CoordLegacyRestart], [Model.MaintainerReportProgress],
// [Model.CoordRecvHeartbeat], [Model.CoordRecvResponse],
// [Model.CoordRecvAnswer], [Model.CoordCompleteDrain].
//
// The LogCoordinator and the network: [Model.LogCoordRecvReport],
// [Model.LogCoordAnswer], [Model.LogCoordAnswerUnknown],
// [Model.LogCoordExpire], [Model.NetLose].
//
// # Invariants and properties
//
// State invariants: [Model.TypeOK], [Model.DrainSafety] (parts
// [Model.DrainSafetyClosed], [Model.DrainSafetyEmpty]),
// [Model.CountAccuracy], [Model.NoHiddenRegistration],
// [Model.FailureLeavesNoTrace] (parts [Model.NoTraceWhenIdle],
// [Model.NoLiveNotifierWhenUnknown]), [Model.NoStaleObservation],
// [Model.StopAfterWorkMoved], [Model.VersionSafety].
//
// Action properties ([][P]_vars): NoAdmissionAfterClose
// ([Model.NoAdmissionAfterCloseStep], per broker: once a broker's gate
// bit is set its count never rises) and MonotoneLiveness
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
