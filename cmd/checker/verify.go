package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/drainproof/drainproof/internal/drainmodel"
)

func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checker verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("models", "tla/models.json", "the manifest of models and expected results")
	all := fs.Bool("all", false, "also run the models marked large")
	workers := fs.Int("workers", 0, "worker goroutines (0: one per core)")
	asJSON := fs.Bool("json", false, "print the rows as JSON")
	coverage := fs.Bool("coverage", false, "also require every action to change the state in some correct model (action coverage over the models expected ok)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: checker verify [--models tla/models.json] [--all] [--workers N] [--json] [--coverage]")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if *workers < 0 {
		fmt.Fprintln(stderr, "checker verify: --workers must not be negative")
		return exitUsage
	}
	man, err := drainmodel.ReadManifest(*path)
	if err != nil {
		fmt.Fprintf(stderr, "checker verify: %v\n", err)
		return exitUsage
	}
	dir := filepath.Dir(*path)
	var rows []drainmodel.Row
	failed := 0
	for _, mm := range man.Models {
		if mm.Large && !*all {
			continue
		}
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "checker verify: interrupted")
			return exitIncomplete
		}
		row, err := drainmodel.Verify(ctx, configPath(dir, mm.Config), mm, *workers)
		if err != nil {
			fmt.Fprintf(stderr, "checker verify: %s: %v\n", mm.Config, err)
			return exitUsage
		}
		if !row.OK {
			failed++
		}
		rows = append(rows, row)
		if !*asJSON {
			fmt.Fprintf(stderr, "%-50s %s\n", mm.Config, map[bool]string{true: "as recorded", false: "UNEXPECTED: " + row.Problems}[row.OK])
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rows)
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "config\texpected\tgot\tdistinct\tTLC distinct\tgenerated\tdepth\ttrace\tseconds\tverdict\t")
		for _, r := range rows {
			got := r.Outcome
			if r.Violated != "" {
				got += " " + r.Violated
			}
			exp := r.Expected
			verdict := "ok"
			if !r.OK {
				verdict = "FAIL"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%.2f\t%s\t\n", strings.TrimSuffix(r.Config, ".cfg"), exp, got,
				commas(r.Distinct), commas(r.TLCDistinct), commas(r.Generated), r.Depth, r.TraceLength, r.Seconds, verdict)
		}
		_ = tw.Flush()
		fmt.Fprintf(stdout, "%d models, %d as recorded, %d unexpected.\n", len(rows), len(rows)-failed, failed)
	}
	if *coverage {
		var cfgs []string
		for _, mm := range man.Models {
			if mm.Expected == "ok" && (!mm.Large || *all) {
				cfgs = append(cfgs, configPath(dir, mm.Config))
			}
		}
		idle, err := drainmodel.IdleActions(ctx, cfgs, man.CoverageExempt)
		if err != nil {
			fmt.Fprintf(stderr, "checker verify: coverage: %v\n", err)
			return exitUsage
		}
		if len(idle) > 0 {
			fmt.Fprintf(stderr, "checker verify: coverage: these actions change the state in none of the %d correct models: %v\n", len(cfgs), idle)
			failed++
		} else {
			fmt.Fprintf(stderr, "Coverage: every action changes the state in some of the %d correct models (exempt: %d bug-only actions).\n", len(cfgs), len(man.CoverageExempt))
		}
	}
	if failed > 0 {
		return exitViolation
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
