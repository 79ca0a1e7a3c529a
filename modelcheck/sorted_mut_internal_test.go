package modelcheck

import (
	"testing"
	"unsafe"
)

// A worker's sorted batch is sortBatch successors without a memory
// budget; under one, the workers' batches together hold at most a
// sixteenth of it, as many successors as fit, and at least 1,024 and at
// most sortBatch each.
func TestSortedBatchesHoldASixteenthOfTheBudget(t *testing.T) {
	size := int64(unsafe.Sizeof(pending[[2]int64]{}))
	limit := func(budget int64, workers int) int {
		c := &checker[[2]int64]{opts: Options{MemoryBudget: budget, Workers: workers}}
		return c.sortLimit()
	}
	if got := limit(0, 2); got != sortBatch {
		t.Errorf("no budget: %d successors a batch, want %d", got, sortBatch)
	}
	for _, workers := range []int{1, 2, 3} {
		budget := int64(workers) * 16 * size * 5000 // 5,000 successors a worker
		for _, b := range []int64{budget, budget + 16*int64(workers)*size - 1} {
			got := int64(limit(b, workers))
			if all := int64(workers) * got * size; all > b/16 || all+int64(workers)*size <= b/16 {
				t.Errorf("budget %d, %d workers: %d successors a batch, %d bytes in all, want the most within %d",
					b, workers, got, all, b/16)
			}
		}
		if got := limit(1<<18, workers); got != 1024 {
			t.Errorf("budget 256 KiB, %d workers: %d successors a batch, want the floor of 1,024", workers, got)
		}
		if got := limit(1<<40, workers); got != sortBatch {
			t.Errorf("budget 1 TiB, %d workers: %d successors a batch, want sortBatch", workers, got)
		}
	}
}

// sortKey orders fingerprints as a shard's table is probed: by shard (the
// fingerprint's low shardBits), then by the fingerprint's top bits, which
// give its home slot in a table of any size.
func TestSortKeyOrdersByShardThenHomeSlot(t *testing.T) {
	rnd := uint64(5)
	fps := make([]uint64, 4096)
	for k := range fps {
		rnd += 0x9E3779B97F4A7C15
		fps[k] = mix(rnd)
	}
	fps[1] = fps[0]&(numShards-1) | fps[2]&^(numShards-1) // fps[2]'s top bits in fps[0]'s shard
	for i, a := range fps {
		for _, b := range fps[max(0, i-8):i] {
			sa, sb := a&(numShards-1), b&(numShards-1)
			wantLess := sa < sb || sa == sb && a>>shardBits < b>>shardBits
			if got := sortKey(a) < sortKey(b); got != wantLess {
				t.Fatalf("fingerprints %#x and %#x: sortKey less %v, want %v", a, b, got, wantLess)
			}
		}
	}
}

// sortItems sorts a batch's items by the top 22 bits of their sort keys
// (the shard and the top 14 bits of the fingerprint), and keeps the order
// of the successors whose keys agree there: the one generated first comes
// first. A buffer sorts batch after batch.
func TestSortItemsOrdersByTheKeysTopBitsStably(t *testing.T) {
	const top = 22 // 2*radixBits
	var b sortBuf
	rnd := uint64(9)
	for _, n := range []int{3000, 5000, 1000} {
		b.items = b.items[:0]
		fps := make([]uint64, n)
		for k := range fps {
			if k%4 != 3 { // every fourth successor has its predecessor's fingerprint
				rnd += 0x9E3779B97F4A7C15
				fps[k] = mix(rnd)
			} else {
				fps[k] = fps[k-1]
			}
			b.items = append(b.items, sortKey(fps[k])&^(1<<idxBits-1)|uint64(k))
		}
		b.sortItems()
		seen := make([]bool, n)
		var prevKey, prevK uint64
		for i, it := range b.items {
			k := it & (1<<idxBits - 1)
			if k >= uint64(n) || seen[k] {
				t.Fatalf("batch of %d: item %d holds index %d twice or out of range", n, i, k)
			}
			seen[k] = true
			key := sortKey(fps[k]) >> (64 - top)
			if i > 0 && (prevKey > key || prevKey == key && prevK > k) {
				t.Fatalf("batch of %d: successor %d (key %#x) sorted after %d (key %#x)", n, k, key, prevK, prevKey)
			}
			prevKey, prevK = key, k
		}
	}
}
