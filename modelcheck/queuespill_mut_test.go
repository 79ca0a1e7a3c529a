package modelcheck_test

import (
	"context"
	"encoding/binary"
	"os"
	"testing"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// fat is a state of 256 bytes: its number, its level, and room.
type fat [32]uint64

// hubLeaves is a model of three levels: one initial state, hubs successors of
// it, and leaves successors of each hub, which have none. Its states are
// fat, so its last level is heavy in the queue, while the set holds a few
// bytes a state.
type hubLeaves struct{ hubs, leaves int }

func (m *hubLeaves) Init(emit func(fat)) { emit(fat{}) }

func (m *hubLeaves) Next(s fat, emit func(string, fat)) {
	switch s[1] {
	case 0:
		for h := range m.hubs {
			emit("Hub", fat{uint64(h), 1})
		}
	case 1:
		for l := range m.leaves {
			emit("Leaf", fat{s[0]*uint64(m.leaves) + uint64(l), 2})
		}
	}
}

func (m *hubLeaves) Encode(dst []byte, s fat) []byte {
	return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(dst, s[0]), s[1])
}

func (m *hubLeaves) Invariants() []string { return nil }

func (m *hubLeaves) Holds(int, fat) bool { return true }

func (m *hubLeaves) PlainState() {}

// The queue's states on disk take no memory: the seen-set moves to disk
// at a level's end only when the set and the queue's memory (its blocks
// in use and pooled) pass half the budget, and the blocks the queue wrote
// to disk are not counted. Here the last level passes the queue's
// quarter of the budget, so most of it goes to disk, and the set with
// the most the queue held in memory stays within half the budget, which
// it would pass with the level on disk counted too: the set stays in
// memory, and the figures are those of a search in memory.
func TestQueueOnDiskLeavesTheSetInMemory(t *testing.T) {
	m := &hubLeaves{hubs: 256, leaves: 64} // 16,384 leaves of 264 bytes in the queue: 4 MiB
	const budget = 12 << 20
	inMemory, err := modelcheck.Check(context.Background(), m, modelcheck.Options{Workers: 1})
	require.NoError(t, err)
	require.Equal(t, modelcheck.OK, inMemory.Outcome, inMemory.Reason)
	require.EqualValues(t, 1+256+256*64, inMemory.Distinct)

	dir := t.TempDir()
	res, err := modelcheck.Check(context.Background(), m, modelcheck.Options{Workers: 1, MemoryBudget: budget, SpillDir: dir})
	require.NoError(t, err)
	require.Equal(t, modelcheck.OK, res.Outcome, res.Reason)
	require.Positive(t, res.QueueSpillBytes, "the queue moved to disk")
	require.Less(t, res.SetBytes+res.QueuePeak, int64(budget/2), "the set and the queue's memory within half the budget")
	require.Greater(t, res.SetBytes+res.QueuePeak+res.QueueSpillBytes, int64(budget/2), "not with the queue on disk counted")
	require.Zero(t, res.Spills, "the set stayed in memory")
	require.Zero(t, res.SpillBytes)
	require.Equal(t, inMemory.Distinct, res.Distinct)
	require.Equal(t, inMemory.Generated, res.Generated)
	require.Equal(t, inMemory.Depth, res.Depth)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left, "the queue's files are removed")
}
