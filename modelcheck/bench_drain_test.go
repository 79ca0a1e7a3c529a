package modelcheck_test

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/drainproof/drainproof/harness/drainmodel"
	"github.com/drainproof/drainproof/modelcheck"
	"github.com/drainproof/drainproof/spec"
)

// cpuTime returns the process's user+system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchDrain checks a protocol model of tla/ with the given workers and
// seen-set options (lookup, and a memory budget with a spill folder when
// budget is positive) and reports distinct states per second of wall time
// and of CPU time (user plus system, all threads): on a shared machine
// the CPU figure is the stable one, and two workers scale when they spend
// no more CPU than one.
func benchDrain(b *testing.B, cfg string, workers int, lookup modelcheck.Lookup, budget int64, want int64) {
	m, opts, err := drainmodel.Load(filepath.Join("..", "tla", cfg), true)
	if err != nil {
		b.Fatal(err)
	}
	opts.Workers, opts.Lookup = workers, lookup
	if budget > 0 {
		opts.MemoryBudget, opts.SpillDir = budget, b.TempDir()
	}
	var res *modelcheck.Result[spec.State]
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for i := 0; i < b.N; i++ {
		res, err = modelcheck.Check(context.Background(), m, opts)
		if err != nil || res.Outcome != modelcheck.OK || res.Distinct != want {
			b.Fatalf("%s: %v %v %d distinct, want %d", cfg, err, res.Outcome, res.Distinct, want)
		}
	}
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	n := float64(res.Distinct) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "distinct/s")
	b.ReportMetric(n/cpu.Seconds(), "distinct/cpu-s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(res.SetBytes)/float64(res.Distinct), "set-B/state")
}

// BenchmarkDrain checks the default protocol model (834,474 states) and
// the large one (4,476,318) with one and two workers, with each seen-set
// lookup side by side, and the large one again with a memory budget of
// 128 MiB, which moves its seen-set to disk:
//
//	go test -run '^$' -bench Drain -benchtime 1x ./modelcheck
func BenchmarkDrain(b *testing.B) {
	for _, c := range []struct {
		name, cfg string
		distinct  int64
	}{
		{"default", "MCDrainRegistration.cfg", 834_474},
		{"large", "MCDrainRegistrationLarge.cfg", 4_476_318},
	} {
		for _, w := range []int{1, 2} {
			for _, l := range []modelcheck.Lookup{modelcheck.LookupHash, modelcheck.LookupSorted} {
				b.Run(fmt.Sprintf("%s/workers=%d/lookup=%v", c.name, w, l), func(b *testing.B) { benchDrain(b, c.cfg, w, l, 0, c.distinct) })
			}
		}
	}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("large/workers=%d/spill", w), func(b *testing.B) {
			benchDrain(b, "MCDrainRegistrationLarge.cfg", w, modelcheck.LookupSorted, 128<<20, 4_476_318)
		})
	}
}
