package modelcheck_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/drainproof/drainproof/modelcheck"
	"pgregory.net/rapid"
)

// randGraph is a random finite graph with random fairness: node v has
// edges to succ[v] (each its own action, taking the instances in
// takes[v][i]); instance k is enabled in v when enabled[v] has bit k, and
// strong when strong has bit k; q marks the goal states.
type randGraph struct {
	succ    [][]int
	takes   [][]uint8
	enabled []uint8
	strong  uint8
	q, p    []bool
}

func (g *randGraph) Init(emit func(int)) { emit(0) }
func (g *randGraph) Next(v int, emit func(string, int)) {
	for i, w := range g.succ[v] {
		emit(fmt.Sprintf("E%d_%d", v, i), w)
	}
}
func (g *randGraph) Encode(dst []byte, v int) []byte {
	return binary.LittleEndian.AppendUint32(dst, uint32(v))
}
func (g *randGraph) Invariants() []string              { return nil }
func (g *randGraph) Holds(int, int) bool               { return true }
func (g *randGraph) LivenessProperties() []string      { return []string{"P ~> Q"} }
func (g *randGraph) LeadsTo(_ int, v int) (bool, bool) { return g.p[v], g.q[v] }
func (g *randGraph) key(k int) string                  { return fmt.Sprintf("K%d", k) }
func (g *randGraph) FairEnabled(v int, emit func(string, bool)) {
	for k := 0; k < 8; k++ {
		if g.enabled[v]&(1<<k) != 0 {
			emit(g.key(k), g.strong&(1<<k) != 0)
		}
	}
}
func (g *randGraph) FairTaken(action string, from, _ int, emit func(string)) {
	var i int
	fmt.Sscanf(action, fmt.Sprintf("E%d_%%d", from), &i)
	for k := 0; k < 8; k++ {
		if g.takes[from][i]&(1<<k) != 0 {
			emit(g.key(k))
		}
	}
}

// Every lasso the checker prints is a real counterexample: a path of the
// graph from the initial state, through a state with P and not Q, then
// only through states without Q, ending in a loop closed by a real edge
// (or stuttering) that is fair: every strong instance enabled somewhere on
// the loop is taken on it, every weak one enabled all along it is taken on
// it. And it does not depend on the number of workers.
func TestLassosAreFairCounterexamples(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(rt, "n")
		g := &randGraph{strong: uint8(rapid.IntRange(0, 3).Draw(rt, "strong"))}
		for v := 0; v < n; v++ {
			out := rapid.IntRange(0, 3).Draw(rt, "out")
			var succ []int
			var takes []uint8
			for i := 0; i < out; i++ {
				succ = append(succ, rapid.IntRange(0, n-1).Draw(rt, "to"))
				takes = append(takes, uint8(rapid.IntRange(0, 3).Draw(rt, "takes")))
			}
			g.succ, g.takes = append(g.succ, succ), append(g.takes, takes)
			g.enabled = append(g.enabled, uint8(rapid.IntRange(0, 3).Draw(rt, "enabled")))
			g.q = append(g.q, rapid.IntRange(0, 3).Draw(rt, "q") == 0)
			g.p = append(g.p, rapid.Bool().Draw(rt, "p"))
		}
		var first *modelcheck.Result[int]
		for _, workers := range []int{1, 3} {
			res, err := modelcheck.Check[int](context.Background(), g, modelcheck.Options{Workers: workers})
			if err != nil {
				rt.Fatal(err)
			}
			if first == nil {
				first = res
			} else if fmt.Sprint(first.Trace, first.LoopStart, first.Outcome) != fmt.Sprint(res.Trace, res.LoopStart, res.Outcome) {
				rt.Fatalf("workers change the lasso: %v / %v", first.Trace, res.Trace)
			}
		}
		if first.Outcome == modelcheck.OK {
			return
		}
		tr, loop := first.Trace, first.LoopStart
		if first.Outcome != modelcheck.Violated || first.Kind != "liveness" || tr[0].State != 0 || loop < 0 || loop >= len(tr) {
			rt.Fatalf("bad result %+v", first)
		}
		// edge returns the index of the edge v -> w that action names.
		edge := func(v, w int, action string) int {
			for i, x := range g.succ[v] {
				if x == w && action == fmt.Sprintf("E%d_%d", v, i) {
					return i
				}
			}
			rt.Fatalf("%d -> %d by %s is no edge", v, w, action)
			return -1
		}
		trigger := -1
		for i, st := range tr {
			if i > 0 {
				edge(tr[i-1].State, st.State, st.Action)
			}
			if trigger < 0 && g.p[st.State] && !g.q[st.State] {
				trigger = i
			}
			if trigger >= 0 && g.q[st.State] {
				rt.Fatalf("Q holds at step %d after the trigger at %d", i, trigger)
			}
		}
		if trigger < 0 {
			rt.Fatalf("no state with P and not Q on the lasso")
		}
		var takenMask uint8
		var loopEnabledAll, loopEnabledAny uint8 = 0xff, 0
		for i := loop; i < len(tr); i++ {
			v := tr[i].State
			loopEnabledAll &= g.enabled[v]
			loopEnabledAny |= g.enabled[v]
			if i > loop {
				takenMask |= g.takes[tr[i-1].State][edge(tr[i-1].State, v, tr[i].Action)]
			}
		}
		if first.LoopLabel != "" {
			last := tr[len(tr)-1].State
			found := false
			for i, w := range g.succ[last] {
				if w == tr[loop].State && first.LoopLabel == fmt.Sprintf("E%d_%d", last, i) {
					takenMask |= g.takes[last][i]
					found = true
				}
			}
			if !found {
				rt.Fatalf("the loop is closed by %q, no edge back to state %d", first.LoopLabel, loop+1)
			}
		} else if loop != len(tr)-1 {
			rt.Fatalf("a stuttering loop must be the last state alone")
		}
		if bad := loopEnabledAny & g.strong &^ takenMask; bad != 0 {
			rt.Fatalf("strong instances %b enabled on the loop, never taken", bad)
		}
		if bad := loopEnabledAll &^ g.strong &^ takenMask; bad != 0 {
			rt.Fatalf("weak instances %b enabled all along the loop, never taken", bad)
		}
	})
}
