package modelcheck

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// spillBenchStates is the number of fingerprints on disk in
// BenchmarkSpillStore: the large model's distinct states.
const spillBenchStates = 4_476_318

// spillBenchQueries is the number of lookups timed by BenchmarkSpillStore,
// half of them of fingerprints on disk: a sorted batch's misses.
const spillBenchQueries = 1 << 20

// pebbleKey is fp as a Pebble key in the run's order: shard (the low bits)
// first, then the rest, big-endian, so that a sorted batch meets Pebble's
// keys in ascending order as it meets the run's.
func pebbleKey(buf []byte, fp uint64) []byte {
	return binary.BigEndian.AppendUint64(buf[:0], bits.RotateLeft64(fp, -shardBits))
}

// spillBenchData returns the fingerprints on disk and the queries, in
// generation (random) order and in the order a sorted batch meets them
// (shard, then value: the run's order).
func spillBenchData() (stored, random, sorted []uint64) {
	r := rand.New(rand.NewPCG(1, 2))
	stored = make([]uint64, spillBenchStates)
	for i := range stored {
		stored[i] = r.Uint64() | minFP
	}
	random = make([]uint64, spillBenchQueries)
	for i := range random {
		if i%2 == 0 {
			random[i] = stored[r.IntN(len(stored))]
		} else {
			random[i] = r.Uint64() | minFP
		}
	}
	sorted = slices.Clone(random)
	slices.SortFunc(sorted, func(a, b uint64) int {
		return compareRunOrder(a, b)
	})
	return stored, random, sorted
}

// compareRunOrder orders fingerprints as the run holds them.
func compareRunOrder(a, b uint64) int {
	ka, kb := bits.RotateLeft64(a, -shardBits), bits.RotateLeft64(b, -shardBits)
	switch {
	case ka < kb:
		return -1
	case ka > kb:
		return 1
	}
	return 0
}

// BenchmarkSpillStore measures the two stores the spilled seen-set could
// use, holding the same fingerprints (the large model's count): the sorted
// run mapped from a file (spill.go, what the set uses) and Pebble, an LSM
// tree (already a dependency of the event store), one key a fingerprint,
// with a bloom filter of 10 bits a key. For each: writing the set to disk
// (the run: spillOut from the tables; Pebble: batches of 65,536 keys, then
// a flush of the memtable to a table), and looking up 2^20 fingerprints,
// half of them on disk, in a sorted batch's order and at random (Pebble:
// Get, and for the sorted order also one iterator's SeekGE). Each reports
// ns a state written or ns a lookup. Lookups are timed after one untimed
// pass over the same queries: the run's pages are in the page cache, as
// they were in every spilled run measured (docs/perf.md), and Pebble's
// tables in its block cache.
//
//	go test -run '^$' -bench SpillStore -benchtime 1x -count 3 ./modelcheck
func BenchmarkSpillStore(b *testing.B) {
	stored, random, sorted := spillBenchData()
	want := 0 // lookups that must be found
	{
		in := make(map[uint64]bool, len(stored))
		for _, fp := range stored {
			in[fp] = true
		}
		for _, fp := range random {
			if in[fp] {
				want++
			}
		}
	}

	// The run, written by the set's own spill.
	s := newSpillingSet(b)
	for _, fp := range stored {
		if _, _, err := s.insert(fp, 0, noParent, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("run/write", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if s.spill != nil { // put the set back in memory for the next spill
				b.StopTimer()
				s.spill.close()
				s.spill = nil
				for _, fp := range stored {
					if _, _, err := s.insert(fp, 0, noParent, 0); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
			}
			if err := s.spillOut(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(stored)), "ns/state")
	})
	// lookups times pass, which looks up every fingerprint of qs and
	// returns how many it found, after one untimed pass that warms the
	// caches.
	lookups := func(name string, qs []uint64, pass func(qs []uint64) int) {
		b.Run(name, func(b *testing.B) {
			b.StopTimer()
			pass(qs)
			b.StartTimer()
			for i := 0; i < b.N; i++ {
				if found := pass(qs); found != want {
					b.Fatalf("%d found, want %d", found, want)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(qs)), "ns/lookup")
		})
	}
	// each is the pass that looks up fingerprints one by one with look.
	each := func(look func(fp uint64) bool) func(qs []uint64) int {
		return func(qs []uint64) int {
			found := 0
			for _, fp := range qs {
				if look(fp) {
					found++
				}
			}
			return found
		}
	}
	if s.spill == nil { // run/write was not selected
		if err := s.spillOut(); err != nil {
			b.Fatal(err)
		}
	}
	lookups("run/lookup-sorted", sorted, each(s.spill.contains))
	lookups("run/lookup-random", random, each(s.spill.contains))

	// Pebble, the same fingerprints.
	// A block cache that holds every table (the run is read through the
	// page cache, which holds it whole), and no compression: Pebble at its
	// fastest for a set that fits in memory.
	cache := pebble.NewCache(512 << 20)
	defer cache.Unref()
	opts := &pebble.Options{Logger: quietPebble{}, Cache: cache}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		opts.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
	}
	dir := b.TempDir()
	var db *pebble.DB
	load := func() error { // opens a new Pebble in dir and writes the set to it
		if db != nil {
			db.Close()
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
		}
		var err error
		if db, err = pebble.Open(dir, opts); err != nil {
			return err
		}
		var key []byte
		for lo := 0; lo < len(stored); lo += 1 << 16 {
			batch := db.NewBatch()
			for _, fp := range stored[lo:min(lo+1<<16, len(stored))] {
				key = pebbleKey(key, fp)
				if err := batch.Set(key, nil, nil); err != nil {
					return err
				}
			}
			if err := batch.Commit(pebble.NoSync); err != nil {
				return err
			}
		}
		return db.Flush()
	}
	b.Run("pebble/write", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := load(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(stored)), "ns/state")
	})
	if db == nil { // pebble/write was not selected
		if err := load(); err != nil {
			b.Fatal(err)
		}
	}
	defer db.Close()
	var key []byte
	get := func(fp uint64) bool {
		key = pebbleKey(key, fp)
		_, closer, err := db.Get(key)
		if err == pebble.ErrNotFound {
			return false
		}
		if err != nil {
			panic(err)
		}
		closer.Close()
		return true
	}
	lookups("pebble/get-sorted", sorted, each(get))
	lookups("pebble/get-random", random, each(get))
	// One iterator a pass, sought forward from key to key.
	lookups("pebble/seek-sorted", sorted, func(qs []uint64) int {
		it, err := db.NewIter(nil)
		if err != nil {
			panic(err)
		}
		found := 0
		for _, fp := range qs {
			key = pebbleKey(key, fp)
			if it.SeekGE(key) && string(it.Key()) == string(key) {
				found++
			}
		}
		if err := it.Close(); err != nil {
			panic(err)
		}
		return found
	})
}

// quietPebble drops Pebble's informational messages; a fatal one panics.
type quietPebble struct{}

func (quietPebble) Infof(string, ...any)           {}
func (quietPebble) Errorf(string, ...any)          {}
func (quietPebble) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
