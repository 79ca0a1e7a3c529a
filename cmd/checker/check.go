package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/drainproof/drainproof/modelcheck"
)

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
	fpBits    int
	memory    string
	ckDir     string
	ckEvery   time.Duration
	recover   string
}

// job is a model ready to run, with its display name and options; run
// prints the results and returns the exit code.
type job struct {
	name string
	run  func(ctx context.Context, opts modelcheck.Options, out output) int
	sim  func(ctx context.Context, opts modelcheck.SimOptions, out output) int
}

// output is where a run reports.
type output struct {
	stdout, stderr io.Writer
	json           bool
	name           string
	html           string // where to write an HTML counterexample, if anywhere
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checker check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f checkFlags
	fs.StringVar(&f.model, "model", "", "built-in model to check (see `checker models`); default drain")
	fs.StringVar(&f.config, "config", "", "TLC .cfg file of the protocol model (tla/MCDrainRegistration*.cfg)")
	fs.IntVar(&f.rms, "rms", 3, "twophase: number of resource managers")
	fs.IntVar(&f.workers, "workers", 0, "worker goroutines (0: one per core)")
	fs.Int64Var(&f.maxStates, "max-states", 0, "stop after this many distinct states (0: no limit)")
	fs.IntVar(&f.maxDepth, "max-depth", 0, "stop at this depth (0: no limit)")
	fs.DurationVar(&f.timeout, "timeout", 0, "stop after this long (0: no limit)")
	fs.BoolVar(&f.json, "json", false, "print one JSON object instead of text")
	fs.DurationVar(&f.progress, "progress", 5*time.Second, "interval between progress lines on stderr (0: none)")
	fs.StringVar(&f.html, "html", "", "on a violation, also write the counterexample as an HTML table to this file")
	fs.BoolVar(&f.simulate, "simulate", false, "random walks instead of exhaustive search, as TLC -simulate (finds bugs in huge models; proves nothing)")
	fs.IntVar(&f.depth, "depth", 100, "--simulate: steps per walk")
	fs.Int64Var(&f.walks, "walks", 0, "--simulate: number of walks (0: until --timeout or Ctrl-C)")
	fs.Uint64Var(&f.seed, "seed", 1, "--simulate: seed; the same seed finds the same walk")
	fs.BoolVar(&f.cont, "continue", false, "keep exploring after a violation, as TLC -continue (whole state space; the shortest violation is reported)")
	fs.BoolVar(&f.liveness, "liveness", true, "check the model's liveness properties (as the cfg's PROPERTIES select)")
	fs.StringVar(&f.memory, "memory", "", "memory budget, e.g. 512MiB or 4GiB: a run that would pass it ends incomplete with its figures (default 3/4 of the machine's memory; 0: none)")
	fs.StringVar(&f.ckDir, "checkpoint", "", "save the search in this folder at the end of a level, every --checkpoint-every, to resume it with --recover")
	fs.DurationVar(&f.ckEvery, "checkpoint-every", 10*time.Minute, "--checkpoint: the least time between checkpoints")
	fs.StringVar(&f.recover, "recover", "", "resume the search saved in this --checkpoint folder (same model and properties), as TLC -recover")
	fs.IntVar(&f.fpBits, "fp", 64, "fingerprint width in bits, 64 or 128 (128: about twice the seen-set's memory; use it from about 10^7 states on)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: checker check [--model NAME | --config FILE.cfg] [flags]")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if f.workers < 0 || f.ckEvery <= 0 || f.maxStates < 0 || f.maxDepth < 0 || f.timeout < 0 || f.progress < 0 || f.depth < 1 || f.walks < 0 {
		fmt.Fprintln(stderr, "checker check: --workers, --max-states, --max-depth, --timeout, --progress and --walks must not be negative, --depth and --checkpoint-every must be positive")
		return exitUsage
	}
	if f.fpBits != 64 && f.fpBits != 128 {
		fmt.Fprintf(stderr, "checker check: --fp must be 64 or 128, not %d\n", f.fpBits)
		return exitUsage
	}
	budget, err := memoryBudget(f.memory)
	if err != nil {
		fmt.Fprintf(stderr, "checker check: %v\n", err)
		return exitUsage
	}
	if f.simulate && f.walks == 0 && f.timeout == 0 {
		fmt.Fprintln(stderr, "checker check: --simulate needs --walks N or --timeout D")
		return exitUsage
	}
	var j job
	switch {
	case f.config != "" && f.model != "" && f.model != "drain":
		err = fmt.Errorf("--config reads a protocol model; it cannot be combined with --model %s", f.model)
	case f.config != "":
		j, err = drainFromConfig(f.config, f.liveness)
	default:
		name := f.model
		if name == "" {
			name = "drain"
		}
		j, err = builtin(name, &f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "checker check: %v\n", err)
		return exitUsage
	}
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
	}
	opts.CheckpointID = j.name
	out := output{stdout: stdout, stderr: stderr, json: f.json, name: j.name, html: f.html}
	if f.simulate {
		return j.sim(ctx, modelcheck.SimOptions{Seed: f.seed, Depth: f.depth, Walks: f.walks, Timeout: f.timeout, Workers: f.workers}, out)
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
	return j.run(ctx, opts, out)
}

// runModel checks m and reports; it is the one place results are printed.
func runModel[S any](ctx context.Context, m modelcheck.Model[S], opts modelcheck.Options, out output) int {
	if !out.json {
		fmt.Fprintf(out.stderr, "Checking %s with %s worker(s).\n", out.name, workersText(opts.Workers))
	}
	res, err := modelcheck.Check(ctx, m, opts)
	if err != nil {
		fmt.Fprintf(out.stderr, "checker check: %v\n", err)
		return exitUsage
	}
	if out.json {
		if err := writeJSON(out.stdout, out.name, m, res); err != nil {
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
	if out.html != "" && len(res.Trace) > 0 {
		if err := writeHTML(out.html, out.name, m, res); err != nil {
			fmt.Fprintf(out.stderr, "checker check: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(out.stderr, "Counterexample written to %s\n", out.html)
	}
	switch res.Outcome {
	case modelcheck.OK:
		return exitOK
	case modelcheck.Incomplete:
		return exitIncomplete
	}
	return exitViolation
}

// writeHTML writes the counterexample of res as an HTML page.
func writeHTML[S any](path, name string, m modelcheck.Model[S], res *modelcheck.Result[S]) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	what := res.Violated
	if res.Kind != "deadlock" {
		what = kindText(res.Kind) + " " + res.Violated
	}
	loop := -1
	if res.Kind == "liveness" {
		loop = res.LoopStart
	}
	summary := fmt.Sprintf("%s: %s is violated after %d states (%s distinct states explored, depth %d).",
		name, what, len(res.Trace), commas(res.Distinct), res.Depth)
	err = modelcheck.WriteTraceHTML(f, m, res.Trace, loop, what+" violated", summary)
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

// jsonStep is one step of a trace in --json output.
type jsonStep struct {
	Action string            `json:"action"`
	Label  string            `json:"label"`
	State  map[string]string `json:"state"`
}

// jsonResult is the --json output of `checker check`.
type jsonResult struct {
	Model           string     `json:"model"`
	Outcome         string     `json:"outcome"`
	Invariant       string     `json:"invariant,omitempty"`
	Kind            string     `json:"kind,omitempty"`
	Reason          string     `json:"reason,omitempty"`
	Distinct        int64      `json:"distinct"`
	Generated       int64      `json:"generated"`
	Depth           int        `json:"depth"`
	Seconds         float64    `json:"seconds"`
	StatesPerSecond float64    `json:"states_per_second"`
	Workers         int        `json:"workers"`
	SetBytes        int64      `json:"set_bytes"`
	PeakRSS         int64      `json:"peak_rss_bytes,omitempty"`
	Collision       float64    `json:"collision_probability"`
	Trace           []jsonStep `json:"trace,omitempty"`
	LoopStart       *int       `json:"loop_start,omitempty"`
}

func writeJSON[S any](w io.Writer, name string, m modelcheck.Model[S], res *modelcheck.Result[S]) error {
	r := jsonResult{
		Model:           name,
		Outcome:         res.Outcome.String(),
		Invariant:       res.Violated,
		Kind:            res.Kind,
		Reason:          res.Reason,
		Distinct:        res.Distinct,
		Generated:       res.Generated,
		Depth:           res.Depth,
		Seconds:         res.Elapsed.Seconds(),
		StatesPerSecond: res.StatesPerSecond(),
		Workers:         res.Workers,
		SetBytes:        res.SetBytes,
		PeakRSS:         peakRSS(),
		Collision:       res.Collision,
	}
	r.Trace = jsonTrace(m, res.Trace)
	if res.Kind == "liveness" {
		r.LoopStart = &res.LoopStart
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
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

// simJSON is the --json output of `checker check --simulate`.
type simJSON struct {
	Model     string     `json:"model"`
	Mode      string     `json:"mode"`
	Outcome   string     `json:"outcome"`
	Invariant string     `json:"invariant,omitempty"`
	Kind      string     `json:"kind,omitempty"`
	Seed      uint64     `json:"seed"`
	Walk      *int64     `json:"walk,omitempty"`
	Walks     int64      `json:"walks"`
	Steps     int64      `json:"steps"`
	Generated int64      `json:"generated"`
	Seconds   float64    `json:"seconds"`
	Trace     []jsonStep `json:"trace,omitempty"`
}

// runSimulation runs random walks over m and reports like runModel.
func runSimulation[S any](ctx context.Context, m modelcheck.Model[S], so modelcheck.SimOptions, out output) int {
	if !out.json {
		fmt.Fprintf(out.stderr, "Simulating %s: walks of %d steps, seed %d, %s worker(s).\n", out.name, so.Depth, so.Seed, workersText(so.Workers))
	}
	res, err := modelcheck.Simulate(ctx, m, so)
	if err != nil {
		fmt.Fprintf(out.stderr, "checker check: %v\n", err)
		return exitUsage
	}
	if out.json {
		r := simJSON{Model: out.name, Mode: "simulate", Outcome: res.Outcome.String(), Invariant: res.Violated, Kind: res.Kind,
			Seed: so.Seed, Walks: res.Walks, Steps: res.Steps, Generated: res.Generated, Seconds: res.Elapsed.Seconds()}
		if res.Outcome != modelcheck.OK {
			r.Walk = &res.Walk
		}
		r.Trace = jsonTrace(m, res.Trace)
		enc := json.NewEncoder(out.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			fmt.Fprintf(out.stderr, "checker check: %v\n", err)
			return exitUsage
		}
	} else {
		switch res.Outcome {
		case modelcheck.OK:
			fmt.Fprintln(out.stdout, "Simulation found no error (random walks prove nothing about the states they did not visit).")
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
	if res.Outcome == modelcheck.OK {
		return exitOK
	}
	return exitViolation
}

// jsonTrace turns a trace into --json steps, each state as its variables.
func jsonTrace[S any](m modelcheck.Model[S], trace []modelcheck.Step[S]) []jsonStep {
	vl, hasVars := m.(modelcheck.VarLister[S])
	var out []jsonStep
	for _, st := range trace {
		js := jsonStep{Action: st.Action, Label: st.Label, State: map[string]string{}}
		if hasVars {
			for _, v := range vl.Vars(st.State) {
				js.State[v[0]] = v[1]
			}
		} else {
			js.State["state"] = fmt.Sprintf("%+v", st.State)
		}
		out = append(out, js)
	}
	return out
}
