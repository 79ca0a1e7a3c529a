// Package eventservice is the registration half of the drain protocol: a
// node's event service with one event broker per upstream cluster, the
// admission gate, the per-broker atomic dispatcher count, and the serial
// request loop that registers, removes and resets dispatchers.
//
// It mirrors the broker part of the TLA+ module tla/DrainRegistration.tla
// (and its Go transcription, package spec): the variables count,
// admissionClosed and the removed mark, and the actions
//
//   - CollectorSendRegister, ServiceRecvRegister, BrokerAdmit:
//     [Service.Do] or [Service.Submit] with a [Register] request passes
//     the admission gate (the service's gate check, then one
//     compare-and-swap of the broker's count word) and raises the count
//     (the early count) before any store call;
//   - BrokerSubscribe / BrokerSubscribeRefused: EventStore.RegisterDispatcher
//     accepts, or refuses and the count is rolled back;
//   - BrokerRegisterTable / BrokerRegisterTableFails: SchemaStore.RegisterTable
//     succeeds and the dispatcher is published, or fails and the broker
//     marks it removed, unregisters it from the event store, drops it from
//     its changefeed and rolls the count back, in that order (F-R1);
//   - CollectorRemove / BrokerRemoveFinish: a [Remove] request marks the
//     dispatcher removed, compare-and-deletes it, releases its stores and
//     decrements last;
//   - ServiceStartReport, ServiceReadBroker: [Service.Sample] closes
//     admission if the node is STOPPING (ServiceStartClose,
//     ServiceCloseBroker, ServiceFinishClose: [Service.CloseAdmission]),
//     then samples (count, closed), which the node sends
//     (NodeSendHeartbeat: node.Node.Heartbeat; ServiceSendReport:
//     node.Node.Report).
//
// # Rules implemented
//
// From docs/protocol.md §11 and §12:
//
//   - R1: count = published dispatchers (table triggers included) between
//     requests; a repeated registration replaces the old one and counts
//     once; only the remover that deleted an entry decrements (F-R2, F-R3,
//     F-R4).
//   - R2: the count covers a registration from before its first store
//     side effect until after its last store release (F4/F5/F6, F-R5).
//   - R3: a failed registration leaves no map entry, subscription, schema
//     reference or count (F-R1).
//   - R4: a notification for a dispatcher marked removed is dropped.
//   - R5: one live stat per ID; the replaced one is marked removed.
//   - R6: a Reset takes effect only for a newer epoch; heartbeats apply at
//     the equal epoch; a reset never changes the count.
//   - R7: requests, heartbeats and the inactivity cleanup run one at a
//     time, in arrival order, in the request loop: under the loop's baton,
//     held by the [Service.Run] goroutine or by a [Service.Do] caller that
//     found the loop idle, which runs the queued requests before its own.
//   - R8: once admission is closed (one way) no registration is admitted
//     and the count never rises (F-R7); remote probes get NotReusable.
//   - R9: one schema reference per published ordinary dispatcher.
//   - F-R6: the broker registry is a copy-on-write slice, so Sample reads
//     it from any goroutine without a lock and never waits for a slow
//     registration.
//
// # Concurrency
//
// Requests reach the loop through a mutex-guarded FIFO that the loop
// empties a batch at a time (one wake-up serves every request queued
// meanwhile; arrival order is kept); producers refill it while a batch
// runs. The loop is a baton (a mutex) rather than a goroutine: the Run
// goroutine takes it when the queue's bell rings, and a Do that finds it
// free while Run is running takes it, runs the queued requests, then its
// own, then at most one more batch, on the caller's goroutine: the caller
// waits anyway, and no goroutine has to be woken (Heartbeat, Cleanup and
// Snapshot, rarer, go through the queue). A Do with an uncancellable
// context waits for a busy baton as for a mutex; otherwise it queues its
// request and waits for the answer or its context. Submit only ever
// queues. Store calls are made only under the baton, with Run's context
// merged with the requesting Do's (a cancelled caller releases its
// blocked store call; a queued request whose caller left is skipped).
// A panic in a store call, Emit or OnError ends the process, whichever
// goroutine ran the request: it is re-raised where no caller can recover
// it, since the registry may be half-way through a request and other
// callers wait for requests that would never run. [Service.Sample],
// [Service.CloseAdmission] and [Service.AdmissionClosed] are lock-free
// (atomics and the copy-on-write broker list).
// Event-store notifiers run on the store's goroutines and read the
// dispatcher's current stat through an atomic pointer, as readers of the
// dispatcher's one-word notify lock, which the removal takes (the removed
// mark) and the reuse of a released dispatcher gives back. Clocks
// (Config.Now, Config.CleanupInterval) and goroutines live at the edges:
// tests drive the inactivity cleanup with [Service.Cleanup] and a fake
// Now.
//
// # Files, in a request's order
//
// A REGISTER goes down one level per file: service.go (Do, Submit, handle,
// register: the gate check, the broker, the admission, the broker's
// steps), loop.go (the request loop: the baton, the queue's hand-off),
// gate.go (the admission gate's close and the report), broker.go (the
// broker's registration and removal steps on its stores and its count,
// broker.step), dispatcher.go (one registration and its notifier),
// trace.go (trace validation's lines), hooks.go (the points where tests
// interleave goroutines). What the request loop's baton and the reuse of
// released dispatchers pay, measured end to end, is in
// docs/perf.md.
//
// # Bug zoo
//
// Built with -tags bugs, the fault points of package bugs reintroduce the
// registry bugs of docs/protocol.md §13 (CountAfterPublish, NoAdmissionGate,
// DecrementBeforeCleanup, LeakOnSchemaFailure, DoubleDecrement,
// DoubleIncrement) and those of the model at the implementation's
// granularity (SampleBeforeClose, ClosedBeforeBrokers,
// RollbackBeforeUnsubscribe: a step of Sample, CloseAdmission or a failed
// registration's rollback taken out of order); the normal build compiles
// them out. Every build has points (hooks.go) before each effect another
// goroutine can observe, where a test's hook stops a registration
// between the gate check and the broker's compare-and-swap, a close
// before a broker's gate bit or a report before a broker's count, so
// that each out-of-order step is caught deterministically
// (granularity_test.go, the conformance test's closeByBroker and
// reportByBroker), and where a controlled scheduler runs every
// interleaving of small scenarios (explore_test.go); the product sets no
// hook, and an unset one costs a compare per point. The tag changes
// nothing else: with no bug on, or any bug but DoubleDecrement,
// the tagged build runs the normal build's code. DoubleDecrement, which
// runs the inactivity cleanup beside the request loop, makes a broker
// created while it is on lock the loop's own steps and stop reusing
// released dispatchers (offLoopRemover), since a remover then runs
// outside the loop. A traced service runs the same code as an untraced
// one, fault points and points included (trace.go).
package eventservice
