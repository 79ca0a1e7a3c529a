package modelcheck_test

import (
	"testing"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// A search that continues past its problems reports the shortest: an
// invariant broken three steps in, not the action property a Reset
// breaks four steps in, which the search meets too.
func TestContinueReportsTheShortestProblem(t *testing.T) {
	for _, workers := range []int{1, 4} {
		m := &monotone{grid{size: 8, bad: func(x, y int) bool { return x == 0 && y == 3 }}}
		res := check(t, m, modelcheck.Options{Continue: true, Workers: workers})
		require.Equal(t, modelcheck.Violated, res.Outcome)
		require.Equal(t, "Safe", res.Violated, "workers %d", workers)
		require.Equal(t, "invariant", res.Kind)
		require.Len(t, res.Trace, 4)
	}
}
