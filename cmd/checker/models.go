package main

import (
	"context"
	"fmt"

	"github.com/drainproof/drainproof/harness/drainmodel"
	"github.com/drainproof/drainproof/modelcheck"
	"github.com/drainproof/drainproof/spec"
	"github.com/drainproof/drainproof/spec/twophase"
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
		return newJob[spec.State]("drain (default constants)", m, func(o *modelcheck.Options) {
			o.CheckDeadlock = true
			o.Liveness = []string{}
		}), nil
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
	return newJob[twophase.State](name, m, nil), nil
}

// drainFromConfig builds the protocol model a TLC .cfg file describes,
// refusing, with the file and line, anything it cannot honour.
func drainFromConfig(path string, liveness bool) (job, error) {
	m, opts, err := drainmodel.Load(path, liveness)
	if err != nil {
		return job{}, err
	}
	return newJob[spec.State](path, m, func(o *modelcheck.Options) {
		o.Invariants, o.ActionProperties, o.Liveness, o.CheckDeadlock = opts.Invariants, opts.ActionProperties, opts.Liveness, opts.CheckDeadlock
		o.UseConstraint, o.UseView, o.UseSymmetry = opts.UseConstraint, opts.UseView, opts.UseSymmetry
	}), nil
}

// newJob makes a job of model m; select, if set, fixes the properties
// and deadlock checking the model's source asks for (a cfg's INVARIANTS,
// PROPERTIES and CHECK_DEADLOCK) on top of the flags.
func newJob[S any](name string, m modelcheck.Model[S], selectProps func(*modelcheck.Options)) job {
	fix := func(o *modelcheck.Options) {
		if selectProps != nil {
			selectProps(o)
		}
	}
	return job{
		name: name,
		run: func(ctx context.Context, opts modelcheck.Options, out output) int {
			fix(&opts)
			return runModel(ctx, m, opts, out)
		},
		cov: func(ctx context.Context, out output) int { return runCoverage(ctx, m, out) },
		sim: func(ctx context.Context, so modelcheck.SimOptions, out output) int {
			o := modelcheck.Options{CheckDeadlock: so.CheckDeadlock}
			fix(&o)
			if o.UseConstraint || o.UseView || o.UseSymmetry {
				fmt.Fprintln(out.stderr, "checker check: --simulate does not apply a cfg's CONSTRAINT, ACTION_CONSTRAINT, VIEW or SYMMETRY; check it exhaustively instead")
				return exitUsage
			}
			so.Invariants, so.ActionProperties, so.CheckDeadlock = o.Invariants, o.ActionProperties, o.CheckDeadlock
			return runSimulation(ctx, m, so, out)
		},
	}
}
