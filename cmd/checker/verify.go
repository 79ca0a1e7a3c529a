package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/drainproof/drainproof/harness/drainmodel"
)

// runVerify is `checker verify`: check every model of the manifest with
// our checker and compare its outcome and figures with TLC's recorded
// ones (and, with --coverage, require action coverage).
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checker verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("models", "tla/models.json", "the manifest of models and expected results")
	all := fs.Bool("all", false, "also run the models marked large")
	workers := fs.Int("workers", 0, "worker goroutines (0: one per core, at most 1024); fewer than the cores also run on that many (GOMAXPROCS), unless GOMAXPROCS is set")
	asJSON := fs.Bool("json", false, "print one JSON object (see docs/checker.md, \"JSON output\")")
	coverage := fs.Bool("coverage", false, "also require every action to change the state in some correct model (action coverage over the models expected ok)")
	fs.Usage = usageFunc(fs, "checker verify [--models FILE] [--all] [--workers N] [--json] [--coverage]",
		"Check every model of the manifest with our checker and compare its outcome and figures with TLC's recorded ones.")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if flagErr(stderr, "checker verify", intRange("workers", int64(*workers), 0, maxWorkers)) {
		return exitUsage
	}
	man, err := drainmodel.ReadManifest(*path)
	if err != nil {
		fmt.Fprintf(stderr, "checker verify: %v\n", err)
		return exitUsage
	}
	dir := filepath.Dir(*path)
	var todo []drainmodel.Entry
	for _, mm := range man.Models {
		if !mm.Large || *all {
			todo = append(todo, mm)
		}
	}
	start := time.Now()
	var rows []modelRow
	var sum summary
	for i, mm := range todo {
		if ctx.Err() != nil {
			break
		}
		if !*asJSON {
			fmt.Fprintf(stderr, "[%d/%d] %-50s ", i+1, len(todo), mm.Config)
		}
		restore := searchProcs(*workers)
		row, err := drainmodel.Verify(ctx, configPath(dir, mm.Config), mm, *workers)
		restore()
		if ctx.Err() != nil {
			// An interrupted model is not a regression: its row is
			// dropped and the models done so far are reported.
			if !*asJSON {
				fmt.Fprintln(stderr, "interrupted")
			}
			break
		}
		if err != nil {
			fmt.Fprintf(stderr, "\nchecker verify: %s: %v\n", mm.Config, err)
			return exitUsage
		}
		r := rowOf(row)
		rows = append(rows, r)
		sum.Models++
		if r.AsRecorded {
			sum.AsRecorded++
		} else {
			sum.Unexpected++
		}
		if !*asJSON {
			fmt.Fprintf(stderr, "%s (%.2fs)\n", map[bool]string{true: "as recorded", false: "UNEXPECTED: " + r.Problems}[r.AsRecorded], r.Seconds)
		}
	}
	sum.NotRun = len(todo) - sum.Models
	if *coverage && sum.NotRun == 0 && ctx.Err() == nil {
		if !verifyCoverage(ctx, stderr, man, dir, todo, &sum) {
			return exitUsage
		}
	}
	return endTable(stdout, stderr, "verify", *asJSON, sum, rows, start, func() { verifyTable(stdout, rows) })
}

// verifyCoverage requires every action to change the state in some of
// the correct models of todo, and counts a failure in sum; it returns
// false, having said why, on an operational error.
func verifyCoverage(ctx context.Context, stderr io.Writer, man *drainmodel.Manifest, dir string, todo []drainmodel.Entry, sum *summary) bool {
	var cfgs []string
	for _, mm := range todo {
		if mm.Expected == "ok" {
			cfgs = append(cfgs, configPath(dir, mm.Config))
		}
	}
	idle, err := drainmodel.IdleActions(ctx, cfgs, man.CoverageExempt)
	switch {
	case ctx.Err() != nil:
		sum.NotRun++ // the coverage run was interrupted: not a regression
	case err != nil:
		fmt.Fprintf(stderr, "checker verify: coverage: %v\n", err)
		return false
	case len(idle) > 0:
		fmt.Fprintf(stderr, "checker verify: coverage: these actions change the state in none of the %d correct models: %v\n", len(cfgs), idle)
		sum.Unexpected++
	default:
		fmt.Fprintf(stderr, "Coverage: every action changes the state in some of the %d correct models (exempt: %d bug-only actions).\n", len(cfgs), len(man.CoverageExempt))
	}
	return true
}

// verifyTable prints the rows of `checker verify` as a table.
func verifyTable(stdout io.Writer, rows []modelRow) {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "config\texpected\tgot\tdistinct\tTLC distinct\tgenerated\tdepth\tsteps\tseconds\tverdict\t")
	for _, r := range rows {
		got := r.Outcome
		if r.Violated != "" {
			got += " " + r.Violated
		}
		verdict := "ok"
		if !r.AsRecorded {
			verdict = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%.2f\t%s\t\n", strings.TrimSuffix(r.Config, ".cfg"), r.Expected, got,
			commas(r.Distinct), commas(r.TLCDistinct), commas(r.Generated), r.Depth, r.Steps, r.Seconds, verdict)
	}
	_ = tw.Flush()
}

// endTable ends verify and tlc: the report with --json, else table (if
// set) and the summary line; it returns the exit code.
func endTable(stdout, stderr io.Writer, command string, asJSON bool, sum summary, rows []modelRow, start time.Time, table func()) int {
	outcome, reason := tableOutcome(sum)
	switch {
	case asJSON:
		r := report{Command: command, Outcome: outcome, Reason: reason, Seconds: time.Since(start).Seconds(), Summary: &sum, Models: rows}
		if err := writeReport(stdout, r); err != nil {
			fmt.Fprintf(stderr, "checker %s: %v\n", command, err)
			return exitUsage
		}
	default:
		if table != nil {
			table()
		}
		printSummary(stdout, sum, time.Since(start))
	}
	return tableExit(outcome)
}

// printSummary ends verify and tlc: one line with the counts.
func printSummary(w io.Writer, s summary, took time.Duration) {
	fmt.Fprintf(w, "%d models, %d as recorded, %d unexpected", s.Models, s.AsRecorded, s.Unexpected)
	if s.NotRun > 0 {
		fmt.Fprintf(w, ", %d not run (interrupted)", s.NotRun)
	}
	fmt.Fprintf(w, ", in %.1fs.\n", took.Seconds())
}

// tableExit is the exit code of verify and tlc.
func tableExit(outcome string) int {
	switch outcome {
	case outcomeUnexpected:
		return exitViolation
	case outcomeIncomplete:
		return exitIncomplete
	}
	return exitOK
}

// configPath is a manifest entry's cfg file: relative to the manifest's
// folder unless it is absolute.
func configPath(dir, config string) string {
	if filepath.IsAbs(config) {
		return config
	}
	return filepath.Join(dir, config)
}
