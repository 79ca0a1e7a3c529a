package eventservice

import (
	"context"
	"testing"
)

// The benchmark of this file keeps, or retires, the baton by measuring it
// against the plain version, side by side in one run (the contenders
// alternate in rounds, and the figure is the median of the per-round
// ratios; below 1 the baton is faster).

// BenchmarkBatonVsGoroutine: Do, which runs the request on the caller's
// goroutine when it finds the loop's baton free, against the plain
// version, in which every request is queued for the request goroutine
// (the Run goroutine) and the caller waits for its answer (doQueued, the
// path Do takes when the baton is busy). Register+remove pairs of one
// dispatcher at a time with 1 and 2 callers; b.N counts rounds of 2,000
// pairs.
func BenchmarkBatonVsGoroutine(b *testing.B) {
	const idsPer, round = 64, 2000
	for _, g := range []int{1, 2} {
		b.Run(map[int]string{1: "g=1", 2: "g=2"}[g], func(b *testing.B) {
			ids := benchIDs(g, idsPer)
			h := newHarness(b)
			ctx := context.Background()
			pair := func(do func(*Request) error) func() {
				return func() {
					runPairs(g, round, func(w, i int) {
						id := ids[w][i%idsPer]
						reg := Request{Action: Register, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: TableID(w*idsPer + i%idsPer + 1)}
						rem := Request{Action: Remove, Cluster: "c1", Dispatcher: id}
						_ = do(&reg)
						_ = do(&rem)
					})
				}
			}
			contenders := []func(){
				pair(func(r *Request) error { return h.svc.Do(ctx, *r) }),
				pair(func(r *Request) error { return h.svc.doQueued(ctx, r) }),
			}
			b.ResetTimer()
			rounds := alternate(b.N, contenders)
			b.StopTimer()
			if n := h.svc.sumCounts(); n != 0 {
				b.Fatalf("count %d after balanced pairs", n)
			}
			b.ReportMetric(nsPerPair(rounds, 0, round), "baton-ns/pair")
			b.ReportMetric(nsPerPair(rounds, 1, round), "goroutine-ns/pair")
			b.ReportMetric(median(ratios(rounds, 0, 1)), "baton/goroutine")
			b.ReportMetric(0, "ns/op")
		})
	}
}
