package modelcheck_test

import (
	"context"
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// ring counts 0..n-1 with Inc and, from the top, Reset back to 0. Its
// liveness property is TRUE ~> x = goal. With WF(Inc) it holds; with no
// fairness the counter may stutter at 0 forever.
type ring struct {
	n, goal int
	fair    string // "", "WF" or "SF"
}

func (r *ring) Init(emit func(int)) { emit(0) }
func (r *ring) Next(x int, emit func(string, int)) {
	if x+1 < r.n {
		emit("Inc", x+1)
	} else {
		emit("Reset", 0)
	}
}
func (r *ring) Encode(dst []byte, x int) []byte {
	return binary.LittleEndian.AppendUint64(dst, uint64(x))
}
func (r *ring) Invariants() []string         { return nil }
func (r *ring) Holds(int, int) bool          { return true }
func (r *ring) LivenessProperties() []string { return []string{"ReachesGoal"} }
func (r *ring) LeadsTo(_ int, x int) (bool, bool) {
	return true, x == r.goal
}
func (r *ring) FairEnabled(x int, emit func(string, bool)) {
	if r.fair != "" {
		emit(r.fair+" Step", r.fair == "SF")
	}
}
func (r *ring) FairTaken(_ string, from, to int, emit func(string)) {
	if r.fair != "" && from != to {
		emit(r.fair + " Step")
	}
}
func (r *ring) Vars(x int) [][2]string { return [][2]string{{"x", strconv.Itoa(x)}} }

func TestLivenessHoldsUnderWeakFairness(t *testing.T) {
	res := check2(t, &ring{n: 5, goal: 3, fair: "WF"})
	require.Equal(t, modelcheck.OK, res.Outcome)
	require.EqualValues(t, 5, res.Distinct)
}

func TestLivenessStutterWithoutFairness(t *testing.T) {
	res := check2(t, &ring{n: 5, goal: 3})
	require.Equal(t, modelcheck.Violated, res.Outcome)
	require.Equal(t, "liveness", res.Kind)
	require.Equal(t, "ReachesGoal", res.Violated)
	// The initial state stutters forever.
	require.Len(t, res.Trace, 1)
	require.Equal(t, 0, res.LoopStart)
}

// An unreachable goal: the ring cycles fairly forever without it.
func TestLivenessFairCycle(t *testing.T) {
	res := check2(t, &ring{n: 4, goal: 9, fair: "WF"})
	require.Equal(t, modelcheck.Violated, res.Outcome)
	// 0 1 2 3, then back to 0: the whole ring is the loop.
	require.Len(t, res.Trace, 4)
	require.Equal(t, 0, res.LoopStart)
	for i, st := range res.Trace {
		require.Equal(t, i, st.State)
	}
}

// blink toggles a light; Grab is enabled only while the light is on and
// reaches the goal. Weak fairness on Grab does not force it (the light
// keeps going off); strong fairness does.
type blink struct{ grab string }

type light struct{ on, got bool }

func (b *blink) Init(emit func(light)) { emit(light{}) }
func (b *blink) Next(s light, emit func(string, light)) {
	if s.got {
		return
	}
	emit("Toggle", light{on: !s.on})
	if s.on {
		emit("Grab", light{on: s.on, got: true})
	}
}
func (b *blink) Encode(dst []byte, s light) []byte {
	var x byte
	if s.on {
		x |= 1
	}
	if s.got {
		x |= 2
	}
	return append(dst, x)
}
func (b *blink) Invariants() []string         { return nil }
func (b *blink) Holds(int, light) bool        { return true }
func (b *blink) LivenessProperties() []string { return []string{"EventuallyGot"} }
func (b *blink) LeadsTo(_ int, s light) (bool, bool) {
	return true, s.got
}
func (b *blink) FairEnabled(s light, emit func(string, bool)) {
	if !s.got {
		emit("WF Toggle", false)
	}
	if s.on && !s.got {
		emit(b.grab+" Grab", b.grab == "SF")
	}
}
func (b *blink) FairTaken(action string, _, _ light, emit func(string)) {
	switch action {
	case "Toggle":
		emit("WF Toggle")
	case "Grab":
		emit(b.grab + " Grab")
	}
}

func TestStrongVersusWeakFairness(t *testing.T) {
	res := check2(t, &blink{grab: "WF"})
	require.Equal(t, modelcheck.Violated, res.Outcome)
	// Off, on, then back to off: the light blinks forever.
	require.Len(t, res.Trace, 2)
	require.Equal(t, 0, res.LoopStart)
	require.Equal(t, "Toggle", res.Trace[1].Action)

	res = check2(t, &blink{grab: "SF"})
	require.Equal(t, modelcheck.OK, res.Outcome)
}

func TestLivenessNotSelected(t *testing.T) {
	res, err := modelcheck.Check[int](context.Background(), &ring{n: 5, goal: 9}, modelcheck.Options{Liveness: []string{}})
	require.NoError(t, err)
	require.Equal(t, modelcheck.OK, res.Outcome)
}

func check2[S any](t *testing.T, m modelcheck.Model[S]) *modelcheck.Result[S] {
	t.Helper()
	res, err := modelcheck.Check(context.Background(), m, modelcheck.Options{})
	require.NoError(t, err)
	return res
}

// twoKeys is a ring 0 -> 1 -> 2 -> 3 -> 0 with two weak instances, both
// always enabled: A is taken by 1 -> 2, B by 3 -> 0. B is named first, so
// a cycle built key by key (walk to B's edge, then to A's, then home) goes
// round twice; one round takes both.
type twoKeys struct{ ring }

func (r *twoKeys) FairEnabled(_ int, emit func(string, bool)) {
	emit("WF B", false)
	emit("WF A", false)
}

func (r *twoKeys) FairTaken(_ string, from, _ int, emit func(string)) {
	switch from {
	case 1:
		emit("WF A")
	case 3:
		emit("WF B")
	}
}

func TestLassoCycleGoesRoundOnce(t *testing.T) {
	res := check2(t, &twoKeys{ring{n: 4, goal: 9}})
	require.Equal(t, modelcheck.Violated, res.Outcome)
	require.Len(t, res.Trace, 4)
	require.Equal(t, 0, res.LoopStart)
	require.Equal(t, "Reset", res.LoopLabel)
}

// tail reaches a loop in two ways: Init 0 -> 1 -> 2 -> 3 (the loop 3 <-> 4)
// or Init 0 -> 5 -> 3. The stem is the shortest one, through 5.
type tail struct{ ring }

func (r *tail) Next(x int, emit func(string, int)) {
	switch x {
	case 0:
		emit("Long", 1)
		emit("Short", 5)
	case 1, 2:
		emit("Long", x+1)
	case 3:
		emit("Go", 4)
	case 4:
		emit("Back", 3)
	case 5:
		emit("Join", 3)
	}
}

func (r *tail) FairEnabled(x int, emit func(string, bool)) { emit("WF Move", false) }

func (r *tail) FairTaken(_ string, _, _ int, emit func(string)) { emit("WF Move") }

func TestLassoStemIsShortest(t *testing.T) {
	res := check2(t, &tail{ring{goal: 9}})
	require.Equal(t, modelcheck.Violated, res.Outcome)
	var xs []int
	for _, st := range res.Trace {
		xs = append(xs, st.State)
	}
	require.Equal(t, []int{0, 5, 3, 4}, xs)
	require.Equal(t, 2, res.LoopStart)
	require.Equal(t, "Back", res.LoopLabel)
}

// symRing is ring with a (trivial) symmetry: liveness under a symmetry
// is refused, not checked unsoundly.
type symRing struct{ ring }

func (r *symRing) Canonical(x int) int { return x }

func TestLivenessUnderSymmetryIsRefused(t *testing.T) {
	_, err := modelcheck.Check[int](context.Background(), &symRing{ring{n: 3, goal: 1}}, modelcheck.Options{UseSymmetry: true})
	require.ErrorContains(t, err, "SYMMETRY")
	res, err := modelcheck.Check[int](context.Background(), &symRing{ring{n: 3, goal: 1}}, modelcheck.Options{UseSymmetry: true, Liveness: []string{}})
	require.NoError(t, err)
	require.Equal(t, modelcheck.OK, res.Outcome)
	_, err = modelcheck.Check[int](context.Background(), &ring{n: 3, goal: 1}, modelcheck.Options{UseSymmetry: true, Liveness: []string{}})
	require.ErrorContains(t, err, "Canonical")
}

// fan is ring's property on a graph of two levels: 0 leads to 1..n-1,
// each of which leads back to 0.
type fan struct{ ring }

func (f *fan) Next(x int, emit func(string, int)) {
	if x != 0 {
		emit("Back", 0)
		return
	}
	for i := 1; i < f.n; i++ {
		emit("Out", i)
	}
}

// The liveness graph counts against the memory budget too: a graph whose
// search fits in 3 MiB but whose stored graph does not stops Incomplete.
func TestMemoryBudgetInLiveness(t *testing.T) {
	r := &fan{ring{n: 50000, goal: 7, fair: "WF"}}
	res, err := modelcheck.Check[int](context.Background(), r, modelcheck.Options{MemoryBudget: 3 << 20})
	require.NoError(t, err)
	require.Equal(t, modelcheck.Incomplete, res.Outcome)
	require.Contains(t, res.Reason, "during the liveness check")
	res, err = modelcheck.Check[int](context.Background(), r, modelcheck.Options{MemoryBudget: 64 << 20})
	require.NoError(t, err)
	require.Equal(t, modelcheck.Violated, res.Outcome) // nothing makes the fan pick 7
}

// The liveness graph is built on every worker, and is the same graph
// whatever their number: the same lasso, figures and loop.
func TestLivenessGraphIndependentOfWorkers(t *testing.T) {
	var first *modelcheck.Result[int]
	for _, workers := range []int{1, 2, 5} {
		res, err := modelcheck.Check[int](context.Background(), &fan{ring{n: 20000, goal: 7, fair: "WF"}}, modelcheck.Options{Workers: workers})
		require.NoError(t, err)
		require.Equal(t, modelcheck.Violated, res.Outcome)
		if first == nil {
			first = res
			continue
		}
		require.Equal(t, first.Trace, res.Trace, "workers %d", workers)
		require.Equal(t, first.LoopStart, res.LoopStart)
		require.Equal(t, first.Distinct, res.Distinct)
		require.Equal(t, first.Generated, res.Generated)
	}
}
