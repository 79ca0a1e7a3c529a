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
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: checker verify [--models tla/models.json] [--all] [--workers N] [--json]")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
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
	var rows []drainmodel.Row
	failed, interrupted := 0, false
	for _, mm := range man.Models {
		if mm.Large && !*all {
			continue
		}
		if ctx.Err() != nil {
			interrupted = true
			break
		}
		row, err := drainmodel.Verify(ctx, configPath(dir, mm.Config), mm, *workers)
		if ctx.Err() != nil {
			// An interrupted model is not a regression: its row is
			// dropped and the models done so far are reported.
			interrupted = true
			break
		}
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
	if interrupted {
		fmt.Fprintf(stderr, "checker verify: interrupted after %d models; the others were not checked\n", len(rows))
	}
	switch {
	case failed > 0:
		return exitViolation
	case interrupted:
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
