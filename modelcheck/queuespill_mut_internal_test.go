package modelcheck

import (
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A worker's spilled blocks go to one file until the file passes
// queueFileMax: three full blocks spilled at once share one file (a file
// per block would hold an open file for every block of a level on disk),
// are read back in order, and the file is removed with its last block.
func TestSpilledBlocksShareAFile(t *testing.T) {
	c := &checker[[2]int64]{q: &queueSpill{parent: t.TempDir()}}
	defer c.q.close()
	b := &blocks[[2]int64]{pool: &c.pool}
	for i := range 3*blockSize + 1 {
		b.add(entry[[2]int64]{s: [2]int64{int64(i), 1}})
	}
	require.NoError(t, c.spillBlocks(b))
	require.Equal(t, 3*blockSize, b.spilled, "the full blocks, not the one being filled")
	require.Len(t, c.q.open, 1, "three blocks, one file")
	for k := range 3 {
		blk, err := c.loadBlock(b, k, true, nil)
		require.NoError(t, err)
		require.Len(t, blk, blockSize)
		require.Equal(t, [2]int64{int64(k * blockSize), 1}, blk[0].s)
	}
	require.Empty(t, c.q.open, "the file is removed with its last block")
}

// The queue's memory, which the budget weighs, is every block the pool
// gave out and has not had back, and every block it keeps for reuse: both
// are memory the queue holds.
func TestQueueBytesCountsThePooledBlocks(t *testing.T) {
	c := &checker[[2]int64]{}
	var got [][]entry[[2]int64]
	for range 3 {
		got = append(got, c.pool.get())
	}
	c.pool.put(got[0])
	block := int64(blockSize) * int64(unsafe.Sizeof(entry[[2]int64]{}))
	require.Equal(t, 3*block, c.queueBytes(), "two blocks in use and one pooled")
	c.pool.put(got[1])
	c.pool.put(got[2])
	require.Equal(t, 3*block, c.queueBytes(), "three pooled")
}

// spilledLevel returns a checker whose queue spills to a folder of the
// test's, and a level of n states of it with its full blocks on disk.
func spilledLevel(t *testing.T, n int) (*checker[[2]int64], *blocks[[2]int64]) {
	t.Helper()
	c := &checker[[2]int64]{q: &queueSpill{parent: t.TempDir()}}
	t.Cleanup(func() { c.q.close() })
	b := &blocks[[2]int64]{pool: &c.pool}
	for i := range n {
		b.add(entry[[2]int64]{s: [2]int64{int64(i), 1}})
	}
	require.NoError(t, c.spillBlocks(b))
	return c, b
}

// A worker's file takes no more blocks once it holds queueFileMax bytes:
// the next block goes to a new file.
func TestQueueFileAtItsMaximumTakesNoMoreBlocks(t *testing.T) {
	c, b := spilledLevel(t, blockSize+1)
	require.Len(t, c.q.open, 1)
	b.wr.size = queueFileMax // its count only: no test writes 64 MiB
	for i := range blockSize {
		b.add(entry[[2]int64]{s: [2]int64{int64(i), 2}})
	}
	require.NoError(t, c.spillBlocks(b))
	require.Len(t, c.q.open, 2, "the second block in a file of its own")
	block := int64(blockSize) * int64(unsafe.Sizeof(entry[[2]int64]{}))
	require.Equal(t, block, b.wr.size, "the new file holds the second block")
}

// A file whose close fails is reported when its last block is consumed,
// though its removal succeeds.
func TestConsumedReportsAFileThatDoesNotClose(t *testing.T) {
	c, b := spilledLevel(t, blockSize+1)
	qf := b.wr
	require.NoError(t, qf.f.Close()) // the second close fails
	require.ErrorIs(t, c.q.consumed(b.at[0]), os.ErrClosed)
	require.Empty(t, c.q.open, "the file is given up all the same")
	_, err := os.Stat(qf.path)
	require.ErrorIs(t, err, os.ErrNotExist, "and removed")
}

// A checkpoint reads a level's blocks on disk (eachBlock) into one
// scratch block of its own, in order and without giving them up: the
// pool gives out no block for them, and the blocks stay on disk.
func TestEachBlockReadsTheDiskIntoOneScratchBlock(t *testing.T) {
	c, b := spilledLevel(t, 3*blockSize+1)
	live, pooled := c.pool.live.Load(), c.pool.n.Load()
	var firsts []int64
	require.NoError(t, c.eachBlock(b, func(blk []entry[[2]int64]) error {
		firsts = append(firsts, blk[0].s[0])
		return nil
	}))
	require.Equal(t, []int64{0, blockSize, 2 * blockSize, 3 * blockSize}, firsts)
	require.Equal(t, live, c.pool.live.Load(), "no block of the pool given out")
	require.Equal(t, pooled, c.pool.n.Load())
	require.Equal(t, 3*blockSize, b.spilled, "the blocks stay on disk")
	require.Len(t, c.q.open, 1)
}

// A level on disk is read back in segments of an eighth of the queue's
// share of the budget, and at least four blocks.
func TestSegmentIsAnEighthOfTheQueuesShare(t *testing.T) {
	block := int64(blockSize) * int64(unsafe.Sizeof(entry[[2]int64]{}))
	for _, tc := range []struct {
		share int64
		want  int
	}{
		{64 * block, 8},
		{80*block + block/2, 10},
		{40 * block, 5},
		{16 * block, 4},
		{block, 4},
	} {
		c := &checker[[2]int64]{queueCap: tc.share}
		require.Equal(t, tc.want, c.segmentBlocks(), "a share of %d blocks", tc.share/block)
	}
}
