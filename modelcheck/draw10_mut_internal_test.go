package modelcheck

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// fanState is a raw state of 64 bytes: its number, its level, and room.
type fanState [8]int64

// fan is a model of three levels: one initial state, n successors of it,
// and one successor of each of those, which has none.
type fan struct{ n int64 }

func (m fan) Init(emit func(fanState)) { emit(fanState{}) }
func (m fan) Next(s fanState, emit func(string, fanState)) {
	switch s[1] {
	case 0:
		for i := range m.n {
			emit("Out", fanState{i, 1})
		}
	case 1:
		emit("On", fanState{s[0], 2})
	}
}
func (fan) Encode(dst []byte, s fanState) []byte {
	return append(dst, unsafe.Slice((*byte)(unsafe.Pointer(&s)), unsafe.Sizeof(s))...)
}
func (fan) Invariants() []string     { return nil }
func (fan) Holds(int, fanState) bool { return true }

// fanBlock is the memory of one block of fan's queue.
const fanBlock = int64(blockSize) * int64(unsafe.Sizeof(entry[fanState]{}))

// The queue moves to disk only past its share of the budget (a quarter),
// not at it: a search whose queue reaches its share exactly keeps it in
// memory, and one whose share is a byte less moves blocks to disk. The
// share is set to the most memory the queue holds in a search that never
// spills, which it reaches while the middle level grows (three blocks of
// it, two full).
func TestQueueAtExactlyItsShareStaysInMemory(t *testing.T) {
	m := fan{n: 3 * blockSize}
	opts := Options{Workers: 1, Lookup: LookupHash, SpillDir: t.TempDir(), MemoryBudget: 1 << 40}
	free, err := Check(context.Background(), m, opts)
	require.NoError(t, err)
	require.Zero(t, free.QueueSpillBytes)
	peak := free.QueuePeak
	require.Equal(t, int64(0), peak%fanBlock, "the queue's memory is whole blocks")

	opts.MemoryBudget = 4 * peak
	res, err := Check(context.Background(), m, opts)
	require.NoError(t, err)
	require.Equal(t, OK, res.Outcome, res.Reason)
	require.Zero(t, res.QueueSpillBytes, "at its share, the queue stays in memory")
	require.Equal(t, peak, res.QueuePeak)
	require.Equal(t, free.Distinct, res.Distinct)

	opts.MemoryBudget = 4*peak - 4
	res, err = Check(context.Background(), m, opts)
	require.NoError(t, err)
	require.Positive(t, res.QueueSpillBytes, "past its share, the queue moves to disk")
	require.Equal(t, free.Distinct, res.Distinct)
	require.Equal(t, free.Generated, res.Generated)
}

// A checkpoint's frontier is loaded into memory as long as the queue
// holds at most its share of the budget, and moves to disk as it loads
// past it: here a frontier of three blocks against a share of exactly
// two stays in memory (its last block is being filled when the third
// check is made), and against a byte less its first block goes to disk.
// Its states have no new successors, so nothing else spills.
func TestFrontierAtExactlyTheQueuesShareLoadsInMemory(t *testing.T) {
	m := fan{n: 3 * blockSize}
	dir := t.TempDir()
	first, err := Check(context.Background(), m, Options{Workers: 1, CheckpointDir: dir, CheckpointEvery: time.Nanosecond})
	require.NoError(t, err)

	opts := Options{Workers: 1, Lookup: LookupHash, Recover: dir, SpillDir: t.TempDir(), MemoryBudget: 4 * 2 * fanBlock}
	res, err := Check(context.Background(), m, opts)
	require.NoError(t, err)
	require.Equal(t, 3, res.ResumedAt, "resumed with the last level as the frontier")
	require.Zero(t, res.QueueSpillBytes, "at its share, the frontier stays in memory")
	require.Equal(t, first.Distinct, res.Distinct)

	opts.MemoryBudget = 4*2*fanBlock - 4
	res, err = Check(context.Background(), m, opts)
	require.NoError(t, err)
	require.Equal(t, 3, res.ResumedAt)
	require.Positive(t, res.QueueSpillBytes, "past its share, the frontier moves to disk as it loads")
	require.Equal(t, first.Distinct, res.Distinct)
	require.Equal(t, first.Generated, res.Generated)
}

// Each spill merges the tables into a new run and removes the run before
// it: the set's folder holds one run file.
func TestSpillKeepsOneRunFile(t *testing.T) {
	s := newSpillingSet(t)
	runs := func() int {
		entries, err := os.ReadDir(s.spill.dir)
		require.NoError(t, err)
		n := 0
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "run-") {
				n++
			}
		}
		return n
	}
	for round := range uint64(3) {
		for i := range uint64(100) {
			_, isNew, err := s.insert(mix(round<<32|i)|minFP, 0, noParent, 0)
			require.NoError(t, err)
			require.True(t, isNew)
		}
		require.NoError(t, s.spillOut())
		require.Equal(t, 1, runs(), "after spill %d", round+1)
	}
	require.Len(t, s.spill.run, 300, "the run holds every fingerprint")
}

// A set that may move to disk takes its whole log chunks from the Go
// heap, whose memory a spilled chunk gives back; a set that stays in
// memory takes them from the arena.
func TestOnlyASetInMemoryTakesLogChunksFromTheArena(t *testing.T) {
	if mem := mapSlab(1); mem == nil {
		t.Skip("no slabs on this system")
	} else {
		unmapSlab(mem)
	}
	for _, spilling := range []bool{true, false} {
		s := newFPSet(1, false)
		s.arena = &arena{}
		if spilling {
			s.spillDir = t.TempDir()
		}
		for i := range uint64(chunkSize + 1) { // the second chunk is a whole one
			_, _, err := s.insert(mix(i)|minFP, 0, noParent, 0)
			require.NoError(t, err)
		}
		require.Len(t, s.logs[0].fps, 2)
		if spilling {
			require.Empty(t, s.arena.slabs, "a spilling set's chunks are the heap's")
		} else {
			require.NotEmpty(t, s.arena.slabs, "a set in memory carves its chunks from the arena")
		}
		s.release()
		s.arena.drop()
	}
}

// A 128-bit table holds two words a slot, and its memory counts both.
func TestWideTableCountsBothWordsOfASlot(t *testing.T) {
	s := newFPSet(1, true)
	defer s.release()
	for i := range uint64(10_000) {
		_, _, err := s.insert(mix(i)|minFP, mix(^i), noParent, 0)
		require.NoError(t, err)
	}
	s.reclaim()
	tables := 0
	for i := range s.tabs {
		if tb := s.tabs[i].Load(); tb != nil {
			tables++
			require.Equal(t, int64(16*len(tb.slots)), tb.bytes(), "table %d", i)
		}
	}
	require.Positive(t, tables)
}

// Options left at zero (or negative) get their defaults: one worker a
// processor, 64-bit fingerprints, a checkpoint every 10 minutes and a
// progress report every 5 seconds.
func TestFillGivesOptionsAtZeroTheirDefaults(t *testing.T) {
	var o Options
	o.fill()
	require.Positive(t, o.Workers)
	require.Equal(t, 64, o.FingerprintBits)
	require.Equal(t, 10*time.Minute, o.CheckpointEvery)
	require.Equal(t, 5*time.Second, o.ProgressEvery)

	o = Options{CheckpointEvery: -1, ProgressEvery: -1}
	o.fill()
	require.Equal(t, 10*time.Minute, o.CheckpointEvery)
	require.Equal(t, 5*time.Second, o.ProgressEvery)
	o = Options{ProgressEvery: time.Millisecond}
	o.fill()
	require.Equal(t, time.Millisecond, o.ProgressEvery, "a positive interval is kept")
}
