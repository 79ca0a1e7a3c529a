package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/sim"
)

// simulateOutput is the JSON report of `checker simulate`: the counts of
// sim.Result, summed over the seeds seed..seed+seeds-1.
type simulateOutput struct {
	sim.Result
	Seeds int    `json:"seeds"`
	Bug   string `json:"bug,omitempty"`
}

// runSimulate is `checker simulate`: seeded runs of the deterministic
// cluster simulator (package impl/sim). Exit 0 when no stream broke and
// the changefeed received every committed event once and in order
// (re-deliveries after a crash aside), 1 otherwise, 2 on usage errors.
func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checker simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 1, "seed of the (first) run; the same seed gives the same run")
	seeds := fs.Int("seeds", 1, "run the seeds seed..seed+seeds-1 and sum their figures")
	steps := fs.Int("steps", 2000, "events per run")
	transport := fs.String("transport", "heartbeat", "how the broker count travels: heartbeat or logcoord")
	storeKind := fs.String("store", "memory", "T's event store: memory or pebble (a temporary directory per process)")
	bug := fs.String("bug", "", "switch on a bug of the zoo (binary built with -tags bugs): "+fmt.Sprint(bugs.Names()))
	asJSON := fs.Bool("json", false, "print one JSON object")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	tr, err := node.ParseTransport(*transport)
	sk, serr := sim.ParseStore(*storeKind)
	if err != nil || serr != nil || *steps < 0 || *seeds < 1 {
		fmt.Fprintf(stderr, "checker simulate: bad flags (transport %q, store %q, steps %d, seeds %d)\n", *transport, *storeKind, *steps, *seeds)
		return exitUsage
	}
	if *bug != "" {
		if err := bugs.Enable(*bug); err != nil {
			fmt.Fprintf(stderr, "checker simulate: --bug %s: %v\n", *bug, err)
			return exitUsage
		}
		defer bugs.Reset()
	}
	out := simulateOutput{Result: sim.Result{Seed: *seed, Steps: *steps, Transport: string(tr), Store: string(sk)}, Seeds: *seeds, Bug: *bug}
	for i := 0; i < *seeds; i++ {
		r, err := sim.Run(ctx, sim.Config{Seed: *seed + uint64(i), Steps: *steps, Transport: tr, Store: sk})
		if err != nil {
			fmt.Fprintf(stderr, "checker simulate: %v\n", err)
			return exitUsage
		}
		if out.FirstLost == "" && r.FirstLost != "" {
			out.FirstLost = fmt.Sprintf("seed %d: %s", r.Seed, r.FirstLost)
		}
		out.Add(r)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(out); err != nil {
			return exitUsage
		}
	} else {
		fmt.Fprintf(stdout, "simulate: seeds %d..%d, %d steps each, transport %s, store %s", out.Seed, out.Seed+uint64(out.Seeds)-1, out.Steps, out.Transport, out.Store)
		if out.Bug != "" {
			fmt.Fprintf(stdout, ", bug %s", out.Bug)
		}
		fmt.Fprintf(stdout, "\n  drains completed %d, restarts %d (upgrade %d, crash %d, legacy %d)\n",
			out.DrainsCompleted, out.Restarts, out.UpgradeRestarts, out.CrashRestarts, out.LegacyRestarts)
		fmt.Fprintf(stdout, "  registrations %d, messages sent %d, lost %d, duplicated %d\n",
			out.Registrations, out.MessagesSent, out.MessagesLost, out.Duplicated)
		fmt.Fprintf(stdout, "  broken streams %d\n", out.BrokenStreams)
		fmt.Fprintf(stdout, "  events committed %d, received %d, lost %d, duplicated %d, out of order %d, redelivered after a crash %d\n",
			out.Committed, out.Received, out.Lost, out.Delivery.Duplicated, out.OutOfOrder, out.Redelivered)
		if out.FirstLost != "" {
			fmt.Fprintf(stdout, "  first lost event: %s\n", out.FirstLost)
		}
	}
	if out.BrokenStreams > 0 || out.Lost > 0 || out.Delivery.Duplicated > 0 || out.OutOfOrder > 0 {
		return exitViolation
	}
	return exitOK
}
