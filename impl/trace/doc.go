// Package trace is the implementation's side of trace validation
// (docs/trace.md): the [Tracer] hook through which the library reports
// each step it takes as the TLA+ action of tla/DrainRegistration.tla, and
// [Writer], which writes those steps as NDJSON for `checker trace`
// (internal/tracecheck) and tla/TraceDrainRegistration.tla.
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
//	impl/eventservice (the registry's steps from the request loop, whose baton orders them)
//	  Service.register, on entry                  CollectorSendRegister(d, b)
//	  Service.register past the service's gate,
//	    or refuse / CloseAdmission when refused   ServiceRecvRegister(d, b)
//	  Service.register after the compare-and-swap,
//	    or refuse when the broker's bit refused   BrokerAdmit(d)
//	  Service.register, a repeated registration   BrokerReleaseOld(d)
//	  broker.add                                  BrokerSubscribe(d), BrokerSubscribeRefused(d), BrokerRollback(d),
//	                                              BrokerRegisterTable(d), BrokerRegisterTableFails(d), BrokerUnsubscribe(d)
//	  broker.removeID, Service.cleanupInactive    CollectorRemove(d), BrokerRemoveFinish(d)
//	  Service.CloseAdmission                      ServiceStartClose, ServiceCloseBroker(b), ServiceFinishClose
//	  Service.Report                              ServiceStartReport, ServiceReadBroker(b)
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
//	impl/sim (the environment)
//	  runner.crash, runner.upgradeController      NodeCrashRestart, UpgradeRestart
//
// The close and the report run on their caller's goroutine: their lines
// are in order when one goroutine reports and closes (the node, in the
// simulator), as the model's one sample is.
//
// Message losses and duplicates are never traced: no process sees them;
// the checker fills them in from the trace's future.
package trace
