package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/harness/tracecheck"
)

// bins holds the drainproofd binaries the tests run: plain and -tags bugs.
var bins struct{ plain, bugs string }

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "drainproof-cluster-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer os.RemoveAll(dir)
		for _, b := range []struct {
			out  *string
			tags []string
		}{{&bins.plain, nil}, {&bins.bugs, []string{"-tags", "bugs"}}} {
			*b.out = filepath.Join(dir, "drainproofd"+strings.Join(b.tags, ""))
			args := append(append([]string{"build", "-o", *b.out}, b.tags...), "github.com/drainproof/drainproof/cmd/drainproofd")
			if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "building drainproofd: %v\n%s", err, out)
				return 2
			}
		}
		return m.Run()
	}()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// TestRunPassesAndLeavesNothing: a short run with the upgrade and every
// fault passes, and afterwards no process of it lives, no port of it
// listens and its working directory is gone.
func TestRunPassesAndLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for seconds")
	}
	var log strings.Builder
	res, err := Run(context.Background(), Config{Binary: bins.plain, Nodes: 3, Seed: 1, Duration: 6 * time.Second,
		Faults: FaultNames(), Upgrade: true, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) > 0 {
		t.Fatalf("violations: %q\n%s", res.Violations, log.String())
	}
	if res.EventsRead == 0 || res.Registrations == 0 || len(res.Drains) != 3 {
		t.Fatalf("the run did too little: %d events read, %d registrations, %d drains\n%s", res.EventsRead, res.Registrations, len(res.Drains), log.String())
	}
	if len(res.BugsReached) != 0 {
		t.Errorf("no bug is switched on, yet BugsReached = %v", res.BugsReached)
	}
	checkTimeline(t, res)
	checkNothingLeft(t, res)
}

// checkTimeline: the run's timeline, in time order, has each process's
// start, and for each node of the upgrade its SIGTERM, its drain done,
// its exit and its restart, in that order, and some dispatchers
// registered with it, never fewer than 0; a collector saw some node
// DRAINING after its SIGTERM (not every one: the legacy node's drain
// gets the legacy answer at once).
func checkTimeline(t *testing.T, res *Result) {
	t.Helper()
	if len(res.Processes) != res.Nodes+2 {
		t.Fatalf("processes %v", res.Processes)
	}
	for i := 1; i < len(res.Timeline); i++ {
		if res.Timeline[i].At < res.Timeline[i-1].At {
			t.Fatalf("timeline out of order at %d: %+v after %+v", i, res.Timeline[i], res.Timeline[i-1])
		}
	}
	sawDraining := false
	for _, p := range res.Processes {
		var seq []string
		maxDisp := int64(0)
		for _, e := range res.Timeline {
			if e.Process != p {
				continue
			}
			switch e.Kind {
			case EventDispatchers:
				if e.Value < 0 {
					t.Errorf("%s: %d dispatchers at %v", p, e.Value, e.At)
				}
				maxDisp = max(maxDisp, e.Value)
			case EventLiveness:
				if e.Detail == "DRAINING" && slices.Contains(seq, EventSigterm) {
					sawDraining = true
				}
			case EventStart, EventSigterm, EventDrainDone, EventExit:
				seq = append(seq, e.Kind)
			case EventRestart:
				if strings.HasPrefix(e.Detail, "upgraded") {
					seq = append(seq, "upgraded")
				}
			}
		}
		want := []string{EventStart}
		if strings.HasPrefix(p, "n") {
			want = []string{EventStart, EventSigterm, EventDrainDone, EventExit, "upgraded"}
			if maxDisp == 0 {
				t.Errorf("%s: no dispatcher ever registered in the timeline", p)
			}
		}
		// A node killed during its drain (kill, stale) exits and is drained
		// again after its restart: its SIGTERM and exit repeat. So: it
		// starts, ends with the last drain, its exit and the upgrade's
		// restart, and every drain done comes between a SIGTERM and an exit.
		ok := len(seq) >= len(want) && seq[0] == want[0] &&
			slices.Equal(seq[len(seq)-len(want)+1:], want[1:])
		for i, k := range seq {
			if k == EventDrainDone && (i == 0 || i == len(seq)-1 || seq[i-1] != EventSigterm || seq[i+1] != EventExit) {
				ok = false
			}
		}
		if !ok {
			t.Errorf("%s: timeline %v, want %v (SIGTERM and exit may repeat before the last drain)", p, seq, want)
		}
	}
	if !sawDraining {
		t.Error("no collector saw a node DRAINING after its SIGTERM")
	}
}

func checkNothingLeft(t *testing.T, res *Result) {
	t.Helper()
	if len(res.PIDs) < 5 || len(res.Ports) < 5 || res.Dir == "" {
		t.Fatalf("the result does not say what to look for: %d pids, %d ports, dir %q", len(res.PIDs), len(res.Ports), res.Dir)
	}
	for _, pid := range res.PIDs {
		// A process not yet reaped by init would still answer signal 0
		// as a zombie; Run waited for every one of its children.
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("process %d of the run is still alive", pid)
		}
	}
	for _, port := range res.Ports {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Errorf("port %d of the run is still taken: %v", port, err)
			continue
		}
		l.Close()
	}
	if _, err := os.Stat(res.Dir); !os.IsNotExist(err) {
		t.Errorf("the working directory %s is still there (%v)", res.Dir, err)
	}
}

// TestRunCatchesIgnoreBrokerCount: with the coordinator ignoring the
// broker count (F1), some drain completes while a collector's dispatcher
// is registered with the node, and the run says so.
func TestRunCatchesIgnoreBrokerCount(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for seconds")
	}
	res, err := Run(context.Background(), Config{Binary: bins.bugs, Nodes: 3, Seed: 1, Duration: 5 * time.Second,
		Upgrade: true, Env: []string{"DRAINPROOF_BUG=IgnoreBrokerCount"}})
	if err != nil {
		t.Fatal(err)
	}
	caught := false
	for _, v := range res.Violations {
		caught = caught || strings.Contains(v, "while dispatcher")
	}
	if !caught {
		t.Fatalf("IgnoreBrokerCount not caught; violations %q", res.Violations)
	}
	if !slices.Contains(res.BugsReached, "IgnoreBrokerCount") {
		t.Errorf("the bug's code ran, but BugsReached = %v", res.BugsReached)
	}
	checkNothingLeft(t, res)
}

// TestRunRefusesBadConfig: a bad configuration is an error, before any
// process starts; a binary that does not start is an error too, and
// leaves nothing.
func TestRunRefusesBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"two nodes":           {Binary: bins.plain, Nodes: 2, Duration: time.Second},
		"no binary":           {Nodes: 3, Duration: time.Second},
		"no duration":         {Binary: bins.plain, Nodes: 3},
		"negative member TTL": {Binary: bins.plain, Nodes: 3, Duration: time.Second, MemberTTL: -time.Second},
		"bad fault":           {Binary: bins.plain, Nodes: 3, Duration: time.Second, Faults: []string{"meteor"}},
	} {
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// The plain binary refuses a bug: the first process exits at start.
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "drainproof-cluster-*"))
	_, err := Run(context.Background(), Config{Binary: bins.plain, Nodes: 3, Duration: time.Second, Env: []string{"DRAINPROOF_BUG=IgnoreBrokerCount"}})
	if err == nil || !strings.Contains(err.Error(), "exited at start") {
		t.Fatalf("Run with a binary that cannot start: %v", err)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "drainproof-cluster-*"))
	if len(after) > len(before) {
		t.Errorf("a failed Run left its directory: %v", after)
	}
}

// TestTracedRun: with Config.Trace, a correct run's traces of T (the
// coordinator, the LogCoordinator and T's processes, over gRPC) are
// accepted, in the heartbeat transport through T's drain and upgrade
// restart; under IgnoreBrokerCount the coordinator's CoordCompleteDrain
// is rejected at its line; in the logcoord transport too, where the
// coordinator's query and the LogCoordinator's answer are lines of a
// message of the model, the run is accepted.
func TestTracedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for seconds")
	}
	for _, tc := range []struct {
		name, bin, transport, bug, want string
	}{
		{"correct", bins.plain, "heartbeat", "", TraceOK},
		{"IgnoreBrokerCount", bins.bugs, "heartbeat", "IgnoreBrokerCount", TraceViolated},
		{"logcoord", bins.plain, "logcoord", "", TraceOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Kept when the test fails (its path in the failure), for
			// checker trace --html.
			dir, err := os.MkdirTemp("", "drainproof-traced-run-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if !t.Failed() {
					_ = os.RemoveAll(dir)
				} else {
					t.Logf("traces kept in %s", dir)
				}
			})
			cfg := Config{Binary: tc.bin, Nodes: 3, Seed: 1, Duration: 6 * time.Second, Upgrade: true,
				Transport: tc.transport, Trace: dir}
			if tc.bug != "" {
				cfg.Env = []string{"DRAINPROOF_BUG=" + tc.bug}
			}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			v := res.Trace
			if v == nil {
				t.Fatal("no trace verdict")
			}
			if v.Outcome != tc.want {
				t.Fatalf("trace %s (validator %s at %s:%d: %s; uncovered %q; error %q), want %s\nline %s\ncandidates %+v",
					v.Outcome, v.Validator.Verdict, v.Validator.ProcessFile, v.Validator.ProcessLine, v.Validator.Reason, v.Uncovered, v.Error, tc.want,
					v.Validator.Text, v.Validator.Candidates)
			}
			switch tc.want {
			case TraceOK:
				if v.Validator.Lines < 100 || len(res.Violations) > 0 {
					t.Fatalf("%d lines accepted, violations %q", v.Validator.Lines, res.Violations)
				}
				for _, f := range []string{"coord", "logcoord", "T.1", "T.2"} {
					if _, err := os.Stat(filepath.Join(dir, f+".ndjson")); err != nil {
						t.Errorf("trace of %s: %v", f, err)
					}
				}
				if tc.transport == "logcoord" {
					b, err := os.ReadFile(filepath.Join(dir, "logcoord.ndjson"))
					if err != nil || !strings.Contains(string(b), `"action":"LogCoordAnswer"`) {
						t.Errorf("no answer to a query in the LogCoordinator's trace (%v)", err)
					}
				}
			case TraceViolated:
				found := false
				for _, s := range res.Violations {
					found = found || strings.Contains(s, "trace of n2's drain is rejected at coord.ndjson:")
				}
				if !found {
					t.Fatalf("violations %q: the trace's rejection is not among them", res.Violations)
				}
			case TraceIncomplete:
				if len(v.Uncovered) == 0 {
					t.Fatal("incomplete without a reason")
				}
			}
		})
	}
}

// TestTracedRunRejoinAtTheSameEpoch: with a member TTL just above the
// heartbeat period, the coordinator removes T for silence now and then
// and T joins again with the same process: a CoordRejoin at the epoch
// already tracked, after which the coordinator waits for T's bootstrap
// again. Such a run is accepted (the coordinator traces the version it
// learns again as CoordLearnVersion; without that, the next
// CoordSendDraining was rejected, the model's coordinator not knowing the
// version). Seeds are tried until one run has such a rejoin of T; every
// run tried must be accepted.
func TestTracedRunRejoinAtTheSameEpoch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for seconds")
	}
	for seed := uint64(1); seed <= 6; seed++ {
		dir, err := os.MkdirTemp("", "drainproof-traced-rejoin-")
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), Config{Binary: bins.plain, Nodes: 3, Seed: seed, Duration: 6 * time.Second, Upgrade: true,
			Transport: "heartbeat", Trace: dir, MemberTTL: 150 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		v := res.Trace
		if v == nil || v.Outcome != TraceOK {
			t.Fatalf("seed %d: trace %+v, want ok (traces kept in %s)", seed, v, dir)
		}
		rejoins, err := sameEpochRejoins(filepath.Join(dir, "coord.ndjson"))
		if err != nil {
			t.Fatal(err)
		}
		_ = os.RemoveAll(dir)
		t.Logf("seed %d: %d lines accepted, %d rejoins of T at the same epoch", seed, v.Validator.Lines, rejoins)
		if rejoins > 0 {
			return
		}
	}
	t.Fatal("no run rejoined T at the same epoch: the case did not exercise what it is for")
}

// sameEpochRejoins counts the CoordRejoin lines of a coordinator's trace
// whose coordEpoch is the epoch the coordinator's previous line tracked.
func sameEpochRejoins(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, last := 0, int64(-1)
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ln struct {
			Action string `json:"action"`
			Vars   struct {
				CoordEpoch *int64 `json:"coordEpoch"`
			} `json:"vars"`
		}
		if err := json.Unmarshal([]byte(l), &ln); err != nil {
			return 0, fmt.Errorf("%s: %v", path, err)
		}
		if ln.Vars.CoordEpoch == nil {
			continue
		}
		if ln.Action == "CoordRejoin" && *ln.Vars.CoordEpoch == last {
			n++
		}
		last = *ln.Vars.CoordEpoch
	}
	return n, nil
}

func TestTraceNodeIndex(t *testing.T) {
	for _, tc := range []struct{ nodes, legacy, want int }{{3, -1, 1}, {3, 0, 1}, {3, 1, 2}, {3, 2, 1}, {4, 1, 2}} {
		if got := traceNodeIndex(tc.nodes, tc.legacy); got != tc.want {
			t.Errorf("traceNodeIndex(%d, %d) = %d, want %d", tc.nodes, tc.legacy, got, tc.want)
		}
	}
}

// TestTracedRunLogCoordRestart: in the heartbeat transport, a run whose
// LogCoordinator was killed and restarted (and whose coordinator was
// not) is covered: the successor's trace (logcoord.2) is collected and
// the run accepted. Seeds with kill faults are tried until one has such
// a restart; no run tried may be rejected, and one whose coordinator
// was restarted is judged as TestTracedRunCoordRestart says.
func TestTracedRunLogCoordRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for seconds")
	}
	for seed := uint64(1); seed <= 8; seed++ {
		res, v, dir := tracedKillRun(t, seed, 6*time.Second)
		killed := map[string]bool{}
		for _, f := range res.Faults {
			if f.Kind == FaultKill {
				killed[f.Target] = true
			}
		}
		_, lcErr := os.Stat(filepath.Join(dir, "logcoord.2.ndjson"))
		switch {
		case killed[CoordinatorIdentity]:
			coordRestartJudged(t, seed, v, dir)
		case v.Outcome != TraceOK:
			t.Fatalf("seed %d: trace %s (validator %s at %s:%d: %s; uncovered %q; error %q), want ok (traces kept in %s)",
				seed, v.Outcome, v.Validator.Verdict, v.Validator.ProcessFile, v.Validator.ProcessLine, v.Validator.Reason, v.Uncovered, v.Error, dir)
		case killed["logcoord"]:
			if lcErr != nil {
				t.Fatalf("seed %d: the LogCoordinator was restarted, its successor's trace: %v", seed, lcErr)
			}
			t.Logf("seed %d: the LogCoordinator restarted, %d lines accepted", seed, v.Validator.Lines)
			_ = os.RemoveAll(dir)
			return
		}
		_ = os.RemoveAll(dir)
	}
	t.Fatal("no run of seeds 1-8 restarted the LogCoordinator alone")
}

// tracedKillRun runs a traced 3-node cluster (heartbeat transport, the
// rolling upgrade, kill faults) for d with the given seed, its traces in a
// new temporary folder, and returns the result, its trace verdict and the
// folder (the caller removes it once the run is judged).
func tracedKillRun(t *testing.T, seed uint64, d time.Duration) (*Result, *TraceVerdict, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "drainproof-traced-kill-")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Config{Binary: bins.plain, Nodes: 3, Seed: seed, Duration: d, Upgrade: true,
		Transport: "heartbeat", Trace: dir, Faults: []string{FaultKill}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Trace == nil {
		t.Fatal("no trace verdict")
	}
	return res, res.Trace, dir
}

// coordRestartJudged fails t unless v, the trace verdict of a run whose
// coordinator was killed and restarted, is what the mapping allows: the
// successor traced (coord.2), and the run accepted, or incomplete for
// the reason the validator gives for a restart it does not cover (a
// decision outstanding, STOPPING sent, an older epoch) at a successor's
// first line, never rejected and never incomplete for another reason.
func coordRestartJudged(t *testing.T, seed uint64, v *TraceVerdict, dir string) (accepted bool) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "coord.2.ndjson")); err != nil {
		t.Fatalf("seed %d: the coordinator was restarted, its successor's trace: %v (traces kept in %s)", seed, err, dir)
	}
	switch {
	case v.Outcome == TraceOK:
		return true
	case v.Outcome == TraceIncomplete && len(v.Uncovered) == 0 && v.Error == "" && v.Validator.Verdict == tracecheck.Incomplete &&
		strings.HasPrefix(v.Validator.Process, "coord.") && v.Validator.ProcessLine == 2 &&
		strings.HasPrefix(v.Validator.Reason, "not covered: the "):
		t.Logf("seed %d: incomplete at %s's first line: %s", seed, v.Validator.Process, v.Validator.Reason)
		return false
	}
	t.Fatalf("seed %d, the coordinator restarted: trace %s (validator %s at %s:%d: %s; uncovered %q; error %q), want ok or incomplete at a successor's first line (traces kept in %s)",
		seed, v.Outcome, v.Validator.Verdict, v.Validator.ProcessFile, v.Validator.ProcessLine, v.Validator.Reason, v.Uncovered, v.Error, dir)
	return false
}

// TestTracedRunCoordRestart: in the heartbeat transport, a run whose
// coordinator was killed and restarted is covered: the successor's trace
// (coord.2) is collected, its first line (T's join, CoordRejoin) is the
// mapping's reset, and the run is accepted when the dead coordinator left
// no decision outstanding. Seeds with kill faults are tried until such a
// run is accepted with lines of the successor after its first; every run
// tried with a coordinator restart must be accepted or incomplete at the
// successor's first line (coordRestartJudged), and every other run
// accepted.
func TestTracedRunCoordRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for seconds")
	}
	for seed := uint64(1); seed <= 12; seed++ {
		res, v, dir := tracedKillRun(t, seed, 8*time.Second)
		killed := false
		for _, f := range res.Faults {
			killed = killed || (f.Kind == FaultKill && f.Target == CoordinatorIdentity)
		}
		if !killed {
			if v.Outcome != TraceOK {
				t.Fatalf("seed %d: trace %s (validator %s at %s:%d: %s; uncovered %q; error %q), want ok (traces kept in %s)",
					seed, v.Outcome, v.Validator.Verdict, v.Validator.ProcessFile, v.Validator.ProcessLine, v.Validator.Reason, v.Uncovered, v.Error, dir)
			}
			_ = os.RemoveAll(dir)
			continue
		}
		if coordRestartJudged(t, seed, v, dir) {
			n, err := successorLines(filepath.Join(dir, "coord.2.ndjson"))
			if err != nil {
				t.Fatal(err)
			}
			if n > 1 {
				t.Logf("seed %d: the coordinator restarted, %d lines accepted, %d of them its successor's", seed, v.Validator.Lines, n)
				_ = os.RemoveAll(dir)
				return
			}
		}
		_ = os.RemoveAll(dir)
	}
	t.Fatal("no run of seeds 1-12 restarted the coordinator and was accepted with lines of its successor")
}

// successorLines returns the number of lines of a restarted coordinator's
// trace, and checks that the first is CoordRejoin and names the
// predecessor (after).
func successorLines(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")[1:]
	if len(lines) > 0 && (!strings.Contains(lines[0], `"action":"CoordRejoin"`) || !strings.Contains(lines[0], `"after":"coord"`)) {
		return 0, fmt.Errorf("%s: the first line is not the CoordRejoin after coord: %s", path, lines[0])
	}
	return len(lines), nil
}
