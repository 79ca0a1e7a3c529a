// Package coordinator is the coordinator's drain controller: per-node
// observations keyed by epoch, the DRAINING and STOPPING commands with
// resend throttling, the remaining-work estimate, the completion rule
// with the event broker count, the LogCoordinator queries, and the legacy
// fallback for mixed versions.
//
// It mirrors the coordinator actions of tla/DrainRegistration.tla
// (package spec): [Coordinator.NextCommand] is CoordSendDraining and
// CoordSendStopping, [Coordinator.NextQuery] is CoordSendQuery,
// [Coordinator.ObserveHeartbeat] is CoordRecvHeartbeat,
// [Coordinator.ObserveResponse] is CoordRecvResponse,
// [Coordinator.ObserveAnswer] is CoordRecvAnswer,
// [Coordinator.ReportProgress] is MaintainerReportProgress, and
// [Coordinator.DrainNode] returning Complete is CoordCompleteDrain. The
// model's coordEpoch, coordLiveness, coordCount, work and drainedEpoch are
// the fields of [NodeView].
//
// # Rules implemented
//
// From docs/protocol.md §7–§10:
//
//   - C4 / D2 / F3: an observation of an older epoch is dropped; a newer
//     epoch resets every per-epoch observation (liveness, count, resend
//     and query throttles) but not the drain request (the session and its
//     maintainer progress); within an epoch liveness never goes back.
//   - C5 / D8 / F2: the count is accepted only from a trustworthy source.
//     Heartbeat transport: a STOPPING heartbeat of the epoch tracked (or
//     a newer one) sampled with admission closed; a liveness response
//     never carries a count. LogCoordinator transport: a known report of
//     the epoch tracked, taken with admission closed, after STOPPING was
//     observed. In both, within an epoch the accepted count only falls,
//     so a zero is terminal (F8), and an unknown answer never erases a
//     count (F7). This is the model's monotone coordinator.
//   - C3 / F9: DRAINING is (re)sent until observed, STOPPING only once
//     DRAINING is observed and the maintainers report no work; both carry
//     the epoch read in the same critical section as the check, and each
//     is resent at most every ResendInterval ticks.
//   - C6: LogCoordinator queries only after STOPPING is observed and until
//     a zero is accepted.
//   - C7: remaining = max(maintainer terms) + broker count; while not
//     complete, DrainNode returns at least 1.
//   - C8 / D5 / §8: complete ⇔ STOPPING observed ∧ no maintainer work ∧
//     an accepted broker count of zero, all for the epoch tracked (and the
//     state not Unknown when UnknownAfter is set); the drained epoch is
//     recorded and the upgrade controller restarts exactly that process.
//   - C9: membership removal ends the target's session; a completed one
//     leaves a tombstone so that DrainNode keeps answering 0.
//   - §9: with no session, any alive node of unknown version means wait
//     (remaining 1, no session); any alive legacy node means the legacy
//     hard-restart answer (remaining 0, no session).
//   - D3: one drain at a time.
//
// # Determinism
//
// A Coordinator has no goroutines and reads no clock: time is the logical
// tick the caller passes in. It is safe for concurrent use.
//
// # Bug zoo
//
// Built with -tags bugs, the fault points of package bugs reintroduce
// IgnoreBrokerCount, TrustLivenessResponse, AcceptStaleEpoch,
// UnknownErasesCount, SkipDraining (STOPPING sent without DRAINING
// observed and no work) and LegacyOnUnknown (the legacy answer while a
// version is unknown); the normal build compiles them out.
package coordinator
