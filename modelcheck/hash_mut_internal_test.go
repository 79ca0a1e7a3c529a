package modelcheck

import (
	"testing"
	"unsafe"
)

// samePlain compares a state's own bytes and none past it: two equal
// states of 13 bytes (a word and five bytes), each followed in memory by
// a different byte, are the same state.
func TestSamePlainReadsNoBytePastTheState(t *testing.T) {
	type odd struct {
		A [8]byte
		B [5]byte
	}
	if unsafe.Sizeof(odd{}) != 13 {
		t.Fatalf("odd has %d bytes", unsafe.Sizeof(odd{}))
	}
	var a, b [2]odd
	a[0].B[4], b[0].B[4] = 7, 7
	a[1].A[0], b[1].A[0] = 1, 2 // the byte after each state
	if !samePlain(&a[0], &b[0]) {
		t.Fatal("equal states whose next bytes in memory differ: samePlain says different")
	}
}
