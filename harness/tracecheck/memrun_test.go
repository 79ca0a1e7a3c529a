package tracecheck_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/node"
)

// simRun writes a model-scope simulation's per-process traces into dir
// and returns the run's files.
func simRun(t *testing.T, dir string, seed uint64, tr node.Transport) []string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	cfg := sim.Config{Seed: seed, Steps: 2000, ModelScope: true, Transport: tr}
	cfg.Traces = sim.TraceWriters(cfg, func(proc string) (io.Writer, error) {
		return os.Create(filepath.Join(dir, proc+".ndjson"))
	})
	_, err := sim.Run(context.Background(), cfg)
	require.NoError(t, err)
	files, ok, err := tracecheck.RunFiles(dir)
	require.NoError(t, err)
	require.True(t, ok)
	return files
}

// TestRunInMemoryAgreesWithStreaming: a run whose traces are small is
// held in memory (its second pass replays the first's merged order and
// compiled lines); a larger one is read line by line in both passes,
// and so is a run with some traces in memory and some not. All three give
// the same result on simulator runs, accepted, and with
// one line dropped from one process's trace (rejected, incomplete or
// still accepted): verdict, line, its process and place, reason,
// candidates.
func TestRunInMemoryAgreesWithStreaming(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	root := t.TempDir()
	verdicts := map[tracecheck.Verdict]int{}
	for _, tr := range []node.Transport{"heartbeat", "logcoord"} {
		for seed := uint64(1); seed <= 6; seed++ {
			files := simRun(t, filepath.Join(root, fmt.Sprintf("%s-%d", tr, seed)), seed, tr)
			runs := [][]string{files}
			for k := range 3 {
				// One line dropped from one process's trace.
				f := files[rng.IntN(len(files))]
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				lines := bytes.SplitAfter(b, []byte("\n"))
				if len(lines) < 3 {
					continue
				}
				i := 1 + rng.IntN(len(lines)-2)
				dir := filepath.Join(root, fmt.Sprintf("%s-%d-mut%d", tr, seed, k))
				require.NoError(t, os.MkdirAll(dir, 0o755))
				var mut []string
				for _, g := range files {
					data, err := os.ReadFile(g)
					require.NoError(t, err)
					if g == f {
						data = bytes.Join(append(lines[:i:i], lines[i+1:]...), nil)
					}
					p := filepath.Join(dir, filepath.Base(g))
					require.NoError(t, os.WriteFile(p, data, 0o644))
					mut = append(mut, p)
				}
				runs = append(runs, mut)
			}
			for _, run := range runs {
				mem, err := tracecheck.CheckRun(run, "run", nil, tracecheck.Options{})
				require.NoError(t, err)
				restore := tracecheck.SetSmallTrace(0)
				str, err := tracecheck.CheckRun(run, "run", nil, tracecheck.Options{})
				restore()
				require.NoError(t, err)
				// Some traces in memory, some not: streamed too.
				var sizes []int
				for _, f := range run {
					st, err := os.Stat(f)
					require.NoError(t, err)
					sizes = append(sizes, int(st.Size()))
				}
				slices.Sort(sizes)
				restore = tracecheck.SetSmallTrace(sizes[len(sizes)/2])
				mixed, err := tracecheck.CheckRun(run, "run", nil, tracecheck.Options{})
				restore()
				require.NoError(t, err)
				mem.Seconds, str.Seconds, mixed.Seconds = 0, 0, 0
				require.Equal(t, str, mem, "%s", filepath.Dir(run[0]))
				require.Equal(t, str, mixed, "%s, some traces in memory", filepath.Dir(run[0]))
				verdicts[mem.Verdict]++
			}
		}
	}
	t.Logf("verdicts %v", verdicts)
	require.Positive(t, verdicts[tracecheck.OK])
	require.Positive(t, verdicts[tracecheck.Rejected])
}
