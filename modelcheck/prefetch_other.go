//go:build !amd64

package modelcheck

// prefetchLines is a no-op where the checker has no prefetch instruction:
// the inserts then wait for their slots' lines (flush's touch still
// overlaps a batch's misses).
func prefetchLines(addrs []uintptr) {}
