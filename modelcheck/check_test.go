package modelcheck_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// grid is the toy "linear equation" model: (x, y) on a size×size grid,
// starting at (0,0), with IncX and IncY while below the bound. Its figures
// are known in closed form: size² distinct states, depth 2·size-1, and
// 1 + 2·size·(size-1) generated (the initial state plus every edge).
type grid struct {
	size     int
	bad      func(x, y int) bool // the invariant "Safe" fails where bad holds
	selfLoop bool                // add a Stay self-loop at every state
	noMoveX  int                 // at (noMoveX, size-1) IncX is disabled too (0: only the bound)
}

type point struct{ x, y int }

func (g *grid) Init(emit func(point)) { emit(point{}) }

func (g *grid) Next(s point, emit func(string, point)) {
	if s.x+1 < g.size && (g.noMoveX == 0 || s.x != g.noMoveX || s.y != g.size-1) {
		emit("IncX", point{s.x + 1, s.y})
	}
	if s.y+1 < g.size {
		emit("IncY", point{s.x, s.y + 1})
	}
	if g.selfLoop {
		emit("Stay", s)
	}
}

func (g *grid) Encode(dst []byte, s point) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(s.x))
	return binary.LittleEndian.AppendUint32(dst, uint32(s.y))
}

func (g *grid) Invariants() []string { return []string{"Safe"} }

func (g *grid) Holds(_ int, s point) bool { return g.bad == nil || !g.bad(s.x, s.y) }

func (g *grid) Vars(s point) [][2]string {
	return [][2]string{{"x", strconv.Itoa(s.x)}, {"y", strconv.Itoa(s.y)}}
}

func check(t *testing.T, m modelcheck.Model[point], opts modelcheck.Options) *modelcheck.Result[point] {
	t.Helper()
	res, err := modelcheck.Check(context.Background(), m, opts)
	require.NoError(t, err)
	return res
}

func TestExactCounts(t *testing.T) {
	for _, size := range []int{1, 2, 16, 256} {
		for _, workers := range []int{1, 2, 8} {
			for _, bits := range []int{0, 128} {
				res := check(t, &grid{size: size}, modelcheck.Options{Workers: workers, FingerprintBits: bits, Lookup: modelcheck.Lookup((workers + bits/128) % 3)})
				require.Equal(t, modelcheck.OK, res.Outcome)
				require.EqualValues(t, size*size, res.Distinct, "size %d workers %d", size, workers)
				require.EqualValues(t, 1+2*size*(size-1), res.Generated)
				require.Equal(t, 2*size-1, res.Depth)
				require.Equal(t, max(bits, 64), res.FingerprintBits)
				require.InDelta(t, modelcheck.CollisionProbabilityBits(res.Distinct, res.Generated, max(bits, 64)), res.Collision, 1e-300)
			}
		}
	}
	// A 128-bit counterexample is rebuilt as a 64-bit one is.
	res := check(t, &grid{size: 64, bad: func(x, y int) bool { return x+y == 10 && x >= 3 }}, modelcheck.Options{FingerprintBits: 128})
	require.Len(t, res.Trace, 11)
	_, err := modelcheck.Check[point](context.Background(), &grid{size: 2}, modelcheck.Options{FingerprintBits: 96})
	require.ErrorContains(t, err, "96 bits")
}

// Self-loops count as generated states, as in TLC.
func TestSelfLoopsAreGenerated(t *testing.T) {
	res := check(t, &grid{size: 4, selfLoop: true}, modelcheck.Options{})
	require.EqualValues(t, 16, res.Distinct)
	require.EqualValues(t, 1+2*4*3+16, res.Generated)
}

// BFS returns a shortest counterexample: the first bad point on the
// anti-diagonal x+y = 10 is reached in 10 steps (11 states).
func TestShortestCounterexample(t *testing.T) {
	for _, workers := range []int{1, 2, 8} {
		g := &grid{size: 64, bad: func(x, y int) bool { return x+y == 10 && x >= 3 }}
		res := check(t, g, modelcheck.Options{Workers: workers})
		require.Equal(t, modelcheck.Violated, res.Outcome)
		require.Equal(t, "Safe", res.Violated)
		require.Equal(t, "invariant", res.Kind)
		require.Len(t, res.Trace, 11)
		last := res.Trace[10].State
		require.Equal(t, 10, last.x+last.y)
		require.GreaterOrEqual(t, last.x, 3)
		// Every step is a real transition of the model.
		for i := 1; i < len(res.Trace); i++ {
			prev, cur := res.Trace[i-1].State, res.Trace[i].State
			require.Equal(t, 1, cur.x-prev.x+cur.y-prev.y)
			require.Contains(t, []string{"IncX", "IncY"}, res.Trace[i].Action)
		}
	}
}

func TestInitialStateViolation(t *testing.T) {
	res := check(t, &grid{size: 3, bad: func(x, y int) bool { return x == 0 && y == 0 }}, modelcheck.Options{})
	require.Equal(t, modelcheck.Violated, res.Outcome)
	require.Len(t, res.Trace, 1)
	require.Equal(t, "Init", res.Trace[0].Action)
}

// The corner (size-1, size-1) has no successor: a deadlock 2·size-1 states
// deep. With noMoveX the first deadlock is shallower.
func TestDeadlock(t *testing.T) {
	for _, workers := range []int{1, 2, 8} {
		res := check(t, &grid{size: 5}, modelcheck.Options{CheckDeadlock: true, Workers: workers})
		require.Equal(t, modelcheck.Deadlock, res.Outcome)
		require.Equal(t, "deadlock", res.Kind)
		require.Len(t, res.Trace, 9)
		require.Equal(t, point{4, 4}, res.Trace[8].State)
	}
	// With several workers a deadlock is preferred to a deeper invariant
	// violation met in the same level: (2,4) deadlocks at depth 7 when IncX
	// stops there, and the invariant fails at depth 8, on (3,4) and (4,3).
	// One worker follows single-worker TLC: the first problem in its order
	// wins, and (4,2), whose successor (4,3) is bad, comes before (2,4).
	for _, workers := range []int{1, 2, 8} {
		g := &grid{size: 5, noMoveX: 2, bad: func(x, y int) bool { return x+y == 7 }}
		res := check(t, g, modelcheck.Options{CheckDeadlock: true, Workers: workers})
		if workers == 1 {
			require.Equal(t, modelcheck.Violated, res.Outcome)
			require.Len(t, res.Trace, 8)
			require.Equal(t, point{4, 3}, res.Trace[7].State)
			continue
		}
		require.Equal(t, modelcheck.Deadlock, res.Outcome, "workers %d", workers)
		require.Len(t, res.Trace, 7)
	}
}

// tlcFigures runs TLC's single-worker search loop (Worker.addElement and
// Worker.run in tlc2.tool) on m, as a reference: a FIFO queue; each
// successor is counted as generated, stored if new, its invariants
// checked if new, then the action properties checked on the step; a state
// without successors is a deadlock once it has been expanded. It returns
// the figures TLC prints when it stops: distinct, generated, and the depth
// of the deepest stored state.
func tlcFigures(m modelcheck.Model[point], deadlock bool) (distinct, generated int64, depth int) {
	act, _ := m.(modelcheck.ActionPropertied[point])
	seen := map[point]int{}
	var queue []point
	bad := false
	m.Init(func(s point) {
		generated++
		if bad {
			return
		}
		if _, ok := seen[s]; !ok {
			seen[s] = 1
			queue = append(queue, s)
			bad = !m.Holds(0, s)
		}
	})
	depth = 1
	for len(queue) > 0 && !bad {
		s := queue[0]
		queue = queue[1:]
		n := 0
		m.Next(s, func(a string, t point) {
			if bad {
				return
			}
			n++
			generated++
			if _, ok := seen[t]; !ok {
				seen[t] = seen[s] + 1
				depth = max(depth, seen[t])
				queue = append(queue, t)
				if !m.Holds(0, t) {
					bad = true
					return
				}
			}
			if act != nil && !act.ActionHolds(0, a, s, t) {
				bad = true
			}
		})
		if n == 0 && deadlock && !bad {
			bad = true
		}
	}
	return int64(len(seen)), generated, depth
}

// With one worker the figures at a violation are single-worker TLC's: the
// violating state is counted (stored before it is checked), generated
// stops at the violating successor, and the depth is the violating
// state's. An action property is evaluated after the step's target is
// stored, so a new target counts as distinct (trap's Fall).
func TestOneWorkerViolationFiguresAreTLCs(t *testing.T) {
	cases := []struct {
		name     string
		m        modelcheck.Model[point]
		deadlock bool
	}{
		{"invariant", &grid{size: 64, bad: func(x, y int) bool { return x+y == 10 && x >= 3 }}, false},
		{"invariant-late", &grid{size: 64, bad: func(x, y int) bool { return x == 40 && y == 9 }}, false},
		{"deadlock", &grid{size: 7, noMoveX: 3}, true},
		{"deadlock-vs-invariant", &grid{size: 5, noMoveX: 2, bad: func(x, y int) bool { return x+y == 7 }}, true},
		{"action", &monotone{grid{size: 8}}, false},
		{"action-new-target", &fallFirst{trap{monotone{grid{size: 8}}}}, false},
	}
	for _, tc := range cases {
		for _, lookup := range []modelcheck.Lookup{modelcheck.LookupSorted, modelcheck.LookupHash} {
			t.Run(tc.name+"/"+lookup.String(), func(t *testing.T) {
				distinct, generated, depth := tlcFigures(tc.m, tc.deadlock)
				res := check(t, tc.m, modelcheck.Options{Workers: 1, CheckDeadlock: tc.deadlock, Lookup: lookup})
				require.NotEqual(t, modelcheck.OK, res.Outcome)
				require.Equal(t, distinct, res.Distinct, "distinct")
				require.Equal(t, generated, res.Generated, "generated")
				require.Equal(t, depth, res.Depth, "depth")
				if res.Kind != "deadlock" {
					require.Len(t, res.Trace, depth, "the violating state is the deepest")
				}
			})
		}
	}
}

func TestLimitsGiveIncomplete(t *testing.T) {
	g := &grid{size: 256}
	res := check(t, g, modelcheck.Options{MaxStates: 1000, Workers: 2})
	require.Equal(t, modelcheck.Incomplete, res.Outcome)
	require.Contains(t, res.Reason, "state limit")
	require.GreaterOrEqual(t, res.Distinct, int64(1000))
	require.Less(t, res.Distinct, int64(256*256))

	res = check(t, g, modelcheck.Options{MaxDepth: 10})
	require.Equal(t, modelcheck.Incomplete, res.Outcome)
	require.Contains(t, res.Reason, "depth limit")
	require.Equal(t, 10, res.Depth)
	require.EqualValues(t, 55, res.Distinct) // points with x+y < 10

	// A depth limit the model never reaches leaves the run complete, and
	// so does one the last level reaches without anything new beyond it.
	require.Equal(t, modelcheck.OK, check(t, &grid{size: 3}, modelcheck.Options{MaxDepth: 50}).Outcome)
	require.Equal(t, modelcheck.OK, check(t, &grid{size: 3}, modelcheck.Options{MaxDepth: 5}).Outcome)
	require.Equal(t, modelcheck.Incomplete, check(t, &grid{size: 3}, modelcheck.Options{MaxDepth: 4}).Outcome)

	res = check(t, &slow{}, modelcheck.Options{Timeout: 50 * time.Millisecond})
	require.Equal(t, modelcheck.Incomplete, res.Outcome)
	require.Contains(t, res.Reason, "time limit")
	require.Positive(t, res.Distinct)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r2, err := modelcheck.Check[point](ctx, &grid{size: 256}, modelcheck.Options{})
	require.NoError(t, err)
	require.Equal(t, modelcheck.Incomplete, r2.Outcome)
	require.Contains(t, r2.Reason, "cancelled")
}

// slow is an unbounded counter whose Next takes time, for the time limit.
type slow struct{ grid }

func (s *slow) Next(p point, emit func(string, point)) {
	time.Sleep(time.Millisecond)
	emit("Tick", point{p.x + 1, 0})
}

func TestWorkersAgree(t *testing.T) {
	g := &grid{size: 300, selfLoop: true}
	base := check(t, g, modelcheck.Options{Workers: 1})
	for _, w := range []int{2, 3, 16} {
		res := check(t, g, modelcheck.Options{Workers: w})
		require.Equal(t, base.Distinct, res.Distinct)
		require.Equal(t, base.Generated, res.Generated)
		require.Equal(t, base.Depth, res.Depth)
	}
}

// monotone adds an action property: x never decreases. A Reset action
// that sets x to 0 from x = 3 breaks it on a transition to a state seen
// before.
type monotone struct{ grid }

func (m *monotone) Next(s point, emit func(string, point)) {
	m.grid.Next(s, emit)
	if s.x == 3 {
		emit("Reset", point{0, s.y})
	}
}

func (m *monotone) ActionProperties() []string { return []string{"XNeverDecreases"} }

func (m *monotone) ActionHolds(_ int, _ string, from, to point) bool { return to.x >= from.x }

func TestActionProperty(t *testing.T) {
	for _, workers := range []int{1, 4} {
		res := check(t, &monotone{grid{size: 8}}, modelcheck.Options{Workers: workers})
		require.Equal(t, modelcheck.Violated, res.Outcome)
		require.Equal(t, "XNeverDecreases", res.Violated)
		require.Equal(t, "action", res.Kind)
		require.Len(t, res.Trace, 5)
		require.Equal(t, "Reset", res.Trace[4].Action)
		require.Equal(t, point{0, 0}, res.Trace[4].State)
	}
	// Not selected: not checked.
	res := check(t, &monotone{grid{size: 8}}, modelcheck.Options{ActionProperties: []string{}})
	require.Equal(t, modelcheck.OK, res.Outcome)
}

func TestUnknownPropertyIsAnError(t *testing.T) {
	_, err := modelcheck.Check[point](context.Background(), &grid{size: 2}, modelcheck.Options{Invariants: []string{"Nope"}})
	require.ErrorIs(t, err, modelcheck.ErrUnknownProperty)
	require.ErrorContains(t, err, `"Nope"`)
	_, err = modelcheck.Check[point](context.Background(), &grid{size: 2}, modelcheck.Options{ActionProperties: []string{"X"}})
	require.ErrorIs(t, err, modelcheck.ErrUnknownProperty)
	_, err = modelcheck.Check[point](context.Background(), &grid{size: 2}, modelcheck.Options{UseConstraint: true})
	require.Error(t, err)
}

// bounded adds a state constraint x+y <= 4: states beyond it are generated
// but neither counted as distinct nor explored.
type bounded struct{ grid }

func (b *bounded) Constraint(s point) bool { return s.x+s.y <= 4 }

func TestConstraint(t *testing.T) {
	res := check(t, &bounded{grid{size: 100}}, modelcheck.Options{UseConstraint: true})
	require.Equal(t, modelcheck.OK, res.Outcome)
	require.EqualValues(t, 15, res.Distinct)
	// 1 initial + 2 successors from each of the 15 states.
	require.EqualValues(t, 31, res.Generated)
}

// boundedOddY adds the action constraint NoIncYFromOdd of
// testdata/Grid.tla: no IncY step from an odd x.
type boundedOddY struct{ bounded }

func (b *boundedOddY) ActionConstraint(action string, from, _ point) bool {
	return !(from.x%2 == 1 && action == "IncY")
}

// viewed adds the view XView == <<x, y % 2>> of testdata/Grid.tla.
type viewed struct{ bounded }

func (v *viewed) View(dst []byte, s point) []byte {
	return append(dst, byte(s.x), byte(s.y%2))
}

// TLC's figures on testdata/Grid.tla with the cfgs Grid1..Grid5 (TLC
// 2026.12.01 rev cc6b616, -workers 1): a state outside the constraint is
// generated, and checked against the invariants (Grid2 fails on (5, 0),
// which is never stored: depth 5, 15 distinct), but not stored or
// explored; it is no deadlock either (Grid3); a view identifies states.
func TestConstraintViewTLCParity(t *testing.T) {
	small := func(x, y int) bool { return x+y > 4 }
	cases := []struct {
		cfg                 string
		m                   modelcheck.Model[point]
		opts                modelcheck.Options
		outcome             modelcheck.Outcome
		distinct, generated int64
		depth, trace        int
	}{
		{"Grid1", &bounded{grid{size: 100}}, modelcheck.Options{UseConstraint: true}, modelcheck.OK, 15, 31, 5, 0},
		{"Grid2", &bounded{grid{size: 100, bad: small}}, modelcheck.Options{UseConstraint: true}, modelcheck.Violated, 15, 22, 5, 6},
		{"Grid3", &bounded{grid{size: 100}}, modelcheck.Options{UseConstraint: true, CheckDeadlock: true}, modelcheck.OK, 15, 31, 5, 0},
		{"Grid4", &boundedOddY{bounded{grid{size: 100}}}, modelcheck.Options{UseConstraint: true}, modelcheck.OK, 15, 31, 5, 0},
		{"Grid5", &viewed{bounded{grid{size: 100}}}, modelcheck.Options{UseConstraint: true, UseView: true}, modelcheck.OK, 9, 19, 5, 0},
	}
	for _, tc := range cases {
		for _, workers := range []int{1, 3} {
			if tc.outcome != modelcheck.OK && workers > 1 {
				continue // figures at a violation are TLC's with one worker
			}
			opts := tc.opts
			opts.Workers = workers
			res := check(t, tc.m, opts)
			require.Equal(t, tc.outcome, res.Outcome, tc.cfg)
			require.Equal(t, tc.distinct, res.Distinct, "%s distinct", tc.cfg)
			require.Equal(t, tc.generated, res.Generated, "%s generated", tc.cfg)
			require.Equal(t, tc.depth, res.Depth, "%s depth", tc.cfg)
			require.Len(t, res.Trace, tc.trace, tc.cfg)
		}
	}
}

func TestProgressIsReported(t *testing.T) {
	var calls int
	var last modelcheck.Progress
	res := check(t, &slow{}, modelcheck.Options{
		Timeout:       120 * time.Millisecond,
		ProgressEvery: 20 * time.Millisecond,
		Progress:      func(p modelcheck.Progress) { calls++; last = p },
	})
	require.Equal(t, modelcheck.Incomplete, res.Outcome)
	require.Positive(t, calls)
	require.Positive(t, last.Distinct)
	require.Equal(t, "bfs", last.Phase)
}

func TestWriteTraceShowsChangedVariables(t *testing.T) {
	g := &grid{size: 8, bad: func(x, y int) bool { return x == 2 && y == 0 }}
	res := check(t, g, modelcheck.Options{})
	var b bytes.Buffer
	require.NoError(t, modelcheck.WriteTrace(&b, modelcheck.Model[point](g), res.Trace, -1))
	want := strings.Join([]string{
		"  1  Init",
		"       x = 0",
		"       y = 0",
		"  2  IncX",
		"       x = 1",
		"  3  IncX",
		"       x = 2",
		"",
	}, "\n")
	require.Equal(t, want, b.String())
}

func TestCollisionProbability(t *testing.T) {
	require.Zero(t, modelcheck.CollisionProbability(100, 100))
	// 203 million states at about 9 successors each: 64 bits are not
	// enough to trust a pass, 128 are.
	require.Greater(t, modelcheck.CollisionProbability(203e6, 1.8e9), 1e-2)
	require.Less(t, modelcheck.CollisionProbabilityBits(203e6, 1.8e9, 128), 1e-20)
	require.InDelta(t, 288.0*858/18446744073709551616.0, modelcheck.CollisionProbability(288, 1146), 1e-30)
}

// With Continue the whole space is explored and the shortest violation
// is still the one reported.
func TestContinueExploresEverything(t *testing.T) {
	for _, workers := range []int{1, 3} {
		g := &grid{size: 20, bad: func(x, y int) bool { return x+y == 7 || x+y == 4 }}
		res := check(t, g, modelcheck.Options{Continue: true, CheckDeadlock: true, Workers: workers})
		require.Equal(t, modelcheck.Violated, res.Outcome)
		require.EqualValues(t, 400, res.Distinct)
		require.EqualValues(t, 1+2*20*19, res.Generated)
		require.Len(t, res.Trace, 5)
	}
}

// With Continue, a transition that breaks an action property still leads
// somewhere: its target is explored like any other state.
func TestContinueExploresPastActionViolations(t *testing.T) {
	m := &monotone{grid{size: 8}}
	res := check(t, m, modelcheck.Options{Continue: true})
	require.Equal(t, modelcheck.Violated, res.Outcome)
	require.Equal(t, "XNeverDecreases", res.Violated)
	require.EqualValues(t, 64, res.Distinct)
}

// trap is reachable only through a transition that breaks the action
// property: Continue must count it.
type trap struct{ monotone }

func (m *trap) Next(s point, emit func(string, point)) {
	if s.x < 0 {
		return // the trap has no way out
	}
	m.monotone.Next(s, emit)
	if s.x == 3 && s.y == 0 {
		emit("Fall", point{-1, -1})
	}
}

// fallFirst is trap with Fall, to a new state, emitted before the moves.
type fallFirst struct{ trap }

func (m *fallFirst) Next(s point, emit func(string, point)) {
	if s.x == 3 && s.y == 0 {
		emit("Fall", point{-1, -1})
	}
	m.monotone.Next(s, emit)
}

func TestContinueCountsStatesBehindActionViolations(t *testing.T) {
	res := check(t, &trap{monotone{grid{size: 8}}}, modelcheck.Options{Continue: true})
	require.EqualValues(t, 65, res.Distinct)
	res = check(t, &trap{monotone{grid{size: 8}}}, modelcheck.Options{})
	require.Equal(t, modelcheck.Violated, res.Outcome)
}

func TestWriteTraceHTML(t *testing.T) {
	g := &grid{size: 8, bad: func(x, y int) bool { return x == 2 && y == 1 }}
	res := check(t, g, modelcheck.Options{})
	var b bytes.Buffer
	require.NoError(t, modelcheck.WriteTraceHTML(&b, modelcheck.Model[point](g), res.Trace, -1, "Safe <violated>", "4 states"))
	page := b.String()
	require.Contains(t, page, "Safe &lt;violated&gt;") // escaped
	require.Equal(t, 4, strings.Count(page, `<td class="step">`))
	require.Equal(t, 2+1+1+1, strings.Count(page, `class="changed"`)) // both vars at Init, then one per step
	require.NotContains(t, page, "repeat forever")
}

func TestSimulateFindsViolations(t *testing.T) {
	// The grid's bad corner region is reachable by many walks.
	g := &grid{size: 30, bad: func(x, y int) bool { return x+y == 12 && x >= 6 }}
	var first *modelcheck.SimResult[point]
	for _, workers := range []int{1, 2, 4} {
		res, err := modelcheck.Simulate[point](context.Background(), g, modelcheck.SimOptions{Seed: 7, Depth: 40, Walks: 200, Workers: workers})
		require.NoError(t, err)
		require.Equal(t, modelcheck.Violated, res.Outcome)
		require.Equal(t, "Safe", res.Violated)
		last := res.Trace[len(res.Trace)-1].State
		require.True(t, last.x+last.y == 12 && last.x >= 6)
		for i := 1; i < len(res.Trace); i++ {
			prev, cur := res.Trace[i-1].State, res.Trace[i].State
			require.Equal(t, 1, cur.x-prev.x+cur.y-prev.y, "each step is a transition")
		}
		// Same seed, same walk, whatever the number of workers.
		if first == nil {
			first = res
		} else {
			require.Equal(t, first.Walk, res.Walk)
			require.Equal(t, first.Trace, res.Trace)
		}
	}
}

func TestSimulateBoundsAndDeadlock(t *testing.T) {
	res, err := modelcheck.Simulate[point](context.Background(), &grid{size: 50}, modelcheck.SimOptions{Seed: 1, Depth: 10, Walks: 20})
	require.NoError(t, err)
	require.Equal(t, modelcheck.OK, res.Outcome)
	require.EqualValues(t, 20, res.Walks)
	require.EqualValues(t, 200, res.Steps)
	// A 3×3 grid deadlocks at its far corner after four steps.
	res, err = modelcheck.Simulate[point](context.Background(), &grid{size: 3}, modelcheck.SimOptions{Seed: 1, Depth: 10, Walks: 5, CheckDeadlock: true})
	require.NoError(t, err)
	require.Equal(t, modelcheck.Deadlock, res.Outcome)
	require.Len(t, res.Trace, 5)
	// A timeout ends an unbounded simulation.
	res, err = modelcheck.Simulate[point](context.Background(), &grid{size: 1000}, modelcheck.SimOptions{Seed: 1, Depth: 50, Timeout: 50 * time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, modelcheck.OK, res.Outcome)
	require.Positive(t, res.Walks)
	// Action properties are checked on every generated successor.
	res, err = modelcheck.Simulate[point](context.Background(), &monotone{grid{size: 8}}, modelcheck.SimOptions{Seed: 3, Depth: 20, Walks: 50})
	require.NoError(t, err)
	require.Equal(t, modelcheck.Violated, res.Outcome)
	require.Equal(t, "action", res.Kind)
	require.Equal(t, "Reset", res.Trace[len(res.Trace)-1].Action)
}

// A run that would pass its memory budget stops Incomplete with its
// figures, well before the whole space, and holds about the budget.
func TestMemoryBudget(t *testing.T) {
	const budget = 4 << 20
	g := &grid{size: 700} // 490,000 states, about 15 MiB of seen-set
	for _, workers := range []int{1, 4} {
		res := check(t, g, modelcheck.Options{Workers: workers, MemoryBudget: budget})
		require.Equal(t, modelcheck.Incomplete, res.Outcome)
		require.Contains(t, res.Reason, "memory budget of 4.0 MiB reached")
		require.Positive(t, res.Distinct)
		require.Less(t, res.Distinct, int64(700*700/2))
		require.Less(t, res.SetBytes, int64(2*budget))
	}
	res := check(t, &grid{size: 300}, modelcheck.Options{MemoryBudget: 1 << 30})
	require.Equal(t, modelcheck.OK, res.Outcome)
}

// selected is monotone, with an invariant, answering both through
// PointerChecked, which counts its calls.
type selected struct {
	monotone
	states, steps atomic.Int64
}

func (m *selected) FailingPtr(invariants []int, s *point) int {
	m.states.Add(1)
	for _, i := range invariants {
		if !m.Holds(i, *s) {
			return i
		}
	}
	return -1
}

func (m *selected) FailingStepPtr(props []int, a string, from, to *point) int {
	m.steps.Add(1)
	for _, i := range props {
		if !m.ActionHolds(i, a, *from, *to) {
			return i
		}
	}
	return -1
}

// A PointerChecked model is asked once per new state and once per step,
// and gives the figures and counterexamples of the same model asked
// property by property, by value.
func TestPointerCheckedAskedOncePerStateAndStep(t *testing.T) {
	bad := func(x, y int) bool { return x == 2 && y == 5 }
	for _, workers := range []int{1, 2} {
		for _, props := range [][]string{nil, {}} { // the action property, and none
			want := check(t, &monotone{grid{size: 8, bad: bad}}, modelcheck.Options{Workers: 1, ActionProperties: props})
			m := &selected{monotone: monotone{grid{size: 8, bad: bad}}}
			got := check(t, m, modelcheck.Options{Workers: workers, ActionProperties: props})
			require.Equal(t, want.Outcome, got.Outcome)
			require.Equal(t, want.Violated, got.Violated)
			require.Equal(t, want.Kind, got.Kind)
			require.Len(t, got.Trace, len(want.Trace))
			if workers == 1 {
				require.Equal(t, want.Distinct, got.Distinct)
				require.Equal(t, want.Generated, got.Generated)
			}
			require.Positive(t, m.states.Load(), "invariants asked through FailingPtr")
			if props == nil {
				require.Positive(t, m.steps.Load(), "action properties asked through FailingStepPtr")
			} else {
				require.Zero(t, m.steps.Load(), "no action property selected, none asked")
			}
		}
	}
}
