package modelcheck

import (
	"errors"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

const (
	shardBits = 8
	numShards = 1 << shardBits
	chunkBits = 12
	chunkSize = 1 << chunkBits
	noParent  = ^uint32(0)
	// closed marks an empty slot of a table being grown (see grow64): an
	// insert that meets it waits for the new table.
	closed = 1
	// minFP is the least fingerprint: 0 marks an empty slot, closed a
	// closed one.
	minFP      = 2
	minSlots   = 1 << 4
	loadFactor = 0.8
)

// errSetFull reports that one worker's log holds as many states as a
// 32-bit state reference can name (about four billion in all).
var errSetFull = errors.New("modelcheck: fingerprint set full (more than 2^32 states)")

// fpSet is the seen-set: a sharded open-addressing hash set of 64-bit
// fingerprints. Besides the set, each worker keeps a log of the states it
// admitted, in admission order: the state's fingerprint and a reference
// (worker, position) to the state it was first reached from. Counterexamples
// are rebuilt by following those references back to an initial state and
// replaying the model forwards, so no state is ever stored whole.
//
// Memory: 8 bytes per slot at a load between 0.4 and 0.8, plus 12 bytes of
// log per state: between 22 and 32 bytes per distinct state; with 128-bit
// fingerprints 16 bytes per slot and 20 of log, between 40 and 60.
//
// A 64-bit set takes no lock to insert (insert64: a compare-and-swap into
// the slot; growth closes the old table's empty slots as it copies them);
// a 128-bit one writes two words per slot and takes its shard's lock to
// add a state.
//
// Lookups are latency-bound (a probe into a large table misses the
// caches): a worker prefetches the slots of a whole batch (prefetch) and
// inserts it one batch later (expansion.cycle), or at once when it must
// (expansion.flush). A lookup takes no lock; a table
// replaced by growth is kept until every worker has passed a quiet point
// since (quiesce, between chunks of a level), or until reclaim, which runs
// between levels when no worker is active. Tables of 32 KiB or more are carved from slabs of
// 64 MiB mapped with huge-page advice (see slab). The set once prefetched
// each successor's slot when the successor was made (an assembly
// PREFETCHT0, a call per successor): measured side by side
// (BenchmarkDrain, large model, one worker, best of 3 CPU seconds) the
// prefetch cost 4% (10.29 s with, 9.92 s without), and was removed (the
// batch's prefetch is one call per 128 successors); its huge-page advice
// was given to each shard's table, which reaches a huge page's 2 MiB only
// from about 3*10^7 states, so it never applied.
type fpSet struct {
	// tabs[i] is shard i's table. It is apart from the shards' locks:
	// a lookup reads it without the lock, and an insert into a shard
	// writes the shard's lock, which would take a line every worker reads
	// away from the others' caches (large model, two workers, alternated
	// twice: 7.41-7.42 s of user CPU apart, 7.70-7.94 s together).
	tabs    [numShards]atomic.Pointer[table]
	shards  [numShards]fpShard
	retired []retiredTable // tables replaced by growth, not yet freed
	retMu   sync.Mutex
	// retirements counts the tables retired so far: a table's number
	// (retiredTable.at) is the count just after it was replaced. quiet[w]
	// is the count worker w last saw at a point where it held no table
	// (quiesce), or ^0 outside a level's expansion; a retired table whose
	// number no worker's quiet is below is read by no one and is freed
	// then, not at the level's end. Freed early, a grown table's memory
	// is carved again by the next growth of another shard: on the
	// LogCoord model, one worker, the kernel's zeroing of fresh pages went
	// from 7.8% of the profile to 1.4%, and the peak RSS from 200 MiB to
	// 179 MiB.
	retirements atomic.Uint64
	nRetired    atomic.Int32 // len(retired)
	// oldest is the number of retired[0] (0: none), so that a worker
	// that cannot free it yet returns without the lock.
	oldest atomic.Uint64
	quiet  []quietMark
	// logs[w] is worker w's log of the states it admitted. Keeping the
	// log per worker, not per shard, means a new state writes no line
	// that the other workers write too.
	logs  []stateLog
	wbits uint // the low bits of a ref that name the worker
	// wide sets 128-bit fingerprints: each slot has a second word, in
	// table.hi, and so does each log entry.
	wide bool
	// counts[w] is worker w's count of its states in each shard (64-bit
	// sets, whose inserts take no lock).
	counts []shardCounts
	alloc  slabs // where tables of slabMin bytes or more come from
	// arena, if set, holds the log's chunks until the search ends.
	arena *arena
	// mem is the memory held by tables (retired ones too, until freed)
	// and logs, kept as they grow, for the memory budget.
	mem atomic.Int64
	// spill, if set, holds the states moved to disk (spill.go); spillDir
	// is where its folder is made at the first spill (Options.SpillDir),
	// empty if the set does not spill.
	spill    *spill
	spillDir string
}

// stateLog is one worker's log: fingerprint and parent ref of each state it
// admitted, in order. Only its worker writes it during a search.
type stateLog struct {
	fps     [][]uint64
	his     [][]uint64 // the fingerprints' high words (wide sets only)
	parents [][]uint32
	n       int
	// at[c] is where chunk c was spilled in its worker's log file (fps[c]
	// and parents[c] are then nil); at is as long as the chunks spilled.
	at []int64
	_  [64]byte // keep neighbouring logs off one cache line
}

// newFPSet returns a set for a search with the given number of workers,
// of 128-bit fingerprints if wide, else of 64-bit ones.
func newFPSet(workers int, wide bool) *fpSet {
	n := max(workers, 1)
	s := &fpSet{logs: make([]stateLog, n), counts: make([]shardCounts, n), wbits: uint(bits.Len(uint(n - 1))), wide: wide,
		quiet: make([]quietMark, n)}
	for w := range s.quiet {
		s.quiet[w].n.Store(^uint64(0))
	}
	return s
}

// retiredTable is a table replaced by growth, and its number among the
// retirements.
type retiredTable struct {
	t  *table
	at uint64
}

// quietMark is one worker's quiet count, on a cache line of its own.
type quietMark struct {
	n atomic.Uint64
	_ [56]byte
}

type table struct {
	slots []uint64 // written with atomic stores so lock-free lookups may read them
	// shift takes a fingerprint's top bits as its home slot (home).
	shift uint8
	// slab and hiSlab are where slots and hi were carved from (nil: the
	// Go heap).
	slab, hiSlab *slab
	// hi holds the high words of 128-bit fingerprints (nil for 64-bit):
	// hi[i] is written before slots[i], so a reader that sees slots[i]
	// sees hi[i].
	hi []uint64
}

type fpShard struct {
	mu sync.Mutex
	n  int      // the shard's states (128-bit sets; see counts for 64-bit ones)
	_  [48]byte // keep neighbouring shards' locks off one cache line
}

// shardCounts is one worker's count of the states it added to each shard
// of a 64-bit set: own, which only its worker reads and writes, and n,
// own as its worker last published it (see added), which a worker that
// may have filled a shard reads for every worker.
type shardCounts struct {
	own [numShards]int32
	n   [numShards]atomic.Int32
	_   [64]byte
}

// ref names a state in the logs: the worker in the low bits, the position
// in that worker's log above.
type ref = uint32

// insert adds fingerprint (fp, hi) with the given parent on behalf of
// worker w, returning the new state's ref and true, or false if it was
// already present. hi is the high word of a 128-bit fingerprint (ignored
// in a 64-bit set). fp is at least minFP, as fingerprint gives them.
func (s *fpSet) insert(fp, hi uint64, parent ref, w int) (ref, bool, error) {
	if s.spill != nil && s.spill.run != nil {
		lg := &s.logs[w]
		if lg.n >= 1<<(32-s.wbits)-2 {
			return 0, false, errSetFull
		}
		if !s.spilledClaim(fp, w) {
			return 0, false, nil
		}
		return s.record(lg, fp, 0, parent, w), true, nil
	}
	if !s.wide {
		return s.insert64(fp, parent, w)
	}
	lg := &s.logs[w]
	if lg.n >= 1<<(32-s.wbits)-2 {
		return 0, false, errSetFull
	}
	if !s.claimWide(fp, hi) {
		return 0, false, nil
	}
	return s.record(lg, fp, hi, parent, w), true, nil
}

// claimWide adds fingerprint (fp, hi) to a 128-bit set without a log entry
// and reports whether it was new (sorted inserts claim a batch in slot
// order and record its new states later, in generation order).
func (s *fpSet) claimWide(fp, hi uint64) bool {
	k := fp & (numShards - 1)
	sh, tab := &s.shards[k], &s.tabs[k]
	// Most successors were seen before. Look without the lock first: a
	// lookup that writes nothing keeps the shard's lock line from bouncing
	// between cores. Slots only ever go from empty to a fingerprint, and a
	// table replaced by growth is not freed before this worker's next
	// quiet point (quiesce), so a fingerprint found in any table (even a
	// retired one) is in the set; only a miss needs the lock.
	if t := tab.Load(); t != nil {
		mask := uint64(len(t.slots) - 1)
		for i := t.home(fp); ; i = (i + 1) & mask {
			v := atomic.LoadUint64(&t.slots[i])
			if v == fp && t.hi[i] == hi {
				return false
			}
			if v == 0 {
				break
			}
		}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	t := tab.Load()
	if t == nil {
		t = s.newTable(minSlots)
		s.mem.Add(t.bytes())
		tab.Store(t)
	}
	slots := t.slots
	mask := uint64(len(slots) - 1)
	i := t.home(fp)
	for {
		v := slots[i]
		if v == fp && t.hi[i] == hi {
			return false
		}
		if v == 0 {
			break
		}
		i = (i + 1) & mask
	}
	t.hi[i] = hi
	atomic.StoreUint64(&slots[i], fp)
	sh.n++
	if float64(sh.n) > loadFactor*float64(len(slots)) {
		s.grow(tab, t)
	}
	return true
}

// record appends a new state to worker w's log lg and returns its ref.
func (s *fpSet) record(lg *stateLog, fp, hi uint64, parent ref, w int) ref {
	local := lg.n
	lg.n++
	c := local >> chunkBits
	if local&(chunkSize-1) == 0 {
		// The first chunk grows by appending, so small runs stay small;
		// later chunks are allocated whole and never copied.
		capacity := chunkSize
		if c == 0 {
			capacity = 16
		}
		lg.fps = append(lg.fps, logChunk[uint64](s, capacity))
		lg.parents = append(lg.parents, logChunk[uint32](s, capacity))
		logBytes := 12 * capacity
		if s.wide {
			lg.his = append(lg.his, logChunk[uint64](s, capacity))
			logBytes += 8 * capacity
		}
		s.mem.Add(int64(logBytes))
	}
	lg.fps[c] = append(lg.fps[c], fp)
	lg.parents[c] = append(lg.parents[c], parent)
	if s.wide {
		lg.his[c] = append(lg.his[c], hi)
	}
	return ref(local)<<s.wbits | ref(w)
}

// logChunk returns an empty log chunk of capacity n: from the arena for a
// whole chunk (never appended past its capacity), else from the Go heap
// (the first chunk grows by appending).
func logChunk[T uint64 | uint32](s *fpSet, n int) []T {
	if n == chunkSize && s.spillDir == "" { // a spilled chunk's memory is given back: not the arena's
		if c := arenaSlice[T](s.arena, n); c != nil {
			return c
		}
	}
	return make([]T, 0, n)
}

// insert64 is insert in a 64-bit set, without a lock: a new fingerprint
// is written with a compare-and-swap into the first empty slot of its
// probe. Two workers adding the same fingerprint follow the same probe
// through slots that are never emptied, so the one whose swap fails finds
// the other's fingerprint there. Growth (grow64, under the shard's lock)
// closes every empty slot of the old table as it copies it, so an insert
// meets a closed slot, or fails its swap, and waits for the new table
// rather than write where the copy has passed. The shard's lock line,
// taken by every new state, moved between the cores: with two workers it
// was 7% of the CPU time (large model, pprof), one worker 1%.
func (s *fpSet) insert64(fp uint64, parent ref, w int) (ref, bool, error) {
	k := fp & (numShards - 1)
	tab := &s.tabs[k]
	lg := &s.logs[w]
	for {
		t := tab.Load()
		if t == nil {
			sh := &s.shards[k]
			sh.mu.Lock()
			if tab.Load() == nil {
				t := s.newTable(minSlots)
				s.mem.Add(t.bytes())
				tab.Store(t)
			}
			sh.mu.Unlock()
			continue
		}
		mask := uint64(len(t.slots) - 1)
		i := t.home(fp)
		for {
			v := atomic.LoadUint64(&t.slots[i])
			if v == fp {
				return 0, false, nil
			}
			if v == 0 {
				if lg.n >= 1<<(32-s.wbits)-2 {
					return 0, false, errSetFull
				}
				if atomic.CompareAndSwapUint64(&t.slots[i], 0, fp) {
					s.added(t, k, w)
					return s.record(lg, fp, 0, parent, w), true, nil
				}
				continue // taken meanwhile: look at it again
			}
			if v == closed {
				break
			}
			i = (i + 1) & mask
		}
		for tab.Load() == t { // growing: wait for the new table
			runtime.Gosched()
		}
	}
}

// claim64 is claimWide in a 64-bit set: insert64 without the log. It is
// insert64's probe written again rather than shared, so that insert64,
// the hash mode's hot path, keeps the body the checker's profile
// (cmd/checker/default.pgo) was taken on.
func (s *fpSet) claim64(fp uint64, w int) bool {
	k := fp & (numShards - 1)
	tab := &s.tabs[k]
	for {
		t := tab.Load()
		if t == nil {
			sh := &s.shards[k]
			sh.mu.Lock()
			if tab.Load() == nil {
				t := s.newTable(minSlots)
				s.mem.Add(t.bytes())
				tab.Store(t)
			}
			sh.mu.Unlock()
			continue
		}
		mask := uint64(len(t.slots) - 1)
		i := t.home(fp)
		for {
			v := atomic.LoadUint64(&t.slots[i])
			if v == fp {
				return false
			}
			if v == 0 {
				if atomic.CompareAndSwapUint64(&t.slots[i], 0, fp) {
					s.added(t, k, w)
					return true
				}
				continue // taken meanwhile: look at it again
			}
			if v == closed {
				break
			}
			i = (i + 1) & mask
		}
		for tab.Load() == t { // growing: wait for the new table
			runtime.Gosched()
		}
	}
}

// added counts a state worker w added to shard k's table t, and grows the
// table when the shard is full. Each worker counts its own states, and
// publishes its count and adds up all the published counts of the shard
// only when its own has grown by a step (len/(64*workers)) small enough
// that the others' states cannot take the load much past loadFactor: each
// other worker has published all but less than a step of its states, and
// has added less than a step since its own last check, so the load passes
// loadFactor by less than 2/64 of the table. Counting without an atomic
// add spared a locked instruction per new state.
func (s *fpSet) added(t *table, k uint64, w int) {
	c := &s.counts[w]
	c.own[k]++
	n := c.own[k]
	step := int32(len(t.slots) / (64 * len(s.counts)))
	if step > 1 && n%step != 0 {
		return
	}
	c.n[k].Store(n)
	var total int32
	for i := range s.counts {
		total += s.counts[i].n[k].Load()
	}
	if float64(total) <= loadFactor*float64(len(t.slots)) {
		return
	}
	sh, tab := &s.shards[k], &s.tabs[k]
	sh.mu.Lock()
	if tab.Load() == t {
		s.grow64(tab, t)
	}
	sh.mu.Unlock()
}

// grow64 doubles a 64-bit shard's table (tab, under the shard's lock)
// while inserts go on: it closes each empty slot of the old table with a
// compare-and-swap before it moves on, so every fingerprint written into
// the old table is copied.
func (s *fpSet) grow64(tab *atomic.Pointer[table], old *table) {
	t := s.newTable(2 * len(old.slots))
	for j := range old.slots {
		v := atomic.LoadUint64(&old.slots[j])
		for v == 0 {
			if atomic.CompareAndSwapUint64(&old.slots[j], 0, closed) {
				break
			}
			v = atomic.LoadUint64(&old.slots[j])
		}
		if v != 0 { // else closed
			t.slots[t.free(v)] = v
		}
	}
	s.replace(tab, old, t)
}

// newTable returns an empty table of n slots.
func (s *fpSet) newTable(n int) *table {
	t := &table{shift: uint8(64 - bits.Len(uint(n-1)))}
	t.slots, t.slab = s.alloc.alloc(n)
	if s.wide {
		t.hi, t.hiSlab = s.alloc.alloc(n)
	}
	return t
}

// home is the slot where the probe for fp begins: the fingerprint's top
// bits (the shard is its bottom ones), so that fingerprints in ascending
// order of their top bits probe a shard's table from its start to its end
// (sortedInsert relies on it). The low bits above the shard's were the
// home before; measured then, the top bits made growth cheaper (a grown
// table is filled in order) and the run no shorter.
func (t *table) home(fp uint64) uint64 { return fp >> t.shift }

// free returns the first empty slot of fp's probe in t, a table no other
// goroutine sees yet (growth fills it before it is published).
func (t *table) free(fp uint64) uint64 {
	mask := uint64(len(t.slots) - 1)
	i := t.home(fp)
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	return i
}

// freeTable gives t's memory back. It must run while no goroutine reads t.
func (s *fpSet) freeTable(t *table) {
	s.mem.Add(-t.bytes())
	s.alloc.free(t.slab, t.slots)
	s.alloc.free(t.hiSlab, t.hi)
}

// grow doubles a 128-bit shard's table (tab, under the shard's lock); the
// old one is retired (see replace).
func (s *fpSet) grow(tab *atomic.Pointer[table], old *table) {
	t := s.newTable(2 * len(old.slots))
	for j, v := range old.slots {
		if v != 0 {
			i := t.free(v)
			t.hi[i] = old.hi[j]
			t.slots[i] = v
		}
	}
	s.replace(tab, old, t)
}

// replace makes t, a grown copy of old, shard tab's table, and retires
// old until no worker can be reading it (quiesce) or reclaim.
func (s *fpSet) replace(tab *atomic.Pointer[table], old, t *table) {
	tab.Store(t)
	s.mem.Add(t.bytes())
	s.retMu.Lock()
	s.retired = append(s.retired, retiredTable{old, s.retirements.Add(1)})
	s.nRetired.Store(int32(len(s.retired)))
	if len(s.retired) == 1 {
		s.oldest.Store(s.retired[0].at)
	}
	s.retMu.Unlock()
}

// begin marks worker w as expanding: from now on it may hold tables.
func (s *fpSet) begin(w int) { s.quiet[w].n.Store(s.retirements.Load()) }

// end marks worker w as done with the level: it holds no table.
func (s *fpSet) end(w int) { s.quiet[w].n.Store(^uint64(0)) }

// quiesce is a point where worker w holds no table (between chunks of
// its share of a level): it notes the retirements it has seen, and frees
// the retired tables that no worker can still be reading. A worker that
// saw a retirement's count loads shard tables after that table was
// replaced, so it reaches the new one.
func (s *fpSet) quiesce(w int) {
	if s.nRetired.Load() == 0 {
		return
	}
	s.quiet[w].n.Store(s.retirements.Load())
	low := ^uint64(0)
	for i := range s.quiet {
		low = min(low, s.quiet[i].n.Load())
	}
	if low < s.oldest.Load() {
		return // the oldest is still held, and the others are newer
	}
	s.retMu.Lock()
	// retired is in the order of the retirements: the tables to free
	// are a prefix.
	k := 0
	for k < len(s.retired) && s.retired[k].at <= low {
		s.freeTable(s.retired[k].t)
		k++
	}
	n := copy(s.retired, s.retired[k:])
	clear(s.retired[n:])
	s.retired = s.retired[:n]
	s.nRetired.Store(int32(n))
	s.oldest.Store(0)
	if n > 0 {
		s.oldest.Store(s.retired[0].at)
	}
	s.retMu.Unlock()
}

// bytes is the memory a table holds.
func (t *table) bytes() int64 { return int64(len(t.slots)+len(t.hi)) * 8 }

// reclaim drops retired tables. It must run while no goroutine looks up.
func (s *fpSet) reclaim() {
	s.retMu.Lock()
	for _, r := range s.retired {
		s.freeTable(r.t)
	}
	s.retired = nil
	s.nRetired.Store(0)
	s.oldest.Store(0)
	s.retMu.Unlock()
}

// contains reports whether fingerprint (fp, hi) is in the set.
func (s *fpSet) contains(fp, hi uint64) bool {
	if s.spill != nil && s.spill.run != nil && s.spill.contains(fp) {
		return true
	}
	k := fp & (numShards - 1)
	sh := &s.shards[k]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	t := s.tabs[k].Load()
	if t == nil {
		return false
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.home(fp); ; i = (i + 1) & mask {
		// The lock keeps growth away (no slot is closed), not the
		// inserts of a 64-bit set.
		switch atomic.LoadUint64(&t.slots[i]) {
		case fp:
			if t.hi == nil || t.hi[i] == hi {
				return true
			}
		case 0:
			return false
		}
	}
}

// entry returns the fingerprint (fp, hi) and parent of the state r
// names. It must not run while workers insert.
func (s *fpSet) entry(r ref) (fp, hi uint64, parent ref) {
	lg := &s.logs[r&(1<<s.wbits-1)]
	local := int(r >> s.wbits)
	c, i := local>>chunkBits, local&(chunkSize-1)
	if lg.fps[c] == nil {
		fp, parent = s.spilledEntry(int(r&(1<<s.wbits-1)), c, i)
		return fp, 0, parent
	}
	if s.wide {
		hi = lg.his[c][i]
	}
	return lg.fps[c][i], hi, lg.parents[c][i]
}

// bytes returns the memory the set holds: slots and logs (not the part
// on disk).
func (s *fpSet) bytes() int64 {
	var b int64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		if t := s.tabs[i].Load(); t != nil {
			b += t.bytes()
		}
		sh.mu.Unlock()
	}
	for i := range s.logs {
		lg := &s.logs[i]
		for c := range lg.fps {
			b += int64(cap(lg.fps[c]))*8 + int64(cap(lg.parents[c]))*4
		}
		for c := range lg.his {
			b += int64(cap(lg.his[c])) * 8
		}
	}
	return b
}

// release frees every slot table; only the log (entry) stays usable.
func (s *fpSet) release() {
	s.reclaim()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		if t := s.tabs[i].Swap(nil); t != nil {
			s.freeTable(t)
		}
		sh.mu.Unlock()
	}
	s.alloc.drop()
}

// prefetch starts bringing in the slot where each fingerprint of batch
// begins its probe, and returns at once (addrs is a buffer for their
// addresses; it returns it, grown as needed). The processor then has the
// misses of the whole batch under way together; inserted one after the
// other, each insert branches on its slot (seen or new) and the misses
// overlap only as far as the branches are predicted. Measured with the
// loads that came before the prefetch instruction (large model, one
// worker, alternated three times): 6.50-6.73 s of user CPU with them,
// 7.24-7.90 s without. A probe at the load the tables reach (0.8) runs
// past the line of its first slot often enough that the next line is
// worth fetching too: 3.99-4.11 s wall with it, 4.17-4.62 s without; a
// third line gained nothing more (3 runs each alternated).
func prefetch[S any](s *fpSet, batch []pending[S], addrs []*uint64) []*uint64 {
	addrs = addrs[:0]
	for k := range batch {
		fp := batch[k].fp
		if t := s.tabs[fp&(numShards-1)].Load(); t != nil {
			// The probe's first line, and the next one when the probe
			// may run past the first (the slot 7 on from home is on it).
			h := t.home(fp)
			addrs = append(addrs, &t.slots[h], &t.slots[(h+7)&uint64(len(t.slots)-1)])
		}
	}
	prefetchLines(addrs)
	return addrs
}
