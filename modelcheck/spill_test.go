package modelcheck

import "testing"

// TestSpillKeepsTheSet inserts fingerprints, spills the set to disk, and
// inserts again: every fingerprint met before a spill is found after it,
// and every new one is new once.
func TestSpillKeepsTheSet(t *testing.T) {
	SkipInMutationCut(t)
	s := newSpillingSet(t)
	n := 0
	for round := 0; round < 3; round++ {
		for k := 0; k < 1_000_000; k++ {
			fp := mix(uint64(round*500_000 + k)) // half of each round met in the round before
			_, isNew, err := s.insert(fp, 0, noParent, 0)
			if err != nil {
				t.Fatal(err)
			}
			if isNew {
				n++
			}
		}
		if err := s.spillOut(); err != nil {
			t.Fatal(err)
		}
	}
	if want := 2_000_000; n != want {
		t.Fatalf("%d new fingerprints, want %d", n, want)
	}
	if got := len(s.spill.run); got != n {
		t.Fatalf("the run holds %d fingerprints, want %d", got, n)
	}
	for k := 0; k < 2_000_000; k++ {
		if !s.contains(mix(uint64(k)), 0) {
			t.Fatalf("fingerprint %d lost", k)
		}
	}
}

// newSpillingSet returns a one-worker set of 64-bit fingerprints that
// spills into a temporary folder; the set is released and its files
// removed when the test ends.
func newSpillingSet(tb testing.TB) *fpSet {
	s := newFPSet(1, false)
	s.spillDir = tb.TempDir()
	tb.Cleanup(func() {
		if s.spill != nil {
			s.spill.close()
		}
		s.release()
	})
	return s
}
