package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// flagValue returns the value after flag in args ("" if absent).
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// TestTraceArgsFollowRestarts: a LogCoordinator or a coordinator
// restarted after a kill is traced as the next process (logcoord.2 after
// logcoord, coord.2 after coord, crash), so the run stays covered (the
// validator decides whether the coordinator's restart is); a start that
// failed before it made its trace gives its name to the next try.
func TestTraceArgsFollowRestarts(t *testing.T) {
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
	coord2 := start(r.coord)
	p, a, k := flagValue(coord2, "--trace-process"), flagValue(coord2, "--trace-after"), flagValue(coord2, "--trace-restart")
	if p != "coord.2" || a != filepath.Join(dir, "coord.ndjson") || k != "crash" || flagValue(coord2, "--trace-node") != "n2" {
		t.Fatalf("the restarted coordinator: process %q after %q restart %q (args %q), want coord.2 after %s, crash, node n2", p, a, k,
			coord2, filepath.Join(dir, "coord.ndjson"))
	}
	made(coord2)
	if u := r.uncovered(); len(u) != 0 {
		t.Fatalf("a run with its coordinator restarted: uncovered %q, want none (the validator judges it)", u)
	}
	if got, want := r.tr.procs, []string{"logcoord", "coord", "logcoord.2", "coord.2"}; !slices.Equal(got, want) {
		t.Fatalf("traced processes %q, want %q", got, want)
	}
}
