package modelcheck_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// StatesPerSecond is the distinct states over the run's wall time, and
// zero for a run that took no time.
func TestStatesPerSecondIsDistinctOverElapsed(t *testing.T) {
	r := &modelcheck.Result[int]{Distinct: 3000, Elapsed: 1500 * time.Millisecond}
	require.InDelta(t, 2000.0, r.StatesPerSecond(), 1e-9)
	r.Elapsed = 0
	require.Zero(t, r.StatesPerSecond())
}

// A search with 128-bit fingerprints resumes from its checkpoint as one
// with 64-bit ones does: the checkpoint holds the fingerprints' high
// words too, and the resumed run ends with the same figures and
// counterexample.
func TestCheckpointOfA128BitSet(t *testing.T) {
	dir := t.TempDir()
	g := &grid{size: 40, bad: func(x, y int) bool { return x == 39 && y == 38 }}
	first, err := modelcheck.Check[point](context.Background(), g, modelcheck.Options{FingerprintBits: 128, CheckpointDir: dir, CheckpointEvery: time.Nanosecond})
	require.NoError(t, err)
	require.Equal(t, modelcheck.Violated, first.Outcome)
	again, err := modelcheck.Check[point](context.Background(), g, modelcheck.Options{FingerprintBits: 128, Recover: dir})
	require.NoError(t, err)
	require.Positive(t, again.ResumedAt)
	require.Equal(t, 128, again.FingerprintBits)
	require.Equal(t, first.Outcome, again.Outcome)
	require.Equal(t, first.Distinct, again.Distinct)
	require.Equal(t, first.Generated, again.Generated)
	require.Equal(t, first.Depth, again.Depth)
	require.Equal(t, first.Trace, again.Trace)
}

// A model whose states are not of a plain type keeps its queue in memory
// when the seen-set may spill; within the budget it completes with the
// figures of a search without one.
func TestSpillFolderWithAQueueThatStaysInMemory(t *testing.T) {
	base, err := modelcheck.Check[namedPoint](context.Background(), &named{}, modelcheck.Options{})
	require.NoError(t, err)
	res, err := modelcheck.Check[namedPoint](context.Background(), &named{}, modelcheck.Options{MemoryBudget: 64 << 20, SpillDir: t.TempDir()})
	require.NoError(t, err)
	require.Equal(t, modelcheck.OK, res.Outcome, res.Reason)
	require.Equal(t, base.Distinct, res.Distinct)
	require.Equal(t, base.Generated, res.Generated)
	require.Equal(t, base.Depth, res.Depth)
}

// A sorted lookup's batch of successors waiting for their lookup is part
// of the queue, and counts against the memory budget. The budget here
// holds the search's set and a block of its queue (4,096 states, 96 KiB;
// the hash lookup completes within 110 KiB) but not those and the sorted
// lookup's least batch as well (1,024 successors of 48 bytes: 155 KiB in
// all), so the sorted lookup ends the search incomplete, naming the
// budget.
func TestSortedBatchesCountAgainstTheBudget(t *testing.T) {
	g := &grid{size: 8}
	const budget = 132 << 10
	res, err := modelcheck.Check[point](context.Background(), g, modelcheck.Options{Workers: 1, Lookup: modelcheck.LookupSorted, MemoryBudget: budget})
	require.NoError(t, err)
	require.Equal(t, modelcheck.Incomplete, res.Outcome)
	require.Contains(t, res.Reason, "memory budget of")
	res, err = modelcheck.Check[point](context.Background(), g, modelcheck.Options{Workers: 1, Lookup: modelcheck.LookupHash, MemoryBudget: budget})
	require.NoError(t, err)
	require.Equal(t, modelcheck.OK, res.Outcome, res.Reason)
	require.EqualValues(t, 64, res.Distinct)
}

// entries is a fan of 257 loop entries at the same depth: entry i (1 to
// 256) lies on a fair cycle of three states, entry 257 on one of two. Its
// liveness property (the ring's, with a goal no state reaches) fails on
// every cycle.
type entries struct{ ring }

func (e *entries) Next(x int, emit func(string, int)) {
	switch {
	case x == 0:
		for i := 1; i <= 257; i++ {
			emit("Out", i)
		}
	case x <= 256:
		emit("Step", 1000*x+1)
	case x == 257:
		emit("Step", 257001)
	case x%1000 == 1 && x/1000 <= 256:
		emit("Step", x+1)
	default:
		emit("Step", x/1000)
	}
}

// The lasso search tries at most 256 loop entries, in the order the
// search reaches them, and keeps the shortest lasso of those: the 257th
// entry's shorter cycle is not looked for.
func TestLassoSearchTriesAtMost256Entries(t *testing.T) {
	res, err := modelcheck.Check[int](context.Background(), &entries{ring{goal: -1, fair: "WF"}}, modelcheck.Options{})
	require.NoError(t, err)
	require.Equal(t, modelcheck.Violated, res.Outcome)
	require.Equal(t, "liveness", res.Kind)
	var states []int
	for _, s := range res.Trace {
		states = append(states, s.State)
	}
	require.Equal(t, []int{0, 1, 1001, 1002}, states, "the lasso through the first entry tried (loop at %d)", res.LoopStart)
	require.Equal(t, 1, res.LoopStart)
}

// growing lists a variable more in its states past the first: a model
// whose states do not all have the same variables.
type growing struct{ ring }

func (g *growing) Vars(x int) [][2]string {
	vars := [][2]string{{"x", strconv.Itoa(x)}}
	if x > 0 {
		vars = append(vars, [2]string{"y", strconv.Itoa(10 * x)})
	}
	return vars
}

// A trace shows a variable that a state has and its predecessor had not
// as changed.
func TestWriteTraceShowsAVariableTheStateBeforeLacked(t *testing.T) {
	var b strings.Builder
	trace := []modelcheck.Step[int]{{Action: "Init", Label: "Init", State: 0}, {Action: "Inc", Label: "Inc", State: 1}, {Action: "Inc", Label: "Inc", State: 2}}
	require.NoError(t, modelcheck.WriteTrace[int](&b, &growing{ring{n: 3}}, trace, -1))
	require.Equal(t, "  1  Init\n       x = 0\n  2  Inc\n       x = 1\n       y = 10\n  3  Inc\n       x = 2\n       y = 20\n", b.String())
}

// shrinking lists a variable fewer in its states past the first.
type shrinking struct{ ring }

func (g *shrinking) Vars(x int) [][2]string {
	vars := [][2]string{{"x", strconv.Itoa(x)}}
	if x == 0 {
		vars = append(vars, [2]string{"y", "start"})
	}
	return vars
}

// A trace's page shows a state that lists fewer variables than the first
// with empty cells for the ones it lacks, marked changed, and the closing
// row of a lasso back to a state that has them with their values. (The
// page took the first state's variables from every state, and stopped
// with an index out of range on a state that lacked one.)
func TestLassoPageBackToAStateWithAVariableTheLastLacked(t *testing.T) {
	var b strings.Builder
	trace := []modelcheck.Step[int]{{Action: "Init", Label: "Init", State: 0}, {Action: "Inc", Label: "Inc", State: 1}}
	require.NoError(t, modelcheck.WriteTraceHTMLWith[int](&b, &shrinking{ring{n: 2}}, trace, modelcheck.HTMLTrace{Title: "t", LoopStart: 0, LoopLabel: "Reset"}))
	page := b.String()
	require.Contains(t, page, `<td class="step">Back to state 1: Reset</td><td class="changed">0</td><td class="changed">start</td></tr>`,
		"y, which the last state lacks, is back on the closing row")
	require.Contains(t, page, `<td class="n">2</td><td class="step">Inc</td><td class="changed">1</td><td class="changed"></td></tr>`,
		"the state without y shows it empty")
}

// A state outside the constraint that breaks an invariant is reported at
// its own length, one step past the state it was generated from: with
// Continue, a shorter violation inside the constraint, found first, is
// the one kept.
func TestAViolationOutsideTheConstraintCountsItsOwnLength(t *testing.T) {
	m := &bounded{grid{size: 100, bad: func(x, y int) bool { return x == 0 && y == 4 || x == 5 && y == 0 }}}
	res := check(t, m, modelcheck.Options{UseConstraint: true, Continue: true})
	require.Equal(t, modelcheck.Violated, res.Outcome)
	require.Len(t, res.Trace, 5, "the violation at (0, 4), depth 5, not (5, 0) outside the constraint, depth 6")
	require.Equal(t, point{0, 4}, res.Trace[len(res.Trace)-1].State)
}
