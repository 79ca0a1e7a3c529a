package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// Exit codes of every subcommand.
const (
	exitOK         = 0
	exitViolation  = 1
	exitUsage      = 2
	exitIncomplete = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: checker <command> [flags]

commands:
  check     model-check a built-in model or a TLC .cfg model (checker check -h)
  verify    check every model of tla/models.json against its recorded TLC figures
  tlc       run TLC ($TLA2TOOLS) on the models of tla/models.json and compare
  models    list the built-in models
  simulate  run the seeded cluster simulator (checker simulate -h)
  lincheck  porcupine linearizability check of the event service (checker lincheck -h)
  trace     validate NDJSON traces of the implementation against the model (checker trace -h)
  tracegen  write traces of seeded random walks of a model (checker tracegen -h)
  traceparity  checker trace against TLC on a corpus of traces ($TLA2TOOLS, $TLA_COMMUNITY_MODULES)
  bugs      the bug matrix: which techniques catch each bug of the zoo (built with -tags bugs)

exit codes: 0 ok, 1 violation or deadlock, 2 usage or operational error, 3 incomplete
`

// run is the whole program, testable: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "check":
		return runCheck(ctx, args[1:], stdout, stderr)
	case "verify":
		return runVerify(ctx, args[1:], stdout, stderr)
	case "tlc":
		return runTLC(ctx, args[1:], stdout, stderr)
	case "simulate":
		return runSimulate(ctx, args[1:], stdout, stderr)
	case "lincheck":
		return runLincheck(ctx, args[1:], stdout, stderr)
	case "trace":
		return runTrace(ctx, args[1:], stdout, stderr)
	case "tracegen":
		return runTraceGen(ctx, args[1:], stdout, stderr)
	case "traceparity":
		return runTraceParity(ctx, args[1:], stdout, stderr)
	case "bugs":
		return runBugs(ctx, args[1:], stdout, stderr)
	case "models":
		for _, m := range registry {
			fmt.Fprintf(stdout, "%-14s %s\n", m.name, m.help)
		}
		return exitOK
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "checker: unknown command %q\n%s", args[0], usage)
	return exitUsage
}

// parseFlags parses args into fs. When ok is false the command returns
// code at once: 0 when help was asked for, 2 for a bad flag or a stray
// argument (fs has already said which).
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return exitUsage, false
	}
	return exitOK, true
}
