package modelcheck

// prefetchLines asks the processor to bring the cache line of each slot
// into its caches, for writing, and returns at once (one call for a whole
// batch: a call per successor cost more than the prefetch gained).
//
// For writing (PREFETCHW) where the processor has it: a new state's
// compare-and-swap then finds its line held by this core alone. Fetched
// for reading (PREFETCHT0), a line that the other worker's core held too
// had to be taken from it by the swap: with two workers the swap was the
// costliest line of the search (600 ms of 4.5 s of CPU; 130 ms with one
// worker). Large model, 3 runs alternated: 1 worker 3.36-3.47 s wall with
// PREFETCHW, 3.58-3.81 s with PREFETCHT0; 2 workers 1.99-2.13 s,
// 2.17-2.24 s.
func prefetchLines(slots []*uint64) { prefetchLinesAsm(slots, hasPrefetchW) }

// hasPrefetchW reports whether the processor has PREFETCHW (CPUID
// 0x80000001, ECX bit 8; a processor without it may fault on it).
var hasPrefetchW = func() bool {
	if maxExt, _, _, _ := cpuid(0x80000000); maxExt < 0x80000001 {
		return false
	}
	_, _, c, _ := cpuid(0x80000001)
	return c&(1<<8) != 0
}()

// prefetchLinesAsm prefetches each slot's line, for writing if write.
//
//go:noescape
func prefetchLinesAsm(slots []*uint64, write bool)

func cpuid(leaf uint32) (a, b, c, d uint32)
