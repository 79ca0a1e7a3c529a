package modelcheck

import (
	"testing"
	"unsafe"

	"github.com/drainproof/drainproof/spec"
)

// BenchmarkParentHashStep fingerprints the successors of 3,000 states
// of the default protocol model from their parents' (parentHash.step),
// as the search does:
//
//	go test -run '^$' -bench ParentHash ./modelcheck
func BenchmarkParentHashStep(b *testing.B) {
	m, err := spec.New(spec.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	type group struct {
		parent spec.State
		succs  []spec.State
	}
	var groups []group
	seen := map[spec.State]bool{}
	queue := []spec.State{m.InitState()}
	for n := 0; n < len(queue) && n < 3000; n++ {
		g := group{parent: queue[n]}
		m.Next(queue[n], func(_ string, t spec.State) {
			g.succs = append(g.succs, t)
			if !seen[t] {
				seen[t] = true
				queue = append(queue, t)
			}
		})
		groups = append(groups, g)
	}
	ph := newParentHash(newWordHash(unsafe.Sizeof(spec.State{})), false)
	succs := 0
	var sink uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range groups {
			g := &groups[k]
			ph.reset(unsafe.Pointer(&g.parent))
			for j := range g.succs {
				fp, _, _ := ph.step(unsafe.Pointer(&g.succs[j]))
				sink += fp
			}
			succs += len(g.succs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(succs), "ns/successor")
	if sink == 1 {
		b.Log(sink)
	}
}
