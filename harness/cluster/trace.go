package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/drainproof/drainproof/harness/tracecheck"
)

// This file is the run's trace (Config.Trace; docs/trace.md, "The real
// cluster"): the coordinator, the LogCoordinator and every process of one
// node T write their schema-2 traces (drainproofd --trace), the stamps of
// their messages carried over gRPC; after the run they are collected
// into one run directory, merged and validated (tracecheck.CheckRun).
//
// The model has one node T, one drain session and a bounded network; the
// cluster has several nodes drained in turn, a legacy peer in an upgrade,
// more epochs and an unbounded network. What is traced is restricted to T
// (the coordinator's and the LogCoordinator's lines are about T alone:
// their TraceNode), and where the run still does what the model does not
// cover, the verdict is not taken as an acceptance or a violation: it is
// reported as incomplete with the reason (TraceVerdict.Uncovered; or the
// validator's own incomplete verdict, whose reason says what: a
// coordinator restarted while its decision was outstanding).

// TraceVerdict is the outcome of a run's trace validation.
type TraceVerdict struct {
	// Dir is the run directory of the per-process traces (checker trace
	// DIR validates it again).
	Dir string `json:"dir"`
	// Node is the traced node T.
	Node string `json:"node"`
	// Outcome is ok, violated or incomplete (the report's words).
	Outcome string `json:"outcome"`
	// Validator is the validator's own result (tracecheck.CheckRun):
	// its verdict, the line not explained and why.
	Validator tracecheck.Result `json:"validator"`
	// Uncovered lists what the run did that the model (or the refinement
	// mapping) does not cover; any makes the outcome incomplete.
	Uncovered []string `json:"uncovered,omitempty"`
	// Error is set when the traces could not be read (a malformed line).
	Error string `json:"error,omitempty"`
}

// Outcomes of TraceVerdict.
const (
	TraceOK         = "ok"
	TraceViolated   = "violated"
	TraceIncomplete = "incomplete"
)

// traceState is the traced processes' bookkeeping.
type traceState struct {
	mu    sync.Mutex
	dir   string // where the processes write their traces
	node  int    // T's index
	procs []string
	// restart is why T's next process starts: crash or upgrade
	// (drainproofd --trace-restart).
	restart string
	// legacyDrain: T was sent SIGTERM while a legacy process was alive.
	legacyDrain bool
}

// setRestart records why T's next process starts (crash or upgrade).
func (r *run) setRestart(p *proc, kind string) {
	if r.tr == nil || p.name != r.traceNodeName() {
		return
	}
	r.tr.mu.Lock()
	r.tr.restart = kind
	r.tr.mu.Unlock()
}

// sigterm records that T's drain begins, and whether a legacy process is
// alive then.
func (r *run) sigterm(p *proc) {
	if r.tr == nil || p.name != r.traceNodeName() {
		return
	}
	r.mu.Lock()
	legacy := r.legacyGone.IsZero()
	r.mu.Unlock()
	if legacy {
		r.tr.mu.Lock()
		r.tr.legacyDrain = true
		r.tr.mu.Unlock()
	}
}

// traceNodeIndex picks T: a node of the new version (the model has no
// legacy T) that is not the registry phase's node 0 (its lincheck
// history registers more dispatchers than the model holds).
func traceNodeIndex(nodes, legacy int) int {
	for i := 1; i < nodes; i++ {
		if i != legacy {
			return i
		}
	}
	return -1
}

// traceNodeName is T's name (boot names node i n<i+1>).
func (r *run) traceNodeName() string { return fmt.Sprintf("n%d", r.tr.node+1) }

// traceModel returns the trace header's model for T (docs/trace.md): the
// dispatchers of the tables homed on T and T's maintainer dispatcher (a
// table trigger), the one broker (cluster c1), the new version only.
func (r *run) traceModel() (string, error) {
	t := r.tr.node
	name := r.traceNodeName()
	var ds []string
	for k := range r.cfg.Tables {
		if k%r.cfg.Nodes == t { // workload: table k+1's home is k % nodes
			ds = append(ds, fmt.Sprintf("disp-t%d", k+1))
		}
	}
	trig := "maintainer-" + name
	ds = append(ds, trig)
	if len(ds) > 8 {
		return "", fmt.Errorf("cluster: --trace: node %s has %d dispatchers, more than the model's 8 (fewer --tables)", name, len(ds))
	}
	b, err := json.Marshal(map[string]any{"Dispatchers": ds, "TableTriggers": []string{trig}, "Brokers": []string{"c1"},
		"Versions": []string{"new"}, "MaxEpoch": 15, "MaxReg": 15, "MaxMsgs": 8, "Transport": r.cfg.Transport, "Bugs": []string{}})
	return string(b), err
}

// traceArgs returns p's --trace flags for its next process (none if p is
// not traced).
func (r *run) traceArgs(p *proc) ([]string, error) {
	if r.tr == nil {
		return nil, nil
	}
	r.tr.mu.Lock()
	defer r.tr.mu.Unlock()
	model, err := r.traceModel()
	if err != nil {
		return nil, err
	}
	tname := r.traceNodeName()
	file := func(proc string) string { return filepath.Join(r.tr.dir, proc+".ndjson") }
	switch {
	case p == r.coord || p == r.lc:
		// A restarted coordinator or LogCoordinator is traced as the next
		// process, coord.2 or logcoord.2, …: the coordinator's first line
		// is T's join, CoordRejoin (covered only when the dead one left no
		// decision outstanding: the validator says), the LogCoordinator's
		// its empty cache, the model's LogCoordExpire or no step
		// (docs/trace.md).
		role := "logcoord"
		if p == r.coord {
			role = "coord"
		}
		proc, prev := r.tr.nextProc(role, file)
		args := []string{"--trace", file(proc), "--trace-process", proc, "--trace-node", tname, "--trace-model", model,
			"--trace-mapping", "sessions"}
		if prev != "" {
			args = append(args, "--trace-after", file(prev), "--trace-restart", "crash")
		}
		return args, nil
	case p.role == "node" && p.name == tname:
		proc, prev := r.tr.nextProc("T", file)
		args := []string{"--trace", file(proc), "--trace-process", proc, "--trace-model", model, "--trace-mapping", "sessions"}
		if prev != "" {
			args = append(args, "--trace-after", file(prev), "--trace-restart", r.tr.restart)
		}
		return args, nil
	}
	return nil, nil
}

// procName is the name of the n-th process (from 1) of a traced role:
// T.1, T.2, … for T; coord, coord.2, … for the coordinator; logcoord,
// logcoord.2, … for the LogCoordinator.
func procName(role string, n int) string {
	if (role == "logcoord" || role == "coord") && n == 1 {
		return role
	}
	return fmt.Sprintf("%s.%d", role, n)
}

// nextProc names the next process of a traced role (T, coord or logcoord) and
// records it; prev is its predecessor ("" for the first). A start that
// failed before it made its trace (its port taken: restart tries again)
// gives its name to the next try. t.mu is held.
func (t *traceState) nextProc(role string, file func(string) string) (proc, prev string) {
	n := 0
	for _, q := range t.procs {
		if q == role || strings.HasPrefix(q, role+".") {
			n++
		}
	}
	if _, err := os.Stat(file(procName(role, n))); n > 0 && os.IsNotExist(err) {
		n--
		failed := procName(role, n+1)
		t.procs = slices.DeleteFunc(t.procs, func(q string) bool { return q == failed })
	}
	proc = procName(role, n+1)
	if n > 0 {
		prev = procName(role, n)
	}
	t.procs = append(t.procs, proc)
	return proc, prev
}

// checkTrace collects the run's traces into cfg.Trace, validates them and
// decides the verdict; a rejection of a run the model covers is a
// violation.
func (r *run) checkTrace(res *Result) {
	if r.tr == nil {
		return
	}
	v := &TraceVerdict{Dir: r.cfg.Trace, Node: r.traceNodeName(), Uncovered: r.uncovered()}
	res.Trace = v
	r.tr.mu.Lock()
	procs := slices.Clone(r.tr.procs)
	r.tr.mu.Unlock()
	var paths []string
	if err := os.MkdirAll(r.cfg.Trace, 0o755); err != nil {
		v.Outcome, v.Error = TraceIncomplete, err.Error()
		return
	}
	for _, proc := range procs {
		b, err := os.ReadFile(filepath.Join(r.tr.dir, proc+".ndjson"))
		if err == nil {
			dst := filepath.Join(r.cfg.Trace, proc+".ndjson")
			if err = os.WriteFile(dst, b, 0o644); err == nil {
				paths = append(paths, dst)
			}
		}
		if err != nil {
			v.Outcome, v.Error = TraceIncomplete, err.Error()
			return
		}
	}
	vr, err := tracecheck.CheckRun(paths, r.cfg.Trace, nil, tracecheck.Options{})
	v.Validator = vr
	switch {
	case err != nil:
		// A malformed line is a writer's bug: not an acceptance, and said.
		v.Outcome, v.Error = TraceIncomplete, oneLine(err.Error())
	case len(v.Uncovered) > 0:
		v.Outcome = TraceIncomplete
	case vr.Verdict == tracecheck.OK:
		v.Outcome = TraceOK
	case vr.Verdict == tracecheck.Rejected:
		v.Outcome = TraceViolated
		res.Violations = append(res.Violations, fmt.Sprintf("the trace of %s's drain is rejected at %s:%d (%s)",
			v.Node, filepath.Base(vr.ProcessFile), vr.ProcessLine, vr.Reason))
	default:
		v.Outcome = TraceIncomplete
	}
}

func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ") }

// uncovered lists what the run did that the traced model does not cover.
func (r *run) uncovered() []string {
	r.tr.mu.Lock()
	defer r.tr.mu.Unlock()
	var out []string
	n := 0
	for _, q := range r.tr.procs {
		if strings.HasPrefix(q, "T.") {
			n++
		}
	}
	if n > 15 {
		out = append(out, fmt.Sprintf("%s ran %d processes, past the model's MaxEpoch 15", r.traceNodeName(), n))
	}
	if r.tr.legacyDrain {
		out = append(out, "a drain of "+r.traceNodeName()+" began while a legacy peer was alive: the coordinator's legacy answer for another node's sake has no counterpart in the model (one node)")
	}
	return out
}
