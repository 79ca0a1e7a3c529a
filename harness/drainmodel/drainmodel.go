package drainmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/drainproof/drainproof/spec"
	"github.com/drainproof/drainproof/tla/tlacfg"
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
	Config      string `json:"config"`
	Expected    string `json:"expected"`
	Outcome     string `json:"outcome"`
	Violated    string `json:"violated,omitempty"`
	Distinct    int64  `json:"distinct"`
	TLCDistinct int64  `json:"tlc_distinct"`
	Generated   int64  `json:"generated"`
	Depth       int    `json:"depth"`
	TraceLength int    `json:"trace_length,omitempty"`
	// ContinueDistinct is the whole space's distinct count (--continue)
	// of a safety violation, TLCContinueDistinct TLC's (-continue).
	ContinueDistinct    int64   `json:"continue_distinct,omitempty"`
	TLCContinueDistinct int64   `json:"tlc_continue_distinct,omitempty"`
	Seconds             float64 `json:"seconds"`
	// Violates is the bug matrix row recomputed (bug models only).
	Violates []string `json:"violates,omitempty"`
	OK       bool     `json:"ok"`
	Problems string   `json:"problems,omitempty"`
}

// Model is the spec model with the reductions a cfg asks for on top:
// state and action constraints, a view and a symmetry, each a definition
// of tla/MCDrainRegistrationReduced.tla transcribed in package spec. The
// checker applies them when the Options that Load returns say so.
type Model struct {
	*spec.Model
	constraints       []func(spec.State) bool
	actionConstraints []func(from, to spec.State) bool
	view              func(m *spec.Model, dst []byte, s spec.State) []byte
	symmetry          uint8 // bitmask of the dispatchers permuted
}

// Constraint reports whether s satisfies every CONSTRAINT of the cfg.
func (m *Model) Constraint(s spec.State) bool {
	for _, c := range m.constraints {
		if !c(s) {
			return false
		}
	}
	return true
}

// ActionConstraint reports whether the step satisfies every
// ACTION_CONSTRAINT of the cfg.
func (m *Model) ActionConstraint(_ string, from, to spec.State) bool {
	for _, c := range m.actionConstraints {
		if !c(from, to) {
			return false
		}
	}
	return true
}

// View appends the encoding of s's VIEW (the whole state if the cfg has
// none).
func (m *Model) View(dst []byte, s spec.State) []byte {
	if m.view == nil {
		return m.Encode(dst, s)
	}
	return m.view(m.Model, dst, s)
}

// Canonical returns the representative of s under the cfg's SYMMETRY.
func (m *Model) Canonical(s spec.State) spec.State { return m.Model.Canonical(s, m.symmetry) }

// Load reads a .cfg file into the spec model, with the reductions it
// names, and the checker options it selects (invariants, properties,
// deadlock checking, constraints, view, symmetry). The model is the
// *spec.Model itself when the cfg names no reduction (a method call
// through the *Model wrapper costs the search about a tenth of its
// speed), else a *Model.
func Load(path string, liveness bool) (modelcheck.Model[spec.State], modelcheck.Options, error) {
	m, opts, err := load(path, liveness)
	if err != nil {
		return nil, opts, err
	}
	if !opts.UseConstraint && !opts.UseView && !opts.UseSymmetry {
		return m.Model, opts, nil
	}
	return m, opts, nil
}

// LoadSpec reads a .cfg file into the spec model itself, without the
// reductions it names (for the users that walk the model's steps, not
// its state space: trace validation), and the checker options it selects.
func LoadSpec(path string, liveness bool) (*spec.Model, modelcheck.Options, error) {
	m, opts, err := load(path, liveness)
	if err != nil {
		return nil, opts, err
	}
	return m.Model, opts, nil
}

func load(path string, liveness bool) (*Model, modelcheck.Options, error) {
	fail := func(err error) (*Model, modelcheck.Options, error) { return nil, modelcheck.Options{}, err }
	cfg, err := tlacfg.ParseFile(path)
	if err != nil {
		return fail(err)
	}
	at := func(line int, format string, a ...any) error {
		return &tlacfg.Error{File: path, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	if err := checkHeader(cfg, at); err != nil {
		return fail(err)
	}
	sm, err := specModel(cfg, at)
	if err != nil {
		return fail(err)
	}
	m := &Model{Model: sm}
	opts := modelcheck.Options{Invariants: []string{}, ActionProperties: []string{}, Liveness: []string{}, CheckDeadlock: true}
	if err := m.addReductions(path, cfg, &opts, at); err != nil {
		return fail(err)
	}
	if cfg.CheckDeadlock != nil {
		opts.CheckDeadlock = *cfg.CheckDeadlock
	}
	if err := m.selectProperties(cfg, liveness, &opts, at); err != nil {
		return fail(err)
	}
	return m, opts, nil
}

// errAt makes an error at a line of the cfg.
type errAt func(line int, format string, a ...any) error

// checkHeader refuses what the Go transcription cannot honour and the
// names of a specification it does not define.
func checkHeader(cfg *tlacfg.Config, at errAt) error {
	if len(cfg.Unsupported) > 0 {
		u := cfg.Unsupported[0]
		what := u.Name
		if what == "<-" {
			what = "a substitution (<-)"
		}
		return at(u.Line, "%s is not supported: the Go transcription has no alias, postcondition or substitution, so counts could not match TLC's", what)
	}
	if n := cfg.Specification; n.Name != "" && n.Name != "Spec" {
		return at(n.Line, "unknown specification %q (the model defines Spec)", n.Name)
	}
	if n := cfg.Init; n.Name != "" && n.Name != "Init" {
		return at(n.Line, "unknown initial predicate %q (the model defines Init)", n.Name)
	}
	if n := cfg.Next; n.Name != "" && n.Name != "Next" {
		return at(n.Line, "unknown next-state relation %q (the model defines Next)", n.Name)
	}
	if cfg.Specification.Name == "" && cfg.Init.Name == "" {
		return at(1, "the file names neither SPECIFICATION nor INIT/NEXT")
	}
	return nil
}

// moduleConstants are the CONSTANTS of DrainRegistration.tla and the
// model values MCDrainRegistration.tla declares: TLC refuses a cfg that
// leaves any of them unassigned ("The constant parameter Bugs is not
// assigned a value by the configuration file"), so the checker does too,
// rather than run with a default (an empty Bugs, a MaxEpoch of 0).
var moduleConstants = append([]string{"Dispatchers", "TableTriggers", "Brokers", "Versions", "MaxEpoch", "MaxReg", "MaxMsgs", "Transport", "Bugs"},
	spec.ModelValues...)

// specModel sets the cfg's constants; a value the model refuses is
// reported at its assignment, a constant not assigned at the CONSTANTS
// keyword.
func specModel(cfg *tlacfg.Config, at errAt) (*spec.Model, error) {
	var sc spec.Config
	for _, c := range cfg.Constants {
		if err := sc.SetConstant(c.Name, plain(c.Value)); err != nil {
			return nil, at(c.Line, "%v", err)
		}
	}
	for _, name := range moduleConstants {
		if _, ok := cfg.Constant(name); !ok {
			hint := ""
			if slices.Contains(spec.ModelValues, name) {
				hint = fmt.Sprintf(" (a model value: %s = %s)", name, name)
			}
			return nil, at(max(cfg.ConstantsLine, 1), "the constant %s is not assigned a value%s; TLC refuses such a file too", name, hint)
		}
	}
	sm, err := spec.New(sc)
	if err != nil {
		line := 1
		var ce *spec.ConstantError
		if errors.As(err, &ce) {
			if c, ok := cfg.Constant(ce.Name); ok {
				line = c.Line
			}
		}
		return nil, at(line, "%v", err)
	}
	return sm, nil
}

// addReductions adds the cfg's CONSTRAINTs, ACTION_CONSTRAINTs, VIEW and
// SYMMETRY, each a definition of MCDrainRegistrationReduced.tla.
func (m *Model) addReductions(path string, cfg *tlacfg.Config, opts *modelcheck.Options, at errAt) error {
	for _, n := range cfg.Constraints {
		c, err := definition(path, "CONSTRAINT", n, spec.MCConstraints)
		if err != nil {
			return err
		}
		m.constraints = append(m.constraints, c)
		opts.UseConstraint = true
	}
	for _, n := range cfg.ActionConstraints {
		c, err := definition(path, "ACTION_CONSTRAINT", n, spec.MCActionConstraints)
		if err != nil {
			return err
		}
		m.actionConstraints = append(m.actionConstraints, c)
		opts.UseConstraint = true
	}
	if n := cfg.View; n.Name != "" {
		v, err := definition(path, "VIEW", n, spec.MCViews)
		if err != nil {
			return err
		}
		m.view = v
		opts.UseView = true
	}
	if n := cfg.Symmetry; n.Name != "" {
		set, err := definition(path, "SYMMETRY", n, spec.MCSymmetries)
		if err != nil {
			return err
		}
		if m.symmetry, err = m.Model.SymmetryMask(set(m.Config())); err != nil {
			return at(n.Line, "SYMMETRY %s: %v", n.Name, err)
		}
		opts.UseSymmetry = true
	}
	return nil
}

// selectProperties fills the options with the cfg's INVARIANTS and
// PROPERTIES (liveness ones only when liveness is asked for).
func (m *Model) selectProperties(cfg *tlacfg.Config, liveness bool, opts *modelcheck.Options, at errAt) error {
	for _, inv := range cfg.Invariants {
		if !slices.Contains(m.Invariants(), inv.Name) {
			return at(inv.Line, "unknown invariant %q (the model defines %v)", inv.Name, m.Invariants())
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
				return at(p.Line, "liveness property %s needs SPECIFICATION Spec (INIT/NEXT carry no fairness)", p.Name)
			}
			if !liveness {
				continue // --liveness=false: the safety part, which a SYMMETRY or VIEW does not affect
			}
			if opts.UseSymmetry || opts.UseView {
				kw, n := "SYMMETRY", cfg.Symmetry
				if !opts.UseSymmetry {
					kw, n = "VIEW", cfg.View
				}
				return at(p.Line, "liveness property %s cannot be checked under a %s (TLC warns it may miss violations there): "+
					"remove the %s %s line (line %d) to check it, or check the safety properties alone with --liveness=false", p.Name, kw, kw, n.Name, n.Line)
			}
			opts.Liveness = append(opts.Liveness, p.Name)
		default:
			return at(p.Line, "unknown property %q (the model defines %v)", p.Name, append(m.ActionProperties(), live...))
		}
	}
	return nil
}

// definition looks up the definition of MCDrainRegistrationReduced.tla
// that a cfg line names under keyword kind.
func definition[T any](path, kind string, n tlacfg.Named, defs map[string]T) (T, error) {
	d, ok := defs[n.Name]
	if !ok {
		names := slices.Sorted(maps.Keys(defs))
		return d, &tlacfg.Error{File: path, Line: n.Line, Msg: fmt.Sprintf("%s %s is not defined (tla/MCDrainRegistrationReduced.tla defines %s)", kind, n.Name, strings.Join(names, ", "))}
	}
	return d, nil
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
// outcome and violated property always; for a model that holds and for a
// liveness violation, TLC's distinct, generated and depth; for a safety
// violation, the figures single-worker TLC printed when it stopped
// (distinct, generated, depth: the search then runs with one worker,
// whatever workers says, as TLC's were recorded with -workers 1), the
// counterexample's length and, when recorded, the whole space's distinct
// count (--continue against TLC's -continue, with workers).
func Verify(ctx context.Context, cfgPath string, mm Entry, workers int) (Row, error) {
	m, opts, err := Load(cfgPath, true)
	if err != nil {
		return Row{}, err
	}
	safetyViolation := mm.Expected != "ok" && !mm.Liveness && !strings.Contains(mm.Violated, "Completes")
	opts.Workers = workers
	if safetyViolation || opts.UseView {
		// Under a VIEW the first state met with a view is the one
		// explored, so the figures can depend on the search order: TLC's
		// were recorded with one worker, like a safety violation's.
		opts.Workers = 1
	}
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
	var problems []string
	if row.Outcome != mm.Expected {
		problems = append(problems, fmt.Sprintf("outcome %s, recorded %s", row.Outcome, mm.Expected))
	}
	if mm.Expected == "violated" && res.Violated != mm.Violated {
		problems = append(problems, fmt.Sprintf("violated %s, recorded %s", res.Violated, mm.Violated))
	}
	if res.Distinct != mm.TLC.Distinct {
		problems = append(problems, fmt.Sprintf("distinct %d, TLC %d", res.Distinct, mm.TLC.Distinct))
	}
	if mm.TLC.Generated > 0 && res.Generated != mm.TLC.Generated {
		problems = append(problems, fmt.Sprintf("generated %d, TLC %d", res.Generated, mm.TLC.Generated))
	}
	if mm.TLC.Depth > 0 && res.Depth != mm.TLC.Depth {
		problems = append(problems, fmt.Sprintf("depth %d, TLC %d", res.Depth, mm.TLC.Depth))
	}
	switch {
	case res.Kind == "liveness":
		// A lasso is not unique; ours is no longer than TLC's.
		if mm.TLC.TraceLength > 0 && len(res.Trace) > mm.TLC.TraceLength {
			problems = append(problems, fmt.Sprintf("lasso of %d states, TLC %d", len(res.Trace), mm.TLC.TraceLength))
		}
	case safetyViolation:
		if mm.TLC.TraceLength > 0 && len(res.Trace) != mm.TLC.TraceLength {
			problems = append(problems, fmt.Sprintf("trace of %d states, TLC %d", len(res.Trace), mm.TLC.TraceLength))
		}
		if mm.TLC.ContinueDistinct > 0 {
			opts.Continue, opts.Workers = true, workers
			full, err := modelcheck.Check(ctx, m, opts)
			if err != nil {
				return Row{}, err
			}
			row.ContinueDistinct, row.TLCContinueDistinct = full.Distinct, mm.TLC.ContinueDistinct
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
