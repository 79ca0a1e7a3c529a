// Package trace is the implementation's side of trace validation
// (docs/trace.md): the [Tracer] hook through which the library reports
// each step it takes as the TLA+ action of tla/DrainRegistration.tla, and
// [Writer], which writes those steps as NDJSON for `checker trace`
// (harness/tracecheck) and tla/TraceDrainRegistration.tla.
//
// Every component takes a Tracer in its Config, nil by default; an
// untraced component pays one nil check per action site. A component
// calls Trace while it holds the lock, or is inside the serial section,
// that orders the effect the line describes, so that the lines of several
// goroutines are in the order the effects happened, not in timestamp
// order. Writer serialises its calls with one mutex.
//
// # Which Go function emits which action
//
//	impl/eventservice (each line under the service's trace lock, with the effect it describes)
//	  Service.register, on entry                  CollectorSendRegister(d, b)
//	  Service.gateCheck, past or refused
//	    (refused and starting the close: closeAdmission)  ServiceRecvRegister(d, b)
//	  Service.admit (the compare-and-swap)        BrokerAdmit(d)
//	  broker.release of the replaced one          BrokerReleaseOld(d)
//	  broker.add, broker.step                     BrokerSubscribe(d), BrokerSubscribeRefused(d), BrokerRollback(d),
//	                                              BrokerRegisterTable(d), BrokerRegisterTableFails(d), BrokerUnsubscribe(d)
//	  broker.removeID, broker.remove, release     CollectorRemove(d), BrokerRemoveFinish(d)
//	  Service.closeAdmission, closeBroker,
//	    finishClose                               ServiceStartClose, ServiceCloseBroker(b), ServiceFinishClose
//	  Service.startReport, readCounts             ServiceStartReport, ServiceReadBroker(b)
//	impl/node
//	  Node.Heartbeat                              NodeStartHeartbeat (heartbeat transport), NodeSendHeartbeat
//	  Node.RecvCommand (after the liveness step)  NodeRecvCommand, with the response as reply
//	  Node.Report (logcoord transport)            ServiceSendReport
//	impl/coordinator (under the coordinator's mutex; only Config.TraceNode)
//	  ObserveHeartbeat, ObserveResponse, ObserveAnswer   CoordRecvHeartbeat, CoordRecvResponse, CoordRecvAnswer
//	  ObserveVersion, and a newer epoch observed  CoordLearnVersion
//	  NextCommand                                 CoordSendDraining, CoordSendStopping
//	  ReportProgress                              MaintainerReportProgress
//	  DrainNode, when it records the drained epoch  CoordCompleteDrain
//	  DrainNode, when it gives the legacy answer    CoordLegacyRestart
//	impl/logcoord (under the cache's mutex; only Config.TraceNode)
//	  Cache.OnReport                              LogCoordRecvReport
//	  Cache.Answer                                LogCoordAnswer, LogCoordAnswerUnknown (an expired entry: LogCoordExpire first)
//	  Cache.Expire, Cache.RemoveNode              LogCoordExpire
//	harness/sim (the environment)
//	  runner.crash, runner.upgradeController      NodeCrashRestart, UpgradeRestart
//
// The event service's close and report run on their caller's goroutine:
// their lines are in the order of their effects whatever the number of
// closers and reporters (each effect on the gate flags or a broker's
// admission word is taken with its line under the service's trace lock);
// the model has one sample at a time, so overlapping reports make a trace
// the model does not describe.
//
// Message losses and duplicates are never traced: no process sees them;
// the checker fills them in from the trace's future.
package trace
