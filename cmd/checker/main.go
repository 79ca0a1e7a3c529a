package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Exit codes of every subcommand.
const (
	exitOK         = 0
	exitViolation  = 1
	exitUsage      = 2
	exitIncomplete = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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
  report    report merge: combine the --json reports of the shards (--shard i/n) of a simulate or cluster run
  lincheck  porcupine linearizability check of the event service
  trace     validate NDJSON traces of the implementation against the model (docs/trace.md)
  tracegen  write traces of seeded random walks of a model
  traceparity  checker trace against TLC on a corpus of traces ($TLA2TOOLS, $TLA_COMMUNITY_MODULES)
  bugs      the bug matrix: which techniques catch each bug of the zoo (a -tags bugs build)
  version   print the module version and the VCS revision
  help      print this help, or a command's (checker help <command>)

Each command takes --json for one JSON object (see docs/checker.md, "JSON output").
` + exitCodes + "\n"

// commands maps each subcommand to its function.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{
	"check":       runCheck,
	"verify":      runVerify,
	"tlc":         runTLC,
	"simulate":    runSimulate,
	"cluster":     runCluster,
	"report":      runReport,
	"lincheck":    runLincheck,
	"trace":       runTrace,
	"tracegen":    runTraceGen,
	"traceparity": runTraceParity,
	"bugs":        runBugs,
	"models":      runModels,
	"version":     runVersion,
}

// run is the whole program, testable: it returns the exit code. With
// --json it is runJSON, so that an error is a JSON object too.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && wantsJSON(args[1:]) {
		return runJSON(ctx, args, stdout, stderr)
	}
	return dispatch(ctx, args, stdout, stderr)
}

// dispatch runs the subcommand args[0] names.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
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

// wantsJSON reports whether a subcommand's arguments ask for --json
// (before a "--", in any of the flag package's spellings).
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "json" {
			continue
		}
		if !hasValue {
			return true
		}
		b, err := strconv.ParseBool(value)
		return err == nil && b
	}
	return false
}

// runJSON runs a subcommand asked for --json, so that it prints exactly
// one JSON object on stdout whatever happens: the command's own report,
// or, when it fails (exit 2: a bad flag, a bad file, an operational
// error), an object of outcome "error" whose error is the message the
// command printed on stderr (still printed there too), with whatever
// figures a report printed before the error held. The command's stdout
// is held until it returns so that no second object can follow a first.
func runJSON(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var out bytes.Buffer
	errs := &lastWrite{w: stderr}
	code := dispatch(ctx, args, &out, errs)
	if code != exitUsage {
		_, _ = stdout.Write(out.Bytes())
		return code
	}
	r := report{}
	if out.Len() > 0 {
		_ = json.Unmarshal(out.Bytes(), &r) // the figures of a run that failed after its report
	}
	r.Command, r.Outcome = args[0], outcomeError
	r.Violated, r.Kind, r.Reason = "", "", ""
	errs.mu.Lock()
	r.Error = strings.TrimSpace(errs.last)
	errs.mu.Unlock()
	if r.Error == "" {
		r.Error = fmt.Sprintf("checker %s: exit status %d", args[0], code)
	}
	if err := writeReport(stdout, r); err != nil {
		fmt.Fprintf(stderr, "checker %s: %v\n", args[0], err)
	}
	return code
}

// lastWrite passes writes through to w and keeps the last one: a
// command's error is one write, its last on stderr. The mutex orders
// writes from a run's progress goroutine and its own.
type lastWrite struct {
	mu   sync.Mutex
	w    io.Writer
	last string
}

// Write writes p to w and remembers it.
func (l *lastWrite) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(bytes.TrimSpace(p)) > 0 {
		l.last = string(p)
	}
	return l.w.Write(p)
}

// runModels is `checker models`: the built-in models.
var runModels = plainCommand("models", "List the built-in models of checker check --model.", func(w io.Writer) {
	for _, m := range registry {
		fmt.Fprintf(w, "%-14s %s\n", m.name, m.help)
	}
}, func(r *report) {
	for _, m := range registry {
		r.Builtin = append(r.Builtin, builtinRow{Name: m.name, Help: m.help})
	}
})

// runVersion is `checker version`: the module version and the VCS
// revision the binary was built from (Go's build info).
var runVersion = plainCommand("version", "Print the module version and the VCS revision of this binary.", func(w io.Writer) {
	fmt.Fprintln(w, versionLine())
}, func(r *report) {
	v := buildVersion()
	r.Version = &v
})

// plainCommand is a command that takes no flags and no arguments (but -h
// and --json) and prints what print writes, or with --json the report
// fill completes.
func plainCommand(name, about string, print func(io.Writer), fill func(*report)) func(context.Context, []string, io.Writer, io.Writer) int {
	return func(_ context.Context, args []string, stdout, stderr io.Writer) int {
		fs := flag.NewFlagSet("checker "+name, flag.ContinueOnError)
		asJSON := fs.Bool("json", false, "print one JSON object (see the README's \"JSON output\")")
		fs.Usage = usageFunc(fs, "checker "+name+" [--json]", about)
		if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
			return code
		}
		if *asJSON {
			r := report{Command: name, Outcome: outcomeOK}
			fill(&r)
			if err := writeReport(stdout, r); err != nil {
				fmt.Fprintf(stderr, "checker %s: %v\n", name, err)
				return exitUsage
			}
			return exitOK
		}
		print(stdout)
		return exitOK
	}
}

// buildVersion is Go's build information: module path and version, VCS
// revision and time, whether the tree was modified, Go version.
func buildVersion() versionReport {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return versionReport{Module: "github.com/drainproof/drainproof", Version: "(unknown)"}
	}
	v := versionReport{Module: bi.Main.Path, Version: bi.Main.Version, Go: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	return v
}

// versionLine renders the build info in one line.
func versionLine() string {
	if _, ok := debug.ReadBuildInfo(); !ok {
		return "checker: no build information"
	}
	v := buildVersion()
	rev := v.Revision
	if rev == "" {
		rev = "no VCS revision stamped (go run, or a build outside a git clone; make build stamps it)"
	}
	if v.Time != "" {
		rev += " " + v.Time
	}
	if v.Modified {
		rev += " (modified)"
	}
	return fmt.Sprintf("%s %s, %s, %s", v.Module, v.Version, rev, v.Go)
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
