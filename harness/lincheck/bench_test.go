package lincheck

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkCheck measures the check time of recorded histories of 1k,
// 10k and 100k client operations with 8 clients (recording is not
// timed). Run: go test -run '^$' -bench Check -benchtime 3x ./harness/lincheck
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) {
			h, err := Record(context.Background(), Config{Clients: 8, Ops: n, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if res := Check(h, 0); res.Outcome != Linearizable {
					b.Fatalf("outcome %s", res.Outcome)
				}
			}
			b.ReportMetric(float64(len(h.Operations())), "steps")
		})
	}
}
