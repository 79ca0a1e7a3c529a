package modelcheck_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// described is a grid whose steps are labelled by their Describe.
type described struct{ grid }

func (d *described) Describe(action string, from, to point) string {
	return fmt.Sprintf("%s to (%d, %d)", action, to.x, to.y)
}

// A simulation's reported walk labels every step after the first for
// people, as a search's trace does: with the model's Describe, the steps
// before the violating one included.
func TestSimulatedWalkIsLabelled(t *testing.T) {
	d := &described{grid{size: 30, bad: func(x, y int) bool { return x+y == 12 && x >= 6 }}}
	res, err := modelcheck.Simulate[point](context.Background(), d, modelcheck.SimOptions{Seed: 7, Depth: 40, Walks: 200, Workers: 1})
	require.NoError(t, err)
	require.Equal(t, modelcheck.Violated, res.Outcome)
	require.Greater(t, len(res.Trace), 2)
	for i := 1; i < len(res.Trace); i++ {
		st := res.Trace[i]
		require.Equal(t, d.Describe(st.Action, res.Trace[i-1].State, st.State), st.Label, "step %d", i)
	}
}
