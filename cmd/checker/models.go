package main

import (
	"context"
	"fmt"

	"github.com/drainproof/drainproof/internal/drainmodel"
	"github.com/drainproof/drainproof/modelcheck"
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
	m, opts, err := drainmodel.Load(path, liveness)
	if err != nil {
		return job{}, err
	}
	return job{name: path, run: func(ctx context.Context, o modelcheck.Options, out output) int {
		o.Invariants, o.ActionProperties, o.Liveness, o.CheckDeadlock = opts.Invariants, opts.ActionProperties, opts.Liveness, opts.CheckDeadlock
		return runModel[spec.State](ctx, m, o, out)
	}}, nil
}
