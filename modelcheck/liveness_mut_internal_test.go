package modelcheck

import (
	"testing"
	"unsafe"
)

// The liveness graph's memory estimate, which the memory budget is
// checked against while the graph is built, is no less than the memory of
// the graph's arrays (the states, the int32 arrays of parents, edges and
// fairness instances, the action names) and grows with the id map by
// more than the map's keys and values.
func TestLivenessGraphEstimateCoversItsArrays(t *testing.T) {
	const n = 1000
	g := &lgraph[int64]{
		states:       make([]int64, 0, n),
		parent:       make([]int32, 0, n),
		edgeStart:    make([]int32, 0, n+1),
		targets:      make([]int32, 0, 3*n),
		takenStart:   make([]int32, 0, 3*n+1),
		taken:        make([]int32, 0, 2*n),
		enabledStart: make([]int32, 0, n+1),
		enabled:      make([]int32, 0, 2*n),
		actions:      make([]string, 0, 3*n),
	}
	int32s := cap(g.parent) + cap(g.edgeStart) + cap(g.targets) + cap(g.takenStart) + cap(g.taken) + cap(g.enabledStart) + cap(g.enabled)
	arrays := int64(cap(g.states))*8 + int64(int32s)*4 + int64(cap(g.actions))*int64(unsafe.Sizeof(""))
	if got := g.bytes(0); got < arrays {
		t.Errorf("the estimate is %d bytes, below the %d of the graph's arrays", got, arrays)
	}
	// An id map entry holds a [2]uint64 key and an int32 value.
	if d := g.bytes(n) - g.bytes(0); d < n*(16+4) {
		t.Errorf("%d ids add %d bytes to the estimate, below their keys' and values' %d", n, d, n*(16+4))
	}
}
