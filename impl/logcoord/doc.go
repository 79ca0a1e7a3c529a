// Package logcoord is the LogCoordinator's part of the drain protocol in
// the LogCoordinator transport (Variant L): it caches each node's event
// broker report with its arrival time, expires old entries, drops a
// node's entry when the node leaves membership, and answers the
// coordinator's queries with the cached report or "unknown".
//
// It mirrors the LogCoordinator actions of tla/DrainRegistration.tla
// (package spec): [Cache.OnReport] is LogCoordRecvReport, [Cache.Answer]
// is LogCoordAnswer, expiry ([Config.TTL]) and [Cache.RemoveNode] are
// LogCoordExpire (and so is a restarted process's empty cache, which
// [Cache.TraceRestart] writes as its trace's first line), and [Answer] is
// the model's Ans record (Known false is Ans(None, None, FALSE), "unknown").
//
// # Rules implemented
//
// From docs/protocol.md §6 (L1–L4) and §14, with the model's
// monotone cache (tla/README.md, "Monotone coordinator and cache within an
// epoch"):
//
//   - L2: a report is cached with its arrival time. Within one node the
//     entry is monotone: a newer epoch replaces it, an older epoch is
//     dropped, a report with admission open never replaces a closed one,
//     and among closed reports the lower count wins (a closed count only
//     falls, D7). A report of the entry's epoch or newer refreshes the
//     arrival time.
//   - L3: an answer carries the cached report with its epoch, or
//     "unknown" when nothing fresh is cached (no entry, expired, or the
//     node is not a member).
//   - L4: a node's entry is dropped when it leaves membership.
//   - C5/F7: a stale LogCoordinator that answers "unknown" is harmless;
//     the coordinator never lets an unknown answer change its count
//     (package coordinator).
//
// # Determinism
//
// A Cache has no goroutines and reads no clock: time is the logical tick
// the caller passes in. It is safe for concurrent use.
package logcoord
