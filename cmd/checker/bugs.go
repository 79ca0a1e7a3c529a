package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/drainproof/drainproof/harness/cluster"
	"github.com/drainproof/drainproof/harness/drainmodel"
	"github.com/drainproof/drainproof/harness/lincheck"
	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/modelcheck"
)

// The techniques of the bug matrix, in its column order.
var bugTechniques = []string{"model checker", "rapid conformance", "lincheck", "simulator", "trace validation",
	"distributed trace validation"}

// clusterTechnique is the column of checker bugs --cluster: short runs
// of a real cluster (checker cluster) with the bug on in every process.
const clusterTechnique = "real cluster"

// bugCell is one technique's result on one bug.
type bugCell struct {
	Caught  bool    `json:"caught"`
	Seconds float64 `json:"seconds"`
	How     string  `json:"how,omitempty"`
	// NotReached is the real cluster's: no process ran the bug's code
	// (its fault point was never consulted), so the run could not catch
	// it; not a miss.
	NotReached bool `json:"not_reached,omitempty"`
}

// bugRow is one bug of the matrix.
type bugRow struct {
	Bug    string             `json:"bug"`
	Cells  map[string]bugCell `json:"techniques"`
	Caught int                `json:"caught_by"`
}

// runBugs is `checker bugs` (a binary built with -tags bugs): for every
// model bug of the zoo (bugs.ModelNames: each has a TLA+ switch and its
// own model; the implementation-only bugs, which have neither, are left
// to `make bugs`), which techniques catch it and how long each took. Exit
// 0 when every bug is caught by at least two techniques, 1 otherwise, 2
// on usage errors. The trace-validation column validates model-scope
// simulation traces, then the traces of three recordings in lincheck's
// trace mode, then the event service's traced stress test. With --list it prints every bug's name, one a line
// (any build; the driver of make bugs reads it).
func runBugs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checker bugs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seeds := fs.Int("seeds", 500, "simulator seeds per transport (simulator and trace validation)")
	only := fs.String("only", "", "only this bug")
	asJSON := fs.Bool("json", false, "print one JSON object")
	list := fs.Bool("list", false, "print the name of every bug of the zoo (model bugs, then implementation-only ones), one a line, and exit")
	var cf bugClusterFlags
	fs.BoolVar(&cf.on, "cluster", false, "add the real cluster's column: per bug, checker cluster runs (3 nodes, --upgrade, --faults kill,pause,disk,stale) with the bug on until one catches it (minutes per bug)")
	fs.IntVar(&cf.seeds, "cluster-seeds", 2, "with --cluster: seeds per bug (1..100)")
	fs.DurationVar(&cf.duration, "cluster-duration", 20*time.Second, "with --cluster: each run's --duration")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *list && flagErr(stderr, "checker bugs", notWith(setFlags(fs), "--list", "--list only names the bugs; it runs nothing", "only", "seeds")) {
		return exitUsage
	}
	if *list {
		if *asJSON {
			if err := writeReport(stdout, report{Command: "bugs", Outcome: outcomeOK, BugNames: bugs.Names()}); err != nil {
				fmt.Fprintf(stderr, "checker bugs: %v\n", err)
				return exitUsage
			}
			return exitOK
		}
		for _, n := range bugs.Names() {
			fmt.Fprintln(stdout, n)
		}
		return exitOK
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "checker bugs: "+format+"\n", a...)
		return exitUsage
	}
	if flagErr(stderr, "checker bugs", intRange("seeds", int64(*seeds), 1, maxSeeds), intRange("cluster-seeds", int64(cf.seeds), 1, 100),
		positive("cluster-duration", cf.duration),
		notWith(setFlags(fs), "--cluster off", "they set up the real cluster's runs", ifNot(cf.on, "cluster-seeds", "cluster-duration")...)) {
		return exitUsage
	}
	if err := bugs.Enable(bugs.Names()[0]); err != nil {
		return fail("%v (go run -tags bugs ./cmd/checker bugs)", err)
	}
	bugs.Reset()
	if *only != "" && !slices.Contains(bugs.ModelNames(), *only) {
		return fail("--only %s: not a model bug of the zoo %v (implementation-only bugs have no model: make bugs)", *only, bugs.ModelNames())
	}
	tmp, err := os.MkdirTemp("", "checker-bugs")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(tmp)
	tests, err := buildBugTests(ctx, tmp)
	if err != nil {
		return fail("%v", err)
	}
	if cf.on {
		if cf.binary, err = buildDaemon(ctx, tmp, true); err != nil {
			return fail("%v", err)
		}
	}
	start := time.Now()
	var rows []bugRow
	for _, name := range bugs.ModelNames() {
		if *only != "" && name != *only {
			continue
		}
		row, err := bugMatrixRow(ctx, name, *seeds, tests)
		if err != nil {
			return fail("%s: %v", name, err)
		}
		if cf.on {
			if err := bugClusterCell(ctx, &row, cf); err != nil {
				return fail("%s: real cluster: %v", name, err)
			}
		}
		rows = append(rows, row)
	}
	code := exitOK
	for _, r := range rows {
		if r.Caught < 2 {
			code = exitViolation
		}
	}
	if *asJSON {
		if err := writeReport(stdout, bugsReport(rows, time.Since(start))); err != nil {
			fmt.Fprintf(stderr, "checker bugs: %v\n", err)
			return exitUsage
		}
		return code
	}
	techniques := bugTechniques
	if cf.on {
		techniques = append(slices.Clone(techniques), clusterTechnique)
	}
	printBugMatrix(stdout, rows, techniques)
	return code
}

// bugsReport is the JSON report of the bug matrix: one object, the rows
// under bugs; outcome unexpected when a bug is caught by fewer than two
// techniques.
func bugsReport(rows []bugRow, took time.Duration) report {
	r := report{Command: "bugs", Outcome: outcomeOK, Seconds: took.Seconds(), Bugs: rows}
	for _, row := range rows {
		if row.Caught < 2 {
			r.Outcome = outcomeUnexpected
		}
	}
	return r
}

// bugTestPackages are the folders of the packages whose tests the bug
// matrix runs, by name.
var bugTestPackages = map[string]string{"eventservice": "impl/eventservice", "sim": "harness/sim"}

// buildBugTests builds, once, the test binaries of the rapid conformance
// tests and of the traced stress test (-tags bugs) into dir.
func buildBugTests(ctx context.Context, dir string) (map[string]string, error) {
	tests := map[string]string{}
	for pkg, path := range bugTestPackages {
		bin := filepath.Join(dir, pkg+".test")
		cmd := exec.CommandContext(ctx, "go", "test", "-tags", "bugs", "-c", "-o", bin, "./"+path)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building the %s tests (run from the repository root): %v\n%s", pkg, err, out)
		}
		tests[pkg] = bin
	}
	return tests, nil
}

// bugMatrixRow runs every technique on bug name. The in-process ones run
// with the bug switched on (and the bugs it requires, bugs.Requires);
// the test binaries switch it on from the environment.
func bugMatrixRow(ctx context.Context, name string, seeds int, tests map[string]string) (bugRow, error) {
	row := bugRow{Bug: name, Cells: map[string]bugCell{}}
	timed := func(technique string, f func() (bool, string, error)) error {
		start := time.Now()
		caught, how, err := f()
		row.Cells[technique] = bugCell{Caught: caught, Seconds: time.Since(start).Seconds(), How: how}
		if caught {
			row.Caught++
		}
		return err
	}
	errs := []error{
		timed("model checker", func() (bool, string, error) { return bugModel(ctx, name) }),
		timed("rapid conformance", func() (bool, string, error) {
			return bugTests(ctx, name, tests, "^TestConformance$")
		}),
	}
	if err := bugs.Enable(name); err != nil {
		return row, err
	}
	defer bugs.Reset()
	errs = append(errs,
		timed("lincheck", func() (bool, string, error) { return bugLincheck(ctx) }),
		timed("simulator", func() (bool, string, error) { return bugSimulate(ctx, seeds) }),
		timed("trace validation", func() (bool, string, error) {
			caught, how, err := bugTraces(ctx, seeds)
			if caught || err != nil {
				return caught, how, err
			}
			if caught, how, err = bugLincheckTraces(ctx); caught || err != nil {
				return caught, how, err
			}
			return bugTests(ctx, name, map[string]string{"eventservice": tests["eventservice"]}, "^TestStressTrace$")
		}),
		timed("distributed trace validation", func() (bool, string, error) { return bugRunTraces(ctx, seeds) }),
	)
	return row, errors.Join(errs...)
}

// printBugMatrix prints the rows as a table.
func printBugMatrix(stdout io.Writer, rows []bugRow, techniques []string) {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "bug\t%s\tcaught by\n", strings.Join(techniques, "\t"))
	for _, r := range rows {
		cells := []string{r.Bug}
		for _, t := range techniques {
			c := r.Cells[t]
			if c.NotReached {
				cells = append(cells, fmt.Sprintf("not reached (%.0fs)", c.Seconds))
			} else if c.Caught {
				cells = append(cells, fmt.Sprintf("yes %.2fs", c.Seconds))
			} else {
				cells = append(cells, fmt.Sprintf("no (%.2fs)", c.Seconds))
			}
		}
		cells = append(cells, fmt.Sprint(r.Caught))
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
}

// bugModel checks the bug's model, tla/MCDrainRegistrationBug<name>.cfg.
func bugModel(ctx context.Context, name string) (bool, string, error) {
	cfg := filepath.Join("tla", "MCDrainRegistrationBug"+name+".cfg")
	m, opts, err := drainmodel.Load(cfg, true)
	if err != nil {
		return false, "", err
	}
	res, err := modelcheck.Check(ctx, m, opts)
	if err != nil {
		return false, "", err
	}
	return res.Outcome != modelcheck.OK, fmt.Sprintf("%s violated (%d states)", res.Violated, len(res.Trace)), nil
}

// bugTests runs the test binaries with the bug on: caught when a test
// fails.
func bugTests(ctx context.Context, name string, bins map[string]string, run string) (bool, string, error) {
	var failed []string
	for pkg, bin := range bins {
		cmd := exec.CommandContext(ctx, bin, "-test.run", run, "-test.count=1")
		cmd.Dir = bugTestPackages[pkg] // a test reads its testdata from its folder
		cmd.Env = append(os.Environ(), bugs.EnvVar+"="+name)
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				return false, "", err
			}
			failed = append(failed, pkg)
		}
	}
	return len(failed) > 0, strings.Join(failed, ","), nil
}

// bugLincheck records and checks three histories.
func bugLincheck(ctx context.Context) (bool, string, error) {
	for seed := int64(1); seed <= 3; seed++ {
		h, err := lincheck.Record(ctx, lincheck.Config{Clients: 8, Ops: 2000, Seed: seed})
		if err != nil {
			return false, "", err
		}
		if res := lincheck.Check(h, time.Minute); res.Outcome == lincheck.NotLinearizable {
			return true, fmt.Sprintf("seed %d", seed), nil
		}
	}
	return false, "", nil
}

// bugSimulate runs full simulations of both transports, each followed by
// fault-free events (as make check's): caught when a stream broke or when
// a drain still open at the end did not complete once the faults stopped.
func bugSimulate(ctx context.Context, seeds int) (bool, string, error) {
	for _, tr := range []node.Transport{node.TransportHeartbeat, node.TransportLogCoord} {
		for s := 1; s <= seeds; s++ {
			r, err := sim.Run(ctx, sim.Config{Seed: uint64(s), Steps: 2000, Settle: 3000, Transport: tr})
			if err != nil {
				return false, "", err
			}
			if r.BrokenStreams > 0 {
				return true, fmt.Sprintf("%s seed %d: %d broken streams", tr, s, r.BrokenStreams), nil
			}
			if r.StalledDrains > 0 {
				return true, fmt.Sprintf("%s seed %d: a drain stalled without faults", tr, s), nil
			}
		}
	}
	return false, "", nil
}

// bugTraces validates the traces of model-scope simulations of both
// transports: caught when one is rejected.
func bugTraces(ctx context.Context, seeds int) (bool, string, error) {
	for _, tr := range []node.Transport{node.TransportHeartbeat, node.TransportLogCoord} {
		for s := 1; s <= seeds; s++ {
			var buf bytes.Buffer
			cfg := sim.Config{Seed: uint64(s), Steps: 2000, Transport: tr, ModelScope: true}
			if _, err := traceSim(ctx, cfg, &buf); err != nil {
				return false, "", err
			}
			if caught, how, err := rejected(buf.Bytes(), fmt.Sprintf("%s seed %d", tr, s)); caught || err != nil {
				return caught, how, err
			}
		}
	}
	return false, "", nil
}

// bugRunTraces validates the per-process traces of full simulations of
// both transports, merged, through the refinement mapping their headers
// name (docs/trace.md, multi-process runs and "Every run"): caught when a
// run is rejected.
func bugRunTraces(ctx context.Context, seeds int) (bool, string, error) {
	tmp, err := os.MkdirTemp("", "checker-bugs-runs")
	if err != nil {
		return false, "", err
	}
	defer os.RemoveAll(tmp)
	for _, tr := range []node.Transport{node.TransportHeartbeat, node.TransportLogCoord} {
		for s := 1; s <= seeds; s++ {
			cfg := sim.Config{Seed: uint64(s), Steps: 2000, Transport: tr}
			dir := runDir(tmp, cfg)
			if _, err := traceSimProcs(ctx, cfg, dir); err != nil {
				return false, "", err
			}
			files, _, err := tracecheck.RunFiles(dir)
			if err != nil {
				return false, "", err
			}
			res, err := tracecheck.CheckRun(files, dir, nil, tracecheck.Options{})
			if err != nil {
				return false, "", err
			}
			if res.Verdict == tracecheck.Rejected {
				return true, fmt.Sprintf("%s seed %d: %s line %d (%s)", tr, s, res.Process, res.ProcessLine, actionOf(res.Text)), nil
			}
			if err := os.RemoveAll(dir); err != nil {
				return false, "", err
			}
		}
	}
	return false, "", nil
}

// bugLincheckTraces validates the traces of three recordings in
// lincheck's trace mode (concurrent registrations, removals, resets and
// cleanups beside one reporter and a close): caught when one is rejected.
func bugLincheckTraces(ctx context.Context) (bool, string, error) {
	for seed := int64(1); seed <= 3; seed++ {
		cfg := lincheck.Config{Clients: 8, Ops: 2000, Seed: seed}
		var buf bytes.Buffer
		tw, err := trace.NewWriter(&buf, lincheck.TraceHeader(cfg))
		if err != nil {
			return false, "", err
		}
		cfg.Tracer = tw
		_, err = lincheck.Record(ctx, cfg)
		if err = errors.Join(err, tw.Close()); err != nil {
			return false, "", err
		}
		if caught, how, err := rejected(buf.Bytes(), fmt.Sprintf("lincheck seed %d", seed)); caught || err != nil {
			return caught, how, err
		}
	}
	return false, "", nil
}

// rejected validates one trace (from names it): caught when it is
// rejected, with the line and action where the code left the model.
func rejected(data []byte, from string) (bool, string, error) {
	res, err := tracecheck.CheckBytes(data, from, nil, tracecheck.Options{})
	if err != nil || res.Verdict != tracecheck.Rejected {
		return false, "", err
	}
	return true, fmt.Sprintf("%s line %d (%s)", from, res.Line, actionOf(res.Text)), nil
}

func actionOf(line string) string {
	var l struct{ Action string }
	_ = json.Unmarshal([]byte(line), &l)
	return l.Action
}

// bugClusterFlags are checker bugs --cluster's.
type bugClusterFlags struct {
	on       bool
	seeds    int
	duration time.Duration
	binary   string // drainproofd built with -tags bugs
}

// ifNot returns names if !cond, else nil: the flags that only apply
// when cond holds.
func ifNot(cond bool, names ...string) []string {
	if cond {
		return nil
	}
	return names
}

// positive returns an error naming flag if d is not positive.
func positive(flag string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("--%s must be positive, got %v", flag, d)
	}
	return nil
}

// bugClusterCell fills the real cluster's cell of row: checker cluster
// runs, seed 1 then 2 …, with the bug on in every process, until one
// reports a violation (caught). A run in which no process reached the
// bug's code (no "bug site reached" in any log: harness/cluster's
// BugsReached) could not have caught it; when no run reached it the
// cell says not reached rather than missed.
func bugClusterCell(ctx context.Context, row *bugRow, cf bugClusterFlags) error {
	start := time.Now()
	cell := bugCell{}
	reached := 0
	for s := 1; s <= cf.seeds; s++ {
		res, err := cluster.Run(ctx, cluster.Config{Binary: cf.binary, Nodes: 3, Seed: uint64(s), Duration: cf.duration,
			Faults: []string{cluster.FaultKill, cluster.FaultPause, cluster.FaultDisk, cluster.FaultStale}, Upgrade: true,
			Env: []string{bugs.EnvVar + "=" + row.Bug}})
		if err != nil {
			return err
		}
		if slices.Contains(res.BugsReached, row.Bug) {
			reached++
		}
		if len(res.Violations) > 0 {
			cell.Caught, cell.How = true, fmt.Sprintf("seed %d: %s", s, res.Violations[0])
			break
		}
	}
	switch {
	case cell.Caught:
	case reached == 0:
		cell.NotReached, cell.How = true, fmt.Sprintf("no process ran the bug's code in %d seeds of %v", cf.seeds, cf.duration)
	default:
		cell.How = fmt.Sprintf("reached in %d of %d seeds of %v, no violation", reached, cf.seeds, cf.duration)
	}
	cell.Seconds = time.Since(start).Seconds()
	row.Cells[clusterTechnique] = cell
	if cell.Caught {
		row.Caught++
	}
	return nil
}
