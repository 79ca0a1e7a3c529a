package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drainproof/drainproof/harness/drainmodel"
	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/spec"
)

// traceOutput is the traces object of `checker trace --json` (the
// report's outcome: ok, violated when a trace is rejected, incomplete).
type traceOutput struct {
	Files          []tracecheck.Result `json:"files"`
	OK             int                 `json:"ok"`
	Rejected       int                 `json:"rejected"`
	Incomplete     int                 `json:"incomplete"`
	Lines          int                 `json:"lines"`
	Seconds        float64             `json:"seconds"`
	LinesPerSecond float64             `json:"lines_per_second"`
	// CPUSeconds is the process's CPU time (user and system) checking;
	// LinesPerCPUSecond the lines over it (one core: the merge and the
	// check are sequential), which a loaded machine does not distort.
	CPUSeconds        float64 `json:"cpu_seconds"`
	LinesPerCPUSecond float64 `json:"lines_per_cpu_second"`
	// PeakRSS is the process's peak resident set size, in bytes.
	PeakRSS int64 `json:"peak_rss_bytes"`
}

// runTrace is `checker trace FILE|DIR...`: trace validation of NDJSON
// traces (docs/trace.md) against the protocol model (package
// harness/tracecheck). Exit 0 when every trace is accepted, 1 when one is
// rejected, 3 when one is incomplete (and none rejected), 2 for a
// malformed trace or bad flags.
func runTrace(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checker trace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "check against the model of this TLC .cfg instead of the one each trace's header names")
	maxCands := fs.Int("max-candidates", tracecheck.DefaultMaxCandidates, "bound on the candidate states; a trace that needs more is incomplete")
	asJSON := fs.Bool("json", false, "print one JSON object")
	quiet := fs.Bool("q", false, "print only the traces not accepted and the totals")
	mergedOut := fs.String("merged", "", "write the merged trace of the one run given to this file (for TLC: tla/TraceDrainRegistration.tla)")
	htmlOut := fs.String("html", "", "write an HTML page of the first run not accepted (one lane per process, the line not explained marked)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: checker trace [flags] FILE|DIR... (a directory: a run's per-process traces, merged; or its *.ndjson traces and its subdirectories' runs)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "checker trace: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() == 0 {
		return fail("no trace files (usage: checker trace [flags] FILE|DIR...)")
	}
	if *maxCands < 1 {
		return fail("--max-candidates must be at least 1, got %d", *maxCands)
	}
	targets, err := traceTargets(fs.Args())
	if err != nil {
		return fail("%v", err)
	}
	if *mergedOut != "" && (len(targets) != 1 || targets[0].run == nil) {
		return fail("--merged needs exactly one run (a directory of per-process traces)")
	}
	var model *spec.Model
	if *cfgPath != "" {
		if model, _, err = drainmodel.LoadSpec(*cfgPath, false); err != nil {
			return fail("%v", err)
		}
	}
	start, cpu0 := time.Now(), cpuTime()
	out := traceOutput{Files: []tracecheck.Result{}}
	htmlDone := false
	for _, tg := range targets {
		var res tracecheck.Result
		var err error
		if tg.run != nil {
			res, err = tracecheck.CheckRun(tg.run, tg.name, model, tracecheck.Options{MaxCandidates: *maxCands})
			if err == nil && *mergedOut != "" {
				err = writeMerged(tg.run, *mergedOut)
			}
			if err == nil && *htmlOut != "" && !htmlDone && res.Verdict != tracecheck.OK {
				htmlDone, err = true, writeRunHTML(tg.run, &res, *htmlOut)
			}
		} else {
			res, err = tracecheck.CheckFile(tg.name, model, tracecheck.Options{MaxCandidates: *maxCands})
		}
		if err != nil {
			return fail("%v", err)
		}
		out.Files = append(out.Files, res)
		out.Lines += res.Lines
		switch res.Verdict {
		case tracecheck.OK:
			out.OK++
		case tracecheck.Rejected:
			out.Rejected++
		default:
			out.Incomplete++
		}
	}
	out.Seconds = time.Since(start).Seconds()
	if out.Seconds > 0 {
		out.LinesPerSecond = float64(out.Lines) / out.Seconds
	}
	if out.CPUSeconds = (cpuTime() - cpu0).Seconds(); out.CPUSeconds > 0 {
		out.LinesPerCPUSecond = float64(out.Lines) / out.CPUSeconds
	}
	out.PeakRSS = peakRSS()
	return reportTraces(stdout, &out, *asJSON, *quiet)
}

// reportTraces prints the verdicts of `checker trace` (with quiet, only
// the traces not accepted) and the totals, or the JSON report, and
// returns the exit code.
func reportTraces(stdout io.Writer, out *traceOutput, asJSON, quiet bool) int {
	code := exitOK
	r := report{Command: "trace", Outcome: outcomeOK, Seconds: out.Seconds, Traces: out}
	switch {
	case out.Rejected > 0:
		code, r.Outcome, r.Violated, r.Kind = exitViolation, outcomeViolated, "trace", "trace"
	case out.Incomplete > 0:
		code, r.Outcome, r.Reason = exitIncomplete, outcomeIncomplete, "a trace is past a bound that a larger value would lift (each trace's reason names it)"
	}
	if asJSON {
		if err := writeReport(stdout, r); err != nil {
			return exitUsage
		}
		return code
	}
	for i := range out.Files {
		if !quiet || out.Files[i].Verdict != tracecheck.OK {
			printTraceResult(stdout, &out.Files[i])
		}
	}
	fmt.Fprintf(stdout, "trace: %d files, %d ok, %d rejected, %d incomplete; %d lines in %.3fs (%.0f lines/s; %.0f lines per CPU-second, peak RSS %d MiB)\n",
		len(out.Files), out.OK, out.Rejected, out.Incomplete, out.Lines, out.Seconds, out.LinesPerSecond,
		out.LinesPerCPUSecond, out.PeakRSS>>20)
	return code
}

// runSimTraced runs one simulation, writing the trace of each of its
// processes into dir (if set) as seed-N-TRANSPORT/PROCESS.ndjson: one
// run's directory, which `checker trace` merges.
func runSimTraced(ctx context.Context, cfg sim.Config, dir string) (sim.Result, error) {
	if dir == "" {
		return sim.Run(ctx, cfg)
	}
	return traceSimProcs(ctx, cfg, runDir(dir, cfg))
}

// runDir is the directory of the per-process traces of cfg's run.
func runDir(dir string, cfg sim.Config) string {
	return filepath.Join(dir, fmt.Sprintf("seed-%d-%s", cfg.Seed, cfg.Transport))
}

// traceSimProcs runs one simulation with the trace of each process
// written into dir (created) as PROCESS.ndjson.
func traceSimProcs(ctx context.Context, cfg sim.Config, dir string) (sim.Result, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return sim.Result{}, err
	}
	cfg.Traces = sim.TraceWriters(cfg, func(proc string) (io.Writer, error) {
		return os.Create(filepath.Join(dir, proc+".ndjson"))
	})
	return sim.Run(ctx, cfg)
}

// traceSim runs one simulation with its trace written to w (closed if it
// is an io.Closer).
func traceSim(ctx context.Context, cfg sim.Config, w io.Writer) (sim.Result, error) {
	tw, err := trace.NewWriter(w, sim.TraceHeader(cfg))
	if err != nil {
		return sim.Result{}, err
	}
	cfg.Tracer = tw
	res, err := sim.Run(ctx, cfg)
	return res, errors.Join(err, tw.Close())
}

// openTrace creates path and a trace writer with header h on it; nil
// when path is empty.
func openTrace(path string, h trace.Header) (*trace.Writer, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	tw, err := trace.NewWriter(f, h)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return tw, nil
}

// traceTarget is what `checker trace` checks: one trace file, or the
// per-process traces of one run (merged).
type traceTarget struct {
	name string
	run  []string
}

// traceTargets expands the arguments: a directory of per-process traces
// is one run; any other directory stands for its *.ndjson traces and the
// runs in its subdirectories, sorted.
func traceTargets(args []string) ([]traceTarget, error) {
	var out []traceTarget
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, traceTarget{name: a})
			continue
		}
		run, ok, err := tracecheck.RunFiles(a)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, traceTarget{name: a, run: run})
			continue
		}
		n := len(out)
		singles, _ := filepath.Glob(filepath.Join(a, "*.ndjson"))
		slices.Sort(singles)
		for _, f := range singles {
			out = append(out, traceTarget{name: f})
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			sub := filepath.Join(a, e.Name())
			run, ok, err := tracecheck.RunFiles(sub)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, traceTarget{name: sub, run: run})
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("%s: no *.ndjson traces and no run directories", a)
		}
	}
	return out, nil
}

// writeMerged writes the merged trace of a run's per-process traces.
func writeMerged(run []string, path string) error {
	m, err := tracecheck.Merge(run)
	if err != nil {
		return err
	}
	return os.WriteFile(path, m.Data, 0o644)
}

func printTraceResult(w io.Writer, r *tracecheck.Result) {
	if r.Verdict == tracecheck.OK {
		fmt.Fprintf(w, "ok          %s  %d lines, at most %d candidate states\n", r.File, r.Lines, r.MaxCandidates)
		return
	}
	fmt.Fprintf(w, "%-11s %s:%d  after %d lines: %s\n", r.Verdict, r.File, r.Line, r.Lines, r.Reason)
	if r.Process != "" {
		fmt.Fprintf(w, "  process %s, %s:%d\n", r.Process, r.ProcessFile, r.ProcessLine)
	}
	fmt.Fprintf(w, "  line %d: %s\n", r.Line, r.Text)
	for i, c := range r.Candidates {
		fmt.Fprintf(w, "  candidate %d:\n", i+1)
		var vars []string
		for _, v := range c.State {
			vars = append(vars, v.Name+" = "+v.Value)
		}
		fmt.Fprintf(w, "    %s\n", strings.Join(vars, "\n    "))
		if !c.Enabled {
			fmt.Fprintln(w, "    the action, with the line's parameters, is not enabled here")
		}
		if len(c.EnabledActions) > 0 {
			fmt.Fprintf(w, "    enabled here: %s\n", strings.Join(c.EnabledActions, ", "))
		}
		for j, s := range c.Successors {
			var ds []string
			for _, d := range s.Disagree {
				ds = append(ds, fmt.Sprintf("%s: trace %s, model %s", d.Var, d.Trace, d.Model))
			}
			fmt.Fprintf(w, "    step %d disagrees on %s\n", j+1, strings.Join(ds, "; "))
		}
	}
}

// runTraceGen is `checker tracegen`: traces of seeded random walks of a
// model (tracecheck.Generate), one file per seed, for the TLC parity runs
// and for trying `checker trace`. With --bug the walks are of the model
// with that bug while the header names the correct model, so many traces
// are rejected.
func runTraceGen(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checker tracegen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "tla/MCDrainRegistration.cfg", "the model (a TLC .cfg); its bounds are raised to the trace bounds")
	dir := fs.String("out", "", "directory to write seed-N.ndjson into (created)")
	seed := fs.Uint64("seed", 1, "first seed")
	seeds := fs.Int("seeds", 10, "number of traces")
	steps := fs.Int("steps", 100, "lines per trace (fewer if the walk deadlocks)")
	bug := fs.String("bug", "", "walk the model with this bug on (the header still names the model without it): "+strings.Join(spec.BugNames(), ", "))
	asJSON := fs.Bool("json", false, "print one JSON object (see docs/checker.md, \"JSON output\")")
	fs.Usage = usageFunc(fs, "checker tracegen --out DIR [--config FILE.cfg] [--seed S] [--seeds K] [--steps N] [--bug NAME] [--skip A,B --until C] [--run] [--json]",
		"Write the traces (docs/trace.md) of seeded random walks of a model, one file a seed.")
	asRun := fs.Bool("run", false, "write each walk as the per-process traces of one run, DIR/seed-N/PROCESS.ndjson (tracecheck.WriteRun; written as it walks, so --steps may pass memory)")
	skip := fs.String("skip", "", "comma-separated actions (TLA+ names) the walks do not take, e.g. NodeCrashRestart: T's drain then completes and T is upgraded")
	until := fs.String("until", "", "--skip holds only until the walk takes this action (e.g. UpgradeRestart: crash restarts after the upgrade)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "checker tracegen: "+format+"\n", a...)
		return exitUsage
	}
	if *dir == "" || *seeds < 1 || *steps < 1 {
		return fail("bad flags (--out %q, seeds %d, steps %d)", *dir, *seeds, *steps)
	}
	var guide tracecheck.Guide
	if *skip != "" {
		guide.Skip = strings.Split(*skip, ",")
	}
	if guide.Until = *until; guide.Until != "" && len(guide.Skip) == 0 {
		return fail("--until %s without --skip: it ends the skipping of nothing", guide.Until)
	}
	m, _, err := drainmodel.LoadSpec(*cfgPath, false)
	if err != nil {
		return fail("%v", err)
	}
	good := tracecheck.TraceConfig(m.Config())
	walk := good
	if *bug != "" {
		b, err := spec.ParseBug(*bug)
		if err != nil {
			return fail("%v", err)
		}
		walk.Bugs |= b
	}
	wm, err := spec.New(walk)
	if err != nil {
		return fail("%v", err)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fail("%v", err)
	}
	guided := ""
	if *skip != "" {
		guided = " --skip " + *skip
	}
	if *until != "" {
		guided += " --until " + *until
	}
	start := time.Now()
	var files []string
	for i := 0; i < *seeds; i++ {
		s := *seed + uint64(i)
		if *asRun {
			if *bug != "" {
				return fail("--run and --bug: a run's headers name the model it walks")
			}
			src := fmt.Sprintf("checker tracegen --run --config %s --seed %d --steps %d%s", *cfgPath, s, *steps, guided)
			if _, err := tracecheck.WriteRunGuided(filepath.Join(*dir, fmt.Sprintf("seed-%d", s)), wm, s, *steps, guide, src); err != nil {
				return fail("%v", err)
			}
			continue
		}
		var lines []tracecheck.Line
		err := tracecheck.GenerateGuided(wm, s, *steps, guide, func(l tracecheck.Line) error {
			lines = append(lines, l)
			return nil
		})
		if err != nil {
			return fail("%v", err)
		}
		path := filepath.Join(*dir, fmt.Sprintf("seed-%d.ndjson", s))
		files = append(files, path)
		f, err := os.Create(path)
		if err != nil {
			return fail("%v", err)
		}
		src := fmt.Sprintf("checker tracegen --config %s --seed %d --steps %d%s", *cfgPath, s, *steps, guided)
		if *bug != "" {
			src += " --bug " + *bug
		}
		err = tracecheck.Write(f, tracecheck.HeaderFor(good, src), lines)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fail("%v", err)
		}
	}
	if *asJSON {
		r := report{Command: "tracegen", Outcome: outcomeOK, Seconds: time.Since(start).Seconds(),
			Tracegen: &tracegenReport{Dir: *dir, Traces: *seeds, Files: files}}
		if err := writeReport(stdout, r); err != nil {
			return fail("%v", err)
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "tracegen: %d traces in %s\n", *seeds, *dir)
	return exitOK
}
