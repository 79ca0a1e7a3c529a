package modelcheck_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/modelcheck"
)

// plainGrid is grid with its states declared plain: fingerprinted in
// memory, not through Encode.
type plainGrid struct{ grid }

func (*plainGrid) PlainState() {}

// A plain model gives the figures of the same model through Encode.
func TestPlainStatesCountAsEncoded(t *testing.T) {
	for _, workers := range []int{1, 2} {
		for _, bits := range []int{64, 128} {
			res := check(t, &plainGrid{grid{size: 64}}, modelcheck.Options{Workers: workers, FingerprintBits: bits})
			require.Equal(t, modelcheck.OK, res.Outcome)
			require.EqualValues(t, 64*64, res.Distinct)
			require.EqualValues(t, 1+2*64*63, res.Generated)
		}
	}
	res := check(t, &plainGrid{grid{size: 64, bad: func(x, y int) bool { return x+y == 10 && x >= 3 }}}, modelcheck.Options{Workers: 1})
	require.Equal(t, modelcheck.Violated, res.Outcome)
	require.Len(t, res.Trace, 11)
}

// padded has three bytes of padding after a: two equal values may differ
// there, so it cannot be plain.
type padded struct {
	a int8
	b int32
}

type paddedModel struct{}

func (paddedModel) Init(emit func(padded))             { emit(padded{}) }
func (paddedModel) Next(padded, func(string, padded))  {}
func (paddedModel) Encode(dst []byte, s padded) []byte { return append(dst, byte(s.a), byte(s.b)) }
func (paddedModel) Invariants() []string               { return nil }
func (paddedModel) Holds(int, padded) bool             { return true }
func (paddedModel) PlainState()                        {}

// A model that declares states plain that are not is refused.
func TestPlainStatesWithPaddingAreRefused(t *testing.T) {
	_, err := modelcheck.Check[padded](context.Background(), paddedModel{}, modelcheck.Options{})
	require.ErrorContains(t, err, "padding")
	_, err = modelcheck.Check[*int](context.Background(), pointerModel{}, modelcheck.Options{})
	require.ErrorContains(t, err, "not a boolean, an integer")
}

type pointerModel struct{}

func (pointerModel) Init(emit func(*int))             { emit(new(int)) }
func (pointerModel) Next(*int, func(string, *int))    {}
func (pointerModel) Encode(dst []byte, _ *int) []byte { return dst }
func (pointerModel) Invariants() []string             { return nil }
func (pointerModel) Holds(int, *int) bool             { return true }
func (pointerModel) PlainState()                      {}

// stutter counts x from 0 to 9; every state also has a self-loop (Stay),
// and the action property Moves is "the step is an Inc", as the body P
// of [][P]_x, which a step that leaves x alone satisfies.
type stutter struct{ asked atomic.Int64 }

func (*stutter) Init(emit func(int64)) { emit(0) }
func (*stutter) Next(x int64, emit func(string, int64)) {
	emit("Stay", x)
	if x < 9 {
		emit("Inc", x+1)
	}
}
func (*stutter) Encode(dst []byte, x int64) []byte { return append(dst, byte(x)) }
func (*stutter) Invariants() []string              { return nil }
func (*stutter) Holds(int, int64) bool             { return true }
func (*stutter) ActionProperties() []string        { return []string{"Moves"} }
func (*stutter) PlainState()                       {}
func (m *stutter) ActionHolds(_ int, a string, from, to int64) bool {
	m.asked.Add(1)
	return a == "Inc" && to == from+1
}

// A plain model's self-loops are generated (counted, and enabled, so no
// deadlock) but not asked about its action properties: [P]_vars holds on
// a step that changes nothing.
func TestPlainSelfLoopsSatisfyActionProperties(t *testing.T) {
	for _, workers := range []int{1, 2} {
		m := &stutter{}
		res, err := modelcheck.Check[int64](context.Background(), m, modelcheck.Options{Workers: workers, CheckDeadlock: true})
		require.NoError(t, err)
		require.Equal(t, modelcheck.OK, res.Outcome, res.Violated)
		require.EqualValues(t, 10, res.Distinct)
		require.EqualValues(t, 1+10+9, res.Generated)
		require.EqualValues(t, 9, m.asked.Load())
	}
}

// inPlaceGrid is plainGrid with NextInto: the search writes successors
// into the checker's memory and counts the calls.
type inPlaceGrid struct {
	plainGrid
	calls atomic.Int64
}

func (g *inPlaceGrid) NextInto(s, next *point, emit func(string)) {
	g.calls.Add(1)
	g.Next(*s, func(a string, t point) {
		*next = t
		emit(a)
	})
}

// A model with NextInto is searched through it, with the figures, the
// counterexamples and the self-loops of the same model through Next.
func TestInPlaceModelSearchedThroughNextInto(t *testing.T) {
	for _, workers := range []int{1, 2} {
		g := &inPlaceGrid{plainGrid: plainGrid{grid{size: 64, selfLoop: true}}}
		res := check(t, g, modelcheck.Options{Workers: workers, CheckDeadlock: true})
		require.Equal(t, modelcheck.OK, res.Outcome)
		require.EqualValues(t, 64*64, res.Distinct)
		require.EqualValues(t, 1+2*64*63+64*64, res.Generated)
		require.EqualValues(t, 64*64, g.calls.Load(), "every state expanded through NextInto")
	}
	bad := func(x, y int) bool { return x+y == 10 && x >= 3 }
	want := check(t, &plainGrid{grid{size: 64, bad: bad}}, modelcheck.Options{Workers: 1})
	got := check(t, &inPlaceGrid{plainGrid: plainGrid{grid{size: 64, bad: bad}}}, modelcheck.Options{Workers: 1})
	require.Equal(t, modelcheck.Violated, got.Outcome)
	require.Equal(t, want.Trace, got.Trace)
	require.Equal(t, want.Generated, got.Generated)
}
