package modelcheck

import (
	"context"
	"encoding/binary"
	"errors"
	"runtime"
	"sync"
	"testing"
)

// Two fingerprints that share their low word are one state to a 64-bit
// set and two to a 128-bit one, across table growth, and both are found
// again with their high words.
func TestWideSetTellsLowWordCollisionsApart(t *testing.T) {
	for _, wide := range []bool{false, true} {
		s := newFPSet(1, wide)
		var inserted int
		for i := uint64(1); i <= 5000; i++ {
			lo := i * 0x9E3779B97F4A7C15
			for _, hi := range []uint64{i, i + 1<<40} {
				if _, isNew, err := s.insert(lo, hi, noParent, 0); err != nil {
					t.Fatal(err)
				} else if isNew {
					inserted++
				}
			}
		}
		want := 5000
		if wide {
			want = 10000
		}
		if inserted != want {
			t.Fatalf("wide=%v: %d new fingerprints, want %d", wide, inserted, want)
		}
		seven := uint64(7)
		lo7 := seven * 0x9E3779B97F4A7C15
		if wide && (!s.contains(lo7, 7+1<<40) || s.contains(lo7, 8)) {
			t.Fatal("contains does not compare the high word")
		}
		if _, hi, _ := s.entry(1); wide && hi != 1+1<<40 {
			t.Fatalf("the log keeps high word %x, want %x", hi, uint64(1+1<<40))
		}
		s.release()
	}
}

// The set's larger tables are carved from slabs; a slab is unmapped once
// every table carved from it is freed, the last one when the set is
// released, and the set's memory count comes back to its logs alone.
func TestSlabsFreedWithTheirTables(t *testing.T) {
	for _, wide := range []bool{false, true} {
		s := newFPSet(2, wide)
		var slabs []*slab
		seen := map[*slab]bool{}
		for i := uint64(1); i <= 400_000; i++ {
			fp := mix(i)
			if _, isNew, err := s.insert(fp, fp^0x5851F42D4C957F2D|1, noParent, int(i%2)); err != nil || !isNew {
				t.Fatalf("wide=%v: insert %d: new=%v, %v", wide, i, isNew, err)
			}
			if i%50_000 == 0 {
				for k := range s.tabs {
					if tb := s.tabs[k].Load(); tb != nil && tb.slab != nil && !seen[tb.slab] {
						seen[tb.slab] = true
						slabs = append(slabs, tb.slab)
					}
				}
				s.reclaim() // as between levels
			}
		}
		if len(slabs) == 0 {
			t.Fatalf("wide=%v: no table of 400,000 states came from a slab", wide)
		}
		for i := uint64(1); i <= 400_000; i += 997 {
			fp := mix(i)
			if !s.contains(fp, fp^0x5851F42D4C957F2D|1) {
				t.Fatalf("wide=%v: fingerprint %d lost", wide, i)
			}
		}
		s.release()
		for _, sl := range slabs {
			if sl.mem != nil || sl.live != 0 {
				t.Fatalf("wide=%v: a slab still mapped (%d bytes live) after release", wide, sl.live)
			}
		}
		// The logs are counted as insert counts them: 16 entries for a
		// worker's first chunk, chunkSize for each other one.
		perEntry := int64(12)
		if wide {
			perEntry = 20
		}
		var logs int64
		for _, lg := range s.logs {
			if k := int64(len(lg.fps)); k > 0 {
				logs += perEntry * (16 + (k-1)*chunkSize)
			}
		}
		if got := s.mem.Load(); got != logs {
			t.Fatalf("wide=%v: memory count %d after release, want the logs' %d", wide, got, logs)
		}
	}
}

// A slab is unmapped when the last table carved from it is freed, unless
// tables are still being carved from it (then drop unmaps it); small
// tables come from the Go heap.
func TestSlabUnmappedWithItsLastTable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("slabs are mapped on Linux only")
	}
	var a slabs
	if _, sl := a.alloc(slabMin/8 - 1); sl != nil {
		t.Fatal("a table under slabMin bytes came from a slab")
	}
	half := slabBytes / 16 // words: half a slab
	w1, s1 := a.alloc(half)
	w2, s2 := a.alloc(half)
	w3, s3 := a.alloc(half)
	if s1 == nil || s1 != s2 || s3 == s1 {
		t.Fatalf("three half-slab tables: slabs %p %p %p, want the first two shared", s1, s2, s3)
	}
	w1[0], w2[half-1], w3[0] = 1, 2, 3 // the memory is there
	a.free(s1, w1)
	if s1.mem == nil {
		t.Fatal("the first slab unmapped with a table still carved from it")
	}
	a.free(s2, w2)
	if s1.mem != nil {
		t.Fatal("the first slab still mapped after its last table was freed")
	}
	a.free(s3, w3)
	if s3.mem == nil {
		t.Fatal("the current slab unmapped while tables may still be carved from it")
	}
	a.drop()
	if s3.mem != nil {
		t.Fatal("drop left the current slab mapped")
	}
}

// A freed table's memory is carved again, cleared, before fresh memory:
// holes next to each other join, and a hole at the end of what was carved
// gives its bytes back.
func TestSlabReusesFreedTables(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("slabs are mapped on Linux only")
	}
	var a slabs
	q := slabBytes / 8 / 8 // words: an eighth of a slab
	w1, s1 := a.alloc(q)
	w2, _ := a.alloc(q)
	w3, _ := a.alloc(q)
	w4, _ := a.alloc(q)
	for _, w := range [][]uint64{w1, w2, w3, w4} {
		w[0], w[len(w)-1] = 7, 7
	}
	a.free(s1, w2)
	a.free(s1, w3) // joins w2's hole
	big, sb := a.alloc(2 * q)
	if sb != s1 || &big[0] != &w2[0] {
		t.Fatalf("a table of two freed neighbours' size was not carved where they were")
	}
	if big[0] != 0 || big[q-1] != 0 || big[2*q-1] != 0 {
		t.Fatal("a reused extent was not cleared")
	}
	used := s1.used
	a.free(s1, w4) // the last carved: gives its bytes back
	if s1.used != used-8*q || len(s1.holes) != 0 {
		t.Fatalf("freeing the last table: used %d (want %d), holes %v", s1.used, used-8*q, s1.holes)
	}
	a.free(s1, w1)
	a.free(s1, big)
	if s1.live != 0 || s1.used != 0 || len(s1.holes) != 0 {
		t.Fatalf("all freed: live %d, used %d, holes %v", s1.live, s1.used, s1.holes)
	}
	// The bytes given back were written: carved again from the end, they
	// are cleared too (a spill frees every table, then grows them again).
	again, _ := a.alloc(q)
	if again[0] != 0 || again[q-1] != 0 {
		t.Fatal("memory given back to the carving was carved again uncleared")
	}
	a.drop()
}

// Workers that insert the same fingerprints at once, into one shard whose
// table grows all the while, count each fingerprint new exactly once, and
// the set holds every one of them afterwards: an insert that lands in a
// table being copied is not lost, and none is added twice.
//
// The workers pass quiet points as the search does (quiesce), so the
// tables that growth replaces are freed, and their memory carved again,
// while the others insert (when that is allowed is stated by
// TestRetiredTableFreedOnceEveryWorkerWasQuiet: a free too early is too
// rare here to fail this test).
func TestConcurrentInsertsDuringGrowth(t *testing.T) {
	const workers, keys = 4, 20_000
	for round := 0; round < 5; round++ {
		s := newFPSet(workers, false)
		key := func(i int) uint64 { return mix(uint64(i+round*keys))&^(numShards-1) | 5 }
		var news [workers]int
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.begin(w)
				defer s.end(w)
				for j := 0; j < keys; j++ {
					if j%64 == 0 {
						s.quiesce(w) // as the search does between chunks
					}
					i := j
					if w%2 == 1 {
						i = keys - 1 - j
					}
					_, isNew, err := s.insert(key(i), 0, noParent, w)
					if err != nil {
						t.Error(err)
						return
					}
					if isNew {
						news[w]++
					}
				}
			}()
		}
		wg.Wait()
		total := 0
		for _, n := range news {
			total += n
		}
		if total != keys {
			t.Fatalf("round %d: %d fingerprints counted new, want %d", round, total, keys)
		}
		for i := 0; i < keys; i++ {
			if !s.contains(key(i), 0) {
				t.Fatalf("round %d: fingerprint %d lost", round, i)
			}
		}
		s.release()
	}
}

// A table replaced by growth is freed at the first quiet point after
// every worker has passed one since the replacement (or has finished the
// level), not before, and not only at the level's end.
func TestRetiredTableFreedOnceEveryWorkerWasQuiet(t *testing.T) {
	s := newFPSet(2, false)
	defer s.release()
	s.begin(0)
	s.begin(1)
	// Shard 3's table, from slabMin bytes up, grows while worker 0 inserts.
	for i := uint64(0); s.retirements.Load() < 10; i++ {
		if _, _, err := s.insert(mix(i)&^(numShards-1)|3, 0, noParent, 0); err != nil {
			t.Fatal(err)
		}
	}
	retired := s.nRetired.Load()
	if retired == 0 {
		t.Fatal("no table retired by growth")
	}
	s.quiesce(0)
	if got := s.nRetired.Load(); got != retired {
		t.Fatalf("worker 1 was not quiet since the growth, yet %d of %d retired tables were freed", retired-got, retired)
	}
	s.quiesce(1)
	if got := s.nRetired.Load(); got != 0 {
		t.Fatalf("both workers were quiet since the growth, yet %d retired tables are kept", got)
	}
	var tables int64
	for i := range s.tabs {
		if tb := s.tabs[i].Load(); tb != nil {
			tables += tb.bytes()
		}
	}
	if logs := s.mem.Load() - tables; logs < 0 || logs > 12*int64(s.logs[0].n)+12*chunkSize {
		t.Fatalf("the set counts %d bytes beyond its live tables, for a log of %d states", logs, s.logs[0].n)
	}
	// A worker that has finished the level holds nothing: the other's
	// quiet point alone frees what growth replaces next.
	s.end(1)
	for n := s.retirements.Load(); s.retirements.Load() == n; {
		if _, _, err := s.insert(mix(uint64(s.logs[0].n)+1<<40)&^(numShards-1)|3, 0, noParent, 0); err != nil {
			t.Fatal(err)
		}
	}
	s.quiesce(0)
	if got := s.nRetired.Load(); got != 0 {
		t.Fatalf("worker 1 had finished, yet %d retired tables are kept", got)
	}
}

// A checkpoint's fingerprints are refused when they are the values that
// mark empty and closed slots (fingerprint never gives them).
func TestReservedFingerprintsRefused(t *testing.T) {
	for _, wide := range []bool{false, true} {
		s := newFPSet(1, wide)
		for fp := uint64(0); fp < minFP; fp++ {
			if err := s.load(fp, 0, noParent, 0); !errors.Is(err, ErrCheckpoint) {
				t.Fatalf("wide=%v: checkpoint fingerprint %d: %v", wide, fp, err)
			}
		}
		s.release()
	}
}

// counter is a plain model for the package's own tests: x counts up to
// n-1, or jumps by 7.
type counter struct{ n int64 }

func (m counter) Init(emit func(int64)) { emit(0) }
func (m counter) Next(x int64, emit func(string, int64)) {
	if x+1 < m.n {
		emit("Inc", x+1)
	}
	if x+7 < m.n {
		emit("Jump", x+7)
	}
}
func (counter) Encode(dst []byte, x int64) []byte {
	return binary.LittleEndian.AppendUint64(dst, uint64(x))
}
func (counter) Invariants() []string  { return nil }
func (counter) Holds(int, int64) bool { return true }
func (counter) PlainState()           {}

// The arena holds the log and the blocks of a plain model's search, and
// a run unmaps it when it ends.
func TestArenaUsedAndDroppedByTheRun(t *testing.T) {
	if mem := mapSlab(1); mem == nil {
		t.Skip("no slabs on this system")
	} else {
		unmapSlab(mem)
	}
	for _, workers := range []int{1, 2} {
		c, err := newChecker[int64](counter{n: 50_000}, Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		c.search(c.initial(), 1)
		if c.distinct.Load() != 50_000 || len(c.arena.slabs) == 0 {
			t.Fatalf("workers %d: %d distinct, %d slabs", workers, c.distinct.Load(), len(c.arena.slabs))
		}
		c.dropArena()
		if c, err = newChecker[int64](counter{n: 50_000}, Options{Workers: workers}); err != nil {
			t.Fatal(err)
		}
		res, err := c.run(context.Background())
		if err != nil || res.Distinct != 50_000 {
			t.Fatalf("workers %d: %v, %+v", workers, err, res)
		}
		if len(c.arena.slabs) != 0 || c.arena.rest != nil {
			t.Fatalf("workers %d: %d slabs still mapped after the run", workers, len(c.arena.slabs))
		}
	}
}
