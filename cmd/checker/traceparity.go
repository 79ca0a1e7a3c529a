package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/spec"
)

// parityChunk bounds the traces of one TLC run.
const parityChunk = 20

// parityBatch is a set of traces with one header, checked by TLC runs of
// at most parityChunk traces.
type parityBatch struct {
	name  string
	files []string
	free  bool // TRACE_FREE_ENV: TLC fills in losses and duplicates freely
}

// parityOutput is the --json report of `checker traceparity`.
type parityOutput struct {
	Result   string `json:"result"` // agree or disagree
	Traces   int    `json:"traces"`
	Accepted int    `json:"accepted"`
	Rejected int    `json:"rejected"`
	FreeEnv  int    `json:"free_env_traces"`
	Disagree int    `json:"disagree"`
	// UnnamedSend counts the traces with a send line that does not name
	// its message: an input error for checker trace, a rejection for TLC
	// (docs/trace.md), which agree when TLC rejects that very line.
	UnnamedSend int     `json:"unnamed_send"`
	Lines       int     `json:"lines"`
	GoSeconds   float64 `json:"go_seconds"`
	TLCSeconds  float64 `json:"tlc_seconds"`
	TLCStates   int64   `json:"tlc_distinct_states"`
}

// parityFlags are the flags of `checker traceparity`.
type parityFlags struct {
	jar, mods, dir, tlaDir string
	perKind, steps, freeN  int
	withSim, asJSON        bool
	onlySim                bool
	withFull, onlyFull     bool
}

// runTraceParity is `checker traceparity`: a corpus of traces (model walks
// of both transports, walks of the model with each bug, mutated walks,
// model-scope simulations of the implementation) checked by `checker
// trace` and by TLC on tla/TraceDrainRegistration.tla, which must agree on
// every verdict and on the number of lines explained. Exit 0 when they
// agree, 1 when they do not, 2 on usage or operational errors.
func runTraceParity(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "checker traceparity: "+format+"\n", a...)
		return exitUsage
	}
	f, code, ok := parseParityFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	var err error
	if f.dir == "" {
		if f.dir, err = os.MkdirTemp("", "traceparity"); err != nil {
			return fail("%v", err)
		}
	}
	if f.dir, err = filepath.Abs(f.dir); err != nil {
		return fail("%v", err)
	}
	batches, err := parityCorpus(ctx, f.dir, f.perKind, f.steps, f.freeN, f.withSim || f.onlySim, f.withFull || f.onlyFull)
	switch {
	case f.onlyFull && f.onlySim:
		batches = slices.DeleteFunc(batches, func(b parityBatch) bool { return !strings.HasPrefix(b.name, "sim-") })
	case f.onlyFull:
		batches = slices.DeleteFunc(batches, func(b parityBatch) bool { return !strings.HasPrefix(b.name, "sim-full-") })
	case f.onlySim:
		batches = slices.DeleteFunc(batches, func(b parityBatch) bool { return !strings.HasPrefix(b.name, "sim-") })
	}
	if err != nil {
		return fail("%v", err)
	}
	out := parityOutput{Result: "agree"}
	for _, b := range batches {
		if err := out.check(ctx, &f, b, stderr); err != nil {
			return fail("%v", err)
		}
	}
	if f.asJSON {
		r := report{Command: "traceparity", Outcome: outcomeOK, Seconds: out.GoSeconds + out.TLCSeconds, Parity: &out}
		if out.Disagree > 0 {
			r.Outcome = outcomeUnexpected
		}
		if err := writeReport(stdout, r); err != nil {
			return fail("%v", err)
		}
	} else {
		fmt.Fprintf(stdout, "traceparity: %d traces (%d accepted, %d rejected, %d of those a send line without its message; %d also with TLC's free environment), %d lines, in %s\n",
			out.Traces, out.Accepted, out.Rejected, out.UnnamedSend, out.FreeEnv, out.Lines, f.dir)
		fmt.Fprintf(stdout, "  checker trace %.3fs, TLC %.1fs (%d distinct states); %d disagreements\n",
			out.GoSeconds, out.TLCSeconds, out.TLCStates, out.Disagree)
	}
	if out.Disagree > 0 {
		return exitViolation
	}
	return exitOK
}

// parseParityFlags reads and checks the flags of `checker traceparity`.
func parseParityFlags(args []string, stdout, stderr io.Writer) (f parityFlags, code int, ok bool) {
	fs := flag.NewFlagSet("checker traceparity", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.jar, "jar", os.Getenv("TLA2TOOLS"), "tla2tools.jar (default $TLA2TOOLS)")
	fs.StringVar(&f.mods, "modules", os.Getenv("TLA_COMMUNITY_MODULES"), "CommunityModules-deps.jar (default $TLA_COMMUNITY_MODULES)")
	fs.StringVar(&f.dir, "out", "", "directory for the corpus (default: a new temporary directory)")
	fs.StringVar(&f.tlaDir, "tla", "tla", "directory of TraceDrainRegistration.tla")
	fs.IntVar(&f.perKind, "n", 30, "traces per kind and transport")
	fs.IntVar(&f.steps, "steps", 80, "lines per generated trace")
	fs.IntVar(&f.freeN, "free", 20, "traces (of 25 lines) also checked with TLC's free environment (TRACE_FREE_ENV)")
	fs.BoolVar(&f.withSim, "sim", false, "also the traces of model-scope simulations of the implementation (each run's per-process traces merged)")
	fs.BoolVar(&f.onlySim, "only-sim", false, "only the merged traces of model-scope simulations (n per transport)")
	fs.BoolVar(&f.withFull, "full", false, "also the merged traces of full simulations (no model scope: validated through the refinement mapping of docs/trace.md; n per transport of 4*steps steps)")
	fs.BoolVar(&f.onlyFull, "only-full", false, "only the merged traces of full simulations (with --only-sim, those of model-scope simulations too)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object (see docs/checker.md, \"JSON output\")")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return f, code, false
	}
	if f.jar == "" || f.mods == "" {
		fmt.Fprintln(stderr, "checker traceparity: set --jar/$TLA2TOOLS (tla2tools.jar) and --modules/$TLA_COMMUNITY_MODULES (CommunityModules-deps.jar); both are built from their public sources outside this repository")
		return f, exitUsage, false
	}
	if flagErr(stderr, "checker traceparity", intRange("n", int64(f.perKind), 1, 10_000),
		intRange("steps", int64(f.steps), 1, 100_000), intRange("free", int64(f.freeN), 0, 10_000)) {
		return f, exitUsage, false
	}
	return f, exitOK, true
}

// check checks the traces of b with `checker trace` and with TLC, and
// counts them and their disagreements (each said on stderr) in o.
func (o *parityOutput) check(ctx context.Context, f *parityFlags, b parityBatch, stderr io.Writer) error {
	goRes := map[string]tracecheck.Result{}
	start := time.Now()
	unnamed := map[string]bool{}
	for _, file := range b.files {
		r, err := tracecheck.CheckFile(file, nil, tracecheck.Options{})
		if errors.Is(err, tracecheck.ErrUnnamedSend) {
			// TLC rejects the line: compare the lines explained before it.
			r.Verdict, unnamed[file], err = tracecheck.Rejected, true, nil
		}
		if err != nil {
			return err
		}
		goRes[file] = r
		o.Lines += r.Lines
	}
	o.GoSeconds += time.Since(start).Seconds()
	// TLC evaluates the trace spec's file-reading definitions again for
	// each initial state (one per trace), so a run's cost grows with the
	// square of its traces: chunks of parityChunk traces.
	tlc := map[string]tlcVerdict{}
	for lo := 0; lo < len(b.files); lo += parityChunk {
		chunk := b
		chunk.name = fmt.Sprintf("%s-%d", b.name, lo/parityChunk+1)
		chunk.files = b.files[lo:min(lo+parityChunk, len(b.files))]
		start = time.Now()
		res, states, err := runTraceTLC(ctx, f.jar, f.mods, f.tlaDir, f.dir, chunk)
		if err != nil {
			return fmt.Errorf("batch %s: %v", chunk.name, err)
		}
		o.TLCSeconds += time.Since(start).Seconds()
		o.TLCStates += states
		for file, v := range res {
			tlc[file] = v
		}
	}
	for _, file := range b.files {
		g, t := goRes[file], tlc[file]
		o.Traces++
		if b.free {
			o.FreeEnv++
		}
		if unnamed[file] {
			o.UnnamedSend++
		}
		if g.Verdict == tracecheck.OK {
			o.Accepted++
		} else {
			o.Rejected++
		}
		if t.verdict != string(map[bool]string{true: "accepted", false: "rejected"}[g.Verdict == tracecheck.OK]) ||
			t.lines != g.Lines || g.Verdict == tracecheck.Incomplete {
			o.Disagree++
			o.Result = "disagree"
			fmt.Fprintf(stderr, "disagree: %s: checker %s after %d lines, TLC %s after %d\n", file, g.Verdict, g.Lines, t.verdict, t.lines)
		}
	}
	return nil
}

// parityCorpus writes the corpus into dir, one batch per header.
func parityCorpus(ctx context.Context, dir string, n, steps, freeN int, withSim, withFull bool) ([]parityBatch, error) {
	var batches []parityBatch
	for _, tr := range []string{spec.TransportHeartbeat, spec.TransportLogCoord} {
		good := tracecheck.TraceConfig(spec.DefaultConfig())
		good.Transport = tr
		gm, err := spec.New(good)
		if err != nil {
			return nil, err
		}
		rng := rand.New(rand.NewPCG(uint64(len(tr)), 42))
		b, err := walkBatch(dir, tr, good, gm, rng, n, steps)
		if err != nil {
			return nil, err
		}
		batches = append(batches, b)
		for _, full := range []bool{false, true} {
			if (!full && !withSim) || (full && !withFull) {
				continue
			}
			sb, err := simBatch(ctx, dir, tr, n, steps, full)
			if err != nil {
				return nil, err
			}
			if len(sb.files) > 0 {
				batches = append(batches, sb)
			}
		}
		fb, err := freeBatch(dir, tr, good, gm, rng, freeN)
		if err != nil {
			return nil, err
		}
		if len(fb.files) > 0 {
			batches = append(batches, fb)
		}
	}
	return batches, nil
}

// writeParityTrace writes lines, with the header of cfg, to
// dir/sub/name.ndjson and returns its path.
func writeParityTrace(dir, sub, name string, cfg spec.Config, lines []tracecheck.Line) (string, error) {
	d := filepath.Join(dir, sub)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(d, name+".ndjson")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	err = tracecheck.Write(f, tracecheck.HeaderFor(cfg, "checker traceparity"), lines)
	return path, errors.Join(err, f.Close())
}

// walkBatch is the batch of transport tr's walks of the model gm (of
// good), each also mutated, and the walks of the model with each of its
// bugs (the header naming good).
func walkBatch(dir, tr string, good spec.Config, gm *spec.Model, rng *rand.Rand, n, steps int) (parityBatch, error) {
	b := parityBatch{name: tr}
	add := func(name string, lines []tracecheck.Line) error {
		p, err := writeParityTrace(dir, tr, name, good, lines)
		b.files = append(b.files, p)
		return err
	}
	for s := 1; s <= n; s++ {
		lines, err := tracecheck.Generate(gm, uint64(s), steps)
		if err != nil {
			return b, err
		}
		if err := add(fmt.Sprintf("walk-%d", s), lines); err != nil {
			return b, err
		}
		if err := add(fmt.Sprintf("mutant-%d", s), mutate(rng, lines)); err != nil {
			return b, err
		}
		// The two cases where the checker once differed from TLC, each
		// in every walk that has the line to change: a send line without
		// its message, an epoch past the header's MaxEpoch.
		for _, bad := range []struct {
			name string
			can  func(tracecheck.Line) bool
			edit func(*tracecheck.Line)
		}{
			{"nomsg", isNamedSend, func(l *tracecheck.Line) { l.Params = cloneMap(l.Params); delete(l.Params, "m") }},
			{"pastepoch", func(l tracecheck.Line) bool { return l.Vars["epoch"] != nil },
				func(l *tracecheck.Line) { l.Vars = cloneMap(l.Vars); l.Vars["epoch"] = spec.MaxEpochLimit + 1 }},
		} {
			if j, ok := mutateLine(lines, len(lines)/2, bad.can); ok {
				out := slices.Clone(lines)
				bad.edit(&out[j])
				if err := add(fmt.Sprintf("%s-%d", bad.name, s), out); err != nil {
					return b, err
				}
			}
		}
	}
	for _, bn := range spec.BugNames() {
		bug, _ := spec.ParseBug(bn)
		buggy := good
		buggy.Bugs = bug
		bm, err := spec.New(buggy)
		if err != nil {
			continue // a bug of the other transport
		}
		for s := 1; s <= max(1, n/5); s++ {
			lines, err := tracecheck.Generate(bm, uint64(s), steps)
			if err != nil {
				return b, err
			}
			if err := add(fmt.Sprintf("bug-%s-%d", bn, s), lines); err != nil {
				return b, err
			}
		}
	}
	return b, nil
}

// simBatch is the batch of transport tr's simulations of the
// implementation, model-scope ones or (full) full ones, whose traces name
// the refinement mapping (docs/trace.md, "Every run"): each run traced per
// process and merged (docs/trace.md, multi-process runs), the merged trace
// being what both checkers read.
func simBatch(ctx context.Context, dir, tr string, n, steps int, full bool) (parityBatch, error) {
	name := "sim-" + tr
	if full {
		name = "sim-full-" + tr
	}
	sb := parityBatch{name: name}
	for s := 1; s <= n; s++ {
		cfg := sim.Config{Seed: uint64(s), Steps: steps * 4, Transport: node.Transport(tr), ModelScope: !full}
		path := filepath.Join(dir, name, fmt.Sprintf("seed-%d.ndjson", s))
		runs := filepath.Join(dir, name+"-runs")
		if _, err := runSimTraced(ctx, cfg, runs); err != nil {
			return sb, err
		}
		files, _, err := tracecheck.RunFiles(runDir(runs, cfg))
		if err != nil {
			return sb, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return sb, err
		}
		if err := writeMerged(files, path); err != nil {
			return sb, err
		}
		sb.files = append(sb.files, path)
		if full {
			// A full run's merged trace once more, with one mutation, for
			// the mapping's rejections (its header kept: the mapping stays
			// named; the stamps dropped: one order, the merged one).
			mp := filepath.Join(dir, name, fmt.Sprintf("mutant-%d.ndjson", s))
			if err := writeMutatedRun(path, mp, rand.New(rand.NewPCG(uint64(s), 7))); err != nil {
				return sb, err
			}
			sb.files = append(sb.files, mp)
		}
	}
	return sb, nil
}

// writeMutatedRun writes the merged trace at path, mutated once (mutate),
// to out: the header as it is, the lines without their stamps.
func writeMutatedRun(path, out string, rng *rand.Rand) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	head, rest, _ := bytes.Cut(data, []byte("\n"))
	var lines []tracecheck.Line
	dec := json.NewDecoder(bytes.NewReader(rest))
	dec.UseNumber()
	for dec.More() {
		var l tracecheck.Line
		if err := dec.Decode(&l); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		l.Params, _ = intNumbers(l.Params).(map[string]any)
		l.Vars, _ = intNumbers(l.Vars).(map[string]any)
		lines = append(lines, l)
	}
	var buf bytes.Buffer
	buf.Write(head)
	buf.WriteByte('\n')
	enc := json.NewEncoder(&buf)
	for _, l := range mutate(rng, lines) {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// intNumbers turns the JSON numbers of v (decoded with UseNumber) into
// ints, as mutate expects of a generated line's values.
func intNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = intNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = intNumbers(e)
		}
		return x
	}
	return v
}

// freeBatch is the batch of transport tr's short walks of gm (of good;
// every other one mutated) checked with TLC's free environment.
func freeBatch(dir, tr string, good spec.Config, gm *spec.Model, rng *rand.Rand, freeN int) (parityBatch, error) {
	fb := parityBatch{name: "free-" + tr, free: true}
	for s := 1; s <= freeN; s++ {
		lines, err := tracecheck.Generate(gm, uint64(1000+s), 25)
		if err != nil {
			return fb, err
		}
		if s%2 == 0 {
			lines = mutate(rng, lines)
		}
		p, err := writeParityTrace(dir, "free-"+tr, fmt.Sprintf("t-%d", s), good, lines)
		if err != nil {
			return fb, err
		}
		fb.files = append(fb.files, p)
	}
	return fb, nil
}

// mutate returns lines with one mutation: a line dropped, two adjacent
// lines swapped, an observed count, epoch or liveness changed, an epoch
// past the header's MaxEpoch (a rejection, as under TLC), or a send line's
// message left out (an input error for checker trace, a rejection for
// TLC: docs/trace.md).
func mutate(rng *rand.Rand, lines []tracecheck.Line) []tracecheck.Line {
	out := slices.Clone(lines)
	if len(out) < 2 {
		return out
	}
	i := rng.IntN(len(out) - 1)
	switch rng.IntN(5) {
	case 0:
		return slices.Delete(out, i, i+1)
	case 1:
		out[i], out[i+1] = out[i+1], out[i]
		return out
	case 2:
		if j, ok := mutateLine(out, i, func(l tracecheck.Line) bool { return l.Vars["epoch"] != nil }); ok {
			out[j].Vars = cloneMap(out[j].Vars)
			out[j].Vars["epoch"] = spec.MaxEpochLimit + 1 // the header's MaxEpoch is the limit
			return out
		}
	case 3:
		if j, ok := mutateLine(out, i, isNamedSend); ok {
			out[j].Params = cloneMap(out[j].Params)
			delete(out[j].Params, "m")
			return out
		}
	}
	for k := range out {
		j := (i + k) % len(out)
		vars := map[string]any{}
		for name, v := range out[j].Vars {
			vars[name] = v
		}
		for _, name := range []string{"count", "epoch", "coordEpoch", "liveness", "coordLiveness", "coordCount"} {
			v, ok := vars[name]
			if !ok {
				continue
			}
			switch x := v.(type) {
			case int:
				vars[name] = x + 1
				if x+1 >= spec.MaxEpochLimit { // within the trace bounds: a rejection, not an incomplete trace
					vars[name] = x - 1
				}
			case string:
				vars[name] = map[string]string{"ALIVE": "DRAINING", "DRAINING": "STOPPING", "STOPPING": "ALIVE"}[x]
			}
			out[j].Vars = vars
			return out
		}
	}
	return out
}

// mutateLine returns the first line from i on (wrapping around) that
// can take a mutation.
func mutateLine(lines []tracecheck.Line, i int, can func(tracecheck.Line) bool) (int, bool) {
	for k := range lines {
		if j := (i + k) % len(lines); can(lines[j]) {
			return j, true
		}
	}
	return 0, false
}

// isNamedSend reports whether l is a send that names its message (the
// actions called *Send*, whose m is the message sent, not one received).
func isNamedSend(l tracecheck.Line) bool {
	return strings.Contains(l.Action, "Send") && !strings.Contains(l.Action, "Recv") && l.Params["m"] != nil
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

type tlcVerdict struct {
	verdict string
	lines   int
}

var tlcTraceLine = regexp.MustCompile(`^"TRACE (\S+) (accepted|rejected) (-?\d+)"`)
var tlcDistinct = regexp.MustCompile(`([\d,]+) distinct states found`)

// runTraceTLC runs TLC on TraceDrainRegistration.tla for one batch.
func runTraceTLC(ctx context.Context, jar, mods, tlaDir, dir string, b parityBatch) (map[string]tlcVerdict, int64, error) {
	man := filepath.Join(dir, b.name+".manifest.ndjson")
	var sb strings.Builder
	for _, f := range b.files {
		line, _ := json.Marshal(map[string]string{"file": f})
		sb.Write(append(line, '\n'))
	}
	if err := os.WriteFile(man, []byte(sb.String()), 0o644); err != nil {
		return nil, 0, err
	}
	meta, err := os.MkdirTemp("", "tlc-trace-meta")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(meta)
	cmd := exec.CommandContext(ctx, "java", "-XX:+UseParallelGC", "-Djava.io.tmpdir="+meta, "-Xss512m", "-cp", jar+string(os.PathListSeparator)+mods,
		"tlc2.TLC", "-workers", "1", "-noGenerateSpecTE", "-metadir", meta,
		"-config", "TraceDrainRegistration.cfg", "TraceDrainRegistration.tla")
	cmd.Dir = tlaDir
	cmd.Env = append(os.Environ(), "TRACES="+man)
	if b.free {
		cmd.Env = append(cmd.Env, "TRACE_FREE_ENV=1")
	}
	outb, err := cmd.CombinedOutput()
	if err != nil {
		return nil, 0, fmt.Errorf("TLC: %v\n%s", err, outb)
	}
	res := map[string]tlcVerdict{}
	var states int64
	sc := bufio.NewScanner(strings.NewReader(string(outb)))
	for sc.Scan() {
		if m := tlcTraceLine.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.Atoi(m[3])
			res[m[1]] = tlcVerdict{m[2], n}
		}
		if m := tlcDistinct.FindStringSubmatch(sc.Text()); m != nil {
			states, _ = strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		}
	}
	if len(res) != len(b.files) {
		return nil, 0, fmt.Errorf("TLC reported %d of %d traces:\n%s", len(res), len(b.files), outb)
	}
	return res, states, nil
}
