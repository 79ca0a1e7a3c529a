package tracecheck_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/spec"
)

// BenchmarkCheck validates one long generated trace of the default model
// (each transport, trace bounds) per iteration and reports lines per
// second of wall time on one core, and lines per second of the process's
// CPU time (user + system, GC included), which a loaded machine does not
// distort: go test -run '^$' -bench Check -cpu 1 ./harness/tracecheck
//
// The walk of a small model repeats its lines (60 distinct lines in the
// 200,000 of heartbeat's), which CheckBytes compiles once; the -parsed
// variants turn that cache off and parse every line, as for a trace
// whose lines never repeat.
func BenchmarkCheck(b *testing.B) {
	for _, tr := range []string{spec.TransportHeartbeat, spec.TransportLogCoord, spec.TransportHeartbeat + "-parsed", spec.TransportLogCoord + "-parsed"} {
		b.Run(tr, func(b *testing.B) {
			if t, ok := strings.CutSuffix(tr, "-parsed"); ok {
				tr = t
				defer tracecheck.SetLineCacheSize(0)()
			}
			cfg := tracecheck.TraceConfig(spec.DefaultConfig())
			cfg.Transport = tr
			lines, _ := traceOf(b, cfg, 7, 200000)
			data := encode(b, cfg, lines)
			b.SetBytes(int64(len(data)))
			maxc := 0
			cpu0 := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				res, err := tracecheck.CheckBytes(data, "bench", nil, tracecheck.Options{})
				if err != nil || res.Verdict != tracecheck.OK {
					b.Fatalf("%v %+v", err, res.Verdict)
				}
				maxc = res.MaxCandidates
			}
			b.StopTimer()
			if cpu := cpuTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(len(lines))*float64(b.N)/cpu.Seconds(), "lines/cpu-s")
			}
			b.ReportMetric(float64(maxc), "max-candidates")
			b.ReportMetric(float64(len(lines))*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

// BenchmarkCheckRun merges and validates one run of three or more
// processes (a 200,000-line walk written by WriteRun: the coordinator,
// the LogCoordinator and T's processes) per iteration, streaming (two
// passes over the files), and reports merged lines per second of wall
// time and of CPU time on one core:
// go test -run '^$' -bench CheckRun -cpu 1 ./harness/tracecheck
func BenchmarkCheckRun(b *testing.B) {
	for _, tr := range []string{spec.TransportHeartbeat, spec.TransportLogCoord} {
		b.Run(tr, func(b *testing.B) {
			cfg := tracecheck.TraceConfig(spec.DefaultConfig())
			cfg.Transport = tr
			m, err := spec.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			files, err := tracecheck.WriteRun(b.TempDir(), m, 7, 200000, "bench")
			if err != nil {
				b.Fatal(err)
			}
			lines := 0
			cpu0 := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				res, err := tracecheck.CheckRun(files, "bench", nil, tracecheck.Options{})
				if err != nil || res.Verdict != tracecheck.OK {
					b.Fatalf("%v %+v", err, res.Verdict)
				}
				lines = res.Lines
			}
			b.StopTimer()
			if cpu := cpuTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(lines)*float64(b.N)/cpu.Seconds(), "lines/cpu-s")
			}
			b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

// BenchmarkCheckShortRuns merges and validates many short runs, as
// checker trace DIR does after checker simulate --seeds N --trace DIR:
// 40 model-scope simulator runs of 2,000 steps (20 per transport, each
// 8–17 processes, crashes, losses and duplicates on), every run's files
// found (RunFiles) and checked (CheckRun) per iteration; it reports
// merged lines per second of CPU time on one core, where the runs'
// fixed cost (opening each file, decoding its header, building the model
// and the checker) weighs against their 2,000-odd lines:
// go test -run '^$' -bench CheckShortRuns -cpu 1 ./harness/tracecheck
func BenchmarkCheckShortRuns(b *testing.B) {
	root := b.TempDir()
	var dirs []string
	for _, tr := range []string{spec.TransportHeartbeat, spec.TransportLogCoord} {
		for seed := uint64(1); seed <= 20; seed++ {
			cfg := sim.Config{Seed: seed, Steps: 2000, ModelScope: true, Transport: node.Transport(tr)}
			dir := filepath.Join(root, fmt.Sprintf("seed-%d-%s", seed, tr))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			cfg.Traces = sim.TraceWriters(cfg, func(proc string) (io.Writer, error) {
				return os.Create(filepath.Join(dir, proc+".ndjson")) // closed by the run
			})
			if _, err := sim.Run(context.Background(), cfg); err != nil {
				b.Fatal(err)
			}
			dirs = append(dirs, dir)
		}
	}
	lines := 0
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		lines = 0
		for _, dir := range dirs {
			files, ok, err := tracecheck.RunFiles(dir)
			if err != nil || !ok {
				b.Fatalf("%s: %v", dir, err)
			}
			res, err := tracecheck.CheckRun(files, dir, nil, tracecheck.Options{})
			if err != nil || res.Verdict != tracecheck.OK {
				b.Fatalf("%s: %v %+v", dir, err, res.Verdict)
			}
			lines += res.Lines
		}
	}
	b.StopTimer()
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(lines)*float64(b.N)/cpu.Seconds(), "lines/cpu-s")
	}
	b.ReportMetric(float64(lines), "lines/op")
}
