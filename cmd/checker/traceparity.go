package main

import (
	"bufio"
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

	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/sim"
	"github.com/drainproof/drainproof/internal/tracecheck"
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
	Result     string  `json:"result"` // agree or disagree
	Traces     int     `json:"traces"`
	Accepted   int     `json:"accepted"`
	Rejected   int     `json:"rejected"`
	FreeEnv    int     `json:"free_env_traces"`
	Disagree   int     `json:"disagree"`
	Lines      int     `json:"lines"`
	GoSeconds  float64 `json:"go_seconds"`
	TLCSeconds float64 `json:"tlc_seconds"`
	TLCStates  int64   `json:"tlc_distinct_states"`
}

// runTraceParity is `checker traceparity`: a corpus of traces (model walks
// of both transports, walks of the model with each bug, mutated walks,
// model-scope simulations of the implementation) checked by `checker
// trace` and by TLC on tla/TraceDrainRegistration.tla, which must agree on
// every verdict and on the number of lines explained. Exit 0 when they
// agree, 1 when they do not, 2 on usage or operational errors.
func runTraceParity(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checker traceparity", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jar := fs.String("jar", os.Getenv("TLA2TOOLS"), "tla2tools.jar (default $TLA2TOOLS)")
	mods := fs.String("modules", os.Getenv("TLA_COMMUNITY_MODULES"), "CommunityModules-deps.jar (default $TLA_COMMUNITY_MODULES)")
	dir := fs.String("out", "", "directory for the corpus (default: a new temporary directory)")
	tlaDir := fs.String("tla", "tla", "directory of TraceDrainRegistration.tla")
	perKind := fs.Int("n", 30, "traces per kind and transport")
	steps := fs.Int("steps", 80, "lines per generated trace")
	freeN := fs.Int("free", 20, "traces (of 25 lines) also checked with TLC's free environment (TRACE_FREE_ENV)")
	withSim := fs.Bool("sim", false, "also the traces of model-scope simulations of the implementation")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "checker traceparity: "+format+"\n", a...)
		return exitUsage
	}
	if *jar == "" || *mods == "" {
		return fail("set --jar/$TLA2TOOLS (tla2tools.jar) and --modules/$TLA_COMMUNITY_MODULES (CommunityModules-deps.jar); both are built from their public sources outside this repository")
	}
	if flagErr(stderr, "checker traceparity", intRange("n", int64(*perKind), 1, 10_000),
		intRange("steps", int64(*steps), 1, 100_000), intRange("free", int64(*freeN), 0, 10_000)) {
		return exitUsage
	}
	var err error
	if *dir == "" {
		if *dir, err = os.MkdirTemp("", "traceparity"); err != nil {
			return fail("%v", err)
		}
	}
	if *dir, err = filepath.Abs(*dir); err != nil {
		return fail("%v", err)
	}
	batches, err := parityCorpus(ctx, *dir, *perKind, *steps, *freeN, *withSim)
	if err != nil {
		return fail("%v", err)
	}
	out := parityOutput{Result: "agree"}
	for _, b := range batches {
		goRes := map[string]tracecheck.Result{}
		start := time.Now()
		for _, f := range b.files {
			r, err := tracecheck.CheckFile(f, nil, tracecheck.Options{})
			if err != nil {
				return fail("%v", err)
			}
			goRes[f] = r
			out.Lines += r.Lines
		}
		out.GoSeconds += time.Since(start).Seconds()
		// TLC evaluates the trace spec's file-reading definitions again for
		// each initial state (one per trace), so a run's cost grows with the
		// square of its traces: chunks of parityChunk traces.
		tlc := map[string]tlcVerdict{}
		for lo := 0; lo < len(b.files); lo += parityChunk {
			chunk := b
			chunk.name = fmt.Sprintf("%s-%d", b.name, lo/parityChunk+1)
			chunk.files = b.files[lo:min(lo+parityChunk, len(b.files))]
			start = time.Now()
			res, states, err := runTraceTLC(ctx, *jar, *mods, *tlaDir, *dir, chunk)
			if err != nil {
				return fail("batch %s: %v", chunk.name, err)
			}
			out.TLCSeconds += time.Since(start).Seconds()
			out.TLCStates += states
			for f, v := range res {
				tlc[f] = v
			}
		}
		for _, f := range b.files {
			g, t := goRes[f], tlc[f]
			out.Traces++
			if b.free {
				out.FreeEnv++
			}
			if g.Verdict == tracecheck.OK {
				out.Accepted++
			} else {
				out.Rejected++
			}
			if t.verdict != string(map[bool]string{true: "accepted", false: "rejected"}[g.Verdict == tracecheck.OK]) ||
				t.lines != g.Lines || g.Verdict == tracecheck.Incomplete {
				out.Disagree++
				out.Result = "disagree"
				fmt.Fprintf(stderr, "disagree: %s: checker %s after %d lines, TLC %s after %d\n", f, g.Verdict, g.Lines, t.verdict, t.lines)
			}
		}
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			return exitUsage
		}
	} else {
		fmt.Fprintf(stdout, "traceparity: %d traces (%d accepted, %d rejected; %d also with TLC's free environment), %d lines, in %s\n",
			out.Traces, out.Accepted, out.Rejected, out.FreeEnv, out.Lines, *dir)
		fmt.Fprintf(stdout, "  checker trace %.3fs, TLC %.1fs (%d distinct states); %d disagreements\n",
			out.GoSeconds, out.TLCSeconds, out.TLCStates, out.Disagree)
	}
	if out.Disagree > 0 {
		return exitViolation
	}
	return exitOK
}

// parityCorpus writes the corpus into dir, one batch per header.
func parityCorpus(ctx context.Context, dir string, n, steps, freeN int, withSim bool) ([]parityBatch, error) {
	var batches []parityBatch
	write := func(sub, name string, cfg spec.Config, lines []tracecheck.Line) (string, error) {
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
	for _, tr := range []string{spec.TransportHeartbeat, spec.TransportLogCoord} {
		good := tracecheck.TraceConfig(spec.DefaultConfig())
		good.Transport = tr
		gm, err := spec.New(good)
		if err != nil {
			return nil, err
		}
		b := parityBatch{name: tr}
		add := func(name string, lines []tracecheck.Line) error {
			p, err := write(tr, name, good, lines)
			b.files = append(b.files, p)
			return err
		}
		rng := rand.New(rand.NewPCG(uint64(len(tr)), 42))
		for s := 1; s <= n; s++ {
			lines, err := tracecheck.Generate(gm, uint64(s), steps)
			if err != nil {
				return nil, err
			}
			if err := add(fmt.Sprintf("walk-%d", s), lines); err != nil {
				return nil, err
			}
			if err := add(fmt.Sprintf("mutant-%d", s), mutate(rng, lines)); err != nil {
				return nil, err
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
					return nil, err
				}
				if err := add(fmt.Sprintf("bug-%s-%d", bn, s), lines); err != nil {
					return nil, err
				}
			}
		}
		batches = append(batches, b)
		// The implementation: model-scope simulations.
		sb := parityBatch{name: "sim-" + tr}
		for s := 1; s <= n && withSim; s++ {
			cfg := sim.Config{Seed: uint64(s), Steps: steps * 4, Transport: node.Transport(tr), ModelScope: true}
			path := filepath.Join(dir, "sim-"+tr, fmt.Sprintf("seed-%d.ndjson", s))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, err
			}
			if _, err := runSimTraced(ctx, cfg, filepath.Dir(path)); err != nil {
				return nil, err
			}
			if err := os.Rename(filepath.Join(filepath.Dir(path), fmt.Sprintf("seed-%d-%s.ndjson", s, tr)), path); err != nil {
				return nil, err
			}
			sb.files = append(sb.files, path)
		}
		if len(sb.files) > 0 {
			batches = append(batches, sb)
		}
		// TLC's free environment, on short traces.
		fb := parityBatch{name: "free-" + tr, free: true}
		for s := 1; s <= freeN; s++ {
			lines, err := tracecheck.Generate(gm, uint64(1000+s), 25)
			if err != nil {
				return nil, err
			}
			if s%2 == 0 {
				lines = mutate(rng, lines)
			}
			p, err := write("free-"+tr, fmt.Sprintf("t-%d", s), good, lines)
			if err != nil {
				return nil, err
			}
			fb.files = append(fb.files, p)
		}
		if len(fb.files) > 0 {
			batches = append(batches, fb)
		}
	}
	return batches, nil
}

// mutate returns lines with one mutation: a line dropped, two adjacent
// lines swapped, or an observed count, epoch or liveness changed.
func mutate(rng *rand.Rand, lines []tracecheck.Line) []tracecheck.Line {
	out := slices.Clone(lines)
	if len(out) < 2 {
		return out
	}
	i := rng.IntN(len(out) - 1)
	switch rng.IntN(3) {
	case 0:
		return slices.Delete(out, i, i+1)
	case 1:
		out[i], out[i+1] = out[i+1], out[i]
		return out
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
