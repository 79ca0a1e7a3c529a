package twophase_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/drainproof/drainproof/spec/twophase"
)

// BenchmarkCheck explores TwoPhase with 9 resource managers (about ten
// million distinct states) at 1 and 2 workers, and reports distinct states
// per second and the seen-set's bytes per distinct state.
//
//	go test -run '^$' -bench Check -benchtime 1x ./spec/twophase
func BenchmarkCheck(b *testing.B) {
	for _, rms := range []int{7, 9} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("rms=%d/workers=%d", rms, workers), func(b *testing.B) {
				m, err := twophase.New(rms, false)
				if err != nil {
					b.Fatal(err)
				}
				var res *modelcheck.Result[twophase.State]
				var before runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for i := 0; i < b.N; i++ {
					res, err = modelcheck.Check[twophase.State](context.Background(), m, modelcheck.Options{Workers: workers})
					if err != nil || res.Outcome != modelcheck.OK {
						b.Fatalf("%v %v", err, res.Outcome)
					}
				}
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				b.ReportMetric(res.StatesPerSecond(), "distinct/s")
				b.ReportMetric(float64(res.Distinct), "distinct")
				b.ReportMetric(float64(res.SetBytes)/float64(res.Distinct), "set-bytes/state")
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(res.Distinct), "alloc-bytes/state")
			})
		}
	}
}
