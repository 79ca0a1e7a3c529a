package canary

import "testing"

func TestAtLeastAwayFromTheBoundary(t *testing.T) {
	if !AtLeast(2, 1) || AtLeast(1, 2) {
		t.Fatal("AtLeast is wrong away from x == y")
	}
}
