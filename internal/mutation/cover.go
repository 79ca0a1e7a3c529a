package mutation

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Coverage is what each top-level test of a package executes of the
// package's own files, measured one test at a time: the basis of
// selecting, for a mutant, only the tests that run its code (the test
// selection of PIT and its kin). A test that never executes the block
// holding a mutant behaves the same on the mutant as on the original (the
// two programs are the same until the block is entered, which it never
// is), so only the tests whose blocks hold the mutant can kill it; a
// mutant outside every block (a package-level initializer, a constant, a
// switch case's expression, which no block holds) gets the whole suite.
// The argument assumes a test runs the same code each time: a test whose
// path depends on timing or on an unseeded random source may cover a line
// in the whole suite's run that it missed in its own.
type Coverage struct {
	// Tests are the package's tests (Test, Example and Fuzz functions, a
	// fuzz target running its seed corpus), in the order the binary lists
	// them.
	Tests []TestCoverage
	// Took is the time of the whole coverage pass.
	Took time.Duration
	// all is every block of the package (a profile lists them all,
	// executed or not).
	all []Block
	// root is the module root, which the mutants' files are relative to.
	root string
}

// TestCoverage is one test's share of a Coverage.
type TestCoverage struct {
	// Name is the test function's name.
	Name string
	// Took is its time alone, with coverage on.
	Took time.Duration
	// Blocks are the blocks of the package's files it executed.
	Blocks []Block
}

// Block is a block of a coverage profile: a file's base name and the
// positions (line and byte column, 1-based) it starts and ends at.
type Block struct {
	File                                 string
	StartLine, StartCol, EndLine, EndCol int
}

// holds reports whether the block holds the position.
func (b Block) holds(file string, line, col int) bool {
	if b.File != file || line < b.StartLine || line > b.EndLine {
		return false
	}
	return (line > b.StartLine || col >= b.StartCol) && (line < b.EndLine || col <= b.EndCol)
}

// Covering returns the tests that can reach m: those that execute the
// block holding its position; for a position no block holds but a
// function's body does (a switch case's expression), those that execute
// any block of the innermost such body, since the body's first block runs
// on every call. whole reports a position outside every function (a
// package-level initializer): then every test must judge m.
func (c *Coverage) Covering(m Mutant) (tests []TestCoverage, whole bool, err error) {
	base := path.Base(m.File)
	if c.inAnyBlock(base, m.Line, m.Column) {
		for _, t := range c.Tests {
			if slices.ContainsFunc(t.Blocks, func(b Block) bool { return b.holds(base, m.Line, m.Column) }) {
				tests = append(tests, t)
			}
		}
		return tests, false, nil
	}
	body, ok, err := c.enclosingBody(m)
	if err != nil || !ok {
		return nil, true, err
	}
	for _, t := range c.Tests {
		if slices.ContainsFunc(t.Blocks, func(b Block) bool { return b.File == base && body.holdsBlock(b) }) {
			tests = append(tests, t)
		}
	}
	return tests, false, nil
}

// holdsBlock reports whether the block lies within b (b's positions
// inclusive).
func (b Block) holdsBlock(x Block) bool {
	return b.holds(x.File, x.StartLine, x.StartCol) && b.holds(x.File, x.EndLine, x.EndCol)
}

// enclosingBody returns the innermost function body (a declaration's or a
// literal's) that holds m's position, as a Block of the file.
func (c *Coverage) enclosingBody(m Mutant) (Block, bool, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(c.root, m.File), nil, parser.SkipObjectResolution)
	if err != nil {
		return Block{}, false, err
	}
	base := path.Base(m.File)
	var best Block
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch n := n.(type) {
		case *ast.FuncDecl:
			body = n.Body
		case *ast.FuncLit:
			body = n.Body
		}
		if body != nil {
			from, to := fset.Position(body.Lbrace), fset.Position(body.Rbrace)
			b := Block{base, from.Line, from.Column, to.Line, to.Column}
			if b.holds(base, m.Line, m.Column) {
				best, found = b, true // Inspect goes outside in: the last is the innermost
			}
		}
		return true
	})
	return best, found, nil
}

// inAnyBlock reports whether a block of the package, executed or not,
// holds the position.
func (c *Coverage) inAnyBlock(file string, line, col int) bool {
	return slices.ContainsFunc(c.all, func(b Block) bool { return b.holds(file, line, col) })
}

// Cover builds r's package's test binary with coverage (buildArgs such as
// -tags go to the build) and runs each of its tests alone, recording the
// blocks of the package's files that the test executes and its time.
// Every test must pass alone, or there is no basis to select from. The
// binary is kept in r.Dir for the mutants' runs.
func (r Runner) Cover(ctx context.Context, buildArgs []string) (*Coverage, error) {
	start := time.Now()
	bin := filepath.Join(r.Dir, "cover.test")
	args := append([]string{"test", "-c", "-vet=off", "-ldflags=-w", "-cover", "-covermode=set", "-o", bin}, buildArgs...)
	if out, err := r.goCmd(ctx, append(args, "./"+filepath.ToSlash(r.Pkg))...); err != nil {
		return nil, fmt.Errorf("%s: building the coverage binary: %v\n%s", r.Pkg, err, out)
	}
	out, err := r.binary(ctx, bin, r.Timeout, "-test.list", ".")
	if err != nil {
		return nil, fmt.Errorf("%s: listing the tests: %v\n%s", r.Pkg, err, out)
	}
	c := &Coverage{root: r.Root}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(name, "Test") || strings.HasPrefix(name, "Example") || strings.HasPrefix(name, "Fuzz") {
			c.Tests = append(c.Tests, TestCoverage{Name: name})
		}
	}
	if len(c.Tests) == 0 {
		return nil, fmt.Errorf("%s: the package has no test", r.Pkg)
	}
	prof := filepath.Join(r.Dir, "cover.out")
	for i := range c.Tests {
		t := &c.Tests[i]
		t0 := time.Now()
		out, err := r.binary(ctx, bin, r.Timeout, "-test.run", "^"+regexp.QuoteMeta(t.Name)+"$",
			"-test.count=1", "-test.coverprofile="+prof)
		t.Took = time.Since(t0)
		if err != nil {
			return nil, fmt.Errorf("%s: %s fails alone, unmutated: %v\n%s", r.Pkg, t.Name, err, out)
		}
		run, all, err := readProfile(prof)
		if err != nil {
			return nil, fmt.Errorf("%s: %s's profile: %v", r.Pkg, t.Name, err)
		}
		t.Blocks = run
		if i == 0 {
			c.all = all
		}
	}
	c.Took = time.Since(start)
	return c, nil
}

// readProfile reads a coverage profile ("mode: set", then
// "importpath/file.go:l.c,l.c statements count" lines): the blocks
// executed, and every block listed.
func readProfile(name string) (run, all []Block, err error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if !strings.HasPrefix(lines[0], "mode: ") {
		return nil, nil, errors.New("not a coverage profile: no mode line")
	}
	for n, ln := range lines[1:] {
		var b Block
		var stmts, count int
		file, rest, ok := strings.Cut(ln, ":")
		if ok {
			_, err = fmt.Sscanf(rest, "%d.%d,%d.%d %d %d", &b.StartLine, &b.StartCol, &b.EndLine, &b.EndCol, &stmts, &count)
		}
		if !ok || err != nil {
			return nil, nil, fmt.Errorf("line %d: %q is not a block", n+2, ln)
		}
		b.File = path.Base(file)
		all = append(all, b)
		if count > 0 {
			run = append(run, b)
		}
	}
	return run, all, nil
}

// TestSelected judges m by the tests of c that can reach it, built once and
// run in two stages: the tests that took at most quick alone, then, if
// they pass, the others, so a mutant a quick test kills does not wait for
// the slow ones. A mutant outside every block gets r.Test, the whole
// suite; one that builds but that no test reaches is LIVED without a run.
// Each stage's limit is coef times the time its tests took alone in the
// coverage pass, at least r.Floor (a minute). It returns the verdict, the tests that judged it
// (-1: the whole suite) and the output.
func (r Runner) TestSelected(ctx context.Context, m Mutant, c *Coverage, coef int, quick time.Duration) (string, int, []byte, error) {
	return r.TestInSchema(ctx, m, c, nil, coef, quick)
}

// TestInSchema is TestSelected with s's binary for a mutant s holds:
// the binary is run with the mutant's number in SchemaEnv instead of a
// build of the mutant (the whole suite, where TestSelected gives it, is
// s's binary run whole). A mutant s does not hold (or a nil s) is built
// as TestSelected builds it.
func (r Runner) TestInSchema(ctx context.Context, m Mutant, c *Coverage, s *Schema, coef int, quick time.Duration) (string, int, []byte, error) {
	tests, whole, err := c.Covering(m)
	if err != nil {
		return "", 0, nil, err
	}
	id, inSchema := 0, false
	if s != nil {
		id, inSchema = s.IDs[m]
	}
	var bin string
	switch {
	case inSchema:
		bin = s.Bin
		r.Env = append(slices.Clone(r.Env), SchemaEnv+"="+strconv.Itoa(id))
		if whole {
			st, out, err := r.runBinary(ctx, bin, r.Timeout)
			return st, -1, out, err
		}
	case whole:
		st, out, err := r.Test(ctx, m)
		return st, -1, out, err
	default:
		ov, err := r.overlay(m)
		if err != nil {
			return "", 0, nil, err
		}
		bin = filepath.Join(r.Dir, "mutant.test")
		// -ldflags=-w: no DWARF, as go test links the binaries it runs
		// (half of the link's time).
		args := append([]string{"test", "-c", "-vet=off", "-ldflags=-w", "-overlay", ov, "-o", bin}, r.Args...)
		if out, err := r.goCmd(ctx, append(args, "./"+filepath.ToSlash(r.Pkg))...); err != nil {
			if ctx.Err() != nil {
				return "", 0, out, ctx.Err()
			}
			return NotViable, len(tests), out, nil
		}
	}
	slices.SortStableFunc(tests, func(a, b TestCoverage) int { return cmp.Compare(a.Took, b.Took) })
	split := 0
	for split < len(tests) && tests[split].Took <= quick {
		split++
	}
	for _, stage := range [][]TestCoverage{tests[:split], tests[split:]} {
		if len(stage) == 0 {
			continue
		}
		var names []string
		var took time.Duration
		for _, t := range stage {
			names = append(names, regexp.QuoteMeta(t.Name))
			took += t.Took
		}
		floor := r.Floor
		if floor == 0 {
			floor = time.Minute
		}
		st, out, err := r.runBinary(ctx, bin, max(time.Duration(coef)*took, floor), "-test.run", "^("+strings.Join(names, "|")+")$")
		if err != nil || st != Lived {
			return st, len(tests), out, err
		}
	}
	return Lived, len(tests), nil, nil
}

// runBinary runs a test binary's tests (args select them; none: all)
// within limit: LIVED if they pass, KILLED if one fails, TIMED OUT past
// the limit.
func (r Runner) runBinary(ctx context.Context, bin string, limit time.Duration, args ...string) (string, []byte, error) {
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out, err := r.binary(sctx, bin, limit+time.Minute, append(args, "-test.count=1", "-test.failfast", "-test.paniconexit0")...)
	st, err := verdict(ctx, sctx, err)
	return st, out, err
}

// overlay writes m's mutated file and the overlay that puts it in place of
// the original; it returns the overlay's name.
func (r Runner) overlay(m Mutant) (string, error) {
	abs, err := filepath.Abs(filepath.Join(r.Root, m.File))
	if err != nil {
		return "", err
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return "", err
	}
	mut, err := Apply(src, m)
	if err != nil {
		return "", err
	}
	mf := filepath.Join(r.Dir, "mutant.go")
	if err := os.WriteFile(mf, mut, 0o644); err != nil {
		return "", err
	}
	ov := filepath.Join(r.Dir, "overlay.json")
	return ov, writeOverlay(ov, map[string]string{abs: mf})
}

// writeOverlay writes go build's -overlay file: each file of the build
// in repl's keys replaced by (or, if it does not exist, added as) the
// file its value names. JSON, not Go, quotes the paths.
func writeOverlay(name string, repl map[string]string) error {
	js, err := json.Marshal(struct{ Replace map[string]string }{repl})
	if err != nil {
		return err
	}
	return os.WriteFile(name, js, 0o644)
}

// goCmd runs the go command in the module root with r's environment.
func (r Runner) goCmd(ctx context.Context, args ...string) ([]byte, error) {
	return r.command(ctx, args...).CombinedOutput()
}

// command is the go command in the module root with r's environment, in
// a process group of its own that a cancellation kills whole.
func (r Runner) command(ctx context.Context, args ...string) *exec.Cmd {
	goCmd := r.Go
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.CommandContext(ctx, goCmd, args...)
	cmd.Dir = r.Root
	cmd.Env = append(os.Environ(), r.Env...)
	setProcessGroup(cmd)
	return cmd
}

// binary runs a test binary in the package's folder (where go test runs
// it, so testdata is found) with r's environment and a -test.timeout.
func (r Runner) binary(ctx context.Context, bin string, timeout time.Duration, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, append(args, "-test.timeout="+strconv.FormatInt(int64(timeout/time.Second)+60, 10)+"s")...)
	cmd.Dir = filepath.Join(r.Root, r.Pkg)
	cmd.Env = append(os.Environ(), r.Env...)
	setProcessGroup(cmd)
	return cmd.CombinedOutput()
}
