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

	"github.com/drainproof/drainproof/internal/drainmodel"
	"github.com/drainproof/drainproof/modelcheck/tlacfg"
)

// tlcRun is what a TLC run printed, parsed.
type tlcRun struct {
	Outcome     string // ok, violated, deadlock, or error
	Violated    string
	Distinct    int64
	Generated   int64
	Depth       int
	TraceLength int
	Seconds     float64
	Version     string
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

func runTLC(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checker tlc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("models", "tla/models.json", "the manifest of models")
	jar := fs.String("jar", os.Getenv("TLA2TOOLS"), "path of tla2tools.jar (default $TLA2TOOLS)")
	all := fs.Bool("all", false, "also run the models marked large")
	workers := fs.Int("workers", 2, "TLC -workers (1..1024)")
	only := fs.String("only", "", "run only the model whose config is this file name (large or not)")
	record := fs.Bool("record", false, "write TLC's figures into the manifest instead of comparing")
	whole := fs.Bool("continue", true, "for a safety violation, also run TLC -continue for the whole space's distinct count (false: the trace only; a recorded count is then kept)")
	asJSON := fs.Bool("json", false, "print one JSON object (see the README's \"JSON output\")")
	fs.Usage = usageFunc(fs, "checker tlc [--models FILE] [--jar tla2tools.jar] [--all | --only CFG] [--workers N] [--record] [--json]",
		"Run TLC itself on the models of the manifest and compare its verdicts and counts with the recorded ones\n(or, with --record, record them). TLC's progress lines are shown on stderr.")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if flagErr(stderr, "checker tlc", intRange("workers", int64(*workers), 1, maxWorkers)) {
		return exitUsage
	}
	man, err := drainmodel.ReadManifest(*path)
	if err != nil {
		fmt.Fprintf(stderr, "checker tlc: %v\n", err)
		return exitUsage
	}
	if *only != "" && !slices.ContainsFunc(man.Models, func(m drainmodel.Entry) bool { return m.Config == *only }) {
		fmt.Fprintf(stderr, "checker tlc: --only %s: no such model in %s (see its \"config\" fields)\n", *only, *path)
		return exitUsage
	}
	if *jar == "" {
		fmt.Fprintln(stderr, "checker tlc: no TLC: set TLA2TOOLS to the path of tla2tools.jar (TLC is not served by any package registry; build it from the tlaplus sources)")
		return exitUsage
	}
	if _, err := os.Stat(*jar); err != nil {
		fmt.Fprintf(stderr, "checker tlc: TLA2TOOLS: %v\n", err)
		return exitUsage
	}
	if _, err := exec.LookPath("java"); err != nil {
		fmt.Fprintln(stderr, "checker tlc: java is not installed")
		return exitUsage
	}
	dir := filepath.Dir(*path)
	meta, err := os.MkdirTemp("", "drainproof-tlc-")
	if err != nil {
		fmt.Fprintf(stderr, "checker tlc: %v\n", err)
		return exitUsage
	}
	defer os.RemoveAll(meta)
	selected := func(mm *drainmodel.Entry) bool {
		return *only == "" && (!mm.Large || *all) || mm.Config == *only
	}
	total := 0
	for i := range man.Models {
		if selected(&man.Models[i]) {
			total++
		}
	}
	start := time.Now()
	var rows []modelRow
	var sum summary
	interrupted := false
	for i := range man.Models {
		mm := &man.Models[i]
		if !selected(mm) {
			continue
		}
		fmt.Fprintf(stderr, "[%d/%d] %s: running TLC\n", sum.Models+1, total, mm.Config)
		temporal := ""
		if mm.Liveness || strings.Contains(mm.Violated, "Completes") {
			temporal = mm.Violated
		}
		// A safety violation is searched with one worker: only then is
		// TLC's search strictly breadth first and its trace shortest.
		firstWorkers := *workers
		if mm.Expected != "ok" && temporal == "" {
			firstWorkers = 1
		}
		// Under a VIEW the first state met with a view is explored: the
		// figures are compared with one worker.
		if cfg, err := tlacfg.ParseFile(configPath(dir, mm.Config)); err == nil && cfg.View.Name != "" {
			firstWorkers = 1
		}
		run := func(w int, extra ...string) (tlcRun, error) {
			a := []string{"-XX:+UseParallelGC", "-Djava.io.tmpdir=" + meta, "-cp", *jar, "tlc2.TLC", "-workers", strconv.Itoa(w), "-noGenerateSpecTE",
				"-metadir", filepath.Join(meta, strconv.Itoa(i)), "-config", mm.Config}
			a = append(a, extra...)
			a = append(a, mm.Module+".tla")
			cmd := exec.CommandContext(ctx, "java", a...)
			cmd.Dir = dir
			cmd.WaitDelay = time.Second // after Ctrl-C, do not wait for children holding the output open
			var out bytes.Buffer
			both := io.MultiWriter(&out, &progressLines{w: stderr})
			cmd.Stdout, cmd.Stderr = both, both // one writer: exec copies both streams on one goroutine
			_ = cmd.Run()                       // TLC exits non-zero on a violation; the verdict is in its output
			if ctx.Err() != nil {
				return tlcRun{}, ctx.Err()
			}
			r, err := parseTLC(out.String(), temporal)
			if err != nil {
				fmt.Fprint(stderr, out.String())
			}
			return r, err
		}
		r, err := run(firstWorkers)
		if ctx.Err() != nil {
			interrupted = true
			break
		}
		if err != nil {
			fmt.Fprintf(stderr, "checker tlc: %s: %v\n", mm.Config, err)
			return exitUsage
		}
		var cont tlcRun
		if *whole && mm.Expected != "ok" && r.Outcome != "ok" && temporal == "" {
			cont, err = run(*workers, "-continue")
			if ctx.Err() != nil {
				interrupted = true
				break
			}
			if err != nil {
				fmt.Fprintf(stderr, "checker tlc: %s -continue: %v\n", mm.Config, err)
				return exitUsage
			}
		}
		got := drainmodel.Figures{Distinct: r.Distinct, Generated: r.Generated, Depth: r.Depth, Seconds: r.Seconds, TraceLength: r.TraceLength, ContinueDistinct: cont.Distinct}
		if !*whole && mm.TLC != nil {
			got.ContinueDistinct = mm.TLC.ContinueDistinct
		}
		if r.Outcome == "ok" {
			got.TraceLength = 0
		}
		row := modelRow{Config: mm.Config, Expected: mm.Expected, Outcome: r.Outcome, Violated: r.Violated, Steps: r.TraceLength,
			Distinct: r.Distinct, Generated: r.Generated, Depth: r.Depth, Seconds: r.Seconds}
		if mm.TLC != nil {
			row.TLCDistinct = mm.TLC.Distinct
		}
		sum.Models++
		if *record {
			mm.TLC = &got
			mm.Expected, mm.Violated = r.Outcome, r.Violated
			if r.Version != "" {
				man.TLCBuild = r.Version
			}
			row.AsRecorded, row.TLCDistinct = true, r.Distinct
			sum.AsRecorded++
			rows = append(rows, row)
			if !*asJSON {
				fmt.Fprintf(stdout, "%-50s %s %s: %d distinct, %d generated, depth %d, steps %d, continue %d, %.0fs\n",
					mm.Config, r.Outcome, r.Violated, r.Distinct, r.Generated, r.Depth, r.TraceLength, cont.Distinct, r.Seconds)
			}
			continue
		}
		var problems []string
		if r.Outcome != mm.Expected || r.Violated != mm.Violated {
			problems = append(problems, fmt.Sprintf("TLC says %s %s, recorded %s %s", r.Outcome, r.Violated, mm.Expected, mm.Violated))
		}
		// With several workers TLC's search is not strictly level by level,
		// so the depth it reports can be one off (LogCoord: 34 or 35); the
		// depth is compared only for single-worker runs.
		depthDiffers := firstWorkers == 1 && r.Depth != mm.TLC.Depth
		if r.Outcome == "ok" && (r.Distinct != mm.TLC.Distinct || r.Generated != mm.TLC.Generated || depthDiffers) {
			problems = append(problems, fmt.Sprintf("TLC counts %d/%d/%d, recorded %d/%d/%d", r.Distinct, r.Generated, r.Depth, mm.TLC.Distinct, mm.TLC.Generated, mm.TLC.Depth))
		}
		if *whole && mm.TLC.ContinueDistinct > 0 && cont.Distinct != mm.TLC.ContinueDistinct {
			problems = append(problems, fmt.Sprintf("TLC -continue %d distinct, recorded %d", cont.Distinct, mm.TLC.ContinueDistinct))
		}
		say := "as recorded"
		row.AsRecorded = len(problems) == 0
		if row.AsRecorded {
			sum.AsRecorded++
		} else {
			sum.Unexpected++
			row.Problems = strings.Join(problems, "; ")
			say = "UNEXPECTED: " + row.Problems
		}
		rows = append(rows, row)
		if !*asJSON {
			fmt.Fprintf(stdout, "%-50s %-9s %-24s %10d distinct %6.0fs  %s\n", mm.Config, r.Outcome, r.Violated, r.Distinct, r.Seconds, say)
		}
	}
	if *record {
		if err := man.Write(*path); err != nil {
			fmt.Fprintf(stderr, "checker tlc: %v\n", err)
			return exitUsage
		}
	}
	sum.NotRun = total - sum.Models
	if interrupted {
		fmt.Fprintf(stderr, "checker tlc: interrupted after %d models; the others were not run\n", sum.Models)
	}
	return endTable(stdout, stderr, "tlc", *asJSON, sum, rows, start, nil)
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
