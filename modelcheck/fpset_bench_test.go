package modelcheck

import "testing"

// BenchmarkFPSetInsert replays the seen-set's traffic on the large
// protocol model: 4.5 million distinct fingerprints, each met about nine
// times (once new, then again as a successor of later states), inserted
// in batches as a worker does:
//
//	go test -run '^$' -bench FPSet ./modelcheck
func BenchmarkFPSetInsert(b *testing.B) {
	const distinct = 4_500_000
	for i := 0; i < b.N; i++ {
		s := newFPSet(1, false)
		seen, rnd := uint64(0), uint64(1)
		for j := 0; j < 9*distinct; j++ {
			key := seen
			if j%9 == 0 {
				seen++
			} else {
				rnd = rnd*6364136223846793005 + 1442695040888963407
				key = (rnd >> 11) % seen
			}
			if _, _, err := s.insert(mix(key), 0, noParent, 0); err != nil {
				b.Fatal(err)
			}
		}
		s.release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(9*distinct), "ns/insert")
}

// mix is a bijective 64-bit mixer (the xxHash64 avalanche); the | 1 keeps
// it off 0, the empty slot.
func mix(k uint64) uint64 {
	h := (k + 1) * prime1
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h | 1
}
