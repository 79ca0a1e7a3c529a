package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
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
  check     model-check a built-in model or a TLC .cfg model
  verify    check every model of tla/models.json against its recorded TLC figures
  tlc       run TLC ($TLA2TOOLS) on the models of tla/models.json and compare
  models    list the built-in models
  simulate  run the seeded cluster simulator over the real library
  cluster   run a real cluster of drainproofd processes under faults and a rolling upgrade, and check it
  lincheck  porcupine linearizability check of the event service
  trace     validate NDJSON traces of the implementation against the model (docs/trace.md)
  tracegen  write traces of seeded random walks of a model
  traceparity  checker trace against TLC on a corpus of traces ($TLA2TOOLS, $TLA_COMMUNITY_MODULES)
  bugs      the bug matrix: which techniques catch each bug of the zoo (a -tags bugs build)
  version   print the module version and the VCS revision
  help      print this help, or a command's (checker help <command>)

Each command takes --json for one JSON object (see the README, "JSON output").
` + exitCodes + "\n"

// commands maps each subcommand to its function.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{
	"check":       runCheck,
	"verify":      runVerify,
	"tlc":         runTLC,
	"simulate":    runSimulate,
	"cluster":     runCluster,
	"lincheck":    runLincheck,
	"trace":       runTrace,
	"tracegen":    runTraceGen,
	"traceparity": runTraceParity,
	"bugs":        runBugs,
	"models":      runModels,
	"version":     runVersion,
}

// run is the whole program, testable: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	if cmd, ok := commands[args[0]]; ok {
		return cmd(ctx, args[1:], stdout, stderr)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 2 {
			fmt.Fprintf(stderr, "checker help: unexpected argument %q\n", args[2])
			return exitUsage
		}
		if len(args) == 2 {
			cmd, ok := commands[args[1]]
			if !ok {
				fmt.Fprintf(stderr, "checker help: unknown command %q\n", args[1])
				return exitUsage
			}
			return cmd(ctx, []string{"-h"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "checker: unknown command %q (checker help lists them)\n", args[0])
	return exitUsage
}

// runModels is `checker models`: the built-in models.
var runModels = plainCommand("models", "List the built-in models of checker check --model.", func(w io.Writer) {
	for _, m := range registry {
		fmt.Fprintf(w, "%-14s %s\n", m.name, m.help)
	}
})

// runVersion is `checker version`: the module version and the VCS
// revision the binary was built from (Go's build info).
var runVersion = plainCommand("version", "Print the module version and the VCS revision of this binary.", func(w io.Writer) {
	fmt.Fprintln(w, versionLine())
})

// plainCommand is a command that takes no flags and no arguments (but -h)
// and prints what print writes.
func plainCommand(name, about string, print func(io.Writer)) func(context.Context, []string, io.Writer, io.Writer) int {
	return func(_ context.Context, args []string, stdout, stderr io.Writer) int {
		fs := flag.NewFlagSet("checker "+name, flag.ContinueOnError)
		fs.Usage = usageFunc(fs, "checker "+name, about)
		if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
			return code
		}
		print(stdout)
		return exitOK
	}
}

// versionLine renders the build info: module path and version, VCS
// revision and time, whether the tree was modified, Go version.
func versionLine() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "checker: no build information"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	rev := settings["vcs.revision"]
	if rev == "" {
		rev = "no VCS revision stamped (go run, or a build outside a git clone; make build stamps it)"
	}
	if settings["vcs.time"] != "" {
		rev += " " + settings["vcs.time"]
	}
	if settings["vcs.modified"] == "true" {
		rev += " (modified)"
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	return fmt.Sprintf("%s %s, %s, %s", bi.Main.Path, version, rev, bi.GoVersion)
}

// parseFlags parses args into fs. When ok is false the command returns
// code at once: 0 when help was asked for (printed on stdout), 2 for a bad
// flag or a stray argument (fs has already said which, on stderr).
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			fs.SetOutput(stdout)
			fs.Usage()
			return exitOK, false
		}
	}
	fs.SetOutput(io.Discard) // one line, ours, instead of the error and the whole help
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (%s -h lists the flags)\n", fs.Name(), err, fs.Name())
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return exitUsage, false
	}
	return exitOK, true
}

// usageFunc is the help of a subcommand, in one style: the usage line,
// what it does, its flags. It prints to fs's output (stdout for -h).
func usageFunc(fs *flag.FlagSet, synopsis, about string) func() {
	return func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: %s\n\n%s\n\nflags:\n", synopsis, about)
		fs.PrintDefaults()
		fmt.Fprintf(w, "\n%s\n", exitCodes)
	}
}

// exitCodes ends every help text.
const exitCodes = "exit codes: 0 ok, 1 violation, deadlock, broken stream or unexpected result, 2 usage or operational error, 3 incomplete (a limit, a timeout or Ctrl-C stopped the run)"
