// Command sample tests a package's mutants through go test -overlay, all
// of them or a seeded sample, and writes the verdicts as gremlins' JSON
// (with the population the sample was drawn from), which
// internal/mutation/report reads: for packages whose suites are too long
// for gremlins to run every mutant (spec, modelcheck), and for a part of a
// file gremlins cannot select (it selects by file only).
//
// The mutants are those gremlins v0.6.0 makes with its default mutators
// (mutation.Enumerate), covered or not: gremlins never runs a mutant in a
// switch case (no coverage block holds it), sample does. A run starts
// with the canary package (one mutant its test lets live, one it kills:
// anything else and the run stops) and the package's unmutated tests,
// which must pass; a mutant's time limit is the coefficient times that
// run.
//
//	go run ./internal/mutation/sample [-n N] [-seed S] [-file NAME]... [-lines A-B] [-mutant M]...
//	    [-tags T] [-run RE | -select [-quick D] [-schema]] [-timeout-coefficient C] [-confirm D] [-list] [-resume] -o OUT.json PKG
//
// With -select a mutant is judged only by the tests that can reach it:
// each test is first run alone with coverage (mutation.Coverage), and a
// mutant is given the tests that execute the block holding it, or, for a
// position no block holds (a switch case's expression), those that enter
// the function holding it; outside every function, the whole suite. A
// mutant the tests kill costs a build and its quick tests, one they let
// live the tests that reach it rather than the whole suite, and no cut of
// the suite has to be kept by hand (docs/perf.md, "Mutation testing", has
// the figures and the comparison of verdicts).
//
// With -schema as well, the drawn mutants are built into one test binary
// where they can be, each switched on at run time (mutation.Schema): a
// mutant then costs the run of its tests, not a build and link of the
// package's test binary; the mutants a schema cannot hold (constants,
// operators the compiler refuses in it) are built one by one as before.
//
// The environment is passed to go test: DRAINPROOF_MUTATION=1 selects
// modelcheck's cut suite (docs/perf.md, "Mutation testing"), and with
// -confirm a mutant the cut lets live is tested again by the whole suite,
// so that every verdict is the whole suite's: the cut only saves the time
// of the mutants it kills.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/drainproof/drainproof/internal/mutation"
)

func main() { os.Exit(run(os.Args[1:])) }

type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(s string) error { *f = append(*f, s); return nil }

// result is gremlins' JSON (the fields mutation.ReadResult reads) plus
// the draw.
type result struct {
	GoModule   string     `json:"go_module"`
	Files      []fileJSON `json:"files"`
	Elapsed    float64    `json:"elapsed_time"`
	Population int        `json:"population"`
	Sampled    int        `json:"sampled"`
	Seed       uint64     `json:"seed"`
}

type fileJSON struct {
	FileName  string         `json:"file_name"`
	Mutations []mutationJSON `json:"mutations"`
}

type mutationJSON struct {
	Type    string  `json:"type"`
	Status  string  `json:"status"`
	Line    int     `json:"line"`
	Column  int     `json:"column"`
	Seconds float64 `json:"seconds"`
}

func run(args []string) int {
	fs := flag.NewFlagSet("sample", flag.ContinueOnError)
	n := fs.Int("n", 0, "mutants to draw (0: all)")
	seed := fs.Uint64("seed", 1, "the draw's seed")
	var only files
	fs.Var(&only, "file", "only this file of the package (base name; repeatable)")
	lines := fs.String("lines", "", "only mutants on lines A-B (A- for A to the end)")
	var named files
	fs.Var(&named, "mutant", `only this mutant, as "file:line:col TYPE" (repeatable)`)
	tags := fs.String("tags", "", "go test -tags")
	runRE := fs.String("run", "", "go test -run")
	coef := fs.Int("timeout-coefficient", 10, "a mutant's time limit, in unmutated runs")
	list := fs.Bool("list", false, "print the draw and stop")
	confirm := fs.Duration("confirm", 0, "if set, a mutant that lives with DRAINPROOF_MUTATION set (a cut suite) is tested again with it unset, the whole suite, within this limit; its verdict is the whole suite's")
	sel := fs.Bool("select", false, "judge each mutant by the tests that execute its code, after a coverage pass of each test alone (the whole suite where no coverage block holds the mutant); DRAINPROOF_MUTATION's cut is not used, nor -confirm or -run")
	quick := fs.Duration("quick", time.Second, "with -select, the tests that took at most this alone run first; the others only if the mutant survives them")
	schema := fs.Bool("schema", false, "with -select, build the drawn mutants into one test binary where they can be (mutant schemata: each switched on at run time), so a mutant costs its tests' run and not a build; the others are built one by one")
	resume := fs.Bool("resume", false, "go on with the draw in the -o file of a run that stopped (same package, seed and selection): the mutants it judged keep their verdicts and are not run again")
	out := fs.String("o", "", "the JSON to write (required unless -list)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || (*out == "" && !*list) || *coef < 1 {
		fmt.Fprintln(os.Stderr, "usage: sample [-n N] [-seed S] [-file NAME]... [-lines A-B] [-mutant M]... [-tags T] [-run RE | -select [-quick D] [-schema]] [-timeout-coefficient C] [-confirm D] [-list] [-resume] -o OUT.json PKG")
		return 2
	}
	if *schema && !*sel {
		fmt.Fprintln(os.Stderr, "sample: -schema needs -select")
		return 2
	}
	if *sel && (*runRE != "" || *confirm > 0) {
		fmt.Fprintln(os.Stderr, "sample: -select chooses the tests itself: not with -run or -confirm")
		return 2
	}
	pkg := path.Clean(fs.Arg(0))
	from, to, err := parseLines(*lines)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sample:", err)
		return 2
	}
	all, err := mutation.Enumerate(".", pkg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sample:", err)
		return 2
	}
	for _, f := range only {
		if !slices.ContainsFunc(all, func(m mutation.Mutant) bool { return path.Base(m.File) == f }) {
			fmt.Fprintf(os.Stderr, "sample: %s has no mutant in a file %s\n", pkg, f)
			return 2
		}
	}
	var pop []mutation.Mutant
	for _, m := range all {
		if (len(only) == 0 || slices.Contains(only, path.Base(m.File))) && m.Line >= from && m.Line <= to &&
			(len(named) == 0 || slices.Contains(named, m.String())) {
			pop = append(pop, m)
		}
	}
	for _, nm := range named {
		if !slices.ContainsFunc(pop, func(m mutation.Mutant) bool { return m.String() == nm }) {
			fmt.Fprintf(os.Stderr, "sample: no mutant %q is selected\n", nm)
			return 2
		}
	}
	if len(pop) == 0 {
		fmt.Fprintf(os.Stderr, "sample: no mutant of %s is selected\n", pkg)
		return 2
	}
	draw := mutation.Draw(pop, *n, *seed)
	fmt.Printf("%s: %d mutants selected, %d drawn (seed %d)\n", pkg, len(pop), len(draw), *seed)
	if *list {
		for _, m := range draw {
			fmt.Println(m)
		}
		return 0
	}
	res := result{GoModule: "github.com/drainproof/drainproof", Population: len(pop), Seed: *seed}
	done := map[string]bool{}
	if *resume {
		if res, done, err = resumeFrom(*out, pkg, pop, *seed); err != nil {
			fmt.Fprintln(os.Stderr, "sample:", err)
			return 2
		}
		// The run judged a prefix of the draw (the same permutation
		// whatever -n), so the resumed run is still a prefix: a uniform
		// sample.
		for i, m := range draw {
			if i < len(done) != done[m.String()] || len(done) > len(draw) {
				fmt.Fprintf(os.Stderr, "sample: -resume: %s did not judge the first %d mutants of this draw\n", *out, len(done))
				return 2
			}
		}
		fmt.Printf("%s: resuming: %d of the draw judged before\n", pkg, len(done))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "drainproof-sample-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "sample:", err)
		return 2
	}
	defer os.RemoveAll(dir)
	var extra []string
	if *tags != "" {
		extra = append(extra, "-tags", *tags)
	}
	if *runRE != "" {
		extra = append(extra, "-run", *runRE)
	}
	if code := canary(ctx, dir); code != 0 {
		return code
	}
	r := mutation.Runner{Go: os.Getenv("GO"), Root: ".", Pkg: pkg, Args: extra, Dir: dir, Timeout: 2 * time.Hour}
	var cov *mutation.Coverage
	if *sel {
		// The selection stands in for the cut: every test of the suite
		// may be selected.
		r.Env = append(r.Env, "DRAINPROOF_MUTATION=")
		if cov, err = r.Cover(ctx, extra); err != nil {
			fmt.Fprintf(os.Stderr, "sample: %v\n", err)
			return 2
		}
		fmt.Printf("%s: %d tests, each run alone with coverage in %.1f s\n", pkg, len(cov.Tests), cov.Took.Seconds())
	}
	base, bout, err := r.Baseline(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sample: %v\n%s", err, bout)
		return 2
	}
	r.Timeout = max(time.Duration(*coef)*base, time.Minute)
	fmt.Printf("%s: unmutated tests pass in %.1f s; a mutant's limit is %.0f s\n", pkg, base.Seconds(), r.Timeout.Seconds())
	var sch *mutation.Schema
	if *schema {
		var todo []mutation.Mutant
		for _, m := range draw {
			if !done[m.String()] {
				todo = append(todo, m)
			}
		}
		t0 := time.Now()
		sch, err = r.Schematize(ctx, todo, extra)
		built := time.Since(t0)
		var took time.Duration
		if err == nil {
			var sout []byte
			if took, sout, err = r.BaselineSchema(ctx, sch); err != nil {
				err = fmt.Errorf("%v\n%s", err, sout)
			}
		}
		switch {
		case ctx.Err() != nil:
			fmt.Fprintf(os.Stderr, "sample: %v\n", ctx.Err())
			return 2
		case err != nil:
			// No schema: every mutant is built alone, as without -schema.
			fmt.Printf("%s: NO SCHEMA, each mutant built alone: %v\n", pkg, err)
			sch = nil
		default:
			fmt.Printf("%s: %d of %d mutants in one binary (built in %.1f s; its tests pass with none set in %.1f s); %d built alone:\n",
				pkg, len(sch.IDs), len(todo), built.Seconds(), took.Seconds(), len(sch.Out))
			reasons := map[string]int{}
			for _, why := range sch.Out {
				if i := strings.Index(why, ": "); i > 0 {
					why = why[:i]
				}
				reasons[why]++
			}
			for _, why := range slices.Sorted(maps.Keys(reasons)) {
				fmt.Printf("  %4d %s\n", reasons[why], why)
			}
			for _, m := range todo { // the compiler's reasons, one by one
				if why := sch.Out[m]; strings.HasPrefix(why, "the compiler") {
					fmt.Printf("       %s: %s\n", m, why)
				}
			}
		}
	}
	start := time.Now().Add(-time.Duration(res.Elapsed * float64(time.Second)))
	for _, m := range draw {
		if done[m.String()] {
			continue
		}
		t0 := time.Now()
		var st, how string
		var mout []byte
		if cov != nil {
			var n int
			st, n, mout, err = r.TestInSchema(ctx, m, cov, sch, *coef, *quick)
			how = fmt.Sprintf(", %d tests", n)
			if sch != nil && sch.IDs[m] > 0 {
				how += ", in the schema"
			}
			if n < 0 {
				how = ", no block holds it: the whole suite"
			}
		} else {
			st, mout, err = r.Test(ctx, m)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "sample: %s: %v\n%s", m, err, mout)
			return 2
		}
		if st == mutation.Lived && *confirm > 0 && os.Getenv("DRAINPROOF_MUTATION") != "" {
			fmt.Printf("%10s %s under the cut suite (%.1f s); the whole suite:\n", st, m, time.Since(t0).Seconds())
			full := r
			full.Env, full.Timeout = append(slices.Clone(r.Env), "DRAINPROOF_MUTATION="), *confirm
			if st, mout, err = full.Test(ctx, m); err != nil {
				fmt.Fprintf(os.Stderr, "sample: %s: %v\n%s", m, err, mout)
				return 2
			}
		}
		sec := time.Since(t0).Seconds()
		fmt.Printf("%10s %s (%.1f s%s)\n", st, m, sec, how)
		rel := strings.TrimPrefix(m.File, pkg+"/")
		i := slices.IndexFunc(res.Files, func(f fileJSON) bool { return f.FileName == rel })
		if i < 0 {
			res.Files = append(res.Files, fileJSON{FileName: rel})
			i = len(res.Files) - 1
		}
		res.Files[i].Mutations = append(res.Files[i].Mutations, mutationJSON{m.Type, st, m.Line, m.Column, sec})
		res.Sampled++
		res.Elapsed = time.Since(start).Seconds()
		// Written after every mutant: a run stopped at a deadline keeps
		// its verdicts (and says how many of the draw it reached).
		if err := write(*out, res); err != nil {
			fmt.Fprintln(os.Stderr, "sample:", err)
			return 2
		}
	}
	fmt.Printf("%s: %d mutants in %.0f s; results in %s\n", pkg, res.Sampled, res.Elapsed, *out)
	return 0
}

// canary tests the two mutants of internal/mutation/testdata/canary: its
// test kills the negation and lets the boundary mutant live. Any other
// verdict means the test command cannot judge a mutant.
func canary(ctx context.Context, dir string) int {
	const pkg = "internal/mutation/testdata/canary"
	r := mutation.Runner{Go: os.Getenv("GO"), Root: ".", Pkg: pkg, Dir: dir, Timeout: 5 * time.Minute}
	ms, err := mutation.Enumerate(".", pkg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sample: canary:", err)
		return 2
	}
	want := map[string]string{"CONDITIONALS_BOUNDARY": mutation.Lived, "CONDITIONALS_NEGATION": mutation.Killed}
	for _, m := range ms {
		st, out, err := r.Test(ctx, m)
		if err != nil || st != want[m.Type] {
			fmt.Fprintf(os.Stderr, "sample: canary %s is %s (%v), want %s: the test command cannot judge a mutant\n%s", m, st, err, want[m.Type], out)
			return 2
		}
	}
	if len(ms) != len(want) {
		fmt.Fprintf(os.Stderr, "sample: the canary has %d mutants, want %d\n", len(ms), len(want))
		return 2
	}
	return 0
}

func write(name string, res result) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// resumeFrom reads the result a stopped run wrote to name: it must be a
// draw of the same package, population and seed, and every mutant in it
// one of the population. It returns the result and the mutants judged.
func resumeFrom(name, pkg string, pop []mutation.Mutant, seed uint64) (result, map[string]bool, error) {
	var res result
	data, err := os.ReadFile(name)
	if err != nil {
		return res, nil, fmt.Errorf("-resume: %v", err)
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return res, nil, fmt.Errorf("-resume: %s: %v", name, err)
	}
	if res.Population != len(pop) || res.Seed != seed {
		return res, nil, fmt.Errorf("-resume: %s is a draw of %d mutants with seed %d, not of %d with seed %d", name, res.Population, res.Seed, len(pop), seed)
	}
	done := map[string]bool{}
	for _, f := range res.Files {
		for _, mj := range f.Mutations {
			m := mutation.Mutant{File: pkg + "/" + f.FileName, Line: mj.Line, Column: mj.Column, Type: mj.Type}
			if !slices.Contains(pop, m) || done[m.String()] {
				return res, nil, fmt.Errorf("-resume: %s judges %s, which the draw does not hold (or twice)", name, m)
			}
			done[m.String()] = true
		}
	}
	if len(done) != res.Sampled {
		return res, nil, fmt.Errorf("-resume: %s counts %d mutants and lists %d", name, res.Sampled, len(done))
	}
	return res, done, nil
}

// parseLines reads "A-B" or "A-" (to the end); "" is every line.
func parseLines(s string) (from, to int, err error) {
	if s == "" {
		return 1, int(^uint(0) >> 1), nil
	}
	a, b, ok := strings.Cut(s, "-")
	from, err1 := strconv.Atoi(a)
	to, err2 := int(^uint(0)>>1), error(nil)
	if b != "" {
		to, err2 = strconv.Atoi(b)
	}
	if !ok || err1 != nil || err2 != nil || from < 1 || to < from {
		return 0, 0, fmt.Errorf("-lines %q: want A-B or A- with 1 <= A <= B", s)
	}
	return from, to, nil
}
