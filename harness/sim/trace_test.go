package sim_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
)

// tracedRun runs cfg with a trace and returns the trace's bytes.
func tracedRun(t *testing.T, cfg sim.Config) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, sim.TraceHeader(cfg))
	require.NoError(t, err)
	cfg.Tracer = tw
	_, err = sim.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// TestModelScopeTracesAccepted: the traces of model-scope runs, both
// transports, are accepted by the model.
func TestModelScopeTracesAccepted(t *testing.T) {
	for _, tr := range []node.Transport{node.TransportHeartbeat, node.TransportLogCoord} {
		for seed := uint64(1); seed <= 20; seed++ {
			cfg := sim.Config{Seed: seed, Steps: 1500, Transport: tr, ModelScope: true}
			data := tracedRun(t, cfg)
			res, err := tracecheck.CheckBytes(data, "sim", nil, tracecheck.Options{})
			require.NoError(t, err)
			require.Equal(t, tracecheck.OK, res.Verdict, "%s seed %d: line %d %s\n%s\n%+v", tr, seed, res.Line, res.Reason, res.Text, res.Candidates)
			require.Greater(t, res.Lines, 500)
		}
	}
}

// procRun runs cfg with one trace per process, written into a new
// directory, and returns the directory and the run's result.
func procRun(t testing.TB, cfg sim.Config) (string, sim.Result) {
	t.Helper()
	dir := t.TempDir()
	cfg.Traces = sim.TraceWriters(cfg, func(proc string) (io.Writer, error) {
		return os.Create(filepath.Join(dir, proc+".ndjson"))
	})
	res, err := sim.Run(context.Background(), cfg)
	require.NoError(t, err)
	return dir, res
}

// checkRun merges and checks the run's traces in dir.
func checkRun(t testing.TB, dir string) tracecheck.Result {
	t.Helper()
	files, ok, err := tracecheck.RunFiles(dir)
	require.NoError(t, err)
	require.True(t, ok)
	res, err := tracecheck.CheckRun(files, dir, nil, tracecheck.Options{})
	require.NoError(t, err)
	return res
}

// TestMergedTracesAccepted: the per-process traces of model-scope runs,
// both transports, merge into an order the model explains, crashes
// (with the tails they lose) and all.
func TestMergedTracesAccepted(t *testing.T) {
	lost, crashes := 0, 0
	for _, tr := range []node.Transport{node.TransportHeartbeat, node.TransportLogCoord} {
		for seed := uint64(1); seed <= 20; seed++ {
			cfg := sim.Config{Seed: seed, Steps: 1500, Transport: tr, ModelScope: true}
			dir, run := procRun(t, cfg)
			res := checkRun(t, dir)
			require.Equal(t, tracecheck.OK, res.Verdict, "%s seed %d: line %d (%s %s:%d) %s\n%s\n%+v", tr, seed, res.Line,
				res.Process, res.ProcessFile, res.ProcessLine, res.Reason, res.Text, res.Candidates)
			require.Greater(t, res.Lines, 500)
			lost += run.TraceLinesLost
			crashes += run.CrashRestarts
		}
	}
	t.Logf("%d crashes, %d trace lines lost", crashes, lost)
	require.Positive(t, lost, "some killed process lost the tail of its trace")
}
