package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// flagValue returns the value after flag in args ("" if absent).
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// TestTraceArgsFollowLogCoordRestarts: a LogCoordinator restarted after a
// kill is traced as the next process (logcoord.2, after logcoord), so a
// heartbeat run whose LogCoordinator was restarted stays covered; a start
// that failed before it made its trace gives its name to the next try; a
// restarted coordinator is not traced and makes the run incomplete, with
// the reason.
func TestTraceArgsFollowLogCoordRestarts(t *testing.T) {
	dir := t.TempDir()
	r := &run{cfg: Config{Nodes: 3, Tables: 6, Transport: "heartbeat"},
		coord: &proc{name: CoordinatorIdentity, role: "coordinator"}, lc: &proc{name: "logcoord", role: "logcoord"},
		tr: &traceState{dir: dir, node: 1, restart: "crash"}}
	start := func(p *proc) []string {
		t.Helper()
		args, err := r.traceArgs(p)
		if err != nil {
			t.Fatal(err)
		}
		return args
	}
	made := func(args []string) { // the process starts and makes its trace
		t.Helper()
		if err := os.WriteFile(flagValue(args, "--trace"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := start(r.lc)
	if p, a := flagValue(first, "--trace-process"), flagValue(first, "--trace-after"); p != "logcoord" || a != "" {
		t.Fatalf("the first LogCoordinator: process %q after %q, want logcoord after none", p, a)
	}
	made(first)
	made(start(r.coord))
	second := start(r.lc) // its start fails before it makes its trace
	again := start(r.lc)
	for _, args := range [][]string{second, again} {
		p, a, k := flagValue(args, "--trace-process"), flagValue(args, "--trace-after"), flagValue(args, "--trace-restart")
		if p != "logcoord.2" || a != filepath.Join(dir, "logcoord.ndjson") || k != "crash" {
			t.Fatalf("the restarted LogCoordinator: process %q after %q restart %q, want logcoord.2 after %s, crash", p, a, k,
				filepath.Join(dir, "logcoord.ndjson"))
		}
	}
	made(again)
	if u := r.uncovered(); len(u) != 0 {
		t.Fatalf("a heartbeat run with its LogCoordinator restarted: uncovered %q, want none", u)
	}
	if got, want := r.tr.procs, []string{"logcoord", "coord", "logcoord.2"}; !slices.Equal(got, want) {
		t.Fatalf("traced processes %q, want %q", got, want)
	}
	if args := start(r.coord); args != nil {
		t.Fatalf("the restarted coordinator is traced (%q); the model has no crash of it", args)
	}
	if u := r.uncovered(); len(u) != 1 || !strings.HasPrefix(u[0], "coord was restarted") {
		t.Fatalf("a run with its coordinator restarted: uncovered %q, want the coordinator's restart", u)
	}
}
