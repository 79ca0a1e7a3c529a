//go:build !amd64

package modelcheck

import "sync/atomic"

// prefetchLines loads each slot where the checker has no prefetch
// instruction: the loads do not depend on one another, so the batch's
// misses are under way together, and the inserts that follow find their
// lines in cache.
func prefetchLines(slots []*uint64) {
	for _, p := range slots {
		atomic.LoadUint64(p)
	}
}
