package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drainproof/drainproof/harness/cluster"
)

// clusterFlags are checker cluster's flags.
type clusterFlags struct {
	nodes      int
	seed       uint64
	duration   time.Duration
	faults     []string
	upgrade    bool
	asJSON     bool
	traceDir   string
	transport  string
	binary     string
	bug        string
	drainBound time.Duration
	verbose    bool
	tls        bool
	// seeds and shard: the seeds seed..seed+seeds-1, of which this
	// invocation runs shard's (shard.go).
	seeds int
	shard shardSpec
	// html is --html's file: the runs' timelines (clusterhtml.go).
	html string
}

// config is the flags that decide a seed's run, for --shard's report.
func (f clusterFlags) config() string {
	c := fmt.Sprintf("--nodes %d --duration %v --faults %s --upgrade=%v --transport %s --drain-bound %v",
		f.nodes, f.duration, strings.Join(f.faults, ","), f.upgrade, f.transport, f.drainBound)
	if f.bug != "" {
		c += " --bug " + f.bug
	}
	if f.tls {
		c += " --tls"
	}
	return c
}

func parseClusterFlags(args []string, stderr io.Writer) (f clusterFlags, ok bool) {
	fs := flag.NewFlagSet("checker cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&f.nodes, "nodes", 3, "node processes (3..16)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the fault schedule; the same seed and commit replay the same schedule")
	fs.DurationVar(&f.duration, "duration", 20*time.Second, "how long producers commit and faults are injected")
	faults := fs.String("faults", "", "faults to inject, comma-separated: "+strings.Join(cluster.FaultNames(), ","))
	fs.BoolVar(&f.upgrade, "upgrade", false, "a rolling upgrade: one legacy node, every node drained, stopped and restarted as the new version")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	fs.StringVar(&f.traceDir, "trace", "", "copy every process's log (JSON lines) to DIR, and collect and validate the per-process traces of the coordinator, the LogCoordinator and one node (DIR is then a run directory of checker trace)")
	fs.StringVar(&f.transport, "transport", "logcoord", "how the broker count travels: logcoord or heartbeat")
	fs.StringVar(&f.binary, "binary", "", "the drainproofd binary (built once into a temporary directory if empty)")
	fs.StringVar(&f.bug, "bug", "", "build drainproofd with -tags bugs and switch on this bug of the zoo in every process")
	fs.DurationVar(&f.drainBound, "drain-bound", 15*time.Second, "how long a drain may take once the faults stopped")
	fs.BoolVar(&f.verbose, "v", false, "print the run's progress on stderr")
	fs.BoolVar(&f.tls, "tls", false, "mutual TLS between every process, with certificates made for the run, and the operator identity's access rules probed")
	fs.IntVar(&f.seeds, "seeds", 1, "run the seeds seed..seed+seeds-1 one after the other (1..100,000)")
	fs.StringVar(&f.html, "html", "", "write the runs' timelines, one lane per process, to FILE (one self-contained HTML page)")
	shard := fs.String("shard", "", "run only the seeds s of the range with (s-seed) mod n = i, for i/n (0 <= i < n); checker report merge combines the shards' --json reports")
	if err := fs.Parse(args); err != nil {
		return f, false
	}
	bad := func(format string, a ...any) (clusterFlags, bool) {
		fmt.Fprintf(stderr, "checker cluster: "+format+"\n", a...)
		return f, false
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	if f.nodes < 3 || f.nodes > 16 {
		return bad("--nodes %d: want 3..16", f.nodes)
	}
	if f.duration <= 0 || f.duration > 24*time.Hour {
		return bad("--duration %v: want more than 0 and at most 24h", f.duration)
	}
	if f.drainBound <= 0 {
		return bad("--drain-bound %v: want more than 0", f.drainBound)
	}
	if err := intRange("seeds", int64(f.seeds), 1, 100_000); err != nil {
		return bad("%v", err)
	}
	if f.seed > math.MaxUint64-uint64(f.seeds-1) {
		return bad("--seeds %d from --seed %d passes the largest seed", f.seeds, f.seed)
	}
	var err error
	if f.shard, err = parseShard(*shard); err != nil {
		return bad("%v", err)
	}
	if err := writable("html", f.html); err != nil {
		return bad("%v", err)
	}
	if f.transport != "logcoord" && f.transport != "heartbeat" {
		return bad("--transport %q: want logcoord or heartbeat", f.transport)
	}
	if *faults != "" {
		for _, k := range strings.Split(*faults, ",") {
			if !slices.Contains(cluster.FaultNames(), k) {
				return bad("--faults %q: want some of %s", k, strings.Join(cluster.FaultNames(), ","))
			}
			f.faults = append(f.faults, k)
		}
	}
	return f, true
}

// buildDaemon builds drainproofd (with -tags bugs if bug) into dir.
func buildDaemon(ctx context.Context, dir string, bug bool) (string, error) {
	bin := filepath.Join(dir, "drainproofd")
	args := []string{"build", "-o", bin}
	if bug {
		args = append(args, "-tags", "bugs")
	}
	args = append(args, "github.com/drainproof/drainproof/cmd/drainproofd")
	cmd := exec.CommandContext(ctx, "go", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building drainproofd: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return bin, nil
}

func runCluster(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, ok := parseClusterFlags(args, stderr)
	if !ok {
		return exitUsage
	}
	seeds := f.shard.seeds(f.seed, f.seeds)
	bin := f.binary
	if bin == "" && len(seeds) > 0 {
		dir, err := os.MkdirTemp("", "drainproof-bin-")
		if err != nil {
			fmt.Fprintf(stderr, "checker cluster: %v\n", err)
			return exitUsage
		}
		defer os.RemoveAll(dir)
		if bin, err = buildDaemon(ctx, dir, f.bug != ""); err != nil {
			fmt.Fprintf(stderr, "checker cluster: %v\n", err)
			return exitUsage
		}
	} else if bin != "" {
		if _, err := os.Stat(bin); err != nil {
			fmt.Fprintf(stderr, "checker cluster: --binary: %v\n", err)
			return exitUsage
		}
	}
	sh := newSeedsReport(f.shard, f.seed, f.seeds, f.config())
	var results []*cluster.Result
	for _, seed := range seeds {
		cfg := cluster.Config{Binary: bin, Nodes: f.nodes, Seed: seed, Duration: f.duration, Faults: f.faults,
			Upgrade: f.upgrade, Transport: f.transport, DrainBound: f.drainBound, Keep: f.traceDir, TLS: f.tls}
		if f.traceDir != "" && len(seeds) > 1 {
			cfg.Keep = filepath.Join(f.traceDir, fmt.Sprintf("seed-%d", seed))
		}
		cfg.Trace = cfg.Keep
		if f.bug != "" {
			cfg.Env = []string{"DRAINPROOF_BUG=" + f.bug}
		}
		if f.verbose {
			cfg.Log = stderr
		}
		res, err := cluster.Run(ctx, cfg)
		if ctx.Err() != nil {
			sh.Interrupted = true
			break
		}
		if err != nil {
			fmt.Fprintf(stderr, "checker cluster: seed %d: %v\n", seed, err)
			return exitUsage
		}
		results = append(results, res)
		sh.Ran = append(sh.Ran, seed)
		if len(res.Violations) > 0 {
			sh.fail("cluster", seed, res.Violations[0])
		}
		if !f.asJSON {
			printCluster(stdout, res, f)
		}
	}
	if f.html != "" {
		if err := writeClusterPage(f.html, results, sh, f); err != nil {
			fmt.Fprintf(stderr, "checker cluster: --html: %v\n", err)
			return exitUsage
		}
	}
	if f.asJSON {
		if err := writeReport(stdout, clusterReport(results, sh)); err != nil {
			fmt.Fprintf(stderr, "checker cluster: %v\n", err)
			return exitUsage
		}
	} else if f.seeds > 1 || sh.Interrupted {
		fmt.Fprintf(stdout, "cluster: shard %s of seeds %d..%d: %d seeds run, %d failed%s\n", sh.Shard, f.seed, f.seed+uint64(f.seeds)-1,
			len(sh.Ran), len(sh.Failed), map[bool]string{true: ", interrupted", false: ""}[sh.Interrupted])
		for _, fl := range sh.Failed {
			fmt.Fprintf(stdout, "  FAILED seed %d: %s\n    replay: %s\n", fl.Seed, fl.Violated, fl.Replay)
		}
	}
	switch {
	case len(sh.Failed) > 0:
		return exitViolation
	case sh.Interrupted:
		return exitIncomplete
	}
	return exitOK
}

func printCluster(w io.Writer, r *cluster.Result, f clusterFlags) {
	verdict := "PASS"
	if len(r.Violations) > 0 {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "cluster %s: seed %d, %d nodes, %d tables, transport %s, faults %q, upgrade %v, wall %v\n",
		verdict, r.Seed, r.Nodes, r.Tables, f.transport, strings.Join(f.faults, ","), f.upgrade, r.Wall.Round(time.Millisecond))
	fmt.Fprintf(w, "  events      committed %d, read %d, lost %d, duplicated %d, out of order %d\n",
		r.EventsCommitted, r.EventsRead, r.Lost, r.Duplicated, r.OutOfOrder)
	fmt.Fprintf(w, "  dispatchers %d registrations over gRPC\n", r.Registrations)
	fmt.Fprintf(w, "  registry    %d operations recorded at the gRPC boundary, porcupine: %s\n", r.LinOps, r.LinOutcome)
	took, legacy := drainTimes(r)
	p50, p99, mx := percentiles(took)
	fmt.Fprintf(w, "  drains      %d complete, %d legacy; latency ms p50 %d, p99 %d, max %d\n", len(took), legacy, p50, p99, mx)
	if f.upgrade {
		fmt.Fprintf(w, "  upgrade     rolling upgrade of %d nodes in %v\n", r.Nodes, r.UpgradeWall.Round(time.Millisecond))
	}
	kinds := map[string]int{}
	for _, ft := range r.Faults {
		kinds[ft.Kind]++
	}
	fmt.Fprintf(w, "  faults      %d injected %v, %d restarts\n", len(r.Faults), kinds, r.Restarts)
	if r.TLSProbe != "" {
		fmt.Fprintf(w, "  tls         mutual TLS; %s\n", r.TLSProbe)
	}
	if t := r.Trace; t != nil {
		v := t.Validator
		where := ""
		if v.ProcessFile != "" {
			where = fmt.Sprintf(" at %s:%d", filepath.Base(v.ProcessFile), v.ProcessLine)
		}
		fmt.Fprintf(w, "  trace       %s (node %s, %d lines; validator: %s%s%s) in %s\n", t.Outcome, t.Node, v.Lines, v.Verdict, where,
			map[bool]string{true: ": " + v.Reason, false: ""}[v.Reason != ""], t.Dir)
		if t.Error != "" {
			fmt.Fprintf(w, "  trace       not read: %s\n", t.Error)
		}
		for _, u := range t.Uncovered {
			fmt.Fprintf(w, "  trace       not covered: %s\n", u)
		}
	}
	for _, v := range r.Violations {
		fmt.Fprintf(w, "  VIOLATION   %s\n", v)
	}
}

// drainTimes returns how long each of the run's complete drains took, in
// ms, and how many drains ended with the legacy answer.
func drainTimes(r *cluster.Result) (took []int64, legacy int) {
	for _, d := range r.Drains {
		if d.Complete {
			took = append(took, d.TookMS)
		} else if d.Legacy {
			legacy++
		}
	}
	return took, legacy
}

// percentiles returns the p50, p99 and max of xs (nearest rank).
func percentiles(xs []int64) (p50, p99, mx int64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(p float64) int64 {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return at(0.5), at(0.99), s[len(s)-1]
}

// clusterReport is a cluster invocation's one JSON object: the shared
// report with every seed's result under cluster_runs (and under cluster
// too when it ran one seed) and the seeds under shard; violated when a
// seed violated a check, the first one named; incomplete when Ctrl-C
// stopped it.
func clusterReport(results []*cluster.Result, sh *seedsReport) report {
	r := report{Command: "cluster", Outcome: outcomeOK, ClusterRuns: results, Shard: sh}
	if len(results) == 1 {
		r.Cluster = results[0]
	}
	for _, res := range results {
		r.Seconds += res.Wall.Seconds()
	}
	switch {
	case len(sh.Failed) > 0:
		r.Outcome, r.Violated, r.Kind = outcomeViolated, sh.Failed[0].Violated, "cluster"
	case sh.Interrupted:
		r.Outcome, r.Reason = outcomeIncomplete, fmt.Sprintf("interrupted: %d seeds run", len(sh.Ran))
	}
	return r
}

// writeClusterPage writes --html's page of the runs to path.
func writeClusterPage(path string, results []*cluster.Result, sh *seedsReport, f clusterFlags) error {
	title := fmt.Sprintf("%d of %d seeds failed; checker cluster --seed %d --seeds %d %s", len(sh.Failed), len(sh.Ran), f.seed, f.seeds, sh.Config)
	if sh.Count > 1 {
		title += " --shard " + sh.Shard
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeClusterHTML(out, results, title); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
