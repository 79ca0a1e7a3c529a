package twophase_test

import (
	"context"
	"testing"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/drainproof/drainproof/spec/twophase"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TLC's figures for TwoPhase (tla/twophase/MCTwoPhase{3,5}[Sym].cfg, the
// spec of tlaplus/Examples), 3 and 5 RMs, without and with SYMMETRY
// Permutations(RM), as TLC (rev cc6b616) reports them; with the symmetry,
// the orbits of the reachable states and the successors of one state per
// orbit.
func TestTLCParity(t *testing.T) {
	for _, tc := range []struct {
		rms                 int
		symmetry            bool
		distinct, generated int64
		depth               int
	}{
		{3, false, 288, 1146, 11},
		{5, false, 8832, 58146, 17},
		{3, true, 80, 318, 11},
		{5, true, 314, 2048, 17},
	} {
		for _, workers := range []int{1, 2, 7} {
			m, err := twophase.New(tc.rms, false)
			require.NoError(t, err)
			res, err := modelcheck.Check[twophase.State](context.Background(), m, modelcheck.Options{Workers: workers, UseSymmetry: tc.symmetry})
			require.NoError(t, err)
			require.Equal(t, modelcheck.OK, res.Outcome, "rms=%d workers=%d", tc.rms, workers)
			require.Equal(t, tc.distinct, res.Distinct, "rms=%d symmetry=%v workers=%d", tc.rms, tc.symmetry, workers)
			require.Equal(t, tc.generated, res.Generated, "rms=%d symmetry=%v workers=%d", tc.rms, tc.symmetry, workers)
			require.Equal(t, tc.depth, res.Depth, "rms=%d symmetry=%v workers=%d", tc.rms, tc.symmetry, workers)
		}
	}
}

// The planted early commit is caught by TCConsistent with the shortest
// trace of six states, such as RMPrepare, TMRcvPrepared, TMCommit,
// RMRcvCommitMsg, RMChooseToAbort (the order among RMs may vary).
func TestPlantedBug(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		m, err := twophase.New(3, true)
		require.NoError(t, err)
		res, err := modelcheck.Check[twophase.State](context.Background(), m, modelcheck.Options{Workers: workers})
		require.NoError(t, err)
		require.Equal(t, modelcheck.Violated, res.Outcome)
		require.Equal(t, "TCConsistent", res.Violated)
		require.Len(t, res.Trace, 6)
		require.Equal(t, "Init", res.Trace[0].Action)
		var actions []string
		for _, st := range res.Trace {
			actions = append(actions, st.Action)
		}
		require.Contains(t, actions, "TMCommit")
		require.False(t, m.Holds(1, res.Trace[5].State))
		for _, st := range res.Trace[:5] {
			require.True(t, m.Holds(1, st.State))
		}
	}
}

func TestNewRejectsBadSize(t *testing.T) {
	_, err := twophase.New(0, false)
	require.Error(t, err)
	_, err = twophase.New(twophase.MaxRMs+1, false)
	require.Error(t, err)
}

// Canonical is constant on orbits and stays in them: for every reachable
// state of TwoPhase with 4 RMs and every permutation, the permuted state
// has the same representative, which is itself a permutation of s.
func TestCanonicalIsAnOrbitInvariant(t *testing.T) {
	const n = 4
	m, err := twophase.New(n, false)
	require.NoError(t, err)
	var perms [][]int
	var gen func(p []int, used int)
	gen = func(p []int, used int) {
		if len(p) == n {
			perms = append(perms, append([]int(nil), p...))
			return
		}
		for i := 0; i < n; i++ {
			if used&(1<<i) == 0 {
				gen(append(p, i), used|1<<i)
			}
		}
	}
	gen(nil, 0)
	seen := map[twophase.State]bool{0: true}
	queue := []twophase.State{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		c := m.Canonical(s)
		inOrbit := false
		for _, p := range perms {
			ps := m.Permute(s, p)
			require.Equal(t, c, m.Canonical(ps), "state %x perm %v", s, p)
			inOrbit = inOrbit || ps == c
		}
		require.True(t, inOrbit, "the representative of %x is a permutation of it", s)
		m.Next(s, func(_ string, t twophase.State) {
			if !seen[t] {
				seen[t] = true
				queue = append(queue, t)
			}
		})
	}
	require.Equal(t, 1568, len(seen)) // 4 RMs without symmetry: TLC 1,568 distinct
}
