package spec

import "testing"

// BenchmarkNext expands every state of a short breadth-first prefix of the
// default model, to measure Next and Encode without a checker.
func BenchmarkNext(b *testing.B) {
	m, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	var states []State
	seen := map[State]bool{}
	queue := []State{m.InitState()}
	for len(queue) > 0 && len(states) < 5000 {
		s := queue[0]
		queue = queue[1:]
		states = append(states, s)
		m.Next(s, func(_ string, t State) {
			if !seen[t] {
				seen[t] = true
				queue = append(queue, t)
			}
		})
	}
	var buf []byte
	n := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := states[i%len(states)]
		m.Next(s, func(_ string, t State) {
			buf = m.Encode(buf[:0], t)
			n++
		})
	}
	b.ReportMetric(float64(n)/float64(b.N), "succ/op")
}
