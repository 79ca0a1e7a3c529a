// Package bugs holds the fault points of the implementation's bug zoo.
//
// Each bug of docs/protocol.md §13 can be switched on by name
// in a binary or test built with the build tag bugs:
//
//	go test -tags bugs ./impl/...   # with DRAINPROOF_BUG=DoubleIncrement
//
// In the normal build (no tag) every fault point is a function that
// returns the constant false, so the compiler removes the buggy branches:
// the bugs cost nothing and are absent from the binary. [Enable] then
// reports [ErrNotBuilt].
//
// The model bugs' names are the elements of the TLA+ set BugNames in
// tla/DrainRegistration.tla (and spec.BugNames); [ModelNames] lists them,
// [Names] lists every bug.
// The event service's fault points each reintroduce one defect:
//
//   - CountAfterPublish: the count rises only when registration completes,
//     so an in-flight registration is invisible to a report (F4/F5, R2).
//   - NoAdmissionGate: registrations are still admitted after admission
//     closed (F7/F-R7, R8).
//   - DecrementBeforeCleanup: removal decrements before its store cleanup
//     (F6, R2).
//   - LeakOnSchemaFailure: a failed RegisterTable leaves the event-store
//     subscription and no removed mark (F-R1, R3/R4).
//   - DoubleDecrement: the inactivity cleanup runs outside the serial
//     loop and removers decrement without compare-and-delete (F-R2, R1).
//   - DoubleIncrement: a repeated registration of one ID counts twice
//     (F-R3, R1).
//
// The drain controller's bugs (packages coordinator and node, caught by
// their table tests and by the simulator's rapid test against spec):
//
//   - IgnoreBrokerCount: drain completion ignores the broker count (seed
//     000, F1, D5).
//   - TrustLivenessResponse: a count never observed reads as 0, so a
//     STOPPING liveness response authorises completion (F2, D5).
//   - AcceptStaleEpoch: a delayed heartbeat or answer of an older epoch is
//     applied as if current (F3, D2/D8).
//   - UnknownErasesCount: an "unknown" LogCoordinator answer replaces the
//     accepted count with 0 (F7, D8; LogCoordinator transport).
//
// The bugs of the model at the implementation's granularity,
// each a step of the code taken in the wrong order or a guard dropped:
//
//   - SampleBeforeClose: Service.Sample sums the brokers' counts before it
//     closes admission, so a registration admitted between the sum and
//     the close is missing from a report that says closed (D5).
//   - ClosedBeforeBrokers: Service.CloseAdmission sets closed before it
//     closes each broker's gate bit, so a report that sees closed may
//     miss a registration a broker still admits (D5, R8).
//   - RollbackBeforeUnsubscribe: a failed RegisterTable rolls the count
//     back before it releases the event-store subscription (F-R1, R2).
//   - SkipDraining: the coordinator sends STOPPING without having observed
//     DRAINING with no maintainer work (C3).
//   - NodeAcceptsSkip: the node takes any forward liveness step, ALIVE to
//     STOPPING included (D1, N1).
//   - LegacyOnUnknown: the coordinator gives the legacy hard-restart answer
//     while a node's version is unknown (§9).
//   - NoReReport: the event service reports to the LogCoordinator only when
//     its report changed (the simulator's reporter), so an entry the
//     cache's TTL expired is never refreshed and the drain stalls.
//
// One bug is implementation-only ([ImplOnlyNames]): it lies below the
// model's level of detail, so it has no TLA+ switch and no .cfg, and
// [ModelNames] (equal to spec.BugNames) leaves it out:
//
//   - LeakBatchOnError: the event store does not close a write batch when
//     the write fails (TiCDC PR #4366's defer batch.Close() in
//     writeEvents); caught by package store's resource test, which
//     injects a failure on every error path and requires every
//     open-batch, open-iterator and subscription count back to zero.
//
// [FromEnv] enables the bug named by the DRAINPROOF_BUG environment
// variable; test mains call it so one test binary serves every bug.
package bugs
