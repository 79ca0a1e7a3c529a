package tracecheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/spec"
)

// encodeMapped writes lines as a trace whose header names the refinement
// mapping of a full run (mapping "" for none).
func encodeMapped(t testing.TB, cfg spec.Config, mapping string, lines []tracecheck.Line) []byte {
	t.Helper()
	h := tracecheck.HeaderFor(cfg, "test")
	h.Mapping = mapping
	var buf bytes.Buffer
	require.NoError(t, tracecheck.Write(&buf, h, lines))
	return buf.Bytes()
}

func checkErr(data []byte) (tracecheck.Result, error) {
	return tracecheck.Check(bytes.NewReader(data), "t.ndjson", nil, tracecheck.Options{})
}

// insert returns lines with extra inserted before index i.
func insert(lines []tracecheck.Line, i int, extra ...tracecheck.Line) []tracecheck.Line {
	return slices.Concat(lines[:i:i], extra, lines[i:])
}

func rejoin(epoch int) tracecheck.Line {
	return tracecheck.Line{Action: "CoordRejoin", Vars: map[string]any{"coordEpoch": epoch, "coordLiveness": "ALIVE",
		"coordCount": -1, "work": -1, "drainedEpoch": -1}}
}

func progress(work int) tracecheck.Line {
	return tracecheck.Line{Action: "MaintainerReportProgress", Vars: map[string]any{"work": work}}
}

// drainWalk finds a model-scope simulation (one trace, ordered by the
// simulator) with a drain completed and the drained process restarted:
// its header, its lines, the index of CoordCompleteDrain, the index of
// the UpgradeRestart after it and the epoch it starts.
func drainWalk(t *testing.T) (h tracecheck.Header, lines []tracecheck.Line, complete, restart, epoch int) {
	t.Helper()
	for seed := uint64(1); seed <= 20; seed++ {
		cfg := sim.Config{Seed: seed, Steps: 2000, ModelScope: true}
		var buf bytes.Buffer
		th := sim.TraceHeader(cfg)
		tw, err := trace.NewWriter(&buf, th)
		require.NoError(t, err)
		cfg.Tracer = tw
		_, err = sim.Run(context.Background(), cfg)
		require.NoError(t, err)
		require.NoError(t, tw.Close())
		h = tracecheck.Header{Trace: tracecheck.SchemaVersion, Model: th.Model, Source: th.Source}
		lines = nil
		complete, restart = -1, -1
		dec := json.NewDecoder(&buf)
		var skip map[string]any
		require.NoError(t, dec.Decode(&skip)) // the header
		for dec.More() {
			var l tracecheck.Line
			require.NoError(t, dec.Decode(&l))
			lines = append(lines, l)
			switch {
			case l.Action == "CoordCompleteDrain" && complete < 0:
				complete = len(lines) - 1
			case l.Action == "UpgradeRestart" && complete >= 0 && restart < 0:
				e, ok := l.Vars["epoch"].(float64)
				require.True(t, ok, "UpgradeRestart observes epoch: %v", l.Vars)
				restart, epoch = len(lines)-1, int(e)
			}
		}
		if restart >= 0 {
			return h, lines, complete, restart, epoch
		}
	}
	t.Fatal("no model-scope run of 20 completes a drain and restarts the drained process")
	return h, nil, 0, 0, 0
}

// encodeWith writes lines under header h with the given mapping.
func encodeWith(t testing.TB, h tracecheck.Header, mapping string, lines []tracecheck.Line) []byte {
	t.Helper()
	h.Mapping = mapping
	var buf bytes.Buffer
	require.NoError(t, tracecheck.Write(&buf, h, lines))
	return buf.Bytes()
}

// TestRefinementMapping: the mapping of a full run's trace (header
// mapping "sessions", docs/trace.md "Every run") accepts the model's own
// walks unchanged, accepts a new session after the drained process's
// restart and the maintainers' extra units of work, and rejects each
// departure it exists to catch: a rejoin that forgets a drained process
// still running, a rejoin at an epoch T has not reached, work reported
// again after none was left, a coordinator that changes its state on a
// stale LogCoordinator's unknown answer. Without the mapping, its steps
// are an input error.
func TestRefinementMapping(t *testing.T) {
	cfg := configs()["heartbeat"]
	t.Run("walks", func(t *testing.T) {
		for seed := uint64(1); seed <= 20; seed++ {
			lines, _ := traceOf(t, cfg, seed, 300)
			res := check(t, encodeMapped(t, cfg, trace.MappingSessions, lines))
			require.Equal(t, tracecheck.OK, res.Verdict, "seed %d: %+v", seed, res)
		}
	})
	h, lines, complete, restart, epoch := drainWalk(t)
	t.Run("rejoin after the restart", func(t *testing.T) {
		// The walk up to the restart, then the rejoin: a new session.
		ls := append(slices.Clone(lines[:restart+1]), rejoin(epoch), progress(3), progress(2))
		res := check(t, encodeWith(t, h, trace.MappingSessions, ls))
		require.Equal(t, tracecheck.OK, res.Verdict, "%+v", res)
		require.Equal(t, len(ls), res.Lines)
	})
	t.Run("rejoin forgets a drained process", func(t *testing.T) {
		ls := insert(lines[:restart+1], complete+1, rejoin(epoch-1))
		res := check(t, encodeWith(t, h, trace.MappingSessions, ls))
		require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
		require.Equal(t, complete+3, res.Line, res.Reason) // the header, then the lines before
	})
	t.Run("rejoin past T's epoch", func(t *testing.T) {
		ls := append(slices.Clone(lines[:restart+1]), rejoin(epoch+1))
		res := check(t, encodeWith(t, h, trace.MappingSessions, ls))
		require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
		require.Equal(t, restart+3, res.Line)
	})
	t.Run("work", func(t *testing.T) {
		// Units beyond the model's one, reported before the drain: a stutter.
		res := check(t, encodeWith(t, h, trace.MappingSessions, insert(lines, 0, progress(3), progress(2))))
		require.Equal(t, tracecheck.OK, res.Verdict, "%+v", res)
		// Work reported again after the last unit was reported done: rejected.
		last := slices.IndexFunc(lines, func(l tracecheck.Line) bool { return l.Action == "MaintainerReportProgress" })
		require.GreaterOrEqual(t, last, 0)
		res = check(t, encodeWith(t, h, trace.MappingSessions, insert(lines, last+1, progress(2))))
		require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
		require.Equal(t, last+3, res.Line)
	})
	t.Run("stale unknown answer", func(t *testing.T) {
		lc := configs()["logcoord"]
		ls, _ := traceOf(t, lc, 1, 100)
		unknown := map[string]any{"kind": "ans", "epoch": -1, "liveness": "NONE", "count": -1, "closed": false}
		stale := tracecheck.Line{Action: "CoordRecvAnswer", Params: map[string]any{"m": unknown},
			Vars: map[string]any{"coordCount": -1}}
		res := check(t, encodeMapped(t, lc, trace.MappingSessions, insert(ls, 0, stale)))
		require.Equal(t, tracecheck.OK, res.Verdict, "%+v", res)
		res = check(t, encodeMapped(t, lc, "", insert(ls, 0, stale))) // no line sent it
		require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
		erase := stale
		erase.Vars = map[string]any{"coordCount": 0} // a coordinator that takes it as a zero
		res = check(t, encodeMapped(t, lc, trace.MappingSessions, insert(ls, 0, erase)))
		require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
		require.Equal(t, 2, res.Line)
	})
	t.Run("input errors", func(t *testing.T) {
		_, err := checkErr(encodeWith(t, h, "", append(slices.Clone(lines[:restart+1]), rejoin(epoch))))
		var ie *tracecheck.InputError
		require.True(t, errors.As(err, &ie), "%v", err)
		require.Contains(t, err.Error(), "CoordRejoin is a step of the refinement mapping")
		_, err = checkErr(encodeWith(t, h, "epochs", lines))
		require.True(t, errors.As(err, &ie), "%v", err)
		require.Contains(t, err.Error(), `unknown mapping "epochs"`)
		noEpoch := rejoin(epoch)
		delete(noEpoch.Vars, "coordEpoch")
		_, err = checkErr(encodeWith(t, h, trace.MappingSessions, append(slices.Clone(lines[:restart+1]), noEpoch)))
		require.True(t, errors.As(err, &ie), "%v", err)
		require.Contains(t, err.Error(), "must observe coordEpoch")
	})
}
