package modelcheck

// prefetchLines asks the processor to bring the cache line of each slot
// into its caches and returns at once (PREFETCHT0, one call for a whole
// batch: a call per successor cost more than the prefetch gained).
//
//go:noescape
func prefetchLines(slots []*uint64)
