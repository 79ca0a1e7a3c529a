package modelcheck_test

import (
	"os"
	"testing"
	"time"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// The sorted lookup stores the states of a batch in the order they were
// generated, so with one worker it finds the very counterexample the hash
// lookup finds (single-worker TLC's: of two successors with one
// fingerprint, the first generated is stored, with its parent), at the
// same figures. The grid's diagonals make every state of a level a
// successor of two states of the level before, in one batch.
func TestLookupsFindTheSameCounterexample(t *testing.T) {
	for _, m := range []modelcheck.Model[point]{
		&grid{size: 300, bad: func(x, y int) bool { return x+y == 250 && x == 140 }},
		&grid{size: 300, bad: func(x, y int) bool { return x == 299 && y > 100 }},
		&monotone{grid{size: 200}},
	} {
		hash := check(t, m, modelcheck.Options{Workers: 1, Lookup: modelcheck.LookupHash})
		sorted := check(t, m, modelcheck.Options{Workers: 1, Lookup: modelcheck.LookupSorted})
		require.Equal(t, modelcheck.Violated, hash.Outcome)
		require.Equal(t, hash.Distinct, sorted.Distinct)
		require.Equal(t, hash.Generated, sorted.Generated)
		require.Equal(t, hash.Depth, sorted.Depth)
		require.Equal(t, hash.Trace, sorted.Trace)
	}
}

// A search whose seen-set passes half its memory budget moves the set to
// disk, level after level, and ends with the figures and the
// counterexample of a search in memory; its folder is removed at the end.
func TestSpillGivesTheFiguresInMemory(t *testing.T) {
	modelcheck.SkipInMutationCut(t)
	g := &grid{size: 700} // 490,000 states, about 15 MiB of seen-set
	bad := &grid{size: 700, bad: func(x, y int) bool { return x+y == 1000 && x == 600 }}
	lookups := []modelcheck.Lookup{modelcheck.LookupAuto, modelcheck.LookupSorted, modelcheck.LookupHash}
	if raceEnabled {
		lookups = lookups[:1] // auto: sorted once spilled, the path the others share
	}
	for _, workers := range []int{1, 3} {
		for _, lookup := range lookups {
			dir := t.TempDir()
			opts := modelcheck.Options{Workers: workers, MemoryBudget: 4 << 20, SpillDir: dir, Lookup: lookup}
			res := check(t, g, opts)
			require.Equal(t, modelcheck.OK, res.Outcome, res.Reason)
			require.EqualValues(t, 700*700, res.Distinct)
			require.EqualValues(t, 1+2*700*699, res.Generated)
			require.Equal(t, 2*700-1, res.Depth)
			require.Greater(t, res.Spills, 1)
			require.Positive(t, res.SpillBytes)
			require.Less(t, res.SetBytes, int64(4<<20), "the set in memory")
			left, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Empty(t, left, "the spill's files are removed")

			inMemory := check(t, bad, modelcheck.Options{Workers: workers, Lookup: lookup})
			spilled := check(t, bad, opts)
			require.Equal(t, modelcheck.Violated, spilled.Outcome)
			require.Positive(t, spilled.Spills)
			require.Len(t, spilled.Trace, len(inMemory.Trace))
			if workers == 1 {
				require.Equal(t, inMemory.Distinct, spilled.Distinct)
				require.Equal(t, inMemory.Generated, spilled.Generated)
				require.Equal(t, inMemory.Trace, spilled.Trace, "rebuilt from the spilled log")
			}
		}
	}
}

// A checkpoint of a spilled set holds its log read back from disk; the
// run resumed from it spills again and ends with the same figures.
func TestCheckpointOfASpilledSet(t *testing.T) {
	modelcheck.SkipInMutationCut(t)
	g := &grid{size: 500, bad: func(x, y int) bool { return x+y == 990 && x == 495 }}
	ck := t.TempDir()
	opts := modelcheck.Options{Workers: 1, MemoryBudget: 2 << 20, SpillDir: t.TempDir(), CheckpointDir: ck, CheckpointEvery: time.Nanosecond}
	first := check(t, g, opts)
	require.Equal(t, modelcheck.Violated, first.Outcome)
	require.Positive(t, first.Spills)
	opts.CheckpointDir, opts.Recover = "", ck
	again := check(t, g, opts)
	require.Greater(t, again.ResumedAt, 900)
	require.Positive(t, again.Spills)
	require.Equal(t, first.Distinct, again.Distinct)
	require.Equal(t, first.Generated, again.Generated)
	require.Equal(t, first.Trace, again.Trace)
}
