package modelcheck

import (
	"context"
	"math/bits"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A checkpoint's logs load into memory as long as the set holds at most
// half the memory budget, and the set moves to disk as they load past
// it: a budget of exactly twice the loaded set's memory keeps it in
// memory, one of two bytes less moves it.
func TestCheckpointLoadSpillsTheSetOnlyPastHalfTheBudget(t *testing.T) {
	m := fan{n: 3 * blockSize}
	dir := t.TempDir()
	_, err := Check(context.Background(), m, Options{Workers: 1, CheckpointDir: dir, CheckpointEvery: time.Nanosecond})
	require.NoError(t, err)
	load := func(budget int64) *checker[fanState] {
		c, err := newChecker[fanState](m, Options{Workers: 1, Recover: dir, SpillDir: t.TempDir(), MemoryBudget: budget})
		require.NoError(t, err)
		t.Cleanup(func() {
			c.closeSpill()
			c.set.release()
			c.dropArena()
		})
		_, _, err = c.readCheckpoint(dir)
		require.NoError(t, err)
		return c
	}
	c := load(1 << 40)
	require.Nil(t, c.set.spill)
	half := c.set.mem.Load()
	require.Positive(t, half)

	c = load(2 * half)
	require.Nil(t, c.set.spill, "at exactly half the budget the set stays in memory")
	require.Equal(t, half, c.set.mem.Load())
	c = load(2*half - 2)
	require.NotNil(t, c.set.spill, "past half the budget the set moves to disk as it loads")
}

// A table's home slot for a fingerprint is the fingerprint's top bits, as
// many as the table has slots: fingerprints in ascending order probe the
// table from its first slot to its last (the sorted lookup's order).
func TestTableHomeIsTheFingerprintsTopBits(t *testing.T) {
	s := newFPSet(1, false)
	defer s.release()
	for _, n := range []int{16, 1024, 1 << 16} {
		tb := s.newTable(n)
		k := bits.Len(uint(n - 1))
		for _, fp := range []uint64{0, 1, 1 << 40, 1<<63 | 5, ^uint64(0)} {
			require.Equal(t, fp>>(64-k), tb.home(fp), "table of %d slots, fingerprint %#x", n, fp)
		}
		require.Equal(t, uint64(n-1), tb.home(^uint64(0)), "the greatest fingerprint's home is the last slot")
		s.freeTable(tb)
	}
}

// A state shorter than a word is read byte by byte, and no byte past it:
// the bytes that follow it in memory do not change its word.
func TestWordOfAShortStateReadsNoBytePastIt(t *testing.T) {
	h := newWordHash(3)
	for _, after := range []byte{0, 0xff} {
		buf := [8]byte{1, 2, 3, after, after, after, after, after}
		require.Equal(t, uint64(0x030201), h.word(unsafe.Pointer(&buf[0]), 0), "the bytes after the state are %#x", after)
	}
}

// A spilled set of two workers refuses a worker's state past the
// reference limit, 2^31 less two (a worker's number takes a bit), as one
// in memory does.
func TestSpilledSetOfTwoWorkersFullAtTheReferenceLimit(t *testing.T) {
	s := newFPSet(2, false)
	s.spillDir = t.TempDir()
	t.Cleanup(func() {
		if s.spill != nil {
			s.spill.close()
		}
		s.release()
	})
	_, isNew, err := s.insert(mix(1)|minFP, 0, noParent, 0)
	require.NoError(t, err)
	require.True(t, isNew)
	require.NoError(t, s.spillOut())
	n := s.logs[0].n
	s.logs[0].n = 1<<31 - 2 // the log is full (its count only)
	_, _, err = s.insert(mix(2)|minFP, 0, noParent, 0)
	require.ErrorIs(t, err, errSetFull)
	s.logs[0].n = n
	require.False(t, s.contains(mix(2)|minFP, 0), "the refused state was not claimed")
}

// A 128-bit set tells apart two fingerprints of one high word whose low
// words differ but share a shard and a home slot: the second is new, and
// both are then held.
func TestWideSetTellsHighWordSharersApart(t *testing.T) {
	s := newFPSet(1, true)
	defer s.release()
	const hi = 0x1234_5678_9abc_def0
	a := uint64(0x7000_0000_0000_0000) | minFP
	b := a + numShards // the same shard (low bits) and home (top bits)
	for _, fp := range []uint64{a, b} {
		_, isNew, err := s.insert(fp, hi, noParent, 0)
		require.NoError(t, err)
		require.True(t, isNew, "fingerprint %#x", fp)
	}
	require.True(t, s.contains(a, hi))
	require.True(t, s.contains(b, hi))
	_, isNew, err := s.insert(b, hi, noParent, 0)
	require.NoError(t, err)
	require.False(t, isNew, "met again")
}

// lonely is a model of one state without successors, with a liveness
// property (never violated: P never holds) and no fairness.
type lonely struct{}

func (lonely) Init(emit func(int64))                            { emit(0) }
func (lonely) Next(int64, func(string, int64))                  {}
func (lonely) Encode(dst []byte, x int64) []byte                { return append(dst, byte(x)) }
func (lonely) Invariants() []string                             { return nil }
func (lonely) Holds(int, int64) bool                            { return true }
func (lonely) LivenessProperties() []string                     { return []string{"P ~> Q"} }
func (lonely) LeadsTo(int, int64) (bool, bool)                  { return false, false }
func (lonely) FairEnabled(int64, func(string, bool))            {}
func (lonely) FairTaken(string, int64, int64, func(key string)) {}

// The liveness check's graph may take the whole memory budget, not a byte
// more: built under a budget of exactly its memory (with the set's), the
// graph of one state is built, and under one byte less the check stops
// with the budget as its reason.
func TestLivenessGraphWithinExactlyTheBudgetIsBuilt(t *testing.T) {
	build := func(budget int64) (*checker[int64], *lgraph[int64]) {
		c, err := newChecker[int64](lonely{}, Options{Workers: 1, MemoryBudget: budget})
		require.NoError(t, err)
		g, err := c.buildGraph(context.Background())
		require.NoError(t, err)
		return c, g
	}
	c, g := build(1 << 40)
	require.NotNil(t, g)
	require.Len(t, g.states, 1)
	need := g.bytes(len(g.states)) + c.set.mem.Load()

	c, g = build(need)
	require.NotNil(t, g, "a graph of exactly the budget is built")
	require.Empty(t, c.reason)
	c, g = build(need - 1)
	require.Nil(t, g, "a graph past the budget is not")
	require.Contains(t, c.reason, "memory budget")
}
