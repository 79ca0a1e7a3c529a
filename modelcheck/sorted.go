package modelcheck

import (
	"math/bits"
	"unsafe"
)

// Sorted lookups (LookupSorted). A probe of the seen-set for a successor
// reads one line of a table far larger than the caches, at an address
// that has nothing to do with the last one's: the processor can overlap a
// few such misses (prefetch), but each still costs a trip to memory. A
// worker in sorted mode gathers its successors in a batch of sortBatch,
// sorts the batch by the slot its fingerprint probes first (a shard's
// table is probed from its first slot to its last: home takes the
// fingerprint's top bits), and probes it in that order, a group of
// sortGroup successors prefetched while the group before is probed. The
// lines are then read in ascending addresses, so neighbouring probes share
// lines, pages and the memory's open rows, and the hardware's own
// prefetcher can follow them. In memory that gain is about what the
// batch costs (a batch of whole successors is larger than the second-level
// cache, so each is written out and read back), and LookupAuto keeps the
// hash lookup there; on a spilled set, whose run is read through the page
// cache, the ascending order pays (docs/perf.md).
//
// TLC's order is kept in two passes. The first (claim, in slot order)
// only claims each new fingerprint's slot; the sort is stable, so of two
// successors with one fingerprint the one generated first claims it. The
// second, in the order the successors were generated, records each new
// state in the log, checks its invariants and queues it, and stops at the
// first problem, as the hash mode's one pass does: the figures at a
// violation are single-worker TLC's with one worker.

// sortBatch is how many successors a worker gathers before it sorts and
// inserts them in sorted mode.
const sortBatch = 1 << 16

// sortLimit is the size of the workers' sorted batches: sortBatch, or
// less under a memory budget, so that the batches hold at most a
// sixteenth of it (and at least 1,024 successors each).
func (c *checker[S]) sortLimit() int {
	b := c.opts.MemoryBudget
	if b <= 0 {
		return sortBatch
	}
	n := b / 16 / int64(c.opts.Workers) / int64(unsafe.Sizeof(pending[S]{}))
	return int(min(max(n, 1024), sortBatch))
}

// sortGroup is how many successors of a sorted batch are prefetched
// together, one group ahead of the group being probed.
const sortGroup = 32

// radixBits is the width of one digit of the batch's sort; the sort
// orders the batch by the top 2*radixBits bits of its key (sortKey).
const radixBits = 11

// idxBits is the width of a successor's index in its batch, in the low
// bits of a sort item.
const idxBits = 64 - 2*radixBits

// sortBuf is a worker's room for sorting its batches.
type sortBuf struct {
	items, tmp []uint64
	// fps holds the batch's fingerprints in its order: the prefetch reads
	// them in sorted order, from 8 bytes each rather than from the batch's
	// whole entries.
	fps   []uint64
	count [1 << radixBits]int
	isNew []bool
	addrs []*uint64
}

// sortKey orders fingerprints as their probes visit the set: by shard
// (the fingerprint's low shardBits), then by home slot (its top bits).
func sortKey(fp uint64) uint64 { return bits.RotateLeft64(fp, -shardBits) }

// sortItems sorts b.items (sort key's top 2*radixBits bits above, the
// successor's index below) by key, keeping the order of the indices
// among equal keys: two least-significant-digit counting passes.
func (b *sortBuf) sortItems() {
	n := len(b.items)
	if cap(b.tmp) < n {
		b.tmp = make([]uint64, n)
	}
	src, dst := b.items, b.tmp[:n]
	for _, shift := range [2]uint{idxBits, idxBits + radixBits} {
		clear(b.count[:])
		for _, it := range src {
			b.count[(it>>shift)&(1<<radixBits-1)]++
		}
		sum := 0
		for d, c := range b.count {
			b.count[d] = sum
			sum += c
		}
		for _, it := range src {
			d := (it >> shift) & (1<<radixBits - 1)
			dst[b.count[d]] = it
			b.count[d]++
		}
		src, dst = dst, src
	}
	// Two passes: the sorted items are back in b.items.
}

// sortedInsert inserts batch in sorted mode, appending its new states
// to out in the order they were generated.
func (x *expansion[S]) sortedInsert(batch []pending[S]) {
	c := x.c
	if len(batch) == 0 || c.stop.Load() {
		return
	}
	if c.noInsert.Load() {
		x.insert(batch) // looking only for shorter problems: rare
		return
	}
	s := c.set
	lg := &s.logs[x.w]
	if lg.n+len(batch) >= 1<<(32-s.wbits)-2 {
		x.insert(batch) // near the log's end: one at a time, to fail where the hash mode fails
		return
	}
	b := x.sb
	b.items, b.fps = b.items[:0], b.fps[:0]
	for k := range batch {
		fp := batch[k].fp
		b.fps = append(b.fps, fp)
		b.items = append(b.items, sortKey(fp)&^(1<<idxBits-1)|uint64(k))
	}
	b.sortItems()
	if cap(b.isNew) < len(batch) {
		b.isNew = make([]bool, len(batch))
	}
	isNew := b.isNew[:len(batch)]
	items := b.items
	spilled := s.spill != nil && s.spill.run != nil
	x.prefetchGroup(items[:min(sortGroup, len(items))])
	for g := 0; g < len(items); g += sortGroup {
		end := min(g+sortGroup, len(items))
		x.prefetchGroup(items[end:min(end+sortGroup, len(items))])
		for _, it := range items[g:end] {
			k := it & (1<<idxBits - 1)
			switch {
			case spilled:
				isNew[k] = s.spilledClaim(b.fps[k], x.w)
			case s.wide:
				isNew[k] = s.claimWide(b.fps[k], batch[k].hi)
			default:
				isNew[k] = s.claim64(b.fps[k], x.w)
			}
		}
	}
	for k := range batch {
		if !isNew[k] {
			continue
		}
		if c.stop.Load() || c.noInsert.Load() {
			// A problem was met: the run ends with this level, and the
			// states claimed but not recorded are not counted, as the
			// hash lookup does not insert past it.
			break
		}
		p := &batch[k]
		r := s.record(lg, p.fp, p.hi, p.parent, x.w)
		x.admit(p, r)
	}
}

// prefetchGroup starts fetching the first slot of each of the items'
// probes.
func (x *expansion[S]) prefetchGroup(items []uint64) {
	s := x.c.set
	b := x.sb
	b.addrs = b.addrs[:0]
	for _, it := range items {
		fp := b.fps[it&(1<<idxBits-1)]
		if t := s.tabs[fp&(numShards-1)].Load(); t != nil {
			b.addrs = append(b.addrs, &t.slots[t.home(fp)])
		}
	}
	prefetchLines(b.addrs)
}
