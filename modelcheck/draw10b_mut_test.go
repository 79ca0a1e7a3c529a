package modelcheck_test

import (
	"context"
	"testing"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// A weakly fair instance enabled where the loop starts but taken by no
// edge of the component is made fair by a state where it is disabled:
// the lasso's loop goes through that state (0 -> 1 -> back to 0, with K0
// enabled in 0 only) rather than stutter in 0, where K0 stays enabled.
func TestLassoMeetsAWeakInstanceWhereItIsDisabled(t *testing.T) {
	g := &randGraph{
		succ:    [][]int{{1}, {0}},
		takes:   [][]uint8{{0}, {0}},
		enabled: []uint8{1, 0},
		p:       []bool{true, false},
		q:       []bool{false, false},
	}
	res, err := modelcheck.Check[int](context.Background(), g, modelcheck.Options{Workers: 1})
	require.NoError(t, err)
	require.Equal(t, modelcheck.Violated, res.Outcome, res.Reason)
	require.Equal(t, "liveness", res.Kind)
	var states []int
	for _, st := range res.Trace {
		states = append(states, st.State)
	}
	require.Equal(t, []int{0, 1}, states)
	require.Equal(t, 0, res.LoopStart)
	require.Equal(t, "E1_0", res.LoopLabel, "the loop closes by the edge 1 -> 0")
}
