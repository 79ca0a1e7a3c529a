package main

import (
	"os"
	"runtime"
)

// searchProcs makes a search of fewer workers than the processors Go may
// use run on as many processors as it has workers, unless the environment
// sets GOMAXPROCS, and returns what restores the setting. With one worker
// and GOMAXPROCS at 2, the search's goroutine moves between threads and
// processors when the scheduler takes it up again (after a preemption, a
// timer, the progress line), and each move starts it on a cold cache.
// Measured with farm-bench, one worker, GOMAXPROCS=1 against the default,
// alternated on the quiet 2-vCPU machine (docs/perf.md): the LogCoord
// model's wall time 0.95 of the default's (median of 6 pairs), Large 0.96,
// BrokersLogCoord 0.90 (5 pairs each).
func searchProcs(workers int) (restore func()) {
	if workers <= 0 || os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(0)
	if workers >= prev {
		return func() {}
	}
	runtime.GOMAXPROCS(workers)
	return func() { runtime.GOMAXPROCS(prev) }
}
