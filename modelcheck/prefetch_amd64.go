package modelcheck

// prefetch asks the CPU to bring addr's cache line in, without waiting
// for it: a fingerprint probe is a cache miss, and issuing the misses of a
// batch of successors together lets them overlap.
//
//go:noescape
func prefetch(addr *uint64)
