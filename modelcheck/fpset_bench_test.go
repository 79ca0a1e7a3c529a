package modelcheck

import "testing"

// BenchmarkFPSetBatches replays the seen-set's traffic on the large
// protocol model: 4.5 million distinct fingerprints, each met about nine
// times (once new, then again as a successor of later states), inserted
// in batches of 128 that are touched first, as the workers do. It runs
// with the prefetch and the huge-page advice each on and off, side by side:
//
//	go test -run '^$' -bench FPSet -count 3 ./modelcheck
func BenchmarkFPSetBatches(b *testing.B) {
	for _, c := range []struct {
		name             string
		prefetch, hugepg bool
	}{
		{"prefetch=on/huge=on", true, true},
		{"prefetch=off/huge=on", false, true},
		{"prefetch=on/huge=off", true, false},
		{"prefetch=off/huge=off", false, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			defer SetPrefetch(SetPrefetch(c.prefetch))
			defer SetHugePages(SetHugePages(c.hugepg))
			distinct := benchDistinct
			for i := 0; i < b.N; i++ {
				s := newFPSet(1, false)
				var batch [batchSize]uint64
				n, seen, rnd := 0, uint64(0), uint64(1)
				for j := 0; j < 9*distinct; j++ {
					key := seen
					if j%9 == 0 {
						seen++
					} else {
						rnd = rnd*6364136223846793005 + 1442695040888963407
						key = (rnd >> 11) % seen
					}
					fp := mix(key)
					s.touch(fp)
					batch[n] = fp
					if n++; n == batchSize {
						for _, fp := range batch {
							if _, _, err := s.insert(fp, 0, noParent, 0); err != nil {
								b.Fatal(err)
							}
						}
						n = 0
					}
				}
				s.release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(9*distinct), "ns/insert")
		})
	}
}

// mix is a bijective 64-bit mixer (the xxHash64 avalanche), never 0 for
// the keys the benchmark uses.
func mix(k uint64) uint64 {
	h := (k + 1) * prime1
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h | 1
}

var benchDistinct = 4_500_000
