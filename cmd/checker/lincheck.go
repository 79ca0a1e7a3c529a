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

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/lincheck"
)

// runLincheck is `checker lincheck`: record a concurrent history of the
// event service (or load one with --history) and check it with porcupine
// (package impl/lincheck). Exit 0 linearizable, 1 not (the HTML report is
// written and its path printed), 3 unknown (timeout), 2 usage or
// operational errors.
func runLincheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checker lincheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	clients := fs.Int("clients", 8, "client goroutines (1.."+fmt.Sprint(lincheck.MaxClients)+")")
	ops := fs.Int("ops", 2000, "client operations to record (1.."+commas(lincheck.MaxOps)+")")
	seed := fs.Int64("seed", 1, "seed of the workload and the store faults")
	round := fs.Int("round", lincheck.DefaultRound, "operations per client between two audits (partition size)")
	timeout := fs.Duration("timeout", time.Minute, "check timeout (0: none); on expiry the result is unknown, exit 3")
	bug := fs.String("bug", "", "switch on an event-service bug of the zoo (binary built with -tags bugs): "+strings.Join(bugs.EventService(), ", "))
	html := fs.String("html", "", "write the HTML report to this file (an illegal history's report goes to a new temporary file if not given)")
	history := fs.String("history", "", "check the history saved in this file instead of recording one")
	save := fs.String("save", "", "save the recorded history to this file")
	asJSON := fs.Bool("json", false, "print one JSON object (see the README's \"JSON output\")")
	traceFile := fs.String("trace", "", "write the event service's trace (docs/trace.md) of the recording to this file")
	fs.Usage = usageFunc(fs, "checker lincheck [--clients N] [--ops N] [--seed S] [--timeout D] [--html FILE] [--history FILE | --save FILE] [--trace FILE] [--bug NAME] [--json]",
		"Record a concurrent history of the real event service (clients, injected store faults, one admission close)\nor load one, and check it for linearizability against the sequential specification with porcupine.")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "checker lincheck: "+format+"\n", a...)
		return exitUsage
	}
	if *history != "" && *traceFile != "" {
		return fail("--history checks a saved history: --trace does not apply")
	}
	if flagErr(stderr, "checker lincheck",
		intRange("clients", int64(*clients), 1, lincheck.MaxClients),
		intRange("ops", int64(*ops), 1, lincheck.MaxOps),
		intRange("round", int64(*round), 1, lincheck.MaxOps),
		notNegative("timeout", *timeout),
	) {
		return exitUsage
	}
	if *history != "" && (*bug != "" || *save != "") {
		return fail("--history checks a saved history: --bug and --save do not apply")
	}
	if *bug != "" && !slices.Contains(bugs.EventService(), *bug) {
		if slices.Contains(bugs.Names(), *bug) {
			return fail("--bug %s is a drain-controller bug, which lincheck cannot exercise: it drives only the event service (its bugs: %s; use checker simulate --bug %s)",
				*bug, strings.Join(bugs.EventService(), ", "), *bug)
		}
		return fail("--bug %s: unknown bug (the event service's bugs: %s)", *bug, strings.Join(bugs.EventService(), ", "))
	}
	if flagErr(stderr, "checker lincheck", readable("history", *history), writable("html", *html), writable("save", *save)) {
		return exitUsage
	}
	if *bug != "" {
		if err := bugs.Enable(*bug); err != nil {
			if errors.Is(err, bugs.ErrNotBuilt) {
				return fail("--bug %s needs a binary built with -tags bugs (go run -tags bugs ./cmd/checker lincheck --bug %s)", *bug, *bug)
			}
			return fail("--bug %s: %v", *bug, err)
		}
		defer bugs.Reset()
	}

	lr := &lincheckReport{History: *history}
	out := report{Command: "lincheck", Lincheck: lr}
	var h *lincheck.History
	if *history != "" {
		var err error
		if h, err = lincheck.LoadFile(*history); err != nil {
			return fail("%v", err)
		}
	} else {
		start := time.Now()
		var err error
		rcfg := lincheck.Config{Clients: *clients, Ops: *ops, Seed: *seed, Round: *round}
		tw, err := openTrace(*traceFile, lincheck.TraceHeader(rcfg))
		if err != nil {
			return fail("trace: %v", err)
		}
		if tw != nil {
			rcfg.Tracer = tw
		}
		h, err = lincheck.Record(ctx, rcfg)
		if tw != nil {
			err = errors.Join(err, tw.Close())
		}
		if ctx.Err() != nil {
			// Ctrl-C: a partial history lacks the interrupted operations
			// and the final audit, so it is reported, not checked.
			return lincheckInterrupted(stdout, *asJSON, h, *ops, time.Since(start))
		}
		if err != nil {
			return fail("%v", err)
		}
		lr.RecordSeconds = time.Since(start).Seconds()
		if *save != "" {
			if err := h.SaveFile(*save); err != nil {
				return fail("save: %v", err)
			}
			lr.History = *save
		}
	}
	lr.Clients, lr.Seed, lr.Bug = h.Clients, h.Seed, h.Bug

	res := lincheck.Check(h, *timeout)
	lr.Ops, lr.PorcupineOps, lr.Partitions, out.Seconds = res.Ops, res.Steps, res.Partitions, res.Duration.Seconds()
	lr.FirstIllegal = res.Illegal
	code := exitOK
	out.Outcome = outcomeOK
	switch res.Outcome {
	case lincheck.Unknown:
		code, out.Outcome, out.Reason = exitIncomplete, outcomeIncomplete, fmt.Sprintf("timeout (%v): nothing proven", *timeout)
	case lincheck.NotLinearizable:
		code, out.Outcome, out.Violated, out.Kind = exitViolation, outcomeViolated, "Linearizability", "linearizability"
	}
	if res.Outcome == lincheck.NotLinearizable || *html != "" {
		path := *html
		if path == "" {
			f, err := os.CreateTemp("", "lincheck-*.html")
			if err != nil {
				return fail("html: %v", err)
			}
			path = f.Name()
			f.Close()
		}
		if err := res.VisualizeFile(path); err != nil {
			return fail("html: %v", err)
		}
		lr.HTML = path
	}

	if *asJSON {
		if err := writeReport(stdout, out); err != nil {
			fmt.Fprintf(stderr, "checker lincheck: %v\n", err)
			return exitUsage
		}
		return code
	}
	src := fmt.Sprintf("recorded: %d clients, seed %d", lr.Clients, lr.Seed)
	if *history != "" {
		src = "history " + *history
	}
	if lr.Bug != "" {
		src += ", bug " + lr.Bug
	}
	fmt.Fprintf(stdout, "lincheck: %s: %d ops (%d porcupine operations, %d partitions) checked in %.3fs: %s\n",
		src, lr.Ops, lr.PorcupineOps, lr.Partitions, out.Seconds, map[lincheck.Outcome]string{
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
	if *save != "" {
		fmt.Fprintf(stdout, "  history saved to %s\n", *save)
	}
	return code
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
