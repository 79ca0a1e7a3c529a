package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/drainproof/drainproof/modelcheck/tlacfg"
	"github.com/drainproof/drainproof/modelcheck/twophase"
	"github.com/drainproof/drainproof/spec"
)

// builtinModel is an entry of the built-in model registry.
type builtinModel struct {
	name, help string
	build      func(f *checkFlags) (job, error)
}

var registry = []builtinModel{
	{"drain", "the drain-and-registration protocol, default constants (tla/MCDrainRegistration.cfg); safety", func(*checkFlags) (job, error) {
		m, err := spec.New(spec.DefaultConfig())
		if err != nil {
			return job{}, err
		}
		return job{name: "drain (default constants)", run: func(ctx context.Context, opts modelcheck.Options, out output) int {
			opts.CheckDeadlock = true
			opts.Liveness = []string{}
			return runModel[spec.State](ctx, m, opts, out)
		}}, nil
	}},
	{"twophase", "TwoPhase commit of tlaplus/Examples (--rms N), calibrates the checker against TLC", func(f *checkFlags) (job, error) {
		return twoPhase(f.rms, false)
	}},
	{"twophase-bug", "TwoPhase with a planted early commit (--rms N): TCConsistent must fail", func(f *checkFlags) (job, error) {
		return twoPhase(f.rms, true)
	}},
}

func builtin(name string, f *checkFlags) (job, error) {
	for _, b := range registry {
		if b.name == name {
			return b.build(f)
		}
	}
	var names []string
	for _, b := range registry {
		names = append(names, b.name)
	}
	return job{}, fmt.Errorf("unknown model %q (built-in models: %v)", name, names)
}

func twoPhase(rms int, bug bool) (job, error) {
	m, err := twophase.New(rms, bug)
	if err != nil {
		return job{}, err
	}
	name := fmt.Sprintf("twophase (rms=%d)", rms)
	if bug {
		name = fmt.Sprintf("twophase-bug (rms=%d)", rms)
	}
	return job{name: name, run: func(ctx context.Context, opts modelcheck.Options, out output) int {
		return runModel[twophase.State](ctx, m, opts, out)
	}}, nil
}

// drainFromConfig builds the protocol model a TLC .cfg file describes,
// refusing, with the file and line, anything it cannot honour.
func drainFromConfig(path string, liveness bool) (job, error) {
	m, opts, err := loadConfig(path, liveness)
	if err != nil {
		return job{}, err
	}
	return job{name: path, run: func(ctx context.Context, o modelcheck.Options, out output) int {
		o.Invariants, o.ActionProperties, o.Liveness, o.CheckDeadlock = opts.Invariants, opts.ActionProperties, opts.Liveness, opts.CheckDeadlock
		return runModel[spec.State](ctx, m, o, out)
	}}, nil
}

// loadConfig reads a .cfg file into the spec model and the checker
// options it selects (invariants, properties, deadlock checking).
func loadConfig(path string, liveness bool) (*spec.Model, modelcheck.Options, error) {
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
		return fail(at(1, "%v", err))
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
