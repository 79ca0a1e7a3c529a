package modelcheck

// prefetchLines asks the processor to bring the cache line at each
// address into its caches and returns at once (PREFETCHT0, which never
// faults, so an address may be stale).
//
//go:noescape
func prefetchLines(addrs []uintptr)
