package tracecheck_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/spec"
)

// asRun writes trace data as the run of one process "X" (its header
// naming the process, every line stamped) and returns the run's files.
func asRun(t testing.TB, data []byte) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(lines[0], "}") + `,"process":"X"}` + "\n")
	for i, l := range lines[1:] {
		fmt.Fprintf(&b, `{"p":"X","c":%d,%s`+"\n", i+1, l[1:])
	}
	path := filepath.Join(t.TempDir(), "X.ndjson")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return []string{path}
}

// TestCheckRunAgreesWithCheckBytes: the streaming check of a run
// (CheckRun: two forward passes, the environment decided by the first)
// and the in-memory check (CheckBytes: lookahead in one backward pass)
// agree on every generated walk, mutated walk and walk of a buggy model:
// verdict, line, lines explained, candidates.
func TestCheckRunAgreesWithCheckBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	n := 0
	for name, cfg := range configs() {
		for seed := uint64(1); seed <= 30; seed++ {
			lines, _ := traceOf(t, cfg, seed, 150)
			traces := [][]tracecheck.Line{lines}
			// One line dropped or two adjacent lines swapped: some are rejected.
			mut := clone(lines)
			if i := rng.IntN(len(mut) - 1); seed%2 == 0 {
				mut[i], mut[i+1] = mut[i+1], mut[i]
			} else {
				mut = append(mut[:i], mut[i+1:]...)
			}
			traces = append(traces, mut)
			for _, bn := range []string{"DoubleIncrement", "NoAdmissionGate", "AcceptStaleEpoch"} {
				bug, _ := spec.ParseBug(bn)
				bc := cfg
				bc.Bugs = bug
				bl, _ := traceOf(t, bc, seed, 150)
				traces = append(traces, bl)
			}
			for _, tr := range traces {
				data := encode(t, cfg, tr)
				want := check(t, data)
				got, err := tracecheck.CheckRun(asRun(t, data), "run", nil, tracecheck.Options{})
				require.NoError(t, err)
				require.Equal(t, want.Verdict, got.Verdict, "%s seed %d: %s / %s", name, seed, want.Reason, got.Reason)
				require.Equal(t, want.Lines, got.Lines, "%s seed %d", name, seed)
				require.Equal(t, want.Line, got.Line, "%s seed %d", name, seed)
				require.Equal(t, want.MaxCandidates, got.MaxCandidates, "%s seed %d", name, seed)
				require.Equal(t, len(want.Candidates), len(got.Candidates))
				if want.Verdict != tracecheck.OK {
					require.Equal(t, "X", got.Process)
					require.Equal(t, got.Line, got.ProcessLine, "one process: its line is the merged one")
				}
				n++
			}
		}
	}
	t.Logf("%d traces", n)
}

// run writes the processes' traces (name -> lines after the header) of
// one run of the default model and returns their files.
func run(t *testing.T, procs map[string][]string, after map[string]string) []string {
	t.Helper()
	dir := t.TempDir()
	h := tracecheck.HeaderFor(tracecheck.TraceConfig(spec.DefaultConfig()), "test")
	var files []string
	for p, lines := range procs {
		var b bytes.Buffer
		hh := h
		hh.Process, hh.After = p, after[p]
		require.NoError(t, tracecheck.Write(&b, hh, nil))
		b.WriteString(strings.Join(lines, "\n") + "\n")
		f := filepath.Join(dir, p+".ndjson")
		require.NoError(t, os.WriteFile(f, b.Bytes(), 0o644))
		files = append(files, f)
	}
	return files
}

const (
	hbStart = `"action":"NodeStartHeartbeat"}`
	hbRep   = `"action":"ServiceStartReport"}`
	hbRead  = `"action":"ServiceReadBroker","params":{"b":"b1"}}`
	hbSend  = `"action":"NodeSendHeartbeat","params":{"m":{"kind":"hb","epoch":1,"liveness":"ALIVE","count":0,"closed":false}}}`
	hbRecv  = `"action":"CoordRecvHeartbeat","params":{"m":{"kind":"hb","epoch":1,"liveness":"ALIVE","count":0,"closed":false}}}`
)

// TestRunHappensBefore: the merge respects each line's dependencies and
// process succession, and a run whose clocks contradict them is rejected
// at the line that cannot be placed (never accepted), or incomplete when
// the line depends on one a killed process never wrote.
func TestRunHappensBefore(t *testing.T) {
	tLines := []string{`{"p":"T","c":1,` + hbStart, `{"p":"T","c":2,` + hbRep, `{"p":"T","c":3,` + hbRead, `{"p":"T","c":4,` + hbSend}
	check := func(procs map[string][]string, after map[string]string) tracecheck.Result {
		res, err := tracecheck.CheckRun(run(t, procs, after), "run", nil, tracecheck.Options{})
		require.NoError(t, err)
		return res
	}
	// The receive depends on the send: accepted.
	res := check(map[string][]string{"T": tLines, "coord": {`{"p":"coord","c":5,"from":[{"p":"T","c":4}],` + hbRecv}}, nil)
	require.Equal(t, tracecheck.OK, res.Verdict, res.Reason)
	require.Equal(t, 5, res.Lines)
	// Its clock below its send's: it cannot be placed after the send.
	res = check(map[string][]string{"T": tLines, "coord": {`{"p":"coord","c":2,"from":[{"p":"T","c":4}],` + hbRecv}}, nil)
	require.Equal(t, tracecheck.Rejected, res.Verdict)
	require.Equal(t, "coord", res.Process)
	require.Contains(t, res.Reason, "does not come before it")
	// Without its dependency the receive's clock puts it first: the model
	// rejects a receive of a message never sent.
	res = check(map[string][]string{"T": tLines, "coord": {`{"p":"coord","c":1,` + hbRecv}}, nil)
	require.Equal(t, tracecheck.Rejected, res.Verdict)
	require.Equal(t, 3, res.Line, "clock 1 of T, then (a tie, by process name) clock 1 of coord")
	// What the model could do instead: T's heartbeat goes on; no receive
	// (nothing is in flight).
	require.Contains(t, res.Candidates[0].EnabledActions, "ServiceStartReport")
	require.NotContains(t, res.Candidates[0].EnabledActions, "CoordRecvHeartbeat")
	// Depends on a line the killed T never wrote (its successor T2 started):
	// incomplete, not rejected.
	res = check(map[string][]string{"T": tLines[:3], "T2": {`{"p":"T2","c":9,"after":"T",` +
		`"action":"NodeCrashRestart","params":{"v":"new"}}`}, "coord": {`{"p":"coord","c":5,"from":[{"p":"T","c":4}],` + hbRecv}},
		map[string]string{"T2": "T"})
	require.Equal(t, tracecheck.Incomplete, res.Verdict, res.Reason)
	require.Contains(t, res.Reason, "never wrote")
	// A process's clock goes back: rejected at that line.
	res = check(map[string][]string{"T": {tLines[0], `{"p":"T","c":1,` + hbRep}}, nil)
	require.Equal(t, tracecheck.Rejected, res.Verdict)
	require.Equal(t, 3, res.ProcessLine, "its second line, after the header")
	require.Contains(t, res.Reason, "order of its clock")
	// A successor's lines all come after its predecessor's, whatever their
	// clocks: T2's restart (clock 1) after T's four lines.
	res = check(map[string][]string{"T": tLines, "T2": {`{"p":"T2","c":1,"after":"T",` +
		`"action":"NodeCrashRestart","params":{"v":"new"},"vars":{"epoch":2}}`}}, map[string]string{"T2": "T"})
	require.Equal(t, tracecheck.OK, res.Verdict, res.Reason)
	require.Equal(t, 5, res.Lines)
}

// TestRunInputErrors: a run's traces that are not one run are input
// errors, each naming the file and line.
func TestRunInputErrors(t *testing.T) {
	line := `{"p":"T","c":1,` + hbStart
	cases := []struct {
		name  string
		procs map[string][]string
		after map[string]string
		msg   string
	}{
		{"wrong process", map[string][]string{"T": {`{"p":"U","c":1,` + hbStart}}, nil, `a line of process "U"`},
		{"no clock", map[string][]string{"T": {`{"p":"T",` + hbStart}}, nil, `needs "c"`},
		{"clock zero", map[string][]string{"T": {`{"p":"T","c":0,` + hbStart}}, nil, "clock"},
		{"bad from", map[string][]string{"T": {`{"p":"T","c":1,"from":[{"p":"U"}],` + hbStart}}, nil, `needs "p" and "c"`},
		{"no successor's predecessor", map[string][]string{"T": {line}}, map[string]string{"T": "S"}, "not in the run"},
		{"unstamped line", map[string][]string{"T": {`{` + hbStart}}, nil, `a line of process ""`},
		{"successor cycle", map[string][]string{"T": {line}, "S": {`{"p":"S","c":1,` + hbStart}},
			map[string]string{"T": "S", "S": "T"}, "its own predecessor"},
		{"own successor", map[string][]string{"T": {line}}, map[string]string{"T": "T"}, "its own predecessor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tracecheck.CheckRun(run(t, tc.procs, tc.after), "run", nil, tracecheck.Options{})
			var ie *tracecheck.InputError
			require.ErrorAs(t, err, &ie)
			require.Contains(t, err.Error(), tc.msg)
			require.Contains(t, ie.File, ".ndjson")
		})
	}
}

// TestEmptyProcessTraceIsAnInputError: a process's trace with no line at
// all, not even its header, is an input error that says the trace is
// empty, whether the trace is held in memory or read line by line.
func TestEmptyProcessTraceIsAnInputError(t *testing.T) {
	files := run(t, map[string][]string{"T": {`{"p":"T","c":1,` + hbStart}}, nil)
	empty := filepath.Join(filepath.Dir(files[0]), "U.ndjson")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	for _, small := range []int{1 << 20, 0} {
		restore := tracecheck.SetSmallTrace(small)
		_, err := tracecheck.CheckRun(append(files, empty), "run", nil, tracecheck.Options{})
		restore()
		var ie *tracecheck.InputError
		require.ErrorAs(t, err, &ie, "smallTrace %d", small)
		require.Equal(t, empty, ie.File)
		require.Equal(t, 1, ie.Line)
		require.Contains(t, ie.Msg, "empty trace: no header line", "smallTrace %d", small)
	}
}

// TestWriteRunAccepted: a walk written as a run of several processes
// (WriteRun) merges back into the walk: accepted, the same lines as the
// walk as one trace; and a walk of a buggy model so written is rejected
// where the single trace is.
func TestWriteRunAccepted(t *testing.T) {
	for name, cfg := range configs() {
		for seed := uint64(1); seed <= 10; seed++ {
			m, err := spec.New(cfg)
			require.NoError(t, err)
			files, err := tracecheck.WriteRun(t.TempDir(), m, seed, 400, "test")
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(files), 3)
			res, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
			require.NoError(t, err)
			lines, _ := traceOf(t, cfg, seed, 400)
			require.Equal(t, tracecheck.OK, res.Verdict, "%s seed %d: %s %s", name, seed, res.Reason, res.Text)
			require.Equal(t, len(lines), res.Lines)
		}
	}
	cfg := configs()["heartbeat"]
	bug, _ := spec.ParseBug("DoubleIncrement")
	bc := cfg
	bc.Bugs = bug
	bm, err := spec.New(bc)
	require.NoError(t, err)
	gm, err := spec.New(cfg)
	require.NoError(t, err)
	rejected := 0
	for seed := uint64(1); seed <= 10; seed++ {
		files, err := tracecheck.WriteRun(t.TempDir(), bm, seed, 400, "test")
		require.NoError(t, err)
		// The headers name the buggy model: check against the correct one.
		res, err := tracecheck.CheckRun(files, "run", gm, tracecheck.Options{})
		require.NoError(t, err)
		lines, _ := traceOf(t, bc, seed, 400)
		want := check(t, encode(t, cfg, lines))
		require.Equal(t, want.Verdict, res.Verdict)
		require.Equal(t, want.Lines, res.Lines)
		if res.Verdict == tracecheck.Rejected {
			rejected++
		}
	}
	require.Positive(t, rejected)
}

// TestReadEdgesPlaceReads: a cross-process read is placed where it read
// only through its edges (docs/trace.md, "The merge and why one order
// suffices"): the coordinator's CoordLearnVersion of epoch 1, with a
// clock past the restart that starts T.2, is merged after the restart
// and rejected (epoch 2 is not the coordinator's epoch); with the edge
// the simulator writes (T's next line, here T.2's restart, depends on
// the learn) it is merged before and accepted.
func TestReadEdgesPlaceReads(t *testing.T) {
	learn := `{"p":"coord","c":5,"action":"CoordLearnVersion","vars":{"coordEpoch":1,"coordVersion":"new"}}`
	t1 := `{"p":"T.1","c":1,` + hbStart
	after := map[string]string{"T.2": "T.1"}
	restart := func(stamp string) string {
		return `{"p":"T.2",` + stamp + `"after":"T.1","action":"NodeCrashRestart","params":{"v":"new"},"vars":{"epoch":2}}`
	}
	res, err := tracecheck.CheckRun(run(t, map[string][]string{"coord": {learn}, "T.1": {t1},
		"T.2": {restart(`"c":2,`)}}, after), "run", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.Rejected, res.Verdict)
	require.Equal(t, "coord", res.Process)
	res, err = tracecheck.CheckRun(run(t, map[string][]string{"coord": {learn}, "T.1": {t1},
		"T.2": {restart(`"c":6,"from":[{"p":"coord","c":5}],`)}}, after), "run", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.OK, res.Verdict, res.Reason)
	require.Equal(t, 3, res.Lines)
}

// FuzzCheckRun: any two files given as a run's traces get a verdict or
// an error, never a panic.
func FuzzCheckRun(f *testing.F) {
	h := `{"drainproof_trace":2,"model":{"Dispatchers":["d1","d2"],"TableTriggers":["d2"],"Brokers":["b1"],"Versions":["new"],"MaxEpoch":15,"MaxReg":15,"MaxMsgs":8,"Transport":"heartbeat","Bugs":[]},"process":`
	f.Add(h+`"T"}`+"\n"+`{"p":"T","c":1,`+hbStart+"\n"+`{"p":"T","c":2,`+hbRep+"\n"+`{"p":"T","c":3,`+hbRead+"\n"+`{"p":"T","c":4,`+hbSend+"\n",
		h+`"coord"}`+"\n"+`{"p":"coord","c":5,"from":[{"p":"T","c":4}],`+hbRecv+"\n")
	f.Add(h+`"T"}`+"\n", h+`"U","after":"T"}`+"\n"+`{"p":"U","c":1,"after":"T",`+hbStart+"\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		dir := t.TempDir()
		pa, pb := filepath.Join(dir, "a.ndjson"), filepath.Join(dir, "b.ndjson")
		if os.WriteFile(pa, []byte(a), 0o644) != nil || os.WriteFile(pb, []byte(b), 0o644) != nil {
			t.Skip()
		}
		res, err := tracecheck.CheckRun([]string{pa, pb}, "f", nil, tracecheck.Options{})
		if err == nil && res.Verdict == "" {
			t.Fatal("no verdict and no error")
		}
	})
}

// TestMergedTraceOutOfOrderRejected: one stamped trace (a run merged into
// one file) whose receive comes before the send it depends on is
// rejected at the receive, for happens-before, though the lines before it
// are a behaviour of the model; a line the model rejects is reported with
// the process that wrote it.
func TestMergedTraceOutOfOrderRejected(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, tracecheck.Write(&b, tracecheck.HeaderFor(tracecheck.TraceConfig(spec.DefaultConfig()), "test"), nil))
	for _, l := range []string{`{"p":"T","c":1,` + hbStart, `{"p":"T","c":2,` + hbRep, `{"p":"T","c":3,` + hbRead,
		`{"p":"coord","c":5,"from":[{"p":"T","c":4}],` + hbRecv, `{"p":"T","c":4,` + hbSend} {
		b.WriteString(l + "\n")
	}
	res, err := tracecheck.CheckBytes(b.Bytes(), "merged", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
	require.Equal(t, 5, res.Line)
	require.Equal(t, "coord", res.Process)
	require.Contains(t, res.Reason, "happens-before")

	// In order, but a receive of a message never sent: the model rejects
	// it, and the result names the process that wrote the line.
	b.Reset()
	require.NoError(t, tracecheck.Write(&b, tracecheck.HeaderFor(tracecheck.TraceConfig(spec.DefaultConfig()), "test"), nil))
	b.WriteString(`{"p":"T","c":1,` + hbStart + "\n" + `{"p":"coord","c":2,` + hbRecv + "\n")
	res, err = tracecheck.CheckBytes(b.Bytes(), "merged", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
	require.Equal(t, 3, res.Line)
	require.Equal(t, "coord", res.Process)
}

// TestRunFilesAreTheProcessTraces: RunFiles lists a directory's traces
// whose header names a process, and says there is no run when none does
// (single traces are checked one by one).
func TestRunFilesAreTheProcessTraces(t *testing.T) {
	dir := t.TempDir()
	var single bytes.Buffer
	require.NoError(t, tracecheck.Write(&single, tracecheck.HeaderFor(tracecheck.TraceConfig(spec.DefaultConfig()), "test"), nil))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "single.ndjson"), single.Bytes(), 0o644))
	files, ok, err := tracecheck.RunFiles(dir)
	require.NoError(t, err)
	require.False(t, ok, "a single trace is no run")
	require.Empty(t, files)

	proc := asRun(t, single.Bytes())[0]
	data, err := os.ReadFile(proc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "X.ndjson"), data, 0o644))
	files, ok, err = tracecheck.RunFiles(dir)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []string{filepath.Join(dir, "X.ndjson")}, files)
}

// TestWriteRunNamesTheCoordinatorsLine: in a run WriteRun writes, a
// LogCoordinator line other than a report's receipt, and an upgrade
// restart, depend on the coordinator's last line before them, as the
// implementation's do (docs/trace.md).
func TestWriteRunNamesTheCoordinatorsLine(t *testing.T) {
	type ref struct {
		P string `json:"p"`
		C uint64 `json:"c"`
	}
	type stamped struct {
		ref
		From   []ref  `json:"from"`
		Action string `json:"action"`
	}
	checked := 0
	for _, name := range []string{"logcoord", "heartbeat"} {
		m, err := spec.New(configs()[name])
		require.NoError(t, err)
		for seed := uint64(1); seed <= 5; seed++ {
			files, err := tracecheck.WriteRun(t.TempDir(), m, seed, 400, "test")
			require.NoError(t, err)
			var all []stamped
			for _, f := range files {
				data, err := os.ReadFile(f)
				require.NoError(t, err)
				for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
					var s stamped
					require.NoError(t, json.Unmarshal([]byte(l), &s))
					all = append(all, s)
				}
			}
			slices.SortFunc(all, func(a, b stamped) int { return cmp.Compare(a.C, b.C) })
			var coord uint64
			for _, s := range all {
				if s.P == "coord" {
					coord = s.C
					continue
				}
				switch {
				case coord > 0 && s.Action == "UpgradeRestart":
					// The restart reads the coordinator's decision: its latest line.
					require.Contains(t, s.From, ref{"coord", coord}, "%s seed %d: %s at clock %d", name, seed, s.Action, s.C)
					checked++
				case strings.HasPrefix(s.Action, "LogCoordAnswer"):
					// An answer receives the coordinator's query: it names a coordinator line.
					require.True(t, slices.ContainsFunc(s.From, func(r ref) bool { return r.P == "coord" && r.C <= coord }),
						"%s seed %d: %s at clock %d names no coordinator line: %v", name, seed, s.Action, s.C, s.From)
					checked++
				}
			}
		}
	}
	require.Positive(t, checked)
}
