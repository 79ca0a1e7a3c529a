package modelcheck

import "testing"

// A 64-bit set's reported memory is its tables' 8 bytes a slot and its
// log's 12 bytes a state (an 8-byte fingerprint and a 4-byte parent),
// within the slack of the chunk being filled.
func TestSetBytesCountTablesAndTwelveBytesOfLogAState(t *testing.T) {
	s := newFPSet(1, false)
	defer s.release()
	const n = 50_000
	for i := uint64(0); i < n; i++ {
		if _, _, err := s.insert(mix(i)|minFP, 0, noParent, 0); err != nil {
			t.Fatal(err)
		}
	}
	s.reclaim()
	var tables int64
	for i := range s.tabs {
		if tb := s.tabs[i].Load(); tb != nil {
			tables += tb.bytes()
		}
	}
	states := int64(s.logs[0].n)
	got, low, high := s.bytes(), tables+12*states, tables+12*(states+2*chunkSize)
	if got < low || got > high {
		t.Fatalf("the set reports %d bytes for %d states and %d bytes of tables, want %d to %d", got, states, tables, low, high)
	}
}
