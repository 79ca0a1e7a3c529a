package modelcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The queue past memory (Options.SpillDir, states of a plain type). The
// queue is the BFS frontier: the blocks of the level being expanded and
// of the next one. When the blocks in memory (in use and pooled) pass a
// quarter of the memory budget during a level, each worker writes the
// full blocks of its share of the next level, oldest first, to a file of
// its own and gives their memory back to the pool; the block being
// filled stays. A level with blocks on disk is then expanded in segments
// of consecutive blocks, read back in the level's order just before their
// segment: the states are expanded in the order they would have been in
// memory, so the figures, the first violation and its counterexample do
// not change. (A state's entry carries its ref in the seen-set's log, and
// counterexamples are rebuilt from the log, so a spilled state needs
// nothing more.) A file is removed once its last block is read back, and
// the folder when the run ends.

// queueFileMax is the size past which a worker starts a new queue file:
// a file is removed when every block in it has been read back, so smaller
// files give the disk back sooner, at the cost of more open files.
const queueFileMax = 64 << 20

// queueFile is one file of spilled blocks.
type queueFile struct {
	f    *os.File
	path string
	size int64 // bytes written
	left int   // blocks not read back yet
}

// queueBlock is where a block of states lies on disk: n states from off.
type queueBlock struct {
	file *queueFile
	off  int64
	n    int
}

// queueSpill is the part of the queue moved to disk: its folder (made in
// parent at the first spill), its open files and its figures.
type queueSpill struct {
	parent string
	mu     sync.Mutex
	dir    string
	seq    int
	open   map[*queueFile]struct{}
	// written is every byte of states ever written, disk what the files
	// hold now and peak the most they held at once.
	written, disk, peak atomic.Int64
}

// newFile opens a new file of spilled blocks.
func (q *queueSpill) newFile() (*queueFile, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dir == "" {
		if err := os.MkdirAll(q.parent, 0o755); err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp(q.parent, "modelcheck-queue-")
		if err != nil {
			return nil, err
		}
		q.dir, q.open = dir, map[*queueFile]struct{}{}
	}
	q.seq++
	path := filepath.Join(q.dir, fmt.Sprintf("queue-%d", q.seq))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	qf := &queueFile{f: f, path: path}
	q.open[qf] = struct{}{}
	return qf, nil
}

// write appends b to qf and returns where it went.
func (q *queueSpill) write(qf *queueFile, b []byte, n int) (queueBlock, error) {
	if _, err := qf.f.WriteAt(b, qf.size); err != nil {
		return queueBlock{}, err
	}
	at := queueBlock{file: qf, off: qf.size, n: n}
	qf.size += int64(len(b))
	q.mu.Lock()
	qf.left++
	q.mu.Unlock()
	q.written.Add(int64(len(b)))
	d := q.disk.Add(int64(len(b)))
	for p := q.peak.Load(); d > p && !q.peak.CompareAndSwap(p, d); p = q.peak.Load() {
	}
	return at, nil
}

// read reads the block at into b, which is as long as its bytes.
func (q *queueSpill) read(at queueBlock, b []byte) error {
	if _, err := at.file.f.ReadAt(b, at.off); err != nil {
		return fmt.Errorf("reading the spilled queue: %w", err)
	}
	return nil
}

// consumed records that the block at was read back for good: its file is
// removed with its last block.
func (q *queueSpill) consumed(at queueBlock) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	qf := at.file
	if qf.left--; qf.left > 0 {
		return nil
	}
	delete(q.open, qf)
	q.disk.Add(-qf.size)
	err := qf.f.Close()
	if rerr := os.Remove(qf.path); err == nil {
		err = rerr
	}
	return err
}

// close removes every file and the folder (the end of the run, or a
// stop half-way).
func (q *queueSpill) close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for qf := range q.open {
		qf.f.Close()
	}
	q.open = nil
	if q.dir == "" {
		return nil
	}
	q.disk.Store(0)
	return os.RemoveAll(q.dir)
}

// entryBytes is the memory of a block's states, as written to disk.
func entryBytes[S any](blk []entry[S]) []byte {
	if len(blk) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&blk[0])), len(blk)*int(unsafe.Sizeof(blk[0])))
}

// spillBlocks writes the full blocks of b that are still in memory,
// oldest first, to disk and gives their memory back to the pool; the last
// block (being filled) stays. Only b's owner may call it.
func (c *checker[S]) spillBlocks(b *blocks[S]) error {
	last := len(b.list) - 1
	for k := b.kept; k < last; k++ {
		blk := b.list[k]
		if blk == nil {
			continue
		}
		if b.wr == nil || b.wr.size >= queueFileMax {
			qf, err := c.q.newFile()
			if err != nil {
				return err
			}
			b.wr = qf
		}
		at, err := c.q.write(b.wr, entryBytes(blk), len(blk))
		if err != nil {
			return err
		}
		for len(b.at) < len(b.list) {
			b.at = append(b.at, queueBlock{})
		}
		b.at[k], b.list[k] = at, nil
		b.spilled += len(blk)
		c.pool.put(blk)
	}
	b.kept = max(b.kept, last)
	return nil
}

// loadBlock reads block k of b back from disk, into a block of the pool,
// and returns it; consume says the file may give the block up (else it is
// read again later, as a checkpoint does).
func (c *checker[S]) loadBlock(b *blocks[S], k int, consume bool, into []entry[S]) ([]entry[S], error) {
	at := b.at[k]
	if into == nil {
		into = c.pool.get()
	}
	into = into[:at.n]
	if err := c.q.read(at, entryBytes(into)); err != nil {
		return nil, err
	}
	if consume {
		if err := c.q.consumed(at); err != nil {
			return nil, err
		}
		b.list[k], b.at[k] = into, queueBlock{}
		b.spilled -= at.n
	}
	return into, nil
}

// onDisk reports whether block k of b is on disk.
func (b *blocks[S]) onDisk(k int) bool { return k < len(b.at) && b.at[k].file != nil }

// queueBytes is the memory of the queue's blocks: in use, and pooled.
func (c *checker[S]) queueBytes() int64 {
	return (c.pool.live.Load() + c.pool.n.Load()) * blockSize * int64(unsafe.Sizeof(entry[S]{}))
}

// noteQueue records q bytes of queue in memory for the high-water mark.
func (c *checker[S]) noteQueue(q int64) {
	for p := c.queuePeak.Load(); q > p && !c.queuePeak.CompareAndSwap(p, q); p = c.queuePeak.Load() {
	}
}

// segmentBlocks is how many blocks of a level with blocks on disk are
// read back and expanded together.
func (c *checker[S]) segmentBlocks() int {
	blockBytes := int64(blockSize) * int64(unsafe.Sizeof(entry[S]{}))
	return int(max(4, c.queueCap/8/blockBytes))
}

// eachBlock calls fn with every block of b in order, reading those on
// disk into a scratch block without giving them up.
func (c *checker[S]) eachBlock(b *blocks[S], fn func([]entry[S]) error) error {
	var scratch []entry[S]
	for k, blk := range b.list {
		if b.onDisk(k) {
			if scratch == nil {
				scratch = make([]entry[S], blockSize)
			}
			var err error
			if blk, err = c.loadBlock(b, k, false, scratch); err != nil {
				return err
			}
		}
		if err := fn(blk); err != nil {
			return err
		}
	}
	return nil
}
