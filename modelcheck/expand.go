package modelcheck

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"
)

// chunk is how many states a worker takes from the level at a time.
const chunk = 64

// blockSize is the capacity of one block of a level's states.
const blockSize = 4096

// blocks holds a level's states in fixed-size blocks, so a level grows
// without copying and the next level is the workers' blocks put together.
type blocks[S any] struct {
	list [][]entry[S]
	n    int
	// pool, if set, gives the blocks of a level expanded before, whose
	// memory is mapped and in use already.
	pool *blockPool[S]
	// at[k] is where block k lies on disk when the queue spilled it
	// (queuespill.go); list[k] is then nil. at is nil while nothing is on
	// disk, and may be shorter than list.
	at []queueBlock
	// spilled is how many of the n states are on disk; kept is how many
	// blocks at the front were spilled already (or looked at); wr is the
	// file the owner writes its blocks to.
	spilled, kept int
	wr            *queueFile
}

// blockPool keeps the blocks of the level last expanded for the next
// levels: a block fresh from the Go heap is mostly memory the process
// has not touched yet, and its first writes fault each page in. Large
// model, 4 runs alternated: 1 worker 5.73-5.96 s wall, 5.93-6.03 s with
// fresh blocks; 2 workers 3.31-3.37 s, 3.38-3.49 s; 24,700 page faults
// instead of 32,000, and peak RSS 236 MiB instead of 260 (the collector
// needs no room for the dropped blocks).
type blockPool[S any] struct {
	mu   sync.Mutex
	free [][]entry[S]
	n    atomic.Int64 // len(free), for the memory budget
	// live is how many blocks the pool gave out that are not back: the
	// queue's blocks in memory.
	live atomic.Int64
	// arena, if set, is where new blocks come from (plain states only:
	// the collector does not look into an arena for pointers).
	arena *arena
}

// get returns an empty block.
func (p *blockPool[S]) get() []entry[S] {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live.Add(1)
	if k := len(p.free); k > 0 {
		b := p.free[k-1]
		p.free[k-1] = nil
		p.free = p.free[:k-1]
		p.n.Store(int64(k - 1))
		return b[:0]
	}
	if b := arenaSlice[entry[S]](p.arena, blockSize); b != nil {
		return b
	}
	return make([]entry[S], 0, blockSize)
}

// put takes back one block, no longer read.
func (p *blockPool[S]) put(blk []entry[S]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, blk)
	p.n.Store(int64(len(p.free)))
	p.live.Add(-1)
}

// recycle takes the blocks of b, which is no longer read, in place of
// those left unused, so the pool holds at most one level. Blocks of the
// arena are all kept: dropped, their memory would stay the process's
// until the run ends, and new ones would be carved.
func (p *blockPool[S]) recycle(b *blocks[S]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.arena == nil {
		clear(p.free)
		p.free = p.free[:0]
	}
	for _, blk := range b.list {
		if cap(blk) == blockSize {
			p.free = append(p.free, blk)
			p.live.Add(-1)
		}
	}
	p.n.Store(int64(len(p.free)))
	b.list, b.n = nil, 0
}

func (b *blocks[S]) add(e entry[S]) {
	if k := len(b.list); k == 0 || len(b.list[k-1]) == blockSize {
		if b.pool != nil {
			b.list = append(b.list, b.pool.get())
		} else {
			b.list = append(b.list, make([]entry[S], 0, blockSize))
		}
		if b.at != nil {
			b.at = append(b.at, queueBlock{})
		}
	}
	k := len(b.list) - 1
	b.list[k] = append(b.list[k], e)
	b.n++
}

func (b *blocks[S]) len() int { return b.n }

// expandLevel expands every state of cur (depth level) on the workers and
// returns the new states of the next level. A level with blocks on disk
// is expanded in segments of consecutive blocks, each read back just
// before it is expanded and given back to the pool after, so the states
// are expanded in the level's order whatever lies on disk.
func (c *checker[S]) expandLevel(cur *blocks[S], level int) (*blocks[S], error) {
	// Each worker's output on lines of its own: every new state updates
	// its header, and two headers on one line made each update take the
	// line from the other worker's core.
	outs := make([]struct {
		blocks[S]
		_ [128]byte
	}, c.opts.Workers)
	for w := range outs {
		outs[w].pool = &c.pool
	}
	segmented := cur.spilled > 0
	var err error
	if !segmented {
		c.expandBlocks(cur.list, level, func(w int) *blocks[S] { return &outs[w].blocks })
		c.pool.recycle(cur)
	} else {
		seg := c.segmentBlocks()
		for lo := 0; lo < len(cur.list) && !c.stop.Load() && err == nil; lo += seg {
			hi := min(lo+seg, len(cur.list))
			for k := lo; k < hi && err == nil; k++ {
				if cur.onDisk(k) {
					_, err = c.loadBlock(cur, k, true, nil)
				}
			}
			if err != nil {
				break
			}
			c.noteQueue(c.queueBytes())
			c.expandBlocks(cur.list[lo:hi], level, func(w int) *blocks[S] { return &outs[w].blocks })
			for k := lo; k < hi; k++ {
				c.pool.put(cur.list[k])
				cur.list[k] = nil
			}
		}
		// Blocks left unread (the run stopped): their files go with the
		// folder at the end; those in memory go back to the pool.
		for k, blk := range cur.list {
			if blk != nil && !cur.onDisk(k) {
				c.pool.put(blk)
			}
		}
		cur.list, cur.at, cur.n, cur.spilled = nil, nil, 0, 0
	}
	next := &blocks[S]{pool: &c.pool}
	for _, o := range outs {
		if o.at != nil && next.at == nil {
			next.at = make([]queueBlock, len(next.list), len(next.list)+len(o.list))
		}
		if next.at != nil {
			at := o.at[:min(len(o.at), len(o.list))]
			next.at = append(next.at, at...)
			for range len(o.list) - len(at) {
				next.at = append(next.at, queueBlock{})
			}
		}
		next.list = append(next.list, o.list...)
		next.n += o.n
		next.spilled += o.spilled
	}
	return next, err
}

// expandBlocks expands the states of list on the workers, worker w adding
// the new states to out(w).
func (c *checker[S]) expandBlocks(list [][]entry[S], level int, out func(w int) *blocks[S]) {
	// Work items are chunks of blocks: item k is chunk k-starts[b] of block b.
	starts := make([]int, len(list)+1)
	for b, blk := range list {
		starts[b+1] = starts[b] + (len(blk)+chunk-1)/chunk
	}
	items := starts[len(list)]
	workers := min(c.opts.Workers, items)
	var pos atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c.worker(w, list, starts, &pos, level, out(w))
		}(w)
	}
	wg.Wait()
}

// pending is a successor waiting for its batch to be inserted.
type pending[S any] struct {
	s      S
	parent ref    // next to s: a state of 4-byte alignment leaves no gap
	fp, hi uint64 // the fingerprint (hi: 128-bit only)
	gen    int64  // the generated count once it was generated (ordered mode)
}

// batchSize is how many successors a worker gathers before it inserts
// them: the probes of a batch follow one another without the successor
// generation in between, which lets the processor overlap their cache
// misses (large model, one worker, best of 3: 8.9 s of CPU with batches
// of 128, 9.6 s inserting after each state).
const batchSize = 128

// expansion is one worker's state while it expands its share of a level.
type expansion[S any] struct {
	c        *checker[S]
	w, level int
	out      *blocks[S]
	buf      []byte
	batch    []pending[S]
	// ready is the batch before batch: its slots are being fetched
	// (prefetch) while batch fills, and it is inserted when batch is full
	// (see cycle).
	ready []pending[S]
	addrs []*uint64 // the slots prefetch fetches
	from  entry[S]
	// next is the successor being handled: Next's, copied there by emit,
	// or written there by an InPlace model. As a field of x, &x.next
	// costs no allocation.
	next      S
	succ      int
	generated int64 // successors generated since the last publication
	distinct  int64 // new states since the last publication
	// recent holds the fingerprints (low and high words) this worker
	// last sent to the set, one per line of a direct-mapped cache: about
	// half the successors are met again soon (self-loops, and the
	// diamonds of actions that commute), and a hit spares their probe.
	recent *recentCache
	// parent is x.from's words and their mixes, from which its
	// successors' fingerprints are computed (checker.stepped).
	parent *parentHash
	// sb is the room for sorting batches (LookupSorted), nil in hash
	// mode.
	sb *sortBuf
}

// recentSize is the number of entries of a worker's cache of recent
// fingerprints (32 KiB of low words): on the large protocol model it
// spares the set 49.9% of its probes (2,048 entries: 47.7%; 65,536, which
// no longer fit the first-level cache: 59.1%).
const recentSize = 4096

// recentCache is a direct-mapped cache of the fingerprints a worker last
// sent to the set. The low words and the high ones (128-bit fingerprints
// only) are apart, so a 64-bit search's cache holds twice the entries in
// the same lines.
type recentCache struct {
	lo [recentSize]uint64
	hi []uint64 // nil for 64-bit fingerprints
}

func newRecentCache(wide bool) *recentCache {
	r := &recentCache{}
	if wide {
		r.hi = make([]uint64, recentSize)
	}
	return r
}

// met reports whether fp (and hi) is in the cache, and puts it there
// (for 64-bit fingerprints without a branch, see emitNext).
func (r *recentCache) met(fp, hi uint64) bool {
	k := fp & (recentSize - 1)
	if r.hi == nil {
		old := r.lo[k]
		r.lo[k] = fp
		return old == fp
	}
	if r.lo[k] == fp && r.hi[k] == hi {
		return true
	}
	r.lo[k], r.hi[k] = fp, hi
	return false
}

// counts returns the figures in the search order: exact with one worker.
func (x *expansion[S]) counts() (distinct, generated int64) {
	return x.c.distinct.Load() + x.distinct, x.c.generated.Load() + x.generated
}

// emit handles one successor t of x.from, in the order Next emits them.
// As TLC does, a successor is counted as generated, then (inside the
// constraint) stored if new and its invariants checked, then the action
// properties are checked on the step, whether t is new or not. Storing is
// batched (see batchSize); a step that breaks an
// action property first flushes the batch, so the successor is stored
// (and earlier successors checked) before the property is reported.
func (x *expansion[S]) emit(action string, t S) {
	x.next = t
	x.emitNext(action)
}

// emitNext is emit for the successor in x.next.
func (x *expansion[S]) emitNext(action string) {
	c := x.c
	t := &x.next
	if c.stop.Load() {
		return
	}
	x.succ++
	x.generated++
	var gen int64 // the generated count with this successor (ordered mode)
	if c.ordered {
		gen = c.generated.Load() + x.generated
	}
	// A self-loop (t is its parent, which is stored) is not new, and an
	// action property [P]_vars holds on a step that changes no variable:
	// nothing is left to do for it.
	var fp, hi uint64
	keyed := false
	if c.stepped {
		var same bool
		fp, hi, same = x.parent.step(unsafe.Pointer(t))
		if same && c.acons == nil {
			return
		}
		keyed = true
	} else if c.plain && c.acons == nil && samePlain(t, &x.from.s) {
		return
	}
	if (c.cons == nil && c.acons == nil) || c.inModel(action, x.from.s, *t) {
		if !keyed {
			x.buf, fp, hi = c.key(x.buf, *t)
		}
		// A fingerprint this worker met lately is stored already, or is
		// in the batch ahead of this one and will be: this successor
		// cannot be new, so it needs no probe of the set. The successor
		// is written past the batch's end either way and kept only on a
		// miss, without a branch: the cache hits about half the time, at
		// random, and a branch on it was mispredicted as often.
		n := len(x.batch)
		if n == cap(x.batch) {
			x.batch = append(x.batch, pending[S]{})[:n]
		}
		b := x.batch[:n+1]
		p := &b[n] // field by field: a composite literal was built on the stack and copied
		p.s, p.parent, p.fp, p.hi, p.gen = *t, x.from.r, fp, hi, gen
		if !x.recent.met(fp, hi) {
			n++
		}
		x.batch = b[:n]
	} else {
		// TLC checks the invariants of a state outside the constraint
		// (it is unseen), but neither stores nor explores it.
		if c.ordered {
			x.flush()
		}
		distinct, _ := x.counts()
		if !c.checkState(*t, finding[S]{length: x.level + 1, at: x.from.r, action: action, to: *t, step: true, distinct: distinct, generated: gen}) && !c.opts.Continue {
			return
		}
	}
	if c.act == nil || len(c.acts) == 0 {
		return
	}
	if i := c.failingStep(action, &x.from.s, t); i >= 0 {
		x.flush()
		if c.stop.Load() {
			return // an earlier successor broke an invariant
		}
		distinct, _ := x.counts()
		c.report(&finding[S]{kind: "action", name: c.act.ActionProperties()[i], length: x.level + 1, at: x.from.r,
			action: action, to: *t, step: true, distinct: distinct, generated: gen})
	}
}

// failingStep returns the first selected action property that the step
// *from -> *to breaks, or -1.
func (c *checker[S]) failingStep(action string, from, to *S) int {
	if c.ptr != nil {
		return c.ptr.FailingStepPtr(c.acts, action, from, to)
	}
	for _, i := range c.acts {
		if !c.act.ActionHolds(i, action, *from, *to) {
			return i
		}
	}
	return -1
}

// flush inserts the batch ahead (ready) and the batch, in the order they
// were generated, appending the new states to out.
func (x *expansion[S]) flush() {
	if x.sb != nil {
		x.sortedInsert(x.batch)
		x.batch = x.batch[:0]
		return
	}
	x.insert(x.ready)
	x.ready = x.ready[:0]
	x.addrs = prefetch(x.c.set, x.batch, x.addrs)
	x.insert(x.batch)
	x.batch = x.batch[:0]
}

// cycle starts fetching the slots of the full batch, inserts the batch
// ahead of it, whose slots were fetched while this one filled, and makes
// the batch the one ahead.
func (x *expansion[S]) cycle() {
	x.addrs = prefetch(x.c.set, x.batch, x.addrs)
	x.insert(x.ready)
	x.ready, x.batch = x.batch, x.ready[:0]
}

// insert inserts batch, appending the new states to out.
func (x *expansion[S]) insert(batch []pending[S]) {
	c := x.c
	for k := range batch {
		p := &batch[k]
		if c.stop.Load() {
			break
		}
		if c.noInsert.Load() {
			if !c.sawNew.Load() && !c.set.contains(p.fp, p.hi) {
				c.sawNew.Store(true)
			}
			continue
		}
		r, isNew, err := c.set.insert(p.fp, p.hi, p.parent, x.w)
		if err != nil {
			c.halt("", err)
			break
		}
		if isNew {
			x.distinct++
			if x.distinct == 1 {
				c.deepen(x.level + 1)
			}
			if i := c.failing(&p.s); i >= 0 {
				distinct, _ := x.counts()
				c.report(&finding[S]{kind: "invariant", name: c.names[i], length: x.level + 1, at: r, distinct: distinct, generated: p.gen})
			}
			x.out.add(entry[S]{p.s, r})
		}
	}
}

// admit stores p, a new state whose ref is r, in the sorted mode: it is
// counted, its invariants are checked, and it is queued for the next
// level. (The hash mode's insert does the same inline.)
func (x *expansion[S]) admit(p *pending[S], r ref) {
	c := x.c
	x.distinct++
	if x.distinct == 1 {
		c.deepen(x.level + 1)
	}
	if i := c.failing(&p.s); i >= 0 {
		distinct, _ := x.counts()
		c.report(&finding[S]{kind: "invariant", name: c.names[i], length: x.level + 1, at: r, distinct: distinct, generated: p.gen})
	}
	x.out.add(entry[S]{p.s, r})
}

// publish adds the worker's counts to the shared ones.
func (x *expansion[S]) publish() {
	x.c.generated.Add(x.generated)
	x.c.distinct.Add(x.distinct)
	x.generated, x.distinct = 0, 0
}

func (c *checker[S]) worker(w int, list [][]entry[S], starts []int, pos *atomic.Int64, level int, out *blocks[S]) {
	if c.recent[w] == nil {
		c.recent[w] = newRecentCache(c.set.wide)
	}
	x := &expansion[S]{c: c, w: w, level: level, out: out, recent: c.recent[w]}
	limit := batchSize
	if c.sortedLookup() {
		x.sb, limit = c.sortBufs[w], c.sortLimit()
		x.batch = c.sortBatches[w]
	}
	if c.stepped {
		x.parent = newParentHash(c.words, c.set.wide)
	}
	emit, emitNext := x.emit, x.emitNext
	inPlace := c.inPlace // in a register for the loop, not loaded through c per state
	maxStates := c.opts.MaxStates
	c.set.begin(w)
	defer c.set.end(w)
	for !c.stop.Load() {
		c.set.quiesce(w) // between chunks it holds no table
		k := int(pos.Add(1)) - 1
		if k >= starts[len(starts)-1] {
			break
		}
		b := sort.SearchInts(starts, k+1) - 1
		blk := list[b]
		lo := (k - starts[b]) * chunk
		hi := min(lo+chunk, len(blk))
		for _, e := range blk[lo:hi] {
			if c.stop.Load() {
				break
			}
			x.from, x.succ = e, 0
			if c.stepped {
				x.parent.reset(unsafe.Pointer(&x.from.s))
			}
			if inPlace != nil {
				inPlace.NextInto(&x.from.s, &x.next, emitNext)
			} else {
				c.m.Next(e.s, emit)
			}
			if x.succ == 0 && c.opts.CheckDeadlock {
				// TLC finds a deadlock when it has expanded the state:
				// after every earlier successor.
				x.flush()
				distinct, generated := x.counts()
				if !c.stop.Load() {
					c.report(&finding[S]{kind: "deadlock", name: "deadlock", length: level, at: e.r, distinct: distinct, generated: generated})
				}
			}
			if len(x.batch) >= limit {
				if x.sb != nil {
					x.flush()
				} else {
					x.cycle()
				}
			}
		}
		d := x.distinct
		x.publish()
		total := c.distinct.Load()
		c.queue.Add(d - int64(hi-lo))
		if maxStates > 0 && total >= maxStates {
			c.halt(fmt.Sprintf("state limit %d reached", maxStates), nil)
		}
		if b := c.opts.MemoryBudget; b > 0 {
			set := c.set.mem.Load()
			queue := c.queueBytes()
			c.noteQueue(queue)
			if c.q == nil {
				// A queue that cannot spill: its states, counted.
				queue = (c.curLen + total - c.levelStart + c.pool.n.Load()*blockSize) * int64(unsafe.Sizeof(entry[S]{}))
			}
			if x.sb != nil {
				// The workers' sorted batches: successors waiting for
				// their lookup, a part of the queue.
				queue += int64(c.opts.Workers*limit) * int64(unsafe.Sizeof(pending[S]{}))
			}
			if c.q != nil {
				// Past its share of the budget, the queue moves this
				// worker's full blocks of the next level to disk; the set
				// moves at the level's end (spillDue).
				if queue > c.queueCap {
					if err := c.spillBlocks(out); err != nil {
						c.halt("", fmt.Errorf("modelcheck: spilling the queue to %s: %w", c.opts.SpillDir, err))
					}
				}
			} else if c.set.spillDir != "" && queue > b {
				// The set moves to disk at the level's end (spillDue);
				// only the queue, which stays, can end the run.
				c.halt(fmt.Sprintf("memory budget of %s reached by the queue of states to expand (%s; the seen-set moves to disk, but the queue moves only states of a plain type, and %T is not one)", sizeText(b), sizeText(queue), x.from.s), nil)
			} else if c.set.spillDir == "" && set+queue > b {
				c.halt(fmt.Sprintf("memory budget of %s reached (seen-set %s, queue %s)", sizeText(b), sizeText(set), sizeText(queue)), nil)
			}
		}
	}
	x.flush()
	// The states of the last batches are queued too: counted here, the
	// progress report's queue does not drift below the truth at every
	// call (a level on disk makes one call per segment).
	c.queue.Add(x.distinct)
	x.publish()
	if x.sb != nil {
		c.sortBatches[w] = x.batch[:0] // the next level's, without growing it again
	} else if c.sortBatches != nil {
		c.sortBatches[w] = nil // a hash lookup's batch of 128: not worth keeping
	}
}
