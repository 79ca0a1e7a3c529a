package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drainproof/drainproof/harness/drainmodel"
	"github.com/drainproof/drainproof/tla/tlacfg"
)

// tlcRun is what a TLC run printed, parsed.
type tlcRun struct {
	Outcome     string // ok, violated, deadlock, or error
	Violated    string
	Distinct    int64
	Generated   int64
	Depth       int
	TraceLength int
	Seconds     float64 // TLC's own "Finished in", whole seconds
	// Wall is the pass's wall time, the JVM's start and SANY included.
	Wall    float64
	Version string
}

var (
	reGenerated = regexp.MustCompile(`(?m)^([\d,]+) states generated, ([\d,]+) distinct states found`)
	reDepth     = regexp.MustCompile(`(?m)depth of the complete state graph search is (\d+)`)
	reState     = regexp.MustCompile(`(?m)^State (\d+):`)
	reInvariant = regexp.MustCompile(`(?m)^Error: Invariant (\w+) is violated`)
	reAction    = regexp.MustCompile(`(?m)^Error: Action property (\w+) is violated`)
	reTemporal  = regexp.MustCompile(`(?m)^Error: Temporal property (\w+) was violated`)
	reFinished  = regexp.MustCompile(`(?m)^Finished in (?:(\d+)h )?(?:(\d+)min )?(\d+)s`)
	reVersion   = regexp.MustCompile(`(?m)^TLC2 Version (.*)$`)
)

// parseTLC reads TLC's standard output. temporal names the liveness
// property a "Temporal properties were violated" refers to (TLC does not
// name it).
func parseTLC(out string, temporal string) (tlcRun, error) {
	var r tlcRun
	switch {
	case strings.Contains(out, "No error has been found"):
		r.Outcome = "ok"
	case reInvariant.MatchString(out):
		r.Outcome, r.Violated = "violated", reInvariant.FindStringSubmatch(out)[1]
	case reAction.MatchString(out):
		r.Outcome, r.Violated = "violated", reAction.FindStringSubmatch(out)[1]
	case reTemporal.MatchString(out):
		r.Outcome, r.Violated = "violated", reTemporal.FindStringSubmatch(out)[1]
	case strings.Contains(out, "Temporal properties were violated"):
		r.Outcome, r.Violated = "violated", temporal
	case strings.Contains(out, "Deadlock reached"):
		r.Outcome = "deadlock"
	default:
		return r, errors.New("TLC printed no verdict (see its output above)")
	}
	if m := reGenerated.FindAllStringSubmatch(out, -1); m != nil {
		last := m[len(m)-1]
		r.Generated, _ = strconv.ParseInt(strings.ReplaceAll(last[1], ",", ""), 10, 64)
		r.Distinct, _ = strconv.ParseInt(strings.ReplaceAll(last[2], ",", ""), 10, 64)
	}
	if m := reDepth.FindStringSubmatch(out); m != nil {
		r.Depth, _ = strconv.Atoi(m[1])
	}
	for _, m := range reState.FindAllStringSubmatch(out, -1) {
		if n, _ := strconv.Atoi(m[1]); n > r.TraceLength {
			r.TraceLength = n
		}
	}
	if m := reFinished.FindStringSubmatch(out); m != nil {
		h, _ := strconv.Atoi(m[1])
		mi, _ := strconv.Atoi(m[2])
		s, _ := strconv.Atoi(m[3])
		r.Seconds = float64(h*3600 + mi*60 + s)
	}
	if m := reVersion.FindStringSubmatch(out); m != nil {
		r.Version = strings.TrimSpace(m[1])
	}
	return r, nil
}

// tlcFlags are the flags of `checker tlc`.
type tlcFlags struct {
	path, jar, only, heap              string
	all, record, whole, asJSON, versus bool
	workers                            int
	// maxSeconds selects the models whose recorded TLC time (both
	// passes) is at most this many seconds; 0 selects by size only.
	maxSeconds float64
}

// tlcSession is one `checker tlc` run: the flags, the manifest, the
// folder of its cfg files and TLC's scratch folder.
type tlcSession struct {
	f              tlcFlags
	man            *drainmodel.Manifest
	dir, meta      string
	stdout, stderr io.Writer
	// jvm is the JVM's memory flags (--heap).
	jvm []string
}

// tlcResult is what TLC found on one model: the first run and, for a
// safety violation, the -continue run.
type tlcResult struct {
	r, cont      tlcRun
	firstWorkers int
	// ours is our checker's run with TLC's workers, right after TLC's
	// (--versus, on a model that holds).
	ours *drainmodel.Row
}

// errTLCInterrupted is a TLC run that Ctrl-C stopped.
var errTLCInterrupted = errors.New("interrupted")

// runTLC is `checker tlc`: run TLC itself on the models of the manifest
// and compare its verdicts and figures with the recorded ones (or, with
// --record, record them).
func runTLC(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	t := &tlcSession{stdout: stdout, stderr: stderr}
	if code, ok := t.parse(args); !ok {
		return code
	}
	if !t.load() {
		return exitUsage
	}
	if len(t.jvm) > 0 {
		fmt.Fprintf(stderr, "TLC's JVM: %s\n", strings.Join(t.jvm, " "))
	}
	var err error
	if t.meta, err = os.MkdirTemp("", "drainproof-tlc-"); err != nil {
		fmt.Fprintf(stderr, "checker tlc: %v\n", err)
		return exitUsage
	}
	defer os.RemoveAll(t.meta)
	total := 0
	for i := range t.man.Models {
		if t.selected(&t.man.Models[i]) {
			total++
		}
	}
	start := time.Now()
	var rows []modelRow
	var sum summary
	interrupted := false
	for i := range t.man.Models {
		mm := &t.man.Models[i]
		if !t.selected(mm) {
			continue
		}
		fmt.Fprintf(stderr, "[%d/%d] %s: running TLC\n", sum.Models+1, total, mm.Config)
		res, err := t.model(ctx, i)
		if errors.Is(err, errTLCInterrupted) {
			interrupted = true
			break
		}
		if err != nil {
			fmt.Fprintf(stderr, "checker tlc: %v\n", err)
			return exitUsage
		}
		sum.Models++
		rows = append(rows, t.row(mm, res, &sum))
	}
	if t.f.record {
		if err := t.man.Write(t.f.path); err != nil {
			fmt.Fprintf(stderr, "checker tlc: %v\n", err)
			return exitUsage
		}
	}
	sum.NotRun = total - sum.Models
	if interrupted {
		fmt.Fprintf(stderr, "checker tlc: interrupted after %d models; the others were not run\n", sum.Models)
	}
	return endTable(stdout, stderr, "tlc", t.f.asJSON, sum, rows, start, nil)
}

// parse reads the flags.
func (t *tlcSession) parse(args []string) (code int, ok bool) {
	fs := flag.NewFlagSet("checker tlc", flag.ContinueOnError)
	fs.SetOutput(t.stderr)
	f := &t.f
	fs.StringVar(&f.path, "models", "tla/models.json", "the manifest of models")
	fs.StringVar(&f.jar, "jar", os.Getenv("TLA2TOOLS"), "path of tla2tools.jar (default $TLA2TOOLS)")
	fs.BoolVar(&f.all, "all", false, "also run the models marked large")
	fs.IntVar(&f.workers, "workers", 2, "TLC -workers (1..1024), and the workers of ours with --versus (fewer than the cores also run on that many: GOMAXPROCS)")
	fs.StringVar(&f.only, "only", "", "run only the model whose config is this file name (large or not)")
	fs.BoolVar(&f.record, "record", false, "write TLC's figures into the manifest instead of comparing")
	fs.BoolVar(&f.whole, "continue", true, "for a safety violation, also run TLC -continue for the whole space's distinct count (false: the trace only; a recorded count is then kept)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object (see docs/checker.md, \"JSON output\")")
	fs.BoolVar(&f.versus, "versus", false, "after TLC, run our checker on each model expected ok with the same workers and print both times and their ratio")
	fs.Float64Var(&f.maxSeconds, "max-seconds", 0, "run only the models whose recorded TLC seconds (with the -continue pass, if it runs) are at most this (0: no bound)")
	fs.StringVar(&f.heap, "heap", "", "TLC's Java heap (-Xmx), e.g. 4GiB; default half the machine's memory (or cgroup limit), with a quarter more for off-heap fingerprints; 0: the JVM's defaults")
	fs.Usage = usageFunc(fs, "checker tlc [--models FILE] [--jar tla2tools.jar] [--all | --only CFG | --max-seconds S] [--workers N] [--heap SIZE] [--record] [--json] [--versus]",
		"Run TLC itself on the models of the manifest and compare its verdicts and counts with the recorded ones\n(or, with --record, record them). TLC's progress lines are shown on stderr.")
	if code, ok := parseFlags(fs, args, t.stdout, t.stderr); !ok {
		return code, false
	}
	if flagErr(t.stderr, "checker tlc", intRange("workers", int64(f.workers), 1, maxWorkers)) {
		return exitUsage, false
	}
	if f.only != "" && flagErr(t.stderr, "checker tlc", notWith(setFlags(fs), "--only", "--only runs that one model, large or not, whatever its recorded time", "all", "max-seconds")) {
		return exitUsage, false
	}
	if f.maxSeconds < 0 || f.maxSeconds > 1e7 || f.maxSeconds != f.maxSeconds {
		fmt.Fprintf(t.stderr, "checker tlc: --max-seconds %v: want 0 (no bound) up to 10000000\n", f.maxSeconds)
		return exitUsage, false
	}
	var err error
	if t.jvm, err = tlcHeapFlags(f.heap, machineMemory()); err != nil {
		fmt.Fprintf(t.stderr, "checker tlc: %v\n", err)
		return exitUsage, false
	}
	if f.versus && f.record {
		fmt.Fprintln(t.stderr, "checker tlc: --versus compares our checker with the recorded figures; it cannot be used with --record")
		return exitUsage, false
	}
	return exitOK, true
}

// load reads the manifest and makes sure TLC can run; it says why not
// and returns false if not.
func (t *tlcSession) load() bool {
	fail := func(format string, a ...any) bool {
		fmt.Fprintf(t.stderr, "checker tlc: "+format+"\n", a...)
		return false
	}
	man, err := drainmodel.ReadManifest(t.f.path)
	if err != nil {
		return fail("%v", err)
	}
	t.man, t.dir = man, filepath.Dir(t.f.path)
	if t.f.only != "" && !slices.ContainsFunc(man.Models, func(m drainmodel.Entry) bool { return m.Config == t.f.only }) {
		return fail("--only %s: no such model in %s (see its \"config\" fields)", t.f.only, t.f.path)
	}
	if t.f.jar == "" {
		return fail("no TLC: set TLA2TOOLS to the path of tla2tools.jar (TLC is not served by any package registry; build it from the tlaplus sources)")
	}
	if _, err := os.Stat(t.f.jar); err != nil {
		return fail("TLA2TOOLS: %v", err)
	}
	if _, err := exec.LookPath("java"); err != nil {
		return fail("java is not installed")
	}
	return true
}

// selected reports whether the flags select mm. Under --max-seconds a
// model with no recorded TLC time is not selected: nothing says it is quick.
func (t *tlcSession) selected(mm *drainmodel.Entry) bool {
	if t.f.only != "" {
		return mm.Config == t.f.only
	}
	if mm.Large && !t.f.all {
		return false
	}
	if t.f.maxSeconds > 0 {
		if mm.TLC == nil {
			return false
		}
		secs := mm.TLC.Seconds
		if t.runsContinue(mm) {
			secs += mm.TLC.ContinueSeconds
		}
		return secs <= t.f.maxSeconds
	}
	return true
}

// runsContinue reports whether a safety violation of mm gets the -continue
// pass: with --record, and when comparing only if a -continue count is
// recorded (without one the pass, which explores the bug model's whole
// space, would have nothing to be compared with).
func (t *tlcSession) runsContinue(mm *drainmodel.Entry) bool {
	if !t.f.whole || mm.Expected == "ok" || temporalOf(mm) != "" {
		return false
	}
	return t.f.record || mm.TLC != nil && mm.TLC.ContinueDistinct > 0
}

// tlcHeapFlags turns --heap into the JVM's memory flags. TLC's default
// heap is the JVM's (a quarter of the memory), and its fingerprint set
// spills to disk when its share of the heap is full: a bug model's
// -continue pass then crawls. By default the heap is half of mem (the
// machine's memory or the cgroup's limit), and the direct memory an
// off-heap fingerprint set (TLC's OffHeapDiskFPSet) may take a quarter;
// "0" leaves the JVM's defaults.
func tlcHeapFlags(flag string, mem int64) ([]string, error) {
	var heap, direct int64
	switch flag {
	case "":
		heap, direct = mem/2, mem/4
	case "0":
		return nil, nil
	default:
		n, err := memoryBudget(flag)
		if err != nil || n < 64<<20 {
			return nil, fmt.Errorf("--heap %q: want a size of at least 64MiB such as 4GiB, or 0 for the JVM's defaults", flag)
		}
		heap, direct = n, n/2
	}
	if heap < 64<<20 { // the machine's memory could not be read
		return nil, nil
	}
	return []string{fmt.Sprintf("-Xmx%dm", heap>>20), fmt.Sprintf("-XX:MaxDirectMemorySize=%dm", direct>>20)}, nil
}

// temporalOf is the liveness property a "Temporal properties were
// violated" of mm refers to, or "".
func temporalOf(mm *drainmodel.Entry) string {
	if mm.Liveness || strings.Contains(mm.Violated, "Completes") {
		return mm.Violated
	}
	return ""
}

// model runs TLC on the i-th model of the manifest: once, and for a
// safety violation with --continue once more with -continue.
func (t *tlcSession) model(ctx context.Context, i int) (tlcResult, error) {
	mm := &t.man.Models[i]
	temporal := temporalOf(mm)
	// A safety violation is searched with one worker: only then is
	// TLC's search strictly breadth first and its trace shortest.
	res := tlcResult{firstWorkers: t.f.workers}
	if mm.Expected != "ok" && temporal == "" {
		res.firstWorkers = 1
	}
	// Under a VIEW the first state met with a view is explored: the
	// figures are compared with one worker.
	if cfg, err := tlacfg.ParseFile(configPath(t.dir, mm.Config)); err == nil && cfg.View.Name != "" {
		res.firstWorkers = 1
	}
	var err error
	if res.r, err = t.runOnce(ctx, i, res.firstWorkers); err != nil {
		if errors.Is(err, errTLCInterrupted) {
			return res, err
		}
		return res, fmt.Errorf("%s: %w", mm.Config, err)
	}
	if t.runsContinue(mm) && res.r.Outcome != "ok" {
		if res.cont, err = t.runOnce(ctx, i, t.f.workers, "-continue"); err != nil {
			if errors.Is(err, errTLCInterrupted) {
				return res, err
			}
			return res, fmt.Errorf("%s -continue: %w", mm.Config, err)
		}
	}
	if t.f.versus && mm.Expected == "ok" && res.r.Outcome == "ok" {
		// The speed comparison, side by side in one run.
		fmt.Fprintf(t.stderr, "%s: running our checker with %d worker(s)\n", mm.Config, res.firstWorkers)
		restore := searchProcs(res.firstWorkers)
		ours, err := drainmodel.Verify(ctx, configPath(t.dir, mm.Config), *mm, res.firstWorkers)
		restore()
		if ctx.Err() != nil {
			return res, errTLCInterrupted
		}
		if err != nil {
			return res, fmt.Errorf("%s: our checker: %w", mm.Config, err)
		}
		res.ours = &ours
	}
	return res, nil
}

// runOnce runs TLC with w workers (and the extra arguments) on the i-th
// model of the manifest and parses what it printed; its progress lines
// go to stderr.
func (t *tlcSession) runOnce(ctx context.Context, i, w int, extra ...string) (tlcRun, error) {
	mm := &t.man.Models[i]
	a := append([]string{"-XX:+UseParallelGC"}, t.jvm...)
	a = append(a, "-Djava.io.tmpdir="+t.meta, "-cp", t.f.jar, "tlc2.TLC", "-workers", strconv.Itoa(w), "-noGenerateSpecTE",
		"-metadir", filepath.Join(t.meta, strconv.Itoa(i)+strings.Join(extra, "")), "-config", mm.Config)
	a = append(a, extra...)
	a = append(a, mm.Module+".tla")
	cmd := exec.CommandContext(ctx, "java", a...)
	cmd.Dir = t.dir
	cmd.WaitDelay = time.Second // after Ctrl-C, do not wait for children holding the output open
	var out bytes.Buffer
	both := io.MultiWriter(&out, &progressLines{w: t.stderr})
	cmd.Stdout, cmd.Stderr = both, both // one writer: exec copies both streams on one goroutine
	start := time.Now()
	_ = cmd.Run() // TLC exits non-zero on a violation; the verdict is in its output
	if ctx.Err() != nil {
		return tlcRun{}, errTLCInterrupted
	}
	r, err := parseTLC(out.String(), temporalOf(mm))
	if err != nil {
		fmt.Fprint(t.stderr, out.String())
	}
	r.Wall = time.Since(start).Seconds()
	pass := "TLC"
	if len(extra) > 0 {
		pass += " " + strings.Join(extra, " ")
	}
	fmt.Fprintf(t.stderr, "  %s, %d worker(s): %s in %.0fs (%.1fs wall)\n", pass, w, r.Outcome, r.Seconds, r.Wall)
	return r, err
}

// row records TLC's figures of mm into the manifest (--record) or
// compares them with the recorded ones, prints the model's line and
// counts it in sum.
func (t *tlcSession) row(mm *drainmodel.Entry, res tlcResult, sum *summary) modelRow {
	r := res.r
	row := modelRow{Config: mm.Config, Expected: mm.Expected, Outcome: r.Outcome, Violated: r.Violated, Steps: r.TraceLength,
		Distinct: r.Distinct, Generated: r.Generated, Depth: r.Depth, Seconds: r.Seconds, ContinueSeconds: res.cont.Seconds}
	if mm.TLC != nil {
		row.TLCDistinct = mm.TLC.Distinct
	}
	if t.f.record {
		t.record(mm, res)
		row.AsRecorded, row.TLCDistinct = true, r.Distinct
		sum.AsRecorded++
		if !t.f.asJSON {
			fmt.Fprintf(t.stdout, "%-50s %s %s: %d distinct, %d generated, depth %d, steps %d, %.0fs%s\n",
				mm.Config, r.Outcome, r.Violated, r.Distinct, r.Generated, r.Depth, r.TraceLength, r.Seconds, continueNote(res))
		}
		return row
	}
	problems := t.compare(mm, res)
	say := "as recorded"
	row.AsRecorded = len(problems) == 0
	if row.AsRecorded {
		sum.AsRecorded++
	} else {
		sum.Unexpected++
		row.Problems = strings.Join(problems, "; ")
		say = "UNEXPECTED: " + row.Problems
	}
	if !t.f.asJSON {
		fmt.Fprintf(t.stdout, "%-50s %-9s %-24s %10d distinct %6.0fs%s  %s\n", mm.Config, r.Outcome, r.Violated, r.Distinct, r.Seconds, continueNote(res), say)
	}
	if o := res.ours; o != nil {
		row.OursSeconds, row.Workers = o.Seconds, res.firstWorkers
		if o.Seconds > 0 {
			row.Speedup = r.Seconds / o.Seconds
		}
		if !t.f.asJSON {
			fmt.Fprintf(t.stdout, "%-50s ours %.2fs with %d worker(s), TLC %.0fs: %.1fx\n", "", o.Seconds, res.firstWorkers, r.Seconds, row.Speedup)
		}
	}
	return row
}

// continueNote is the -continue pass's figures for a model's line, or ""
// when it did not run.
func continueNote(res tlcResult) string {
	if res.cont.Outcome == "" {
		return ""
	}
	return fmt.Sprintf(" (-continue: %d distinct in %.0fs)", res.cont.Distinct, res.cont.Seconds)
}

// record writes TLC's verdict and figures of mm into the manifest.
func (t *tlcSession) record(mm *drainmodel.Entry, res tlcResult) {
	r := res.r
	got := drainmodel.Figures{Distinct: r.Distinct, Generated: r.Generated, Depth: r.Depth, Seconds: r.Seconds, TraceLength: r.TraceLength,
		ContinueDistinct: res.cont.Distinct, ContinueSeconds: res.cont.Seconds}
	if !t.f.whole && mm.TLC != nil {
		got.ContinueDistinct, got.ContinueSeconds = mm.TLC.ContinueDistinct, mm.TLC.ContinueSeconds
	}
	if r.Outcome == "ok" {
		got.TraceLength = 0
	}
	mm.TLC = &got
	mm.Expected, mm.Violated = r.Outcome, r.Violated
	if r.Version != "" {
		t.man.TLCBuild = r.Version
	}
}

// compare lists how TLC's verdict and figures of mm differ from the
// recorded ones, and (--versus) how ours do.
func (t *tlcSession) compare(mm *drainmodel.Entry, res tlcResult) []string {
	r := res.r
	var problems []string
	if r.Outcome != mm.Expected || r.Violated != mm.Violated {
		problems = append(problems, fmt.Sprintf("TLC says %s %s, recorded %s %s", r.Outcome, r.Violated, mm.Expected, mm.Violated))
	}
	// With several workers TLC's search is not strictly level by level,
	// so the depth it reports can be one off (LogCoord: 34 or 35); the
	// depth is compared only for single-worker runs.
	depthDiffers := res.firstWorkers == 1 && r.Depth != mm.TLC.Depth
	if r.Outcome == "ok" && (r.Distinct != mm.TLC.Distinct || r.Generated != mm.TLC.Generated || depthDiffers) {
		problems = append(problems, fmt.Sprintf("TLC counts %d/%d/%d, recorded %d/%d/%d", r.Distinct, r.Generated, r.Depth, mm.TLC.Distinct, mm.TLC.Generated, mm.TLC.Depth))
	}
	if t.f.whole && mm.TLC.ContinueDistinct > 0 && res.cont.Distinct != mm.TLC.ContinueDistinct {
		problems = append(problems, fmt.Sprintf("TLC -continue %d distinct, recorded %d", res.cont.Distinct, mm.TLC.ContinueDistinct))
	}
	if res.ours != nil && !res.ours.OK {
		problems = append(problems, "ours: "+res.ours.Problems)
	}
	return problems
}

// progressLines forwards TLC's progress lines ("Progress(...)") to w,
// indented, as TLC prints them: a long run is not silent.
type progressLines struct {
	w       io.Writer
	partial []byte
}

// Write implements io.Writer.
func (p *progressLines) Write(b []byte) (int, error) {
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		line := p.partial[:i+1]
		if bytes.HasPrefix(line, []byte("Progress(")) || bytes.HasPrefix(line, []byte("Finished computing initial states")) {
			fmt.Fprintf(p.w, "  %s", line)
		}
		p.partial = p.partial[i+1:]
	}
	return len(b), nil
}
