package tracecheck_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/spec"
)

// lcRestart is the first line of a LogCoordinator that succeeds a killed
// one (logcoord.Cache.TraceRestart): its cache is empty.
const lcRestart = `"after":"logcoord","action":"LogCoordExpire","vars":{"cache":{"closed":false,"count":-1,"epoch":-1}}}`

// expireLine is the model's LogCoordExpire as a line of X: the same body
// as lcRestart's.
var expireLine = tracecheck.Line{Action: "LogCoordExpire",
	Vars: map[string]any{"cache": map[string]any{"epoch": -1, "count": -1, "closed": false}}}

// walkWithLCRestart writes a run of cfg's model under the refinement
// mapping of a full run: process X takes the walk's lines (clock 2i for
// the i-th), the LogCoordinator "logcoord" is killed before it wrote a
// line and its successor "logcoord.2" writes its empty cache after X's
// line at (clock 2at+1), then extra, its further lines.
func walkWithLCRestart(t *testing.T, cfg spec.Config, walk []tracecheck.Line, at int, extra ...string) []string {
	t.Helper()
	dir := t.TempDir()
	h := tracecheck.HeaderFor(cfg, "test")
	h.Mapping = trace.MappingSessions
	write := func(proc, after string, lines []string) string {
		var b bytes.Buffer
		hh := h
		hh.Process, hh.After = proc, after
		require.NoError(t, tracecheck.Write(&b, hh, nil))
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
		f := filepath.Join(dir, proc+".ndjson")
		require.NoError(t, os.WriteFile(f, b.Bytes(), 0o644))
		return f
	}
	var x []string
	for i, l := range walk {
		b, err := json.Marshal(l)
		require.NoError(t, err)
		x = append(x, fmt.Sprintf(`{"p":"X","c":%d,%s`, 2*(i+1), b[1:]))
	}
	lc2 := []string{fmt.Sprintf(`{"p":"logcoord.2","c":%d,%s`, 2*at+1, lcRestart)}
	for i, l := range extra {
		lc2 = append(lc2, fmt.Sprintf(`{"p":"logcoord.2","c":%d,%s`, 2*at+2+i, l))
	}
	return []string{write("X", "", x), write("logcoord", "", nil), write("logcoord.2", "logcoord", lc2)}
}

// checkRun checks a run both ways: streamed (CheckRun) and merged in
// memory (Merge, then CheckBytes, as checker trace --merged does); the
// two must agree.
func checkRun(t *testing.T, files []string) tracecheck.Result {
	t.Helper()
	res, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
	require.NoError(t, err)
	m, err := tracecheck.Merge(files)
	require.NoError(t, err)
	mres, err := tracecheck.CheckBytes(m.Data, "merged", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, res.Verdict, mres.Verdict, "merged in memory: %s", mres.Reason)
	require.Equal(t, res.Line, mres.Line, "merged in memory")
	return res
}

// cacheHeld reports whether the model's cache holds T's entry after the
// walk's first n lines (the last line that observes it says).
func cacheHeld(walk []tracecheck.Line, n int) bool {
	held := false
	for _, l := range walk[:n] {
		if c, ok := l.Vars["cache"].(map[string]any); ok {
			held = c["epoch"] != -1
		}
	}
	return held
}

// TestLogCoordRestartMapped: a LogCoordinator restarted after a kill is
// traced as its successor, whose first line (its empty cache) the
// refinement mapping reads as the model's LogCoordExpire when the
// model's cache holds T's entry and as no step when it holds none (the
// heartbeat transport: T never reports to it). The run is accepted with
// the restart anywhere in a walk of the heartbeat transport, and in a
// walk of the logcoord transport where nothing reads the lost entry
// afterwards. It hides nothing: a walk changed after the restart is
// rejected at the same line as without it, a successor that answers
// from its predecessor's entry is rejected, and an empty cache written
// on any line but a successor's first is the model's LogCoordExpire
// alone (rejected where the cache is already empty).
func TestLogCoordRestartMapped(t *testing.T) {
	hb := configs()["heartbeat"]
	t.Run("heartbeat", func(t *testing.T) {
		for seed := uint64(1); seed <= 10; seed++ {
			walk, _ := traceOf(t, hb, seed, 200)
			for _, at := range []int{0, len(walk) / 2, len(walk)} {
				res := checkRun(t, walkWithLCRestart(t, hb, walk, at))
				require.Equal(t, tracecheck.OK, res.Verdict, "seed %d, restart after line %d: %s", seed, at, res.Reason)
				require.Equal(t, len(walk)+1, res.Lines)
			}
		}
	})
	t.Run("logcoord, the entry held", func(t *testing.T) {
		lc := configs()["logcoord"]
		held := 0
		for seed := uint64(1); seed <= 20; seed++ {
			walk, _ := traceOf(t, lc, seed, 200)
			if cacheHeld(walk, len(walk)) {
				held++
			}
			res := checkRun(t, walkWithLCRestart(t, lc, walk, len(walk)))
			require.Equal(t, tracecheck.OK, res.Verdict, "seed %d: %s", seed, res.Reason)
			if cacheHeld(walk, len(walk)) {
				// The entry expires (the model's step, a line of X of
				// the same body), then the restart: no step.
				ex := append(clone(walk), expireLine)
				res := checkRun(t, walkWithLCRestart(t, lc, ex, len(ex)))
				require.Equal(t, tracecheck.OK, res.Verdict, "seed %d, expired first: %s", seed, res.Reason)
				require.Equal(t, len(ex)+1, res.Lines)
			}
		}
		require.Positive(t, held, "no walk ends with the entry held: the model's LogCoordExpire untried")
	})
	t.Run("a successor answering from the lost entry", func(t *testing.T) {
		lc := configs()["logcoord"]
		for seed := uint64(1); seed <= 20; seed++ {
			walk, _ := traceOf(t, lc, seed, 200)
			if !cacheHeld(walk, len(walk)) {
				continue
			}
			// The successor answers with the entry its predecessor held.
			var c map[string]any
			for _, l := range walk {
				if v, ok := l.Vars["cache"].(map[string]any); ok {
					c = v
				}
			}
			ans := fmt.Sprintf(`"action":"LogCoordAnswer","params":{"m":{"kind":"ans","epoch":%v,"liveness":"NONE","count":%v,"closed":%v}},"vars":{"cache":{"epoch":%v,"count":%v,"closed":%v}}}`,
				c["epoch"], c["count"], c["closed"], c["epoch"], c["count"], c["closed"])
			res := checkRun(t, walkWithLCRestart(t, lc, walk, len(walk), ans))
			require.Equal(t, tracecheck.Rejected, res.Verdict, "seed %d", seed)
			require.Equal(t, "logcoord.2", res.Process)
			require.Equal(t, 3, res.ProcessLine, "the answer, after the restart line")
			return
		}
		t.Fatal("no walk of 20 ends with the entry held")
	})
	t.Run("a violation after the restart", func(t *testing.T) {
		n := 0
		for seed := uint64(1); seed <= 10; seed++ {
			walk, _ := traceOf(t, hb, seed, 200)
			for _, name := range []string{"coordCount", "epoch"} {
				idx := observed(walk, name)
				if len(idx) < 2 {
					continue
				}
				i := idx[len(idx)/2]
				mut := clone(walk)
				mut[i].Vars[name] = mut[i].Vars[name].(int) + 1
				want := checkRun(t, walkWithLCRestart(t, hb, mut, len(mut)))
				require.Equal(t, tracecheck.Rejected, want.Verdict, "seed %d %s", seed, name)
				res := checkRun(t, walkWithLCRestart(t, hb, mut, i))
				require.Equal(t, tracecheck.Rejected, res.Verdict, "seed %d %s: restart after line %d", seed, name, i)
				require.Equal(t, "X", res.Process)
				require.Equal(t, want.ProcessLine, res.ProcessLine, "seed %d %s", seed, name)
				n++
			}
		}
		require.Positive(t, n)
	})
	t.Run("an empty cache elsewhere", func(t *testing.T) {
		walk, _ := traceOf(t, hb, 1, 50)
		// Not a successor's first line: the model's LogCoordExpire alone,
		// not enabled with the cache empty; the same body first compiled
		// as a successor's first line changes nothing.
		expire := `"action":"LogCoordExpire","vars":{"cache":{"closed":false,"count":-1,"epoch":-1}}}`
		res := checkRun(t, walkWithLCRestart(t, hb, walk, len(walk), expire))
		require.Equal(t, tracecheck.Rejected, res.Verdict)
		require.Equal(t, "logcoord.2", res.Process)
		require.Equal(t, 3, res.ProcessLine)
		require.Contains(t, res.Reason, "LogCoordExpire")
	})
}
