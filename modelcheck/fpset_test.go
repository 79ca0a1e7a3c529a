package modelcheck

import "testing"

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
