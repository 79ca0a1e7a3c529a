package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/drainproof/drainproof/harness/cluster"
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
		{"--seeds", "0"},
		{"--seed", "18446744073709551615", "--seeds", "2"},
		{"--shard", "1/1"},
		{"--html", "/nonexistent/dir/t.html"},
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

// TestClusterReportIsOneObject: checker cluster --json prints the shared
// report, ok or violated with the first violation named, and the run's
// result under cluster (decoded with unknown fields refused).
func TestClusterReportIsOneObject(t *testing.T) {
	for _, res := range []*cluster.Result{{}, {Violations: []string{"lost event t1 ts 5", "drain 2 stalled"}}} {
		var b bytes.Buffer
		sh := newSeedsReport(shardSpec{0, 1}, 1, 1, "")
		sh.Ran = []uint64{1}
		if len(res.Violations) > 0 {
			sh.fail("cluster", 1, res.Violations[0])
		}
		if err := writeReport(&b, clusterReport([]*cluster.Result{res}, sh)); err != nil {
			t.Fatal(err)
		}
		r := decodeReport(t, b.String(), "cluster")
		want := "ok"
		if len(res.Violations) > 0 {
			want = "violated"
		}
		if r.Outcome != want || r.Cluster == nil || (want == "violated" && r.Violated != res.Violations[0]) {
			t.Errorf("report %+v, want outcome %s", r, want)
		}
	}
}
