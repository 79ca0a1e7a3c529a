package modelcheck

import (
	"errors"
	"testing"
)

// A sorted batch that would take a worker's log past the reference limit
// is inserted one state at a time, as the hash lookup inserts, so the
// search stops with errSetFull rather than record states whose references
// wrap; with two workers the limit is 2^31 less two.
func TestSortedBatchAtTheReferenceLimitStopsTheSearch(t *testing.T) {
	c, err := newChecker[int64](counter{n: 100}, Options{Workers: 2, Lookup: LookupSorted})
	if err != nil {
		t.Fatal(err)
	}
	defer c.set.release()
	x := &expansion[int64]{c: c, w: 0, level: 1, out: &blocks[int64]{}, sb: c.sortBufs[0]}
	x.sortedInsert([]pending[int64]{{s: 1, parent: noParent, fp: mix(1) | minFP}})
	if x.distinct != 1 || c.err != nil {
		t.Fatalf("a first state: %d new, %v", x.distinct, c.err)
	}
	limit := 1<<(32-c.set.wbits) - 2
	if limit != 1<<31-2 {
		t.Fatalf("two workers' limit %d, want 2^31-2", limit)
	}
	c.set.logs[0].n = limit // the log is full (its count only: no test fills 2^31 states)
	x.sortedInsert([]pending[int64]{{s: 2, parent: noParent, fp: mix(2) | minFP}, {s: 3, parent: noParent, fp: mix(3) | minFP}})
	if !errors.Is(c.err, errSetFull) || !c.stop.Load() {
		t.Fatalf("a batch past the limit: %v (stopped %v), want errSetFull", c.err, c.stop.Load())
	}
	if x.distinct != 1 {
		t.Fatalf("%d states counted new past the limit", x.distinct-1)
	}
	c.set.logs[0].n = 1
}
