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
	"strconv"
	"strings"

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
	workers := fs.Int("workers", 2, "TLC -workers")
	only := fs.String("only", "", "run only the model whose config is this file name")
	record := fs.Bool("record", false, "write TLC's figures into the manifest instead of comparing")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
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
	man, err := drainmodel.ReadManifest(*path)
	if err != nil {
		fmt.Fprintf(stderr, "checker tlc: %v\n", err)
		return exitUsage
	}
	dir := filepath.Dir(*path)
	meta, err := os.MkdirTemp("", "drainproof-tlc-")
	if err != nil {
		fmt.Fprintf(stderr, "checker tlc: %v\n", err)
		return exitUsage
	}
	defer os.RemoveAll(meta)
	failed := 0
	for i := range man.Models {
		mm := &man.Models[i]
		if mm.Large && !*all || *only != "" && mm.Config != *only {
			continue
		}
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
			a := []string{"-XX:+UseParallelGC", "-cp", *jar, "tlc2.TLC", "-workers", strconv.Itoa(w), "-noGenerateSpecTE",
				"-metadir", filepath.Join(meta, strconv.Itoa(i)), "-config", mm.Config}
			a = append(a, extra...)
			a = append(a, mm.Module+".tla")
			cmd := exec.CommandContext(ctx, "java", a...)
			cmd.Dir = dir
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			_ = cmd.Run() // TLC exits non-zero on a violation; the verdict is in its output
			r, err := parseTLC(out.String(), temporal)
			if err != nil {
				fmt.Fprint(stderr, out.String())
			}
			return r, err
		}
		r, err := run(firstWorkers)
		if err != nil {
			fmt.Fprintf(stderr, "checker tlc: %s: %v\n", mm.Config, err)
			return exitUsage
		}
		var cont tlcRun
		if mm.Expected != "ok" && r.Outcome != "ok" && temporal == "" {
			if cont, err = run(*workers, "-continue"); err != nil {
				fmt.Fprintf(stderr, "checker tlc: %s -continue: %v\n", mm.Config, err)
				return exitUsage
			}
		}
		got := drainmodel.Figures{Distinct: r.Distinct, Generated: r.Generated, Depth: r.Depth, Seconds: r.Seconds, TraceLength: r.TraceLength, ContinueDistinct: cont.Distinct}
		if r.Outcome == "ok" {
			got.TraceLength = 0
		}
		if *record {
			mm.TLC = &got
			mm.Expected, mm.Violated = r.Outcome, r.Violated
			if r.Version != "" {
				man.TLCBuild = r.Version
			}
			fmt.Fprintf(stdout, "%-50s %s %s: %d distinct, %d generated, depth %d, trace %d, continue %d, %.0fs\n",
				mm.Config, r.Outcome, r.Violated, r.Distinct, r.Generated, r.Depth, r.TraceLength, cont.Distinct, r.Seconds)
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
		if mm.TLC.ContinueDistinct > 0 && cont.Distinct != mm.TLC.ContinueDistinct {
			problems = append(problems, fmt.Sprintf("TLC -continue %d distinct, recorded %d", cont.Distinct, mm.TLC.ContinueDistinct))
		}
		verdict := "as recorded"
		if len(problems) > 0 {
			failed++
			verdict = "UNEXPECTED: " + strings.Join(problems, "; ")
		}
		fmt.Fprintf(stdout, "%-50s %-9s %-24s %10d distinct %6.0fs  %s\n", mm.Config, r.Outcome, r.Violated, r.Distinct, r.Seconds, verdict)
	}
	if *record {
		if err := man.Write(*path); err != nil {
			fmt.Fprintf(stderr, "checker tlc: %v\n", err)
			return exitUsage
		}
	}
	if failed > 0 {
		return exitViolation
	}
	return exitOK
}
