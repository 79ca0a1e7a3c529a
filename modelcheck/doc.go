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
// spread evenly) and found by a short gallop. The level queues stay in
// memory. With a run on disk the workers look successors up in sorted
// batches ([LookupSorted]): each batch's lookups read the run's pages in
// ascending order. In memory the default ([LookupAuto]) probes each
// successor in turn ([LookupHash]); docs/perf-seenset.md has the
// measurements behind the choice.
//
// # Speed
//
// What makes the search fast, each measured side by side (BenchmarkDrain,
// CPU seconds user+sys of the whole run, best of 2-3, on 2 shared vCPUs):
//
//   - no allocation per state: a model's checks called through a table of
//     functions made the compiler move every checked state to the heap
//     (spec calls them through switches now): default model, 1 worker,
//     3.48 s -> 1.80 s;
//   - [Plain] states are fingerprinted as their bytes, without Encode:
//     1.80 s -> 1.65 s;
//   - a per-worker cache of the 2,048 fingerprints last sent to the set
//     spares it about half its probes: 1.70 s -> 1.34 s;
//   - [PointerChecked] checks take pointers, not copies: 7-8% of the CPU
//     time on the large model (quiet machine, 1 worker, 3 runs each
//     alternated: 7.31-7.39 s with them, 7.93-7.95 s without);
//   - a worker loads the first slot of every probe of a batch before it
//     inserts the batch, in a loop that does not branch on what it loads,
//     so the batch's cache misses overlap (now prefetch): large model, 1
//     worker, 3 runs each alternated, 6.50-6.73 s of user CPU with it,
//     7.24-7.90 s without;
//   - the shards' tables are kept apart from their locks, so an insert
//     does not take from the other workers' caches the line they read at
//     every probe: large model, 2 workers, 7.41-7.42 s, 7.70-7.94 s before;
//   - spec's Next calls each action directly (no closure over a method
//     value): 5.99-6.12 s, 6.22-6.31 s before;
//   - the larger seen-set tables are carved from slabs mapped with
//     huge-page advice (fewer TLB misses): 5.76-5.93 s, 6.07-6.31 s
//     before (4 runs each alternated), for about 40 MiB more peak RSS;
//   - a full batch is not inserted at once: its slots are prefetched
//     (one assembly call per batch) and it is inserted when
//     the next batch is full, so its misses are served while successors
//     are generated; and a self-loop (a successor equal to its parent, 14%
//     of the default model's successors) is counted and nothing more: it
//     is stored, and [P]_vars holds on it. Together, large model, 4 runs
//     each alternated: 1 worker 5.79-6.00 s wall, 6.15-6.46 s before; 2
//     workers 3.58-3.63 s, 3.71-3.83 s before;
//   - a 64-bit set inserts without a lock (a compare-and-swap into the
//     slot; growth closes the empty slots it has copied): the shard locks'
//     lines, taken by both workers for every new state, were 7% of the
//     CPU time of two workers. Large model, 2 workers, 4 runs alternated:
//     3.42-3.89 s wall, 3.66-4.09 s before (each run 0.16-0.24 s faster
//     than the one before it); 1 worker unchanged;
//   - the blocks of the level last expanded hold the states of the next
//     ones (blockPool): fresh blocks had their pages faulted in by the
//     first writes. 1 worker 5.73-5.96 s, 5.93-6.03 s before; 2 workers
//     3.31-3.37 s, 3.38-3.49 s; peak RSS 236 MiB, 260 before. (Tried
//     twice before without a measurable gain, when other costs hid it.)
//   - the seen-set's log and a plain model's blocks come from an arena of
//     huge-page slabs, unmapped when the run ends: 3,200 page faults
//     instead of 24,700; 1 worker 5.56-5.80 s, 5.91-6.12 s before; 2
//     workers 3.26-3.34 s, 3.42-3.49 s;
//   - the self-loop test compares a word at a time (samePlain) instead of
//     calling bytes.Equal (5% of the profile): 1 worker 5.47-5.61 s,
//     5.59-5.74 s before; 2 workers about the same;
//   - a plain state's fingerprint is a sum over its words (wordHash), and a
//     successor's is its parent's updated for the words the step changed,
//     found by the comparison that finds self-loops: a step changes one to
//     three of the protocol state's nine words, so a successor costs one to
//     three word mixes instead of a hash of 68 bytes (which was 11% of the
//     profile) and a comparison. 1 worker 4.96-5.02 s, 5.45-5.74 s before
//     (3 runs each alternated); 2 workers 2.97-3.35 s, 3.15-3.21 s (noise);
//     --fp 128 5.80 s of CPU, 6.56 s before;
//   - an [InPlace] model writes each successor where the checker reads it,
//     instead of passing it by value through two calls: 1 worker
//     4.71-4.93 s, 4.97-5.32 s before; 2 workers 2.82-3.29 s, 2.96-3.38 s;
//     and spec's actions write their successors in place too (no copy
//     through a returned value): 1 worker 3.48-3.59 s, 4.07-4.29 s before;
//   - a probe's next line is prefetched with its first (a probe at load
//     0.8 often runs past its first line): 1 worker 3.99-4.11 s,
//     4.17-4.62 s before; 2 workers 2.41-2.53 s, 2.52-2.71 s;
//   - the lines are prefetched for writing (PREFETCHW), so a new state's
//     compare-and-swap finds its line held by its core alone (with two
//     workers the swap had been the costliest line of the search): 1
//     worker 3.35 s, 3.68-3.81 s before; 2 workers 1.99 s, 2.17-2.19 s;
//   - the workers' output headers on lines apart (each new state updates
//     its worker's header; two on one line took it from core to core):
//     pprof had blocks.add at 0.22 s with two workers, ~0 with one. 2
//     workers 1.70-1.87 s, 1.79-1.96 s before (3 runs alternated; tried
//     once before, when other costs hid it);
//   - a [PointerChecked] model answers for all selected invariants in
//     one call per new state, and for all selected action properties in
//     one per step (two calls per step, eight per state before): 1 worker
//     3.30-3.35 s, 3.45-3.78 s before; 2 workers 1.84-1.85 s, 1.91-1.95 s.
//     (With no property checked at all the run took 2.3-2.4 s against
//     3.2-3.3 s, a quarter of it: more than pprof shows for the checks
//     themselves, which are 11% of its samples.)
//   - the recent-cache test without a branch (the successor is written past
//     the batch's end and kept on a miss: the cache hits half the time, at
//     random, and the branch was mispredicted as often), spec's
//     FailingStepPtr answering without a call per property for a step that
//     keeps epoch and liveness from a state with no gate bit set (most
//     steps; later also for one that keeps every count and program
//     counter: 1 worker 2.77-2.85 s, 2.92-3.03 s before), and the shard
//     counts kept by their worker without an atomic
//     add per new state. Together, warm memory (see below), 5 runs
//     alternated: 1 worker 2.87-3.17 s (median 2.93), 3.09-3.68 s (3.19)
//     before; 2 workers 1.76-2.62 s (1.84), 1.90-2.48 s (1.94). Writing
//     the pending successor into its batch slot field by field rather
//     than through a composite literal (built on the stack, then copied)
//     added 1-2%, within the noise;
//   - the checker binary is built with profile-guided optimisation
//     (cmd/checker/default.pgo: CPU profiles of the checker on the three
//     models of over a million states, one and two workers; make pgo
//     refreshes it). With the profile the compiler inlines the hot calls
//     it leaves as calls without one: the insert into the set, the
//     fingerprint step, spec's invariants and action properties (through
//     PointerChecked, devirtualised), many of spec's actions. 6 runs
//     alternated, warm memory: 1 worker 2.70-2.82 s (median 2.72),
//     2.86-2.96 s (2.92) without; 2 workers 1.62-1.92 s (1.83), 1.81-2.28 s
//     (2.05) without, and 1.63-1.90 s (1.65), 1.71-2.04 s (1.95) in a
//     second set. Tried once before, when other costs hid it (1-2%). The
//     package's own benchmarks (go test) build without it unless given
//     -pgo=../cmd/checker/default.pgo, as make bench gives it; a program
//     that imports modelcheck can build with the same profile, or with one
//     of its own runs.
//
// Tried and dropped, no gain beyond the run-to-run noise (about 5%):
// handing the checker's emit to spec's successor generation without the
// closure that takes the step, tuning the collector (GOGC 25 to 400),
// reading the frontier's next lines ahead of the writes, an XXH3-style
// fingerprint for short inputs, batches of 512, a recent-fingerprint cache
// of 512 or 8,192 entries, a fingerprint that mixes each 8-byte word on its
// own and sums them (0-1.5%; made incremental later, it gained), batches
// of 64 or 256 with the prefetch (tried again with the two-line
// PREFETCHW: no better), prefetching a batch in groups of 4 or 16 successors as it fills instead
// of all at once (slower), a table load of at most 0.7 or 0.5, a probe that
// starts at the fingerprint's top bits so growth copies a table in order
// (growth fell from 5% to 3-4% of the profile, the run did not shorten),
// the shared counts on cache lines apart from the fields read for every
// successor; a table load of at most 0.6 instead of 0.8 gained about 2% for
// a fifth more memory. Sending each successor to the worker that owns its shard,
// so a shard's lines stay in one core's cache, made two workers slower
// (3.44-3.59 s against 3.14-3.34 s, alternated 4 times): every successor
// sent takes its state's two cache lines to the other core, more lines
// than the shared set moves. Later, with the two-line prefetch and
// PREFETCHW: fetching only a probe's home line one batch ahead and, a batch
// later, the next line of the probes found to run past it (1 worker 8%
// slower, 2 workers 16%: the scan cost more than the lines it spared); a
// mask of the changed words built without a branch, then a mix per set bit
// (BenchmarkParentHashStep 20 ns against 16.5; 1 worker 3.16-3.45 s against
// 3.04-3.09 s); plain stores instead of compare-and-swaps when one worker
// inserts (no change); recent caches of 16,384 and 65,536 entries with the
// branchless test (no better; slower); slabs faulted in ahead by another
// thread (MADV_POPULATE_WRITE: one worker 6% faster when memory is cold,
// unchanged when warm, 64 MiB more peak RSS); GOMAXPROCS=1 or pinning a
// one-worker run to a vCPU (within 2%); spec's successors handed to the
// checker's emit without the closure that takes the step, tried again (1
// worker 2.84-3.09 s against 2.90-3.08 s, 2 workers unchanged: pprof's
// 7% for the closure is mostly the samples of the calls around it); the
// selected invariants evaluated in one pass over a mask of them instead
// of a call and a dispatch each (2.76-2.90 s against 2.77-2.89 s; with no
// invariant selected at all the run is 5-11% shorter, so what is left is
// the invariants themselves); a word mix of one 64x64->128-bit multiply
// (wyhash's) instead of murmur3's fmix64, which TestWordHashStructured
// rejected: 1,106 pairs of structured states shared their low 32 bits
// where 512 are expected.
//
// The large protocol model (4,476,318 states, 39,194,117 generated) took
// 21.7 s of CPU with one worker before any of these changes, 2.7-2.8 s
// now with warm memory in the checker binary (about 1,650,000 distinct
// states per second, 70 ns per generated state, with one worker; 2.8-3.0
// s without the profile). Where the time goes (large model, 1 worker, warm
// memory, pprof, without the profile, 3.04 s of samples): spec's
// successor generation 25%, the seen-set 20% (probes that wait on memory
// despite the prefetch, the log, growth 3%), fingerprints 14%, the
// checker's own work per successor about 17% (emit 7%, the closure that
// hands it spec's successors 7% though removing it gained 2% at most, the
// recent cache, the insert loop), invariants and action properties 8%,
// the queues 1%, the rest the runtime and the calls between these.
//
// Memory that the process touches for the first time costs what the
// guest paid for it: right after another process freed memory (as ours
// runs after TLC in checker tlc --versus, or after a 2 GiB allocation in
// the measurements above) growth's new tables took 39 ms to fault in and
// 60 ms to fill; with nothing freed in the seconds before (the guest gives
// freed memory back to the host), 130-260 ms to fault in, a first write
// costing about 1.5 ms per MiB (0.35-0.7 GB/s). Back-to-back runs fall in
// between; the figures above alternate the binaries under one condition.
//
// Two workers spend 10-25% more CPU than one, and most of it is the
// host's: two independent one-worker runs at once, each pinned to its
// vCPU, took 3.08-3.92 s each against 2.86-2.94 s alone, and random loads
// from 256 MiB go 1.35-1.45 times as fast on two threads as on one while a
// compute loop goes 2.0 times as fast, and spec's BenchmarkNext (successor
// generation over a few thousand states, in the caches) runs 0-4% slower
// with both vCPUs busy than alone: the two cores are the guest's, the
// memory system behind them is shared. The workers wait at the level
// barriers about 2% of the time.
//
//	go test -run '^$' -bench Drain -benchtime 1x ./modelcheck
package modelcheck
