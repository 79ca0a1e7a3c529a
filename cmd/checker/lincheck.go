package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/drainproof/drainproof/harness/lincheck"
	"github.com/drainproof/drainproof/impl/bugs"
)

// lincheckFlags are the flags of `checker lincheck`.
type lincheckFlags struct {
	clients, ops, round int
	seed                int64
	timeout             time.Duration
	bug, html, history  string
	save, trace         string
	asJSON              bool
}

// runLincheck is `checker lincheck`: record a concurrent history of the
// event service (or load one with --history) and check it with porcupine
// (package harness/lincheck). Exit 0 linearizable, 1 not (the HTML report is
// written and its path printed), 3 unknown (timeout), 2 usage or
// operational errors.
func runLincheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, exit, ok := parseLincheck(args, stdout, stderr)
	if !ok {
		return exit
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "checker lincheck: "+format+"\n", a...)
		return exitUsage
	}
	if f.bug != "" {
		if err := bugs.Enable(f.bug); err != nil {
			if errors.Is(err, bugs.ErrNotBuilt) {
				return fail("--bug %s needs a binary built with -tags bugs (go run -tags bugs ./cmd/checker lincheck --bug %s)", f.bug, f.bug)
			}
			return fail("--bug %s: %v", f.bug, err)
		}
		defer bugs.Reset()
	}
	lr := &lincheckReport{History: f.history}
	out := report{Command: "lincheck", Lincheck: lr}
	var h *lincheck.History
	if f.history != "" {
		var err error
		if h, err = lincheck.LoadFile(f.history); err != nil {
			return fail("%v", err)
		}
	} else {
		if h, exit = recordLincheck(ctx, f, lr, stdout, fail); h == nil {
			return exit
		}
	}
	lr.Clients, lr.Seed, lr.Bug = h.Clients, h.Seed, h.Bug
	res := lincheck.Check(h, f.timeout)
	lr.Ops, lr.PorcupineOps, lr.Partitions, out.Seconds = res.Ops, res.Steps, res.Partitions, res.Duration.Seconds()
	lr.FirstIllegal = res.Illegal
	code := exitOK
	out.Outcome = outcomeOK
	switch res.Outcome {
	case lincheck.Unknown:
		code, out.Outcome, out.Reason = exitIncomplete, outcomeIncomplete, fmt.Sprintf("timeout (%v): nothing proven", f.timeout)
	case lincheck.NotLinearizable:
		code, out.Outcome, out.Violated, out.Kind = exitViolation, outcomeViolated, "Linearizability", "linearizability"
	}
	if res.Outcome == lincheck.NotLinearizable || f.html != "" {
		path, err := writeLincheckHTML(res, f.html)
		if err != nil {
			return fail("html: %v", err)
		}
		lr.HTML = path
	}
	if f.asJSON {
		if err := writeReport(stdout, out); err != nil {
			fmt.Fprintf(stderr, "checker lincheck: %v\n", err)
			return exitUsage
		}
		return code
	}
	printLincheck(stdout, f, lr, res)
	return code
}

// parseLincheck parses and checks the flags; !ok: exit with code.
func parseLincheck(args []string, stdout, stderr io.Writer) (f lincheckFlags, code int, ok bool) {
	fs := flag.NewFlagSet("checker lincheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&f.clients, "clients", 8, "client goroutines (1.."+fmt.Sprint(lincheck.MaxClients)+")")
	fs.IntVar(&f.ops, "ops", 2000, "client operations to record (1.."+commas(lincheck.MaxOps)+")")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the workload and the store faults")
	fs.IntVar(&f.round, "round", lincheck.DefaultRound, "operations per client between two audits (partition size)")
	fs.DurationVar(&f.timeout, "timeout", time.Minute, "check timeout (0: none); on expiry the result is unknown, exit 3")
	fs.StringVar(&f.bug, "bug", "", "switch on an event-service bug of the zoo (binary built with -tags bugs): "+strings.Join(bugs.EventService(), ", "))
	fs.StringVar(&f.html, "html", "", "write the HTML report to this file (an illegal history's report goes to a new temporary file if not given)")
	fs.StringVar(&f.history, "history", "", "check the history saved in this file instead of recording one")
	fs.StringVar(&f.save, "save", "", "save the recorded history to this file")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object (see docs/checker.md, \"JSON output\")")
	fs.StringVar(&f.trace, "trace", "", "write the event service's trace (docs/trace.md) of the recording to this file, for checker trace;\n"+
		"implies the trace mode, which keeps the run inside the model: dispatchers d0..d5, t0, t1 only, one reporter\n"+
		"(client 0, through a node's heartbeat a coordinator observes), the node driven to STOPPING before the close")
	fs.Usage = usageFunc(fs, "checker lincheck [--clients N] [--ops N] [--seed S] [--timeout D] [--html FILE] [--history FILE | --save FILE] [--trace FILE] [--bug NAME] [--json]",
		"Record a concurrent history of the real event service (clients, injected store faults, one admission close)\nor load one, and check it for linearizability against the sequential specification with porcupine.")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return f, code, false
	}
	fail := func(format string, a ...any) (lincheckFlags, int, bool) {
		fmt.Fprintf(stderr, "checker lincheck: "+format+"\n", a...)
		return f, exitUsage, false
	}
	if f.history != "" && flagErr(stderr, "checker lincheck", notWith(setFlags(fs), "--history",
		"they set the recording; a saved history is checked as it is", "clients", "ops", "seed", "round")) {
		return f, exitUsage, false
	}
	if f.history != "" && f.trace != "" {
		return fail("--history checks a saved history: --trace does not apply")
	}
	if flagErr(stderr, "checker lincheck",
		intRange("clients", int64(f.clients), 1, lincheck.MaxClients),
		intRange("ops", int64(f.ops), 1, lincheck.MaxOps),
		intRange("round", int64(f.round), 1, lincheck.MaxOps),
		notNegative("timeout", f.timeout),
	) {
		return f, exitUsage, false
	}
	if f.history != "" && (f.bug != "" || f.save != "") {
		return fail("--history checks a saved history: --bug and --save do not apply")
	}
	if f.bug != "" && !slices.Contains(bugs.EventService(), f.bug) {
		if slices.Contains(bugs.Names(), f.bug) {
			return fail("--bug %s is a drain-controller bug, which lincheck cannot exercise: it drives only the event service (its bugs: %s; use checker simulate --bug %s)",
				f.bug, strings.Join(bugs.EventService(), ", "), f.bug)
		}
		return fail("--bug %s: unknown bug (the event service's bugs: %s)", f.bug, strings.Join(bugs.EventService(), ", "))
	}
	if flagErr(stderr, "checker lincheck", readable("history", f.history), writable("html", f.html), writable("save", f.save)) {
		return f, exitUsage, false
	}
	return f, exitOK, true
}

// recordLincheck records a history (with its trace if --trace) and saves
// it if --save. A nil history: exit with the code returned.
func recordLincheck(ctx context.Context, f lincheckFlags, lr *lincheckReport, stdout io.Writer,
	fail func(string, ...any) int) (*lincheck.History, int) {
	start := time.Now()
	rcfg := lincheck.Config{Clients: f.clients, Ops: f.ops, Seed: f.seed, Round: f.round}
	tw, err := openTrace(f.trace, lincheck.TraceHeader(rcfg))
	if err != nil {
		return nil, fail("trace: %v", err)
	}
	if tw != nil {
		rcfg.Tracer = tw
	}
	h, err := lincheck.Record(ctx, rcfg)
	if tw != nil {
		err = errors.Join(err, tw.Close())
	}
	if ctx.Err() != nil {
		// Ctrl-C: a partial history lacks the interrupted operations
		// and the final audit, so it is reported, not checked.
		return nil, lincheckInterrupted(stdout, f.asJSON, h, f.ops, time.Since(start))
	}
	if err != nil {
		return nil, fail("%v", err)
	}
	lr.RecordSeconds = time.Since(start).Seconds()
	if f.save != "" {
		if err := h.SaveFile(f.save); err != nil {
			return nil, fail("save: %v", err)
		}
		lr.History = f.save
	}
	return h, exitOK
}

// writeLincheckHTML writes res's report to path, or to a new temporary
// file if path is "", and returns where.
func writeLincheckHTML(res lincheck.Result, path string) (string, error) {
	if path == "" {
		f, err := os.CreateTemp("", "lincheck-*.html")
		if err != nil {
			return "", err
		}
		path = f.Name()
		f.Close()
	}
	return path, res.VisualizeFile(path)
}

// printLincheck prints the verdict as text.
func printLincheck(stdout io.Writer, f lincheckFlags, lr *lincheckReport, res lincheck.Result) {
	src := fmt.Sprintf("recorded: %d clients, seed %d", lr.Clients, lr.Seed)
	if f.history != "" {
		src = "history " + f.history
	}
	if lr.Bug != "" {
		src += ", bug " + lr.Bug
	}
	fmt.Fprintf(stdout, "lincheck: %s: %d ops (%d porcupine operations, %d partitions) checked in %.3fs: %s\n",
		src, lr.Ops, lr.PorcupineOps, lr.Partitions, res.Duration.Seconds(), map[lincheck.Outcome]string{
			lincheck.Linearizable: "linearizable", lincheck.NotLinearizable: "NOT linearizable", lincheck.Unknown: "unknown (timeout; nothing proven)",
		}[res.Outcome])
	if il := res.Illegal; il != nil {
		fmt.Fprintf(stdout, "  first illegal operation: client %d: %s (step %s; call %d, return %d; partition %d)\n",
			il.Client, il.Op, il.Step, il.Call, il.Return, il.Partition)
		fmt.Fprintf(stdout, "  the model, after %d steps of that partition, expected state %s\n", il.Linearized, il.Expected)
	}
	if lr.HTML != "" {
		fmt.Fprintf(stdout, "  report: %s\n", lr.HTML)
	}
	if f.save != "" {
		fmt.Fprintf(stdout, "  history saved to %s\n", f.save)
	}
	if f.trace != "" {
		fmt.Fprintf(stdout, "  trace (trace mode) written to %s\n", f.trace)
	}
}

// lincheckInterrupted reports a recording stopped by Ctrl-C: how many
// operations were recorded, nothing checked; exit 3.
func lincheckInterrupted(stdout io.Writer, asJSON bool, h *lincheck.History, asked int, took time.Duration) int {
	n := 0
	if h != nil {
		n = len(h.Ops)
	}
	if asJSON {
		_ = writeReport(stdout, report{Command: "lincheck", Outcome: outcomeIncomplete, Seconds: took.Seconds(),
			Reason:   fmt.Sprintf("interrupted while recording: %d operations recorded of %d asked; nothing checked", n, asked),
			Lincheck: &lincheckReport{Ops: n, RecordSeconds: took.Seconds()}})
		return exitIncomplete
	}
	fmt.Fprintf(stdout, "lincheck: interrupted while recording: %d operations recorded of %d asked (audits included) in %.3fs; nothing checked\n", n, asked, took.Seconds())
	return exitIncomplete
}
