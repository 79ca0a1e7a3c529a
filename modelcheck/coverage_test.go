package modelcheck_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/modelcheck"
)

// Coverage on the n×n grid with a self-loop: IncX and IncY each generate
// and reach n(n-1) states, together find the n²-1 states other than the
// initial one first, and Stay generates n² successors but never changes
// the state.
func TestCoverage(t *testing.T) {
	const n = 8
	cov, err := modelcheck.Coverage(context.Background(), &grid{size: n, selfLoop: true}, 0)
	require.NoError(t, err)
	cov = modelcheck.SortCoverage(cov, []string{"Stay", "IncY", "IncX", "Never"})
	require.Len(t, cov, 4)
	stay, incY, incX, never := cov[0], cov[1], cov[2], cov[3]
	require.Equal(t, modelcheck.ActionCoverage{Action: "Stay", Generated: n * n}, stay)
	require.Equal(t, modelcheck.ActionCoverage{Action: "Never"}, never)
	for _, c := range []modelcheck.ActionCoverage{incX, incY} {
		require.EqualValues(t, n*(n-1), c.Generated, c.Action)
		require.EqualValues(t, n*(n-1), c.Reached, c.Action)
	}
	require.EqualValues(t, n*n-1, incX.Distinct+incY.Distinct)
	require.GreaterOrEqual(t, incY.Distinct, int64(n-1), "the column x = 0 is only reachable by IncY")
}

func TestCoverageHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := modelcheck.Coverage(ctx, &grid{size: 4}, 0)
	require.ErrorIs(t, err, context.Canceled)
}
