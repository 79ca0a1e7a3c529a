package mutation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/scanner"
	"go/token"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// kinds lists, per token, the mutators go-gremlins v0.6.0 applies to it by
// default (its TokenMutantType restricted to the mutators enabled without
// a flag), in gremlins' order: a SUB gets both INVERT_NEGATIVES and
// ARITHMETIC_BASE, binary or unary, as gremlins does.
var kinds = map[token.Token][]string{
	token.ADD: {"ARITHMETIC_BASE"},
	token.SUB: {"INVERT_NEGATIVES", "ARITHMETIC_BASE"},
	token.MUL: {"ARITHMETIC_BASE"},
	token.QUO: {"ARITHMETIC_BASE"},
	token.REM: {"ARITHMETIC_BASE"},
	token.INC: {"INCREMENT_DECREMENT"},
	token.DEC: {"INCREMENT_DECREMENT"},
	token.EQL: {"CONDITIONALS_NEGATION"},
	token.NEQ: {"CONDITIONALS_NEGATION"},
	token.GEQ: {"CONDITIONALS_BOUNDARY", "CONDITIONALS_NEGATION"},
	token.GTR: {"CONDITIONALS_BOUNDARY", "CONDITIONALS_NEGATION"},
	token.LEQ: {"CONDITIONALS_BOUNDARY", "CONDITIONALS_NEGATION"},
	token.LSS: {"CONDITIONALS_BOUNDARY", "CONDITIONALS_NEGATION"},
}

// replacement is gremlins' tokenMutations for the default mutators: what
// each mutator writes in place of the token.
var replacement = map[string]map[token.Token]token.Token{
	"ARITHMETIC_BASE":       {token.ADD: token.SUB, token.SUB: token.ADD, token.MUL: token.QUO, token.QUO: token.MUL, token.REM: token.MUL},
	"INVERT_NEGATIVES":      {token.SUB: token.ADD},
	"INCREMENT_DECREMENT":   {token.INC: token.DEC, token.DEC: token.INC},
	"CONDITIONALS_BOUNDARY": {token.GEQ: token.GTR, token.GTR: token.GEQ, token.LEQ: token.LSS, token.LSS: token.LEQ},
	"CONDITIONALS_NEGATION": {token.EQL: token.NEQ, token.NEQ: token.EQL, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR, token.LSS: token.GEQ},
}

// Enumerate lists the mutants go-gremlins v0.6.0 would make, with its
// default mutators, in the package whose folder is pkg (relative to the
// module root root): every operator of a binary or unary expression, an
// increment or a decrement, in each non-test Go file of that folder (not
// its subfolders, which are packages of their own) that the default build
// compiles. Unlike gremlins it does not ask coverage: a mutant in a switch
// case, which gremlins reports NOT COVERED and never runs, is listed too.
// The list is ordered by file, line, column and mutator.
func Enumerate(root, pkg string) ([]Mutant, error) {
	dir := filepath.Join(root, pkg)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Mutant
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, name); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			tok, pos, ok := operator(n)
			if !ok {
				return true
			}
			p := fset.Position(pos)
			for _, k := range kinds[tok] {
				out = append(out, Mutant{filepath.ToSlash(filepath.Join(pkg, name)), p.Line, p.Column, k})
			}
			return true
		})
	}
	slices.SortStableFunc(out, func(a, b Mutant) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
	return out, nil
}

// operator returns the operator a mutant may change in n, and where it
// stands: a binary or unary expression's, an increment's or a
// decrement's; false for any other node.
func operator(n ast.Node) (token.Token, token.Pos, bool) {
	switch n := n.(type) {
	case *ast.BinaryExpr:
		return n.Op, n.OpPos, true
	case *ast.UnaryExpr:
		return n.Op, n.OpPos, true
	case *ast.IncDecStmt:
		return n.Tok, n.TokPos, true
	}
	return 0, 0, false
}

// Apply returns src with the mutant m applied: the operator token at m's
// line and column replaced as m's mutator replaces it. It is an error if
// no token starts there or the mutator does not change that token.
func Apply(src []byte, m Mutant) ([]byte, error) {
	rep, ok := replacement[m.Type]
	if !ok {
		return nil, fmt.Errorf("%s: unknown mutator", m)
	}
	fset := token.NewFileSet()
	file := fset.AddFile(m.File, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			return nil, fmt.Errorf("%s: no token starts at that position", m)
		}
		p := fset.Position(pos)
		if p.Line < m.Line || p.Line == m.Line && p.Column < m.Column {
			continue
		}
		if p.Line != m.Line || p.Column != m.Column {
			return nil, fmt.Errorf("%s: no token starts at that position", m)
		}
		to, ok := rep[tok]
		if !ok {
			return nil, fmt.Errorf("%s: the token there is %q, which the mutator does not change", m, tok)
		}
		off := file.Offset(pos)
		out := make([]byte, 0, len(src)+1)
		out = append(out, src[:off]...)
		out = append(out, to.String()...)
		return append(out, src[off+len(tok.String()):]...), nil
	}
}

// Draw returns n mutants of ms chosen by a seeded draw, in the order
// drawn: the first n of a permutation of ms from a PCG generator seeded
// with (seed, seed). The same list, n and seed give the same draw, and any
// prefix of a draw is itself a uniform sample (a run stopped early is
// still one); n <= 0 or n >= len(ms) takes them all, permuted.
func Draw(ms []Mutant, n int, seed uint64) []Mutant {
	if n <= 0 || n > len(ms) {
		n = len(ms)
	}
	idx := rand.New(rand.NewPCG(seed, seed)).Perm(len(ms))[:n]
	out := make([]Mutant, n)
	for i, j := range idx {
		out[i] = ms[j]
	}
	return out
}

// Wilson is the 95% Wilson score interval, in percent, of a proportion
// of k successes in n trials (0 to 100 with no trial).
func Wilson(k, n int) (lo, hi float64) {
	if n == 0 {
		return 0, 100
	}
	const z = 1.959963984540054
	p, nf := float64(k)/float64(n), float64(n)
	den := 1 + z*z/nf
	mid := (p + z*z/(2*nf)) / den
	half := z / den * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return 100 * max(0, mid-half), 100 * min(1, mid+half)
}

// Statuses of a mutant tested by Test, as gremlins names them.
const (
	Killed    = "KILLED"
	Lived     = "LIVED"
	TimedOut  = "TIMED OUT"
	NotViable = "NOT VIABLE"
)

// Runner tests mutants of one package through go test -overlay: the
// mutated file replaces the original in the build only, the worktree is
// never written.
type Runner struct {
	// Go is the go command ("go" if empty).
	Go string
	// Root is the module root, which mutant files are relative to.
	Root string
	// Pkg is the package folder from the root ("spec").
	Pkg string
	// Args are extra go test arguments (-tags, -run, -short).
	Args []string
	// Env is added to the environment of go test.
	Env []string
	// Timeout bounds one mutant's go test; past it the mutant is TIMED OUT.
	Timeout time.Duration
	// Floor is the least limit of a run of selected tests (a minute if
	// zero): see TestSelected.
	Floor time.Duration
	// Dir holds the mutated files and overlay descriptions.
	Dir string
}

// Test applies m and runs the package's tests against it: LIVED if they
// pass, KILLED if they fail, TIMED OUT past r.Timeout, NOT VIABLE if the
// mutant does not build. The output of go test is returned with it.
func (r Runner) Test(ctx context.Context, m Mutant) (string, []byte, error) {
	ov, err := r.overlay(m)
	if err != nil {
		return "", nil, err
	}
	return r.run(ctx, "-overlay", ov)
}

// Baseline runs the package's tests unmutated, with the same flags as
// every mutant: they must pass, or no verdict means anything.
func (r Runner) Baseline(ctx context.Context) (time.Duration, []byte, error) {
	start := time.Now()
	st, out, err := r.run(ctx)
	if err == nil && st != Lived {
		err = fmt.Errorf("%s: the unmutated tests do not pass (%s)", r.Pkg, st)
	}
	return time.Since(start), out, err
}

func (r Runner) run(parent context.Context, extra ...string) (string, []byte, error) {
	ctx, cancel := context.WithTimeout(parent, r.Timeout)
	defer cancel()
	// -count=1: a cached pass is no verdict; -failfast: the first failing
	// test decides; -vet=off: the tests judge a mutant, not vet.
	args := append([]string{"test", "-count=1", "-failfast", "-vet=off", "-timeout", (r.Timeout + time.Minute).String()}, extra...)
	args = append(append(args, r.Args...), "./"+filepath.ToSlash(r.Pkg))
	// The whole process group is killed at the deadline: go test's child,
	// the test binary, would otherwise outlive it.
	cmd := r.command(ctx, args...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	out := buf.Bytes()
	if err != nil && ctx.Err() == nil && (bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]"))) {
		return NotViable, out, nil
	}
	st, err := verdict(parent, ctx, err)
	return st, out, err
}

// verdict reads a test run's end: TIMED OUT if run, its own context,
// passed its deadline; the parent's error if the parent ended; LIVED if
// the tests passed, KILLED if they failed (an exit status), and the
// error of a run that could not start.
func verdict(parent, run context.Context, err error) (string, error) {
	switch {
	case parent.Err() != nil:
		return "", parent.Err()
	case errors.Is(run.Err(), context.DeadlineExceeded):
		return TimedOut, nil
	case err == nil:
		return Lived, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return Killed, nil
	}
	return "", err
}
