package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/drainproof/drainproof/modelcheck"
)

// manifest is tla/models.json: every TLC model with what it must give.
type manifest struct {
	Models   []manifestModel `json:"models"`
	TLCBuild string          `json:"tlc_build"`
	Notes    any             `json:"notes,omitempty"`
}

// figures are one checker's numbers for a model.
type figures struct {
	Distinct  int64   `json:"distinct"`
	Generated int64   `json:"generated"`
	Depth     int     `json:"depth"`
	Seconds   float64 `json:"seconds"`
	// TraceLength is the counterexample's length in states (violations).
	TraceLength int `json:"trace_length"`
	// ContinueDistinct is the distinct count of a -continue run, which
	// covers the whole state space of a violating model.
	ContinueDistinct int64 `json:"continue_distinct,omitempty"`
}

// manifestModel is one entry of tla/models.json.
type manifestModel struct {
	Config   string   `json:"config"`
	Module   string   `json:"module"`
	Expected string   `json:"expected"`
	Violated string   `json:"violated"`
	TLC      *figures `json:"tlc"`
	Go       *figures `json:"go"`
	Liveness bool     `json:"liveness"`
	Large    bool     `json:"large"`
	Note     string   `json:"note"`
}

// verifyRow is the outcome of one model in `checker verify`.
type verifyRow struct {
	Config      string  `json:"config"`
	Expected    string  `json:"expected"`
	Outcome     string  `json:"outcome"`
	Violated    string  `json:"violated,omitempty"`
	Distinct    int64   `json:"distinct"`
	TLCDistinct int64   `json:"tlc_distinct"`
	Generated   int64   `json:"generated"`
	Depth       int     `json:"depth"`
	TraceLength int     `json:"trace_length,omitempty"`
	Seconds     float64 `json:"seconds"`
	OK          bool    `json:"ok"`
	Problems    string  `json:"problems,omitempty"`
}

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
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 || *workers < 0 {
		fmt.Fprintln(stderr, "checker verify: bad arguments (see checker verify -h)")
		return exitUsage
	}
	man, err := readManifest(*path)
	if err != nil {
		fmt.Fprintf(stderr, "checker verify: %v\n", err)
		return exitUsage
	}
	dir := filepath.Dir(*path)
	var rows []verifyRow
	failed := 0
	for _, mm := range man.Models {
		if mm.Large && !*all {
			continue
		}
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "checker verify: interrupted")
			return exitIncomplete
		}
		row, err := verifyOne(ctx, filepath.Join(dir, mm.Config), mm, *workers)
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
	if failed > 0 {
		return exitViolation
	}
	return exitOK
}

func readManifest(path string) (*manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var man manifest
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&man); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(man.Models) == 0 {
		return nil, fmt.Errorf("%s: no models", path)
	}
	for i, mm := range man.Models {
		switch {
		case mm.Config == "":
			return nil, fmt.Errorf("%s: model %d has no config", path, i)
		case mm.Expected != "ok" && mm.Expected != "violated" && mm.Expected != "deadlock":
			return nil, fmt.Errorf("%s: %s: expected must be ok, violated or deadlock, not %q", path, mm.Config, mm.Expected)
		case mm.TLC == nil:
			return nil, fmt.Errorf("%s: %s: no TLC figures recorded", path, mm.Config)
		}
	}
	return &man, nil
}

// verifyOne checks one model and compares it with the manifest: the
// outcome and violated property always; for a model that holds, TLC's
// distinct, generated and depth; for a violation, the counterexample's
// length and, when recorded, the whole space's distinct count (-continue).
func verifyOne(ctx context.Context, cfgPath string, mm manifestModel, workers int) (verifyRow, error) {
	m, opts, err := loadConfig(cfgPath, true)
	if err != nil {
		return verifyRow{}, err
	}
	opts.Workers = workers
	start := time.Now()
	res, err := modelcheck.Check(ctx, m, opts)
	if err != nil {
		return verifyRow{}, err
	}
	row := verifyRow{
		Config: mm.Config, Expected: mm.Expected, Outcome: res.Outcome.String(), Violated: res.Violated,
		Distinct: res.Distinct, TLCDistinct: mm.TLC.Distinct, Generated: res.Generated, Depth: res.Depth,
		TraceLength: len(res.Trace),
	}
	if mm.Expected != "ok" && !mm.Liveness && res.Kind != "liveness" {
		row.TLCDistinct = mm.TLC.ContinueDistinct
	}
	var problems []string
	if row.Outcome != mm.Expected {
		problems = append(problems, fmt.Sprintf("outcome %s, recorded %s", row.Outcome, mm.Expected))
	}
	if mm.Expected == "violated" && res.Violated != mm.Violated {
		problems = append(problems, fmt.Sprintf("violated %s, recorded %s", res.Violated, mm.Violated))
	}
	switch {
	case mm.Expected == "ok" || res.Kind == "liveness":
		// Complete runs, and liveness violations (found only once the
		// whole graph is built), have TLC's exact figures.
		if res.Distinct != mm.TLC.Distinct {
			problems = append(problems, fmt.Sprintf("distinct %d, TLC %d", res.Distinct, mm.TLC.Distinct))
		}
		if mm.TLC.Generated > 0 && res.Generated != mm.TLC.Generated {
			problems = append(problems, fmt.Sprintf("generated %d, TLC %d", res.Generated, mm.TLC.Generated))
		}
		if mm.TLC.Depth > 0 && res.Depth != mm.TLC.Depth {
			problems = append(problems, fmt.Sprintf("depth %d, TLC %d", res.Depth, mm.TLC.Depth))
		}
	default:
		if mm.TLC.TraceLength > 0 && res.Kind != "liveness" && len(res.Trace) != mm.TLC.TraceLength {
			problems = append(problems, fmt.Sprintf("trace of %d states, TLC %d", len(res.Trace), mm.TLC.TraceLength))
		}
		if mm.TLC.ContinueDistinct > 0 {
			opts.Continue = true
			full, err := modelcheck.Check(ctx, m, opts)
			if err != nil {
				return verifyRow{}, err
			}
			row.Distinct, row.Generated, row.Depth = full.Distinct, full.Generated, full.Depth
			if full.Distinct != mm.TLC.ContinueDistinct {
				problems = append(problems, fmt.Sprintf("distinct (continue) %d, TLC %d", full.Distinct, mm.TLC.ContinueDistinct))
			}
		}
	}
	row.Seconds = time.Since(start).Seconds()
	row.OK = len(problems) == 0
	row.Problems = strings.Join(problems, "; ")
	return row, nil
}
