// Command report judges a `make mutate` run: it reads the gremlins JSON of
// each package (DIR/<pkg with / as _>.json) and internal/mutation's
// equivalent.txt, prints per package the mutants killed, lived, argued
// equivalent and not covered with the efficacy and its target, lists every
// survivor, and exits 1 if a package is below its target.
//
//	go run ./internal/mutation/report [-equivalent FILE] DIR PKG...
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/drainproof/drainproof/internal/mutation"
)

func main() { os.Exit(run(os.Args[1:])) }

// target is the efficacy a package must reach: the product and the
// validator 95%, the rest 90% (issue: "Verification that catches the bugs
// nobody named").
func target(pkg string) float64 {
	if strings.HasPrefix(pkg, "impl/") || pkg == "harness/tracecheck" {
		return 95
	}
	return 90
}

func run(args []string) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	eqPath := fs.String("equivalent", "internal/mutation/equivalent.txt", "the equivalent mutants")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: report [-equivalent FILE] DIR PKG...")
		return 2
	}
	f, err := os.Open(*eqPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		return 2
	}
	eq, err := mutation.ParseEquivalents(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "report: %s: %v\n", *eqPath, err)
		return 2
	}
	dir, code := fs.Arg(0), 0
	fmt.Printf("%-28s %7s %6s %6s %11s %9s %9s %7s\n", "package", "killed", "lived", "equiv", "not covered", "efficacy", "target", "seconds")
	var survivors []string
	for _, pkg := range fs.Args()[1:] {
		name := filepath.Join(dir, strings.ReplaceAll(pkg, "/", "_")+".json")
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "report: %s: %v (did its gremlins run fail?)\n", pkg, err)
			code = 1
			continue
		}
		res, err := mutation.ReadResult(pkg, f)
		f.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			code = 1
			continue
		}
		j := mutation.Judge(res, eq)
		verdict := ""
		if j.Efficacy() < target(pkg) {
			verdict, code = "  BELOW", 1
		}
		fmt.Printf("%-28s %7d %6d %6d %11d %8.1f%% %8.0f%% %7.0f%s\n", pkg, len(j.Killed)+len(j.TimedOut), len(j.Survivors),
			len(j.Equivalent), len(j.Uncovered), j.Efficacy(), target(pkg), j.Seconds, verdict)
		if lo, hi, ok := j.Interval(); ok {
			fmt.Printf("%-28s a sample of %d of %d mutants: 95%% interval %.1f%% to %.1f%%\n", "", len(j.Killed)+len(j.TimedOut)+len(j.Lived)+len(j.NotViable),
				j.Population, lo, hi)
		}
		for _, m := range j.Survivors {
			survivors = append(survivors, m.String())
		}
	}
	if len(survivors) > 0 {
		fmt.Println("\nsurvivors (kill each with a test, or argue it in equivalent.txt):")
		for _, s := range survivors {
			fmt.Println("  " + s)
		}
	}
	return code
}
