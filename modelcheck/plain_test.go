package modelcheck_test

import (
	"context"
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

// ptrGrid is monotone with its checks also on pointers: the pointer
// methods are the ones called, and they find what the value ones do.
type ptrGrid struct {
	monotone
	calls int
}

func (g *ptrGrid) HoldsPtr(i int, s *point) bool { g.calls++; return g.Holds(i, *s) }

func (g *ptrGrid) ActionHoldsPtr(i int, a string, from, to *point) bool {
	g.calls++
	return g.ActionHolds(i, a, *from, *to)
}

func TestPointerCheckedModelsAreCheckedThroughPointers(t *testing.T) {
	g := &ptrGrid{monotone: monotone{grid{size: 8, bad: func(x, y int) bool { return x == 5 && y == 5 }}}}
	want := check(t, &g.monotone, modelcheck.Options{Workers: 1})
	got := check(t, g, modelcheck.Options{Workers: 1})
	require.Positive(t, g.calls)
	require.Equal(t, want.Outcome, got.Outcome)
	require.Equal(t, want.Violated, got.Violated)
	require.Equal(t, want.Distinct, got.Distinct)
	require.Equal(t, want.Generated, got.Generated)
	require.Len(t, got.Trace, len(want.Trace))
}
