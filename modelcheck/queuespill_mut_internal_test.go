package modelcheck

import (
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
