package eventservice

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestTable checks the dispatcher table against a Go map: random finds,
// kept-slot inserts (with the table changed in between or not),
// replacing puts and deletes, over enough IDs to grow the table and make
// probe sequences collide.
func TestTable(t *testing.T) {
	for _, keys := range []int{1, 7, 100, 2000} {
		t.Run(fmt.Sprint(keys), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(keys)))
			tb := newTable()
			ref := map[DispatcherID]*dispatcher{}
			id := func() DispatcherID { return DispatcherID(fmt.Sprintf("d%d", r.IntN(keys))) }
			for step := range 20000 {
				k := id()
				switch r.IntN(5) {
				case 0, 1: // find, maybe delete another, then putAt with the hint
					old, h := tb.find(k)
					if old != ref[k] {
						t.Fatalf("step %d: find %s = %p, want %p", step, k, old, ref[k])
					}
					if r.IntN(3) == 0 {
						other := id()
						if got := tb.deleteID(other, nil); got != ref[other] {
							t.Fatalf("step %d: delete %s = %p, want %p", step, other, got, ref[other])
						}
						delete(ref, other)
					}
					d := &dispatcher{id: k}
					_, had := ref[k]
					if replaced := tb.putAt(d, h); replaced != had {
						t.Fatalf("step %d: putAt %s replaced %v, want %v", step, k, replaced, had)
					}
					ref[k] = d
				case 2: // put
					d := &dispatcher{id: k}
					_, had := ref[k]
					if replaced := tb.put(d); replaced != had {
						t.Fatalf("step %d: put %s replaced %v, want %v", step, k, replaced, had)
					}
					ref[k] = d
				case 3: // delete only a given entry
					want := ref[k]
					if r.IntN(2) == 0 {
						want = &dispatcher{id: k} // not the entry: no effect
					}
					got := tb.deleteID(k, want)
					if want != nil && want == ref[k] {
						if got != want {
							t.Fatalf("step %d: deleteID %s, want %p got %p", step, k, want, got)
						}
						delete(ref, k)
					} else if got != nil {
						t.Fatalf("step %d: deleteID %s of another entry deleted %p", step, k, got)
					}
				case 4: // delete
					if got := tb.deleteID(k, nil); got != ref[k] {
						t.Fatalf("step %d: delete %s = %p, want %p", step, k, got, ref[k])
					}
					delete(ref, k)
				}
				if tb.len() != len(ref) {
					t.Fatalf("step %d: len %d, want %d", step, tb.len(), len(ref))
				}
			}
			n := 0
			tb.all(func(d *dispatcher) {
				n++
				if ref[d.id] != d || tb.get(d.id) != d {
					t.Fatalf("all: %s not in the reference", d.id)
				}
			})
			if n != len(ref) {
				t.Fatalf("all: %d entries, want %d", n, len(ref))
			}
		})
	}
}

// TestStrhashLengths hashes IDs of every length up to 40 (each branch of
// strhash) and checks that they spread over a small table.
func TestStrhashLengths(t *testing.T) {
	tb := newTable()
	seen := map[uint64]bool{}
	for n := range 41 {
		for c := range 4 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte('a' + (i+c)%26)
			}
			seen[strhash(string(b), &tb.key)] = true
		}
	}
	if len(seen) < 41*4-3 { // the empty ID hashes alike four times
		t.Fatalf("%d distinct hashes of %d IDs", len(seen), 41*4)
	}
}
