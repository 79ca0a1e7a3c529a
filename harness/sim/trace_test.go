package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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

// TestFullRunTracesAccepted: the per-process traces of full runs (the
// session starts at the upgrade client's first poll, the maintainers
// report 1 to 3 units, T rejoins after each upgrade and is drained again,
// a stale LogCoordinator answers "unknown"), both transports, validate
// with the refinement mapping their headers name (docs/trace.md, "Every
// run"); the runs do what the model scope does not (checked, so that the
// test cannot pass on runs that stay within the model).
func TestFullRunTracesAccepted(t *testing.T) {
	rejoins, drains := 0, 0
	for _, tr := range []node.Transport{node.TransportHeartbeat, node.TransportLogCoord} {
		for seed := uint64(1); seed <= 10; seed++ {
			cfg := sim.Config{Seed: seed, Steps: 1500, Transport: tr}
			dir, run := procRun(t, cfg)
			res := checkRun(t, dir)
			require.Equal(t, tracecheck.OK, res.Verdict, "%s seed %d: line %d (%s %s:%d) %s\n%s\n%+v", tr, seed, res.Line,
				res.Process, res.ProcessFile, res.ProcessLine, res.Reason, res.Text, res.Candidates)
			coord, err := os.ReadFile(filepath.Join(dir, sim.CoordProcess+".ndjson"))
			require.NoError(t, err)
			require.Contains(t, string(coord), `"mapping":"sessions"`)
			rejoins += strings.Count(string(coord), `"action":"CoordRejoin"`)
			drains += run.DrainsCompleted
		}
	}
	require.Positive(t, rejoins, "no run rejoined T")
	require.Greater(t, drains, 20, "the runs drained T again and again")
}

// TestFullRunMappingRejects: the refinement mapping does not let a full
// run's extra units of work hide a report of none left: a coordinator
// whose maintainers' first report of a session (units of work, before
// DRAINING) is changed to "no work" is rejected at that line, where the
// model's MaintainerReportProgress needs DRAINING observed.
func TestFullRunMappingRejects(t *testing.T) {
	dir, _ := procRun(t, sim.Config{Seed: 1, Steps: 1500})
	coord := filepath.Join(dir, sim.CoordProcess+".ndjson")
	data, err := os.ReadFile(coord)
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	i := slices.IndexFunc(lines, func(l string) bool {
		return strings.Contains(l, `"action":"MaintainerReportProgress"`) && strings.Contains(l, `"coordLiveness":"ALIVE"`) &&
			!strings.Contains(l, `"work":0`)
	})
	require.Positive(t, i, "no report of work before DRAINING")
	require.Equal(t, tracecheck.OK, checkRun(t, dir).Verdict)
	lines[i] = regexp.MustCompile(`"work":[0-9]+`).ReplaceAllString(lines[i], `"work":0`)
	require.NoError(t, os.WriteFile(coord, []byte(strings.Join(lines, "\n")), 0o644))
	res := checkRun(t, dir)
	require.Equal(t, tracecheck.Rejected, res.Verdict, res.Reason)
	require.Equal(t, sim.CoordProcess, res.Process)
	require.Equal(t, i+1, res.ProcessLine, res.Reason)
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
			files, _, err := tracecheck.RunFiles(dir)
			require.NoError(t, err)
			m, err := tracecheck.Merge(files)
			require.NoError(t, err)
			inMemory, err := tracecheck.CheckBytes(m.Data, "merged", nil, tracecheck.Options{})
			require.NoError(t, err)
			require.Equal(t, res.Verdict, inMemory.Verdict, "the streaming and the in-memory check agree")
			require.Equal(t, res.Lines, inMemory.Lines)
			lost += run.TraceLinesLost
			crashes += run.CrashRestarts
		}
	}
	t.Logf("%d crashes, %d trace lines lost", crashes, lost)
	require.Positive(t, lost, "some killed process lost the tail of its trace")
}

// mergedLines runs cfg traced per process and returns the merged trace's
// lines (the header first).
func mergedLines(t *testing.T, cfg sim.Config) []string {
	t.Helper()
	dir, _ := procRun(t, cfg)
	files, _, err := tracecheck.RunFiles(dir)
	require.NoError(t, err)
	m, err := tracecheck.Merge(files)
	require.NoError(t, err)
	require.Nil(t, m.Cut)
	return strings.Split(strings.TrimSuffix(string(m.Data), "\n"), "\n")
}

func checkLines(t *testing.T, lines []string) tracecheck.Result {
	t.Helper()
	res, err := tracecheck.CheckBytes([]byte(strings.Join(lines, "\n")+"\n"), "merged", nil, tracecheck.Options{})
	require.NoError(t, err)
	return res
}

// find returns the index of the first line from i on that has every
// substring of subs, or -1.
func find(lines []string, i int, subs ...string) int {
	for ; i < len(lines); i++ {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(lines[i], s)
		}
		if ok {
			return i
		}
	}
	return -1
}

// move returns lines with line i moved to index j (before the line now
// at j).
func move(lines []string, i, j int) []string {
	out := slices.Clone(lines)
	l := out[i]
	out = slices.Delete(out, i, i+1)
	if j > i {
		j--
	}
	return slices.Insert(out, j, l)
}

// TestMutatedMergedTraceRejected: a merged trace the model explains is
// rejected, at the mutated line, once a receive is moved before its send,
// a line of a killed process is moved after its successor's start, or a
// count is changed.
func TestMutatedMergedTraceRejected(t *testing.T) {
	// The first seed whose run restarts T after a crash.
	var lines []string
	for seed := uint64(1); lines == nil; seed++ {
		require.Less(t, seed, uint64(50))
		l := mergedLines(t, sim.Config{Seed: seed, Steps: 1500, ModelScope: true})
		if find(l, 1, `"action":"NodeCrashRestart"`, `"p":"T.2"`) > 0 {
			lines = l
		}
	}
	require.Equal(t, tracecheck.OK, checkLines(t, lines).Verdict)

	t.Run("receive before its send", func(t *testing.T) {
		i := find(lines, 1, `"action":"CoordRecvHeartbeat"`, `"from":[{"p":"T.`)
		require.Positive(t, i)
		var st struct {
			From []struct {
				P string
				C uint64
			}
		}
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &st))
		send := find(lines, 1, fmt.Sprintf(`{"p":%q,"c":%d,`, st.From[0].P, st.From[0].C))
		require.Positive(t, send)
		require.Less(t, send, i)
		res := checkLines(t, move(lines, i, send))
		require.Equal(t, tracecheck.Rejected, res.Verdict)
		require.Equal(t, send+1, res.Line, "the moved receive, the line after the header's %d", send)
		require.Contains(t, res.Reason, "happens-before")
		require.Equal(t, "coord", res.Process)
	})
	t.Run("a line of a killed process after its crash", func(t *testing.T) {
		restart := find(lines, 1, `"p":"T.2"`, `"after":"T.1"`)
		require.Positive(t, restart)
		last := -1
		for i := 1; i < restart; i++ {
			if strings.HasPrefix(lines[i], `{"p":"T.1",`) {
				last = i
			}
		}
		require.Positive(t, last)
		res := checkLines(t, move(lines, last, restart+1))
		require.Equal(t, tracecheck.Rejected, res.Verdict)
		require.Equal(t, restart+1, res.Line, "the moved line, now after T.2's first")
		require.Contains(t, res.Reason, "after its successor T.2 started")
		require.Equal(t, "T.1", res.Process)
	})
	t.Run("a count changed", func(t *testing.T) {
		i := find(lines, 1, `"action":"BrokerAdmit"`, `"count":{"c1":1}`)
		require.Positive(t, i)
		mut := slices.Clone(lines)
		mut[i] = strings.Replace(mut[i], `"count":{"c1":1}`, `"count":{"c1":2}`, 1)
		res := checkLines(t, mut)
		require.Equal(t, tracecheck.Rejected, res.Verdict)
		require.Equal(t, i+1, res.Line)
		require.Contains(t, res.Reason, "BrokerAdmit")
		require.Equal(t, "count[c1]", res.Candidates[0].Successors[0].Disagree[0].Var)
	})
}

// crashedRun returns the directory of the first model-scope run (from
// seed 1) whose T.1 is killed (T.2 starts with NodeCrashRestart) with
// lines of T.1 after its last send, and T.1's trace lines.
func crashedRun(t *testing.T) (string, []string) {
	t.Helper()
	for seed := uint64(1); seed < 100; seed++ {
		dir, _ := procRun(t, sim.Config{Seed: seed, Steps: 600, ModelScope: true})
		t2, err := os.ReadFile(filepath.Join(dir, "T.2.ndjson"))
		if err != nil || !strings.Contains(string(t2), `"after":"T.1","action":"NodeCrashRestart"`) {
			continue
		}
		t1, err := os.ReadFile(filepath.Join(dir, "T.1.ndjson"))
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSuffix(string(t1), "\n"), "\n")
		if !sendsMsg(lines[len(lines)-1]) {
			return dir, lines
		}
	}
	t.Fatal("no seed kills T.1")
	return "", nil
}

// sendsMsg reports whether a trace line sends a message.
func sendsMsg(l string) bool {
	return strings.Contains(l, `"reply":`) || strings.Contains(l, `"m":`) && !strings.Contains(l, `Recv`)
}

// TestKilledProcessAnyTail: T.1 killed at any point (its trace cut after
// any of its lines) is never rejected: cut after its last send (what a
// kill loses, the Writer writing every send through), the run is
// accepted; cut before a send another process received, the run is
// incomplete at the receive (a dependency on a line the killed process
// never wrote), not rejected.
func TestKilledProcessAnyTail(t *testing.T) {
	dir, t1 := crashedRun(t)
	lastSend := 0
	for i, l := range t1 {
		if i > 0 && sendsMsg(l) {
			lastSend = i
		}
	}
	ok, incomplete := 0, 0
	for k := len(t1); k >= 1; k-- {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "T.1.ndjson"), []byte(strings.Join(t1[:k], "\n")+"\n"), 0o644))
		res := checkRun(t, dir)
		switch res.Verdict {
		case tracecheck.OK:
			ok++
		case tracecheck.Incomplete:
			incomplete++
			require.Contains(t, res.Reason, "never wrote", "cut after line %d", k)
		default:
			t.Fatalf("T.1 cut after its line %d: %s at line %d (%s): %s", k, res.Verdict, res.Line, res.Process, res.Reason)
		}
		if k > lastSend {
			require.Equal(t, tracecheck.OK, res.Verdict, "cut after line %d, past its last send (line %d)", k, lastSend+1)
		}
	}
	t.Logf("T.1 of %d lines: %d cuts accepted, %d incomplete", len(t1)-1, ok, incomplete)
	require.Positive(t, incomplete, "some cut loses a send another process received")
}

// TestKilledProcessViolationSeen: a violation in a killed process's trace
// before its crash is still found: T.1 cut after a line whose count was
// changed is rejected at that line.
func TestKilledProcessViolationSeen(t *testing.T) {
	dir, t1 := crashedRun(t)
	i := find(t1, 1, `"action":"BrokerAdmit"`, `"count":{"c1":1}`)
	if i < 0 {
		i = find(t1, 1, `"action":"BrokerAdmit"`, `"count":{"c2":1}`)
	}
	require.Positive(t, i)
	mut := slices.Clone(t1[:i+1])
	mut[i] = strings.Replace(strings.Replace(mut[i], `"count":{"c1":1}`, `"count":{"c1":2}`, 1), `"count":{"c2":1}`, `"count":{"c2":2}`, 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "T.1.ndjson"), []byte(strings.Join(mut, "\n")+"\n"), 0o644))
	res := checkRun(t, dir)
	require.Equal(t, tracecheck.Rejected, res.Verdict, res.Reason)
	require.Equal(t, "T.1", res.Process)
	require.Equal(t, i+1, res.ProcessLine, "the changed line, in T.1's trace")
	require.Contains(t, res.Reason, "BrokerAdmit")
}
