package main

import (
	"strings"
	"testing"
)

// TestClusterBadFlags: checker cluster refuses bad flags with one line
// and exit 2, before building or starting anything.
func TestClusterBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--nodes", "2"},
		{"--nodes", "17"},
		{"--duration", "0s"},
		{"--faults", "kill,meteor"},
		{"--transport", "pigeon"},
		{"--drain-bound", "-1s"},
		{"--binary", "/nonexistent/drainproofd"},
		{"stray"},
	} {
		code, out, errOut := runCLI(t, append([]string{"cluster"}, args...)...)
		line := strings.TrimRight(errOut, "\n")
		if code != exitUsage || out != "" || !strings.HasPrefix(line, "checker cluster: ") || strings.Contains(line, "\n") {
			t.Errorf("cluster %q: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, code, out, errOut)
		}
	}
}

// TestPercentiles is the drain latency summary's nearest-rank
// percentiles.
func TestPercentiles(t *testing.T) {
	if a, b, c := percentiles(nil); a != 0 || b != 0 || c != 0 {
		t.Errorf("empty: %d %d %d", a, b, c)
	}
	xs := []int64{5, 1, 4, 2, 3, 100, 6, 7, 8, 9}
	if p50, p99, mx := percentiles(xs); p50 != 5 || p99 != 100 || mx != 100 {
		t.Errorf("percentiles = %d %d %d, want 5 100 100", p50, p99, mx)
	}
}
