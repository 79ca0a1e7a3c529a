package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/drainproof/drainproof/spec"
	"github.com/drainproof/drainproof/spec/twophase"
	"github.com/drainproof/drainproof/tla"
)

// maxWalkDepth bounds --depth, the steps of one --simulate walk.
const maxWalkDepth = 1_000_000

// checkFlags are the flags of `checker check`.
type checkFlags struct {
	model     string
	config    string
	rms       int
	workers   int
	maxStates int64
	maxDepth  int
	timeout   time.Duration
	json      bool
	progress  time.Duration
	liveness  bool
	cont      bool
	html      string
	simulate  bool
	depth     int
	walks     int64
	seed      uint64
	coverage  bool
	fpBits    int
	memory    string
	ckDir     string
	ckEvery   time.Duration
	recover   string
	cpuprof   string
	dump      string
	lookup    string
	spill     string
}

// job is a model ready to run, with its display name and options; run
// prints the results and returns the exit code.
type job struct {
	name string
	run  func(ctx context.Context, opts modelcheck.Options, out output) int
	sim  func(ctx context.Context, opts modelcheck.SimOptions, out output) int
	cov  func(ctx context.Context, out output) int
}

// output is where a run reports.
type output struct {
	stdout, stderr io.Writer
	json           bool
	name           string
	html           string // where to write an HTML counterexample, if anywhere
	dump           string // where to write the distinct states as TLC's -dump does (--dump)
	// hold, when set (--json with --coverage), takes the run's report
	// instead of stdout, for the coverage to complete and print: one
	// JSON object for both.
	hold *report
}

// runCheck is `checker check`: parse and check the flags, build the job
// (a built-in model or a protocol model read from a .cfg) and run it.
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f checkFlags
	fs := checkFlagSet(&f, stderr)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	budget, ok := validateCheckFlags(&f, stderr)
	if !ok || conflictingCheckFlags(&f, setFlags(fs), stderr) {
		return exitUsage
	}
	j, err := checkJob(&f)
	if err != nil {
		fmt.Fprintf(stderr, "checker check: %v\n", err)
		return exitUsage
	}
	if flagErr(stderr, "checker check", writable("html", f.html), writable("dump", f.dump), writableDir("checkpoint", f.ckDir)) {
		return exitUsage
	}
	if f.dump != "" && f.simulate {
		fmt.Fprintln(stderr, "checker check: --dump writes the states of an exhaustive search; it cannot be used with --simulate")
		return exitUsage
	}
	out := output{stdout: stdout, stderr: stderr, json: f.json, name: j.name, html: f.html, dump: f.dump}
	if f.json && f.coverage && !f.simulate {
		out.hold = &report{}
	}
	if f.cpuprof == "" {
		return runJob(ctx, &f, j, budget, out)
	}
	// Created before the run, so a bad path is refused before anything runs.
	stop, err := startCPUProfile(f.cpuprof)
	if err != nil {
		fmt.Fprintf(stderr, "checker check: --cpuprofile: %v\n", err)
		return exitUsage
	}
	code := runJob(ctx, &f, j, budget, out)
	if err := stop(); err != nil {
		fmt.Fprintf(stderr, "checker check: --cpuprofile: %v\n", err)
		if code == exitOK {
			code = exitUsage // the run held, but the profile asked for is lost
		}
	}
	return code
}

// runJob runs j as the flags f say: a search (then --coverage) or, with
// --simulate, random walks.
func runJob(ctx context.Context, f *checkFlags, j job, budget int64, out output) int {
	if f.simulate {
		return j.sim(ctx, modelcheck.SimOptions{Seed: f.seed, Depth: f.depth, Walks: f.walks, Timeout: f.timeout, Workers: f.workers}, out)
	}
	opts := checkOptions(f, budget, j.name, out.stderr)
	if opts.SpillDir != "" {
		own, err := ownSpillFolder(opts.SpillDir, out.stderr)
		if err != nil {
			fmt.Fprintf(out.stderr, "checker check: --spill: %v\n", err)
			return exitUsage
		}
		defer os.RemoveAll(own)
		opts.SpillDir = own
	}
	code := j.run(ctx, opts, out)
	if f.coverage && code != exitUsage {
		if c := j.cov(ctx, out); c != exitOK {
			return c
		}
	}
	return code
}

// checkFlagSet defines the flags of `checker check` into f.
func checkFlagSet(f *checkFlags, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("checker check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.model, "model", "", "built-in model to check (checker models lists them; default drain)")
	fs.StringVar(&f.config, "config", "", "TLC .cfg file of the protocol model (tla/MCDrainRegistration*.cfg)")
	fs.IntVar(&f.rms, "rms", 3, "twophase: number of resource managers")
	fs.IntVar(&f.workers, "workers", 0, "worker goroutines (0: one per core; at most 1024); fewer than the cores also run on that many (GOMAXPROCS), unless GOMAXPROCS is set")
	fs.Int64Var(&f.maxStates, "max-states", 0, "stop after this many distinct states (0: no limit)")
	fs.IntVar(&f.maxDepth, "max-depth", 0, "stop at this depth (0: no limit)")
	fs.DurationVar(&f.timeout, "timeout", 0, "stop after this long (0: no limit)")
	fs.BoolVar(&f.json, "json", false, "print one JSON object instead of text (see docs/checker.md, \"JSON output\")")
	fs.DurationVar(&f.progress, "progress", 5*time.Second, "interval between progress lines on stderr (0: none)")
	fs.StringVar(&f.html, "html", "", "also write the result as an HTML page to this file (a violation's counterexample as a table of steps and variables)")
	fs.BoolVar(&f.simulate, "simulate", false, "random walks instead of exhaustive search, as TLC -simulate (finds bugs in huge models; proves nothing)")
	fs.IntVar(&f.depth, "depth", 100, "--simulate: steps per walk")
	fs.Int64Var(&f.walks, "walks", 0, "--simulate: number of walks (0: until --timeout or Ctrl-C)")
	fs.Uint64Var(&f.seed, "seed", 1, "--simulate: seed; the same seed finds the same walk")
	fs.BoolVar(&f.cont, "continue", false, "keep exploring after a violation, as TLC -continue (whole state space; the shortest violation is reported)")
	fs.BoolVar(&f.coverage, "coverage", false, "after the check, report per action the successors it generated and the new states it found (TLC -coverage)")
	fs.BoolVar(&f.liveness, "liveness", true, "check the model's liveness properties (as the cfg's PROPERTIES select)")
	fs.StringVar(&f.memory, "memory", "", "memory budget, e.g. 512MiB or 4GiB: a run that would pass it ends incomplete with its figures (default 3/4 of the machine's memory; 0: none)")
	fs.StringVar(&f.ckDir, "checkpoint", "", "save the search in this folder at the end of a level, every --checkpoint-every, to resume it with --recover")
	fs.DurationVar(&f.ckEvery, "checkpoint-every", 10*time.Minute, "--checkpoint: the least time between checkpoints")
	fs.StringVar(&f.recover, "recover", "", "resume the search saved in this --checkpoint folder (same model and properties), as TLC -recover")
	fs.StringVar(&f.dump, "dump", "", "also write every distinct state to this file as TLC's -dump FILE does (the whole space; not under VIEW or SYMMETRY)")
	fs.StringVar(&f.cpuprof, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof reads it; make pgo builds cmd/checker/default.pgo from such profiles)")
	fs.StringVar(&f.spill, "spill", os.TempDir(), "folder where the seen-set moves when it and the queue pass half of --memory (a folder of its own inside, removed at the end); off: stop at --memory instead")
	fs.StringVar(&f.lookup, "lookup", "auto", "how successors are looked up in the seen-set: sorted (large batches probed in the set's order), hash (each successor probed in turn), or auto (hash in memory, sorted once the set has spilled)")
	fs.IntVar(&f.fpBits, "fp", 64, "fingerprint width in bits, 64 or 128 (128: about twice the seen-set's memory; use it from about 10^7 states on)")
	fs.Usage = usageFunc(fs, "checker check [--model NAME | --config FILE.cfg] [flags]",
		"Model-check a built-in model or a protocol model read from a TLC .cfg file: breadth-first, in parallel,\ncounting as TLC counts; or, with --simulate, random walks.")
	return fs
}

// validateCheckFlags refuses, with one line on stderr, flags out of range
// or in contradiction; it returns the memory budget of --memory.
func validateCheckFlags(f *checkFlags, stderr io.Writer) (budget int64, ok bool) {
	if flagErr(stderr, "checker check",
		intRange("workers", int64(f.workers), 0, maxWorkers),
		intRange("max-states", f.maxStates, 0, math.MaxInt64),
		intRange("max-depth", int64(f.maxDepth), 0, math.MaxInt32),
		notNegative("timeout", f.timeout),
		notNegative("progress", f.progress),
		intRange("depth", int64(f.depth), 1, maxWalkDepth),
		intRange("walks", f.walks, 0, math.MaxInt64),
		intRange("rms", int64(f.rms), 1, twophase.MaxRMs),
		notNegative("checkpoint-every", f.ckEvery),
	) {
		return 0, false
	}
	if f.ckEvery == 0 {
		fmt.Fprintln(stderr, "checker check: --checkpoint-every must be positive")
		return 0, false
	}
	if f.fpBits != 64 && f.fpBits != 128 {
		fmt.Fprintf(stderr, "checker check: --fp must be 64 or 128, not %d\n", f.fpBits)
		return 0, false
	}
	if _, ok := lookups[f.lookup]; !ok {
		fmt.Fprintf(stderr, "checker check: --lookup must be auto, sorted or hash, not %q\n", f.lookup)
		return 0, false
	}
	if err := spillFolder(f.spill); err != nil {
		fmt.Fprintf(stderr, "checker check: %v\n", err)
		return 0, false
	}
	budget, err := memoryBudget(f.memory)
	if err != nil {
		fmt.Fprintf(stderr, "checker check: %v\n", err)
		return 0, false
	}
	if f.simulate && f.walks == 0 && f.timeout == 0 {
		fmt.Fprintln(stderr, "checker check: --simulate needs --walks N or --timeout D")
		return 0, false
	}
	return budget, true
}

// conflictingCheckFlags refuses, with one line, a flag given for the
// other mode (exhaustive search or --simulate) or another model, which
// would otherwise be ignored without a word.
func conflictingCheckFlags(f *checkFlags, set map[string]bool, stderr io.Writer) bool {
	var errs []error
	if f.simulate {
		errs = append(errs, notWith(set, "--simulate", "they set the exhaustive search; random walks keep no state graph",
			"max-states", "max-depth", "continue", "coverage", "checkpoint", "checkpoint-every", "recover", "fp", "memory", "spill", "lookup"))
	} else {
		errs = append(errs, notWith(set, "the exhaustive search", "they set --simulate's random walks", "depth", "walks", "seed"))
	}
	if f.model != "twophase" && f.model != "twophase-bug" {
		errs = append(errs, notWith(set, "this model", "only --model twophase and twophase-bug have resource managers", "rms"))
	}
	if f.ckDir == "" {
		errs = append(errs, notWith(set, "no --checkpoint", "it spaces the checkpoints", "checkpoint-every"))
	}
	return flagErr(stderr, "checker check", errs...)
}

// spillFolder refuses a --spill that names no folder and could not be
// made one: the seen-set's folder is made inside it only at the first
// spill, deep in a run.
func spillFolder(dir string) error {
	if dir == "off" {
		return nil
	}
	if dir == "" {
		return fmt.Errorf("--spill: want a folder, or off")
	}
	st, err := os.Stat(dir)
	if err == nil {
		if !st.IsDir() {
			return fmt.Errorf("--spill %s: not a folder", dir)
		}
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("--spill: %w", err)
	}
	if st, err := os.Stat(filepath.Dir(dir)); err != nil || !st.IsDir() {
		return fmt.Errorf("--spill %s: neither it nor its parent is a folder", dir)
	}
	return nil
}

// lookups maps --lookup's values to the checker's.
var lookups = map[string]modelcheck.Lookup{"auto": modelcheck.LookupAuto, "sorted": modelcheck.LookupSorted, "hash": modelcheck.LookupHash}

// checkJob builds the job the flags select: the protocol model of
// --config, or the built-in model of --model (default drain).
func checkJob(f *checkFlags) (job, error) {
	switch {
	case f.config != "" && f.model != "" && f.model != "drain":
		return job{}, fmt.Errorf("--config reads a protocol model; it cannot be combined with --model %s", f.model)
	case f.config != "":
		return drainFromConfig(f.config, f.liveness)
	}
	name := f.model
	if name == "" {
		name = "drain"
	}
	return builtin(name, f)
}

// checkOptions are the exhaustive search's options the flags set, with
// progress lines on stderr every --progress.
func checkOptions(f *checkFlags, budget int64, name string, stderr io.Writer) modelcheck.Options {
	opts := modelcheck.Options{
		Workers:   f.workers,
		MaxStates: f.maxStates,
		MaxDepth:  f.maxDepth,
		Timeout:   f.timeout,
		Continue:  f.cont,

		FingerprintBits: f.fpBits,
		MemoryBudget:    budget,
		CheckpointDir:   f.ckDir,
		CheckpointEvery: f.ckEvery,
		Recover:         f.recover,
		CheckpointID:    name,
		Lookup:          lookups[f.lookup],
	}
	if f.spill != "off" {
		opts.SpillDir = f.spill
	}
	if f.progress > 0 {
		opts.ProgressEvery = f.progress
		opts.Progress = func(p modelcheck.Progress) {
			if p.Phase == "liveness" {
				fmt.Fprintf(stderr, "Liveness at %s: state graph %s states, %s left to expand (%s states/s)\n",
					time.Now().Format("2006-01-02 15:04:05"), commas(p.Distinct), commas(p.Queue), commas(int64(p.StatesPerSecond)))
				return
			}
			fmt.Fprintf(stderr, "Progress(%d) at %s: %s states generated, %s distinct states found, %s states left on queue (%s distinct/s)\n",
				p.Depth, time.Now().Format("2006-01-02 15:04:05"), commas(p.Generated), commas(p.Distinct), commas(p.Queue), commas(int64(p.StatesPerSecond)))
		}
	}
	return opts
}

// runModel checks m and reports; it is the one place results are printed.
func runModel[S any](ctx context.Context, m modelcheck.Model[S], opts modelcheck.Options, out output) int {
	props := checkedProperties(m, opts.Invariants, opts.ActionProperties, opts.Liveness, opts.CheckDeadlock)
	if !out.json {
		fmt.Fprintf(out.stderr, "Checking %s with %s worker(s).\n", out.name, workersText(opts.Workers))
		printProperties(out.stderr, props)
	}
	if out.dump != "" && (opts.UseView || opts.UseSymmetry) {
		fmt.Fprintln(out.stderr, "checker check: --dump: under a VIEW or SYMMETRY the states TLC stores depend on its search order; dump the model without them")
		return exitUsage
	}
	restore := searchProcs(opts.Workers)
	res, err := modelcheck.Check(ctx, m, opts)
	restore()
	if err != nil {
		fmt.Fprintf(out.stderr, "checker check: %v\n", err)
		return exitUsage
	}
	if out.dump != "" {
		n, err := writeDump(ctx, m, opts, out.dump)
		if err != nil {
			fmt.Fprintf(out.stderr, "checker check: %v\n", err)
			return exitUsage
		}
		if !out.json {
			fmt.Fprintf(out.stderr, "Dumped %s distinct states to %s.\n", commas(n), out.dump)
		}
	}
	if out.json {
		r := report{Command: "check", Reason: res.Reason, Steps: len(res.Trace), Seconds: res.Elapsed.Seconds(), Trace: jsonTrace(m, res.Trace),
			Check: &checkReport{Model: out.name, Mode: "exhaustive", Properties: props, Workers: res.Workers, Generated: res.Generated,
				Distinct: res.Distinct, Depth: res.Depth, StatesPerSecond: res.StatesPerSecond(), SetBytes: res.SetBytes, SpillBytes: res.SpillBytes, QueueSpillBytes: res.QueueSpillBytes, QueueDiskPeak: res.QueueDiskPeak,
				PeakRSS: peakRSS(), Collision: res.Collision}}
		r.Outcome, r.Kind = checkOutcome(res.Outcome, res.Kind)
		if r.Outcome == outcomeViolated {
			r.Violated = res.Violated
		}
		if res.Kind == "liveness" {
			r.LoopStart = &res.LoopStart
			r.LoopBack = loopBack(res.LoopStart, res.LoopAction, res.LoopLabel)
		}
		if out.hold != nil {
			*out.hold = r
		} else if err := writeReport(out.stdout, r); err != nil {
			fmt.Fprintf(out.stderr, "checker check: %v\n", err)
			return exitUsage
		}
	} else {
		writeText(out.stdout, m, res)
	}
	if res.ResumedAt > 0 {
		fmt.Fprintf(out.stderr, "Resumed from the checkpoint in %s at depth %d.\n", opts.Recover, res.ResumedAt)
	}
	if res.FingerprintBits == 64 && res.Collision > 1e-6 {
		fmt.Fprintf(out.stderr, "Warning: the fingerprint collision estimate is %.1E; --fp 128 makes it negligible.\n", res.Collision)
	}
	v := verdict{outcome: res.Outcome, kind: res.Kind, violated: res.Violated, reason: res.Reason, loop: -1,
		figures: fmt.Sprintf("%s distinct states explored, %s generated, depth %d", commas(res.Distinct), commas(res.Generated), res.Depth)}
	if res.Kind == "liveness" {
		v.loop, v.loopLabel = res.LoopStart, res.LoopLabel
	}
	if !htmlReport(out, m, v, res.Trace) {
		return exitUsage
	}
	switch res.Outcome {
	case modelcheck.OK:
		return exitOK
	case modelcheck.Incomplete:
		return exitIncomplete
	}
	return exitViolation
}

// verdict is what a report says about a run, for writeHTML.
type verdict struct {
	outcome                modelcheck.Outcome
	kind, violated, reason string
	figures                string // the run's counts, in words
	loop                   int    // where a lasso's loop starts, or -1
	loopLabel              string // the label of the step that closes the loop
}

// htmlReport writes the report of a run to out.html, if set, and says so;
// it returns false, having said why, if it could not.
func htmlReport[S any](out output, m modelcheck.Model[S], v verdict, trace []modelcheck.Step[S]) bool {
	if out.html == "" {
		return true
	}
	if err := writeHTML(out.html, out.name, m, v, trace); err != nil {
		fmt.Fprintf(out.stderr, "checker check: %v\n", err)
		return false
	}
	fmt.Fprintf(out.stderr, "Report written to %s\n", out.html)
	return true
}

// writeHTML writes the report of a run as an HTML page: the verdict and,
// for a violation, the counterexample as a table.
func writeHTML[S any](path, name string, m modelcheck.Model[S], v verdict, trace []modelcheck.Step[S]) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	h := modelcheck.HTMLTrace{LoopStart: v.loop, LoopLabel: v.loopLabel}
	switch v.outcome {
	case modelcheck.OK:
		h.Verdict = "ok"
		h.Title, h.Summary = "No error has been found", fmt.Sprintf("%s: no error has been found (%s).", name, v.figures)
	case modelcheck.Incomplete:
		h.Verdict = "incomplete"
		h.Title, h.Summary = "Model checking stopped early", fmt.Sprintf("%s: %s; the figures are partial (%s).", name, v.reason, v.figures)
	default:
		what := v.violated
		if v.kind != "deadlock" {
			what = kindText(v.kind) + " " + v.violated
		}
		h.Verdict, h.Title = "violated", what+" violated"
		h.Summary = fmt.Sprintf("%s: %s is violated after %d states (%s).", name, what, len(trace), v.figures)
		if n := len(trace); n > 0 {
			switch v.kind {
			case "liveness":
				h.Fails = fmt.Sprintf("%s fails: the behaviour below ends in a loop that it goes round forever (state %d to step %d).", v.violated, v.loop+1, n+1)
			case "action":
				h.Fails = fmt.Sprintf("%s fails on the last step, %d: %s.", v.violated, n, trace[n-1].Label)
			case "deadlock":
				h.Fails = fmt.Sprintf("Step %d (%s) has no successor.", n, trace[n-1].Label)
			default:
				h.Fails = fmt.Sprintf("%s fails at step %d: %s.", v.violated, n, trace[n-1].Label)
			}
		}
		if _, ok := any(m).(*spec.Model); ok {
			// The protocol model: quote the property from the TLA+
			// module and show first the variables it reads.
			if defs, reads, ok := tla.Property(v.violated); ok {
				var texts []string
				for _, d := range defs {
					texts = append(texts, d.Text)
				}
				h.Definition, h.Focus = strings.Join(texts, "\n\n"), reads
			}
		}
	}
	err = modelcheck.WriteTraceHTMLWith(f, m, trace, h)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func workersText(n int) string {
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return strconv.Itoa(n)
}

func writeText[S any](w io.Writer, m modelcheck.Model[S], res *modelcheck.Result[S]) {
	switch res.Outcome {
	case modelcheck.OK:
		fmt.Fprintln(w, "Model checking completed. No error has been found.")
	case modelcheck.Incomplete:
		fmt.Fprintf(w, "Model checking stopped early: %s. The figures below are partial.\n", res.Reason)
	case modelcheck.Deadlock:
		fmt.Fprintln(w, "Error: Deadlock reached.")
	default:
		fmt.Fprintf(w, "Error: %s %s is violated.\n", kindText(res.Kind), res.Violated)
	}
	if len(res.Trace) > 0 {
		fmt.Fprintf(w, "The behaviour up to this point is (%d states):\n", len(res.Trace))
		loop := -1
		if res.Kind == "liveness" {
			loop = res.LoopStart
		}
		_ = modelcheck.WriteLasso(w, m, res.Trace, loop, res.LoopLabel)
	}
	fmt.Fprintf(w, "%s states generated, %s distinct states found, depth %d.\n", commas(res.Generated), commas(res.Distinct), res.Depth)
	fmt.Fprintf(w, "Finished in %.2fs: %s distinct states/s with %d worker(s); seen-set %.1f bytes/state; peak RSS %s MiB.\n",
		res.Elapsed.Seconds(), commas(int64(res.StatesPerSecond())), res.Workers, float64(res.SetBytes)/float64(max(res.Distinct, 1)), commas(peakRSS()>>20))
	if res.Spills > 0 {
		fmt.Fprintf(w, "The seen-set moved to disk %d time(s): %s MiB there at the end, %.1f bytes/state in memory.\n",
			res.Spills, commas(res.SpillBytes>>20), float64(res.SetBytes)/float64(max(res.Distinct, 1)))
	}
	if res.QueueSpillBytes > 0 {
		mib := func(b int64) float64 { return float64(b) / (1 << 20) }
		fmt.Fprintf(w, "The queue of states to expand wrote %.1f MiB to disk (at most %.1f MiB there at once; at most %.1f MiB in memory).\n",
			mib(res.QueueSpillBytes), mib(res.QueueDiskPeak), mib(res.QueuePeak))
	}
	fmt.Fprintf(w, "Fingerprint collision probability (optimistic): %.1E\n", res.Collision)
}

func kindText(k string) string {
	switch k {
	case "action":
		return "Action property"
	case "liveness":
		return "Temporal property"
	}
	return "Invariant"
}

// commas formats n with thousands separators, as TLC does.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// runSimulation runs random walks over m and reports like runModel.
func runSimulation[S any](ctx context.Context, m modelcheck.Model[S], so modelcheck.SimOptions, out output) int {
	props := checkedProperties(m, so.Invariants, so.ActionProperties, []string{}, so.CheckDeadlock)
	if !out.json {
		fmt.Fprintf(out.stderr, "Simulating %s: walks of %d steps, seed %d, %s worker(s).\n", out.name, so.Depth, so.Seed, workersText(so.Workers))
		printProperties(out.stderr, props)
	}
	res, err := modelcheck.Simulate(ctx, m, so)
	if err != nil {
		fmt.Fprintf(out.stderr, "checker check: %v\n", err)
		return exitUsage
	}
	// Ctrl-C, or a --timeout before the --walks asked for, stops the
	// walks early: the run is incomplete (exit 3), as an exhaustive
	// search stopped early is. Without --walks the timeout is the run's
	// length, not a limit it hit.
	outcome, reason := res.Outcome, ""
	if outcome == modelcheck.OK {
		switch {
		case ctx.Err() != nil:
			outcome, reason = modelcheck.Incomplete, fmt.Sprintf("interrupted after %s walks", commas(res.Walks))
			if so.Walks > 0 {
				reason = fmt.Sprintf("interrupted: %s of %s walks run", commas(res.Walks), commas(so.Walks))
			}
		case so.Walks > 0 && res.Walks < so.Walks:
			outcome, reason = modelcheck.Incomplete, fmt.Sprintf("timeout (%v): %s of %s walks run", so.Timeout, commas(res.Walks), commas(so.Walks))
		}
	}
	if out.json {
		r := report{Command: "check", Reason: reason, Steps: len(res.Trace), Seconds: res.Elapsed.Seconds(), Trace: jsonTrace(m, res.Trace),
			Check: &checkReport{Model: out.name, Mode: "simulate", Properties: props, Workers: so.Workers, Generated: res.Generated,
				Seed: so.Seed, Walks: res.Walks, WalkSteps: res.Steps}}
		r.Outcome, r.Kind = checkOutcome(outcome, res.Kind)
		if r.Outcome == outcomeViolated {
			r.Violated = res.Violated
		}
		if res.Outcome != modelcheck.OK {
			r.Check.Walk = &res.Walk
		}
		if err := writeReport(out.stdout, r); err != nil {
			fmt.Fprintf(out.stderr, "checker check: %v\n", err)
			return exitUsage
		}
	} else {
		switch outcome {
		case modelcheck.OK:
			fmt.Fprintln(out.stdout, "Simulation found no error (random walks prove nothing about the states they did not visit).")
		case modelcheck.Incomplete:
			fmt.Fprintf(out.stdout, "Simulation stopped early: %s. It found no error in those walks; the figures below are partial.\n", reason)
		case modelcheck.Deadlock:
			fmt.Fprintf(out.stdout, "Error: Deadlock reached (walk %d of seed %d).\n", res.Walk, so.Seed)
		default:
			fmt.Fprintf(out.stdout, "Error: %s %s is violated (walk %d of seed %d).\n", kindText(res.Kind), res.Violated, res.Walk, so.Seed)
		}
		if len(res.Trace) > 0 {
			fmt.Fprintf(out.stdout, "The behaviour up to this point is (%d states):\n", len(res.Trace))
			_ = modelcheck.WriteTrace(out.stdout, m, res.Trace, -1)
		}
		fmt.Fprintf(out.stdout, "%s walks, %s steps, %s states generated and checked in %.2fs.\n",
			commas(res.Walks), commas(res.Steps), commas(res.Generated), res.Elapsed.Seconds())
	}
	v := verdict{outcome: outcome, kind: res.Kind, violated: res.Violated, reason: reason, loop: -1,
		figures: fmt.Sprintf("random walks, seed %d: %s walks, %s steps, %s states generated", so.Seed, commas(res.Walks), commas(res.Steps), commas(res.Generated))}
	if !htmlReport(out, m, v, res.Trace) {
		return exitUsage
	}
	switch outcome {
	case modelcheck.OK:
		return exitOK
	case modelcheck.Incomplete:
		return exitIncomplete
	}
	return exitViolation
}

// checkedProperties lists what a run checks: the names selected (nil:
// all of the model's) and whether deadlock is checked.
func checkedProperties[S any](m modelcheck.Model[S], inv, act, live []string, deadlock bool) properties {
	p := properties{Invariants: inv, Actions: act, Temporal: live, Deadlock: deadlock}
	if p.Invariants == nil {
		p.Invariants = m.Invariants()
	}
	if a, ok := m.(modelcheck.ActionPropertied[S]); ok && p.Actions == nil {
		p.Actions = a.ActionProperties()
	}
	if l, ok := m.(modelcheck.Live[S]); ok && p.Temporal == nil {
		p.Temporal = l.LivenessProperties()
	}
	for _, l := range []*[]string{&p.Invariants, &p.Actions, &p.Temporal} {
		if *l == nil {
			*l = []string{}
		}
	}
	return p
}

// printProperties says what is being checked, as TLC does at the start.
func printProperties(w io.Writer, p properties) {
	list := func(names []string) string {
		if len(names) == 0 {
			return "none"
		}
		return strings.Join(names, ", ")
	}
	fmt.Fprintf(w, "Invariants: %s. Action properties: %s. Temporal properties: %s. Deadlock: %s.\n",
		list(p.Invariants), list(p.Actions), list(p.Temporal), map[bool]string{true: "checked", false: "not checked"}[p.Deadlock])
}

// startCPUProfile starts writing a CPU profile to path (--cpuprofile); the
// function it returns stops the profile and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
