package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/lincheck"
)

// lincheckOutput is the --json report of `checker lincheck`.
type lincheckOutput struct {
	Result        string  `json:"result"` // ok, illegal or unknown
	Ops           int     `json:"ops"`
	Steps         int     `json:"steps"`
	Partitions    int     `json:"partitions"`
	Clients       int     `json:"clients"`
	Seed          int64   `json:"seed"`
	Seconds       float64 `json:"seconds"`
	RecordSeconds float64 `json:"record_seconds,omitempty"`
	Bug           string  `json:"bug,omitempty"`
	History       string  `json:"history,omitempty"`
	HTML          string  `json:"html,omitempty"`
}

// runLincheck is `checker lincheck`: record a concurrent history of the
// event service (or load one with --history) and check it with porcupine
// (package impl/lincheck). Exit 0 linearizable, 1 not (the HTML report is
// written and its path printed), 3 unknown (timeout), 2 usage or
// operational errors.
func runLincheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checker lincheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	clients := fs.Int("clients", 8, "client goroutines (1.."+fmt.Sprint(lincheck.MaxClients)+")")
	ops := fs.Int("ops", 2000, "client operations to record")
	seed := fs.Int64("seed", 1, "seed of the workload and the store faults")
	round := fs.Int("round", lincheck.DefaultRound, "operations per client between two audits (partition size)")
	timeout := fs.Duration("timeout", time.Minute, "check timeout (0: none); on expiry the result is unknown, exit 3")
	bug := fs.String("bug", "", "switch on a bug of the zoo (binary built with -tags bugs): "+fmt.Sprint(bugs.Names()[:6]))
	html := fs.String("html", "", "where to write the HTML report of an illegal history (default: a new temporary file)")
	history := fs.String("history", "", "check the history saved in this file instead of recording one")
	save := fs.String("save", "", "save the recorded history to this file")
	asJSON := fs.Bool("json", false, "print one JSON object")
	traceFile := fs.String("trace", "", "write the event service's trace (docs/trace.md) of the recording to this file")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "checker lincheck: "+format+"\n", a...)
		return exitUsage
	}
	if *history != "" && *traceFile != "" {
		return fail("--history checks a saved history: --trace does not apply")
	}
	if *clients < 1 || *clients > lincheck.MaxClients || *ops < 1 || *round < 1 || *timeout < 0 {
		return fail("bad flags (clients %d, ops %d, round %d, timeout %v)", *clients, *ops, *round, *timeout)
	}
	if *history != "" && (*bug != "" || *save != "") {
		return fail("--history checks a saved history: --bug and --save do not apply")
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

	out := lincheckOutput{History: *history}
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
		if err != nil {
			return fail("%v", err)
		}
		out.RecordSeconds = time.Since(start).Seconds()
		if *save != "" {
			if err := h.SaveFile(*save); err != nil {
				return fail("save: %v", err)
			}
			out.History = *save
		}
	}
	out.Clients, out.Seed, out.Bug = h.Clients, h.Seed, h.Bug

	res := lincheck.Check(h, *timeout)
	out.Result = string(res.Outcome)
	out.Ops, out.Steps, out.Partitions, out.Seconds = res.Ops, res.Steps, res.Partitions, res.Duration.Seconds()
	code := exitOK
	switch res.Outcome {
	case lincheck.Unknown:
		code = exitIncomplete
	case lincheck.NotLinearizable:
		code = exitViolation
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
		out.HTML = path
	}

	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			return exitUsage
		}
		return code
	}
	src := fmt.Sprintf("recorded: %d clients, seed %d", out.Clients, out.Seed)
	if *history != "" {
		src = "history " + *history
	}
	if out.Bug != "" {
		src += ", bug " + out.Bug
	}
	fmt.Fprintf(stdout, "lincheck: %s: %d ops (%d steps, %d partitions) checked in %.3fs: %s\n",
		src, out.Ops, out.Steps, out.Partitions, out.Seconds, map[string]string{
			"ok": "linearizable", "illegal": "NOT linearizable", "unknown": "unknown (timeout; nothing proven)",
		}[out.Result])
	if out.HTML != "" {
		fmt.Fprintf(stdout, "  report: %s\n", out.HTML)
	}
	if *save != "" {
		fmt.Fprintf(stdout, "  history saved to %s\n", *save)
	}
	return code
}
