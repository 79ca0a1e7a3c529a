package modelcheck

import (
	"math"
	"testing"
)

// Of the problems the walks report, in whatever order the workers find
// them, the lowest walk's is the result, and no walk from the lowest
// problem's on is needed any more.
func TestLowestWalkReported(t *testing.T) {
	for _, order := range [][]int64{{5, 3, 4, 9}, {3, 5, 4}, {9, 5, 3}} {
		sim := &simulation[int]{res: &SimResult[int]{}}
		sim.stopAt.Store(math.MaxInt64)
		for _, w := range order {
			sim.report(w, "invariant", "Inv", []Step[int]{{State: int(w)}})
		}
		if sim.res.Walk != 3 || sim.res.Trace[0].State != 3 || sim.res.Outcome != Violated {
			t.Errorf("walks reported in the order %v: walk %d (trace of %d, %s), want walk 3", order, sim.res.Walk, sim.res.Trace[0].State, sim.res.Outcome)
		}
		if got := sim.stopAt.Load(); got != 3 {
			t.Errorf("walks reported in the order %v: walks from %d on stopped, want 3", order, got)
		}
	}
}
