//go:build !unix

package tracecheck_test

import "time"

// cpuTime is not measured here: BenchmarkCheck reports wall time only.
func cpuTime() time.Duration { return 0 }
