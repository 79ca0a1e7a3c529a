package tracecheck_test

import (
	"testing"

	"github.com/drainproof/drainproof/internal/tracecheck"
	"github.com/drainproof/drainproof/spec"
)

// BenchmarkCheck validates one long generated trace of the default model
// (heartbeat transport, trace bounds) per iteration and reports lines/s on
// one core: go test -run '^$' -bench Check -cpu 1 ./internal/tracecheck
func BenchmarkCheck(b *testing.B) {
	for _, tr := range []string{spec.TransportHeartbeat, spec.TransportLogCoord} {
		b.Run(tr, func(b *testing.B) {
			cfg := tracecheck.TraceConfig(spec.DefaultConfig())
			cfg.Transport = tr
			lines, _ := traceOf(b, cfg, 7, 200000)
			data := encode(b, cfg, lines)
			b.SetBytes(int64(len(data)))
			maxc := 0
			b.ResetTimer()
			for b.Loop() {
				res, err := tracecheck.CheckBytes(data, "bench", nil, tracecheck.Options{})
				if err != nil || res.Verdict != tracecheck.OK {
					b.Fatalf("%v %+v", err, res.Verdict)
				}
				maxc = res.MaxCandidates
			}
			b.ReportMetric(float64(maxc), "max-candidates")
			b.ReportMetric(float64(len(lines))*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
