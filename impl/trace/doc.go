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
//	impl/eventservice (the request loop's baton orders every line)
//	  Service.refuse (a registration refused at the gate)   CollectorRegister(d)
//	  Service.register, fresh ordinary dispatcher,
//	    after the admission's compare-and-swap              CollectorRegister(d)   pc admitted
//	  Service.register, table trigger or repeated
//	    registration, after the whole add                   CollectorRegister(d)   the model's one step
//	  broker.add, EventStore.RegisterDispatcher true        BrokerSubscribe(d)
//	  broker.add, RegisterDispatcher false, after rollback  BrokerSubscribeRefused(d)
//	  broker.add, RegisterTable ok, after publication       BrokerRegisterTable(d)
//	  broker.add, RegisterTable error, after rollback       BrokerRegisterTableFails(d)
//	  broker.removeID / Service.cleanupInactive             CollectorRemove(d), then BrokerRemoveFinish(d)
//	                                                        (a table trigger: one CollectorRemove(d))
//	impl/node
//	  Node.Heartbeat (after sampling the service)           NodeSendHeartbeat
//	  Node.RecvCommand (after the liveness step)            NodeRecvCommand, with the response as reply
//	  Node.Report (logcoord transport)                      ServiceSendReport
//	impl/coordinator (under the coordinator's mutex; only Config.TraceNode)
//	  ObserveHeartbeat, ObserveResponse, ObserveAnswer      CoordRecvHeartbeat, CoordRecvResponse, CoordRecvAnswer
//	  NextCommand                                           CoordSendDraining, CoordSendStopping
//	  ReportProgress                                        MaintainerReportProgress
//	  DrainNode, when it records the drained epoch          CoordCompleteDrain
//	impl/logcoord (under the cache's mutex; only Config.TraceNode)
//	  Cache.OnReport                                        LogCoordRecvReport
//	  Cache.Answer                                          LogCoordAnswer (an expired entry: LogCoordExpire first)
//	  Cache.Expire                                          LogCoordExpire
//	impl/sim (the environment)
//	  runner.crash, runner.upgradeController                NodeCrashRestart, UpgradeRestart
//
// Message losses and duplicates are never traced: no process sees them;
// the checker fills them in from the trace's future.
package trace
