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
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: checker trace [flags] FILE|DIR... (a directory: its *.ndjson files)")
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
	files, err := traceFiles(fs.Args())
	if err != nil {
		return fail("%v", err)
	}
	var model *spec.Model
	if *cfgPath != "" {
		if model, _, err = drainmodel.LoadSpec(*cfgPath, false); err != nil {
			return fail("%v", err)
		}
	}
	start := time.Now()
	out := traceOutput{Files: []tracecheck.Result{}}
	for _, f := range files {
		res, err := tracecheck.CheckFile(f, model, tracecheck.Options{MaxCandidates: *maxCands})
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
	fmt.Fprintf(stdout, "trace: %d files, %d ok, %d rejected, %d incomplete; %d lines in %.3fs (%.0f lines/s)\n",
		len(out.Files), out.OK, out.Rejected, out.Incomplete, out.Lines, out.Seconds, out.LinesPerSecond)
	return code
}

// runSimTraced runs one simulation, writing its trace into dir (if set)
// as seed-N-TRANSPORT.ndjson.
func runSimTraced(ctx context.Context, cfg sim.Config, dir string) (sim.Result, error) {
	if dir == "" {
		return sim.Run(ctx, cfg)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return sim.Result{}, err
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("seed-%d-%s.ndjson", cfg.Seed, cfg.Transport)))
	if err != nil {
		return sim.Result{}, err
	}
	return traceSim(ctx, cfg, f)
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

// traceFiles expands the arguments: a directory stands for its *.ndjson
// files, sorted.
func traceFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		m, err := filepath.Glob(filepath.Join(a, "*.ndjson"))
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: no *.ndjson traces", a)
		}
		slices.Sort(m)
		out = append(out, m...)
	}
	return out, nil
}

func printTraceResult(w io.Writer, r *tracecheck.Result) {
	if r.Verdict == tracecheck.OK {
		fmt.Fprintf(w, "ok          %s  %d lines, at most %d candidate states\n", r.File, r.Lines, r.MaxCandidates)
		return
	}
	fmt.Fprintf(w, "%-11s %s:%d  after %d lines: %s\n", r.Verdict, r.File, r.Line, r.Lines, r.Reason)
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
	asJSON := fs.Bool("json", false, "print one JSON object (see the README's \"JSON output\")")
	fs.Usage = usageFunc(fs, "checker tracegen --out DIR [--config FILE.cfg] [--seed S] [--seeds K] [--steps N] [--bug NAME] [--json]",
		"Write the traces (docs/trace.md) of seeded random walks of a model, one file a seed.")
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
	start := time.Now()
	var files []string
	for i := 0; i < *seeds; i++ {
		s := *seed + uint64(i)
		lines, err := tracecheck.Generate(wm, s, *steps)
		if err != nil {
			return fail("%v", err)
		}
		path := filepath.Join(*dir, fmt.Sprintf("seed-%d.ndjson", s))
		files = append(files, path)
		f, err := os.Create(path)
		if err != nil {
			return fail("%v", err)
		}
		src := fmt.Sprintf("checker tracegen --config %s --seed %d --steps %d", *cfgPath, s, *steps)
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
