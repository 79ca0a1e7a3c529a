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
// The names are the elements of the TLA+ set BugNames in
// tla/DrainRegistration.tla (and spec.BugNames); [Names] lists them.
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
// [FromEnv] enables the bug named by the DRAINPROOF_BUG environment
// variable; test mains call it so one test binary serves every bug.
package bugs
