// Package modelcheck is drainproof's explicit-state model checker: a
// generic, protocol-agnostic breadth-first search over any type that
// implements [Model], in the manner of TLC.
//
// It imports nothing of this repository; the protocol model in package spec
// satisfies [Model] structurally, and package twophase (Lamport's Two-Phase
// Commit, TwoPhase.tla) calibrates it against TLC's published figures.
//
// # Usage
//
//	res, err := modelcheck.Check(ctx, model, modelcheck.Options{Workers: 2, CheckDeadlock: true})
//	switch res.Outcome {
//	case modelcheck.Violated, modelcheck.Deadlock:
//		modelcheck.WriteTrace(os.Stdout, model, res.Trace, res.LoopStart)
//	}
//
// # What it does, as TLC does it
//
//   - States are fingerprinted to 64 bits (an xxHash64 construction over the
//     model's canonical encoding; for a [Plain] model, a sum of one mix per
//     8-byte word of the state, which a successor updates for the words its
//     step changed); [CollisionProbability] is TLC's optimistic estimate of
//     a hidden collision.
//   - The search is level-synchronous BFS, parallel within a level, so safety
//     counterexamples are shortest and a complete run's figures do not depend
//     on the number of workers.
//   - Figures count as TLC counts: generated states include the initial
//     states and every successor with multiplicity (self-loops too), and the
//     initial states are depth 1 (TwoPhase, 3 RMs: 288 distinct, 1,146
//     generated, depth 11).
//   - Invariants are checked on every new state, action properties
//     ([ActionPropertied], TLC's [][P]_vars) on every transition, deadlock on
//     every state without successors, and liveness properties of the form
//     P ~> Q under weak and strong fairness ([Live]) on the reachable graph
//     once the safety search is complete.
//   - Limits (states, depth, time, a cancelled context) end a run as
//     [Incomplete] with the figures reached, never with a crash.
//   - [Simulate] runs seeded random walks that check every successor (TLC's
//     -simulate), for state spaces too large to explore; [WriteTrace] and
//     [WriteTraceHTML] show counterexamples to people.
//
// # Memory
//
// The seen-set keeps each state's 64-bit fingerprint in a sharded
// open-addressing table and a 12-byte log entry (fingerprint and a 32-bit
// reference to the state it was reached from): 22 to 32 bytes per distinct
// state. Counterexamples are rebuilt by following those references back to
// an initial state and replaying the model, never from stored states. Whole
// states live only in the BFS frontier (two levels at a time).
//
// Past memory ([Options.SpillDir]): when the seen-set and the queue pass
// half of [Options.MemoryBudget] at the end of a level, the tables'
// fingerprints are merged into one sorted file (the run, 8 bytes a state
// on disk) and the tables start again empty; the full chunks of the log
// go to a file per worker. A successor missing from the tables is then
// looked up in the run, which is mapped and read through the page cache:
// its place is estimated from the fingerprint's value (fingerprints are
// spread evenly) and found by a short gallop. The level queues move to
// disk too (states of a plain type): past a quarter of the budget during
// a level, each worker writes its full blocks of the next level to a
// file, and a level with blocks on disk is expanded in segments read back
// in its order, so the figures and counterexamples are those of a search
// in memory. With a run on disk the workers look successors up in sorted
// batches ([LookupSorted]): each batch's lookups read the run's pages in
// ascending order. In memory the default ([LookupAuto]) probes each
// successor in turn ([LookupHash]); docs/perf.md has the
// measurements behind the choice.
//
// # Speed
//
// The search is built to wait on memory as little as it can: no
// allocation per state, plain states fingerprinted as their words and a
// successor's fingerprint updated for the words its step changed, a
// per-worker cache of recent fingerprints in front of the seen set,
// batched and prefetched inserts into a lock-free 64-bit set, huge-page
// arenas for the set's log and the frontier. docs/perf.md has every
// measurement behind these choices, what was tried and dropped, and the
// side-by-side figures against TLC; make bench reproduces the
// benchmarks:
//
//	go test -run '^$' -bench Drain -benchtime 1x ./modelcheck
package modelcheck
