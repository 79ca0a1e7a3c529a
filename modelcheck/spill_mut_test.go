package modelcheck_test

import (
	"os"
	"testing"
	"time"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// The seen-set moves to disk only when the set and the queue pass half the
// memory budget: a search with a spill folder whose set stays well within
// that keeps the set in memory (no spill, nothing written, nothing left in
// the folder) and ends with the figures and the trace of a search without
// a spill folder.
func TestSetWithinHalfTheBudgetStaysInMemory(t *testing.T) {
	g := &grid{size: 100, bad: func(x, y int) bool { return x+y == 197 && x == 99 }}
	inMemory := check(t, g, modelcheck.Options{Workers: 1})
	require.Equal(t, modelcheck.Violated, inMemory.Outcome)
	const budget = 256 << 20
	require.Less(t, inMemory.SetBytes, int64(budget/8), "the set stays well within half the budget")

	dir := t.TempDir()
	res := check(t, g, modelcheck.Options{Workers: 1, MemoryBudget: budget, SpillDir: dir})
	require.Equal(t, modelcheck.Violated, res.Outcome)
	require.Zero(t, res.Spills, "the set never moved to disk")
	require.Zero(t, res.SpillBytes)
	require.Zero(t, res.QueueSpillBytes)
	require.Equal(t, inMemory.Distinct, res.Distinct)
	require.Equal(t, inMemory.Generated, res.Generated)
	require.Equal(t, inMemory.Trace, res.Trace)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left)
}

// A recovered search (Options.Recover) loads the set from the checkpoint
// into memory while the set fits in half the memory budget, and moves it
// to disk as it loads once it passes that, as the search itself would have:
// recovering with a spill folder and a budget the set stays well within
// spills nothing, recovering with a budget the loaded set passes spills it.
// The recovered search here resumes at the level whose expansion finds the
// problem and stops there (one worker), so it has no level's end of its
// own to spill at: the spills are the load's. Both end with the figures
// and the trace of the run that wrote the checkpoint.
func TestRecoveryKeepsTheSetInMemoryWithinHalfTheBudget(t *testing.T) {
	g := &grid{size: 70, bad: func(x, y int) bool { return x+y == 137 && x == 69 }} // 4,900 states: two log chunks
	ck := t.TempDir()
	first := check(t, g, modelcheck.Options{Workers: 1, CheckpointDir: ck, CheckpointEvery: time.Nanosecond})
	require.Equal(t, modelcheck.Violated, first.Outcome)
	require.Zero(t, first.Spills)

	const large = 256 << 20
	require.Less(t, first.SetBytes, int64(large/8), "the set stays well within half the large budget")
	for _, tc := range []struct {
		budget  int64
		spilled bool
	}{
		{large, false},
		{first.SetBytes / 2, true}, // the loaded set passes half of it
	} {
		dir := t.TempDir()
		again := check(t, g, modelcheck.Options{Workers: 1, Recover: ck, MemoryBudget: tc.budget, SpillDir: dir})
		require.Greater(t, again.ResumedAt, 130, "resumed near the end")
		if tc.spilled {
			require.Positive(t, again.Spills, "budget %d: the set moved to disk as it loaded", tc.budget)
			require.Positive(t, again.SpillBytes)
		} else {
			require.Zero(t, again.Spills, "budget %d: the set stayed in memory", tc.budget)
			require.Zero(t, again.SpillBytes)
		}
		require.Equal(t, first.Outcome, again.Outcome)
		require.Equal(t, first.Distinct, again.Distinct)
		require.Equal(t, first.Generated, again.Generated)
		require.Equal(t, first.Trace, again.Trace)
		left, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Empty(t, left, "the spill's files are removed")
	}
}
