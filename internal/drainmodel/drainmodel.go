package drainmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/drainproof/drainproof/modelcheck/tlacfg"
	"github.com/drainproof/drainproof/spec"
)

// Manifest is tla/models.json: every TLC model with what it must give.
type Manifest struct {
	Models   []Entry `json:"models"`
	TLCBuild string  `json:"tlc_build"`
	Notes    any     `json:"notes,omitempty"`
	// CoverageExempt names the actions that may never change the state in
	// any shipped correct model, each with the reason (a bug-only action).
	CoverageExempt map[string]string `json:"coverage_exempt,omitempty"`
}

// Figures are one checker's numbers for a model.
type Figures struct {
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

// Entry is one entry of tla/models.json.
type Entry struct {
	Config   string   `json:"config"`
	Module   string   `json:"module"`
	Expected string   `json:"expected"`
	Violated string   `json:"violated"`
	TLC      *Figures `json:"tlc"`
	Go       *Figures `json:"go"`
	Liveness bool     `json:"liveness"`
	Large    bool     `json:"large"`
	Note     string   `json:"note"`
	// Bug names the bug of the zoo that a bug model exists for, and Bugs
	// the whole Bugs constant of its cfg.
	Bug  string   `json:"bug,omitempty"`
	Bugs []string `json:"bugs,omitempty"`
	// Violates is the bug matrix row: every property of the model that
	// the bug's cfg violates anywhere in its reachable state space (all
	// invariants and action properties, whatever the cfg lists, plus
	// the cfg's liveness property when it fails). Verify recomputes it.
	Violates []string `json:"violates,omitempty"`
}

// Row is the outcome of one model checked against its record.
type Row struct {
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
	// Violates is the bug matrix row recomputed (bug models only).
	Violates []string `json:"violates,omitempty"`
	OK       bool     `json:"ok"`
	Problems string   `json:"problems,omitempty"`
}

// Load reads a .cfg file into the spec model and the checker
// options it selects (invariants, properties, deadlock checking).
func Load(path string, liveness bool) (*spec.Model, modelcheck.Options, error) {
	fail := func(err error) (*spec.Model, modelcheck.Options, error) { return nil, modelcheck.Options{}, err }
	cfg, err := tlacfg.ParseFile(path)
	if err != nil {
		return fail(err)
	}
	at := func(line int, format string, a ...any) error {
		return &tlacfg.Error{File: path, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	if len(cfg.Unsupported) > 0 {
		u := cfg.Unsupported[0]
		what := u.Name
		if what == "<-" {
			what = "a substitution (<-)"
		}
		return fail(at(u.Line, "%s is not supported: the Go transcription has no symmetry, view, alias or substitution, so counts could not match TLC's", what))
	}
	if len(cfg.Constraints) > 0 {
		c := cfg.Constraints[0]
		return fail(at(c.Line, "CONSTRAINT %s is not defined by the model (the network is bounded by action guards, see tla/README.md)", c.Name))
	}
	if n := cfg.Specification; n.Name != "" && n.Name != "Spec" {
		return fail(at(n.Line, "unknown specification %q (the model defines Spec)", n.Name))
	}
	if n := cfg.Init; n.Name != "" && n.Name != "Init" {
		return fail(at(n.Line, "unknown initial predicate %q (the model defines Init)", n.Name))
	}
	if n := cfg.Next; n.Name != "" && n.Name != "Next" {
		return fail(at(n.Line, "unknown next-state relation %q (the model defines Next)", n.Name))
	}
	if cfg.Specification.Name == "" && cfg.Init.Name == "" {
		return fail(at(1, "the file names neither SPECIFICATION nor INIT/NEXT"))
	}
	var sc spec.Config
	for _, c := range cfg.Constants {
		if err := sc.SetConstant(c.Name, plain(c.Value)); err != nil {
			return fail(at(c.Line, "%v", err))
		}
	}
	m, err := spec.New(sc)
	if err != nil {
		// A value the model refuses is reported at its assignment.
		line := 1
		var ce *spec.ConstantError
		if errors.As(err, &ce) {
			if c, ok := cfg.Constant(ce.Name); ok {
				line = c.Line
			}
		}
		return fail(at(line, "%v", err))
	}
	opts := modelcheck.Options{Invariants: []string{}, ActionProperties: []string{}, Liveness: []string{}, CheckDeadlock: true}
	if cfg.CheckDeadlock != nil {
		opts.CheckDeadlock = *cfg.CheckDeadlock
	}
	for _, inv := range cfg.Invariants {
		if !slices.Contains(m.Invariants(), inv.Name) {
			return fail(at(inv.Line, "unknown invariant %q (the model defines %v)", inv.Name, m.Invariants()))
		}
		opts.Invariants = append(opts.Invariants, inv.Name)
	}
	live := livenessNames(m)
	for _, p := range cfg.Properties {
		switch {
		case slices.Contains(m.ActionProperties(), p.Name):
			opts.ActionProperties = append(opts.ActionProperties, p.Name)
		case slices.Contains(live, p.Name):
			if cfg.Specification.Name == "" {
				return fail(at(p.Line, "liveness property %s needs SPECIFICATION Spec (INIT/NEXT carry no fairness)", p.Name))
			}
			if liveness {
				opts.Liveness = append(opts.Liveness, p.Name)
			}
		default:
			return fail(at(p.Line, "unknown property %q (the model defines %v)", p.Name, append(m.ActionProperties(), live...)))
		}
	}
	return m, opts, nil
}

// livenessNames lists the model's liveness properties, if it has any.
func livenessNames(m any) []string {
	if l, ok := m.(interface{ LivenessProperties() []string }); ok {
		return l.LivenessProperties()
	}
	return nil
}

// plain turns tlacfg values into the plain Go values spec.SetConstant
// takes: model values become strings, sets []any of those.
func plain(v any) any {
	switch x := v.(type) {
	case tlacfg.ModelValue:
		return string(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

// ReadManifest reads and validates tla/models.json.
func ReadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var man Manifest
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
			return nil, fmt.Errorf("%s: %s: no TLC Figures recorded", path, mm.Config)
		}
	}
	return &man, nil
}

// Verify checks one model and compares it with the Manifest: the
// outcome and violated property always; for a model that holds, TLC's
// distinct, generated and depth; for a violation, the counterexample's
// length and, when recorded, the whole space's distinct count (-continue).
func Verify(ctx context.Context, cfgPath string, mm Entry, workers int) (Row, error) {
	m, opts, err := Load(cfgPath, true)
	if err != nil {
		return Row{}, err
	}
	opts.Workers = workers
	start := time.Now()
	res, err := modelcheck.Check(ctx, m, opts)
	if err != nil {
		return Row{}, err
	}
	row := Row{
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
		// whole graph is built), have TLC's exact Figures.
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
				return Row{}, err
			}
			row.Distinct, row.Generated, row.Depth = full.Distinct, full.Generated, full.Depth
			if full.Distinct != mm.TLC.ContinueDistinct {
				problems = append(problems, fmt.Sprintf("distinct (continue) %d, TLC %d", full.Distinct, mm.TLC.ContinueDistinct))
			}
		}
	}
	if mm.Bug != "" {
		v, err := Violations(ctx, cfgPath, workers)
		if err != nil {
			return Row{}, err
		}
		row.Violates = v
		if !slices.Equal(v, mm.Violates) {
			problems = append(problems, fmt.Sprintf("violates %v, recorded %v", v, mm.Violates))
		}
	}
	row.Seconds = time.Since(start).Seconds()
	row.OK = len(problems) == 0
	row.Problems = strings.Join(problems, "; ")
	return row, nil
}

// Write writes the manifest back, indented, to path.
func (m *Manifest) Write(path string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
