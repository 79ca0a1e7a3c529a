package modelcheck

import (
	"errors"
	"testing"
)

// A worker's log holds at most as many states as a reference can name
// (2^32 over the workers, less two): past that, an insert is refused with
// errSetFull, in a 64-bit set and a 128-bit one, with one worker and with
// two, rather than record a state whose reference would wrap.
func TestSetFullAtTheReferenceLimit(t *testing.T) {
	for _, tc := range []struct {
		workers int
		wide    bool
	}{{1, false}, {2, false}, {1, true}, {2, true}} {
		s := newFPSet(tc.workers, tc.wide)
		limit := 1<<(32-s.wbits) - 2
		if _, isNew, err := s.insert(mix(1)|minFP, 1, noParent, 0); err != nil || !isNew {
			t.Fatalf("%+v: a first state: new %v, %v", tc, isNew, err)
		}
		s.logs[0].n = limit // the log is full (its count only: no test fills 2^32 states)
		if _, _, err := s.insert(mix(2)|minFP, 2, noParent, 0); !errors.Is(err, errSetFull) {
			t.Fatalf("%+v: a state past the limit: %v, want errSetFull", tc, err)
		}
		s.logs[0].n = 1
		s.release()
	}
}

// The same limit holds once the set has moved to disk: a worker whose log
// is full is refused a new state with errSetFull, and the state is not
// claimed.
func TestSpilledSetFullAtTheReferenceLimit(t *testing.T) {
	s := newSpillingSet(t)
	if _, isNew, err := s.insert(mix(1)|minFP, 0, noParent, 0); err != nil || !isNew {
		t.Fatalf("a first state: new %v, %v", isNew, err)
	}
	if err := s.spillOut(); err != nil {
		t.Fatal(err)
	}
	n := s.logs[0].n
	s.logs[0].n = 1<<(32-s.wbits) - 2 // the log is full (its count only)
	if _, _, err := s.insert(mix(2)|minFP, 0, noParent, 0); !errors.Is(err, errSetFull) {
		t.Fatalf("a state past the limit in a spilled set: %v, want errSetFull", err)
	}
	s.logs[0].n = n
	if s.contains(mix(2)|minFP, 0) {
		t.Fatal("the refused state was claimed")
	}
}
