package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/node"
)

// simulateOutput is what `checker simulate` found: the counts of
// sim.Result, summed over the seeds seed..seed+seeds-1.
type simulateOutput struct {
	sim.Result
	Seeds int
	Bug   string
	// Interrupted is set when Ctrl-C stopped the run: Seeds seeds ran.
	Interrupted bool
	// Drains summarises how many events the completed drains took;
	// Settle, how many fault-free events the drains open at the end took.
	Drains, Settle sim.Summary
	// Shard lists the seeds run and those that failed.
	Shard *seedsReport
}

// violated returns the property the run violated and its kind, "" if
// none: DrainSafety when a restart broke a registered dispatcher's stream
// (the drain completed too early, D5), EventDelivery when the changefeed
// missed a committed event or received one twice (a re-delivery after a
// crash aside) or out of commit order (package sim's delivery check),
// DrainCompletes when a drain open when the faults stopped never
// completed (--settle; the model's liveness property).
func (o simulateOutput) violated() (property, kind string) {
	switch {
	case o.BrokenStreams > 0:
		return "DrainSafety", "stream"
	case o.Lost > 0 || o.Delivery.Duplicated > 0 || o.OutOfOrder > 0:
		return "EventDelivery", "stream"
	case o.StalledDrains > 0:
		return "DrainCompletes", "liveness"
	}
	return "", ""
}

// Bounds of the simulate flags.
const (
	maxSeeds    = 10_000_000
	maxSimSteps = 100_000_000
)

// simulateFlags are `checker simulate`'s flags, checked.
type simulateFlags struct {
	seed               uint64
	seeds, steps       int
	settle             int
	transport          node.Transport
	store              sim.StoreKind
	bug, traceDir      string
	asJSON, modelScope bool
	shard              shardSpec
}

// config is the flags that decide a seed's run, for --shard's report.
func (f simulateFlags) config() string {
	c := fmt.Sprintf("--steps %d --settle %d --transport %s --store %s", f.steps, f.settle, f.transport, f.store)
	if f.modelScope {
		c += " --model-scope"
	}
	if f.bug != "" {
		c += " --bug " + f.bug
	}
	return c
}

// runSimulate is `checker simulate`: seeded runs of the deterministic
// cluster simulator (package harness/sim). Exit 0 when no stream broke, the
// changefeed received every committed event once and in order
// (re-deliveries after a crash aside) and no drain stalled once the faults
// stopped (--settle), 1 otherwise, 2 on usage errors, 3 when interrupted.
func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, code, ok := parseSimulateFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	if f.bug != "" {
		if err := bugs.Enable(f.bug); err != nil {
			fmt.Fprintf(stderr, "checker simulate: --bug %s: %v\n", f.bug, err)
			return exitUsage
		}
		defer bugs.Reset()
	}
	start := time.Now()
	out, err := simulateSeeds(ctx, f)
	if err != nil {
		fmt.Fprintf(stderr, "checker simulate: %v\n", err)
		return exitUsage
	}
	violated, _ := out.violated()
	if f.asJSON {
		if err := writeSimulateJSON(stdout, out, f, time.Since(start)); err != nil {
			fmt.Fprintf(stderr, "checker simulate: %v\n", err)
			return exitUsage
		}
	} else {
		printSimulate(stdout, out, f)
	}
	switch {
	case violated != "":
		return exitViolation
	case out.Interrupted:
		return exitIncomplete
	}
	return exitOK
}

// parseSimulateFlags parses and checks the flags; ok false means exit
// with code (usage, help or a bad value, said on stderr).
func parseSimulateFlags(args []string, stdout, stderr io.Writer) (f simulateFlags, code int, ok bool) {
	fs := flag.NewFlagSet("checker simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the (first) run; the same seed gives the same run")
	fs.IntVar(&f.seeds, "seeds", 1, "run the seeds seed..seed+seeds-1 and sum their figures (1..10,000,000)")
	fs.IntVar(&f.steps, "steps", 2000, "events per seed (0..100,000,000)")
	transport := fs.String("transport", "heartbeat", "how the broker count travels: heartbeat or logcoord")
	storeKind := fs.String("store", "memory", "T's event store: memory or pebble (a temporary directory per process)")
	fs.IntVar(&f.settle, "settle", 0, "after the steps, up to this many fault-free events while a drain is still open; one still open then is a violation (0..100,000,000; 0: none)")
	fs.StringVar(&f.bug, "bug", "", "switch on a bug of the zoo (binary built with -tags bugs): "+fmt.Sprint(bugs.Names()))
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object (see docs/checker.md, \"JSON output\")")
	fs.StringVar(&f.traceDir, "trace", "", "write the trace of each process of each seed (docs/trace.md) to DIR/seed-N-TRANSPORT/PROCESS.ndjson; without --model-scope the traces name the refinement mapping of a full run, and a traced full run keeps T within 15 epochs, 4 distinct messages in flight and no legacy peer")
	shard := fs.String("shard", "", "run only the seeds s of the range with (s-seed) mod n = i, for i/n (0 <= i < n); checker report merge combines the shards' --json reports")
	fs.BoolVar(&f.modelScope, "model-scope", false, "keep the runs within what the TLA+ model describes (see sim.Config.ModelScope), so that their traces validate")
	fs.Usage = usageFunc(fs, "checker simulate [--seed S] [--seeds K] [--shard i/n] [--steps N] [--settle M] [--transport heartbeat|logcoord] [--store memory|pebble] [--bug NAME] [--model-scope] [--trace DIR] [--json]",
		"Run the deterministic cluster simulator over the real library (loss, duplication, reordering, crashes, upgrades)\nfor the seeds S..S+K-1 and count drains, restarts, broken streams and the change events the changefeed lost,\nreceived twice or out of order; a broken stream or such an event is a violation.\nWith --settle, a drain still open once the faults stop that does not complete is one too.")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return f, code, false
	}
	tr, err := node.ParseTransport(*transport)
	if err != nil {
		err = fmt.Errorf("--transport: %w", err)
	}
	sk, serr := sim.ParseStore(*storeKind)
	if serr != nil {
		serr = fmt.Errorf("--store: %w", serr)
	}
	f.transport, f.store = tr, sk
	sh, sherr := parseShard(*shard)
	f.shard = sh
	var overflow error
	if f.seeds > 1 && f.seed > math.MaxUint64-uint64(f.seeds-1) {
		overflow = fmt.Errorf("--seeds %d from --seed %d passes the largest seed, %d", f.seeds, f.seed, uint64(math.MaxUint64))
	}
	if flagErr(stderr, "checker simulate", err, serr, sherr,
		intRange("seeds", int64(f.seeds), 1, maxSeeds),
		intRange("steps", int64(f.steps), 0, maxSimSteps),
		intRange("settle", int64(f.settle), 0, maxSimSteps),
		overflow,
	) {
		return f, exitUsage, false
	}
	return f, exitOK, true
}

// simulateSeeds runs the seeds and sums their figures; Ctrl-C ends it
// with the seeds run so far (Interrupted).
func simulateSeeds(ctx context.Context, f simulateFlags) (simulateOutput, error) {
	out := simulateOutput{Result: sim.Result{Seed: f.seed, Steps: f.steps, Transport: string(f.transport), Store: string(f.store)},
		Bug: f.bug, Shard: newSeedsReport(f.shard, f.seed, f.seeds, f.config())}
	for _, seed := range f.shard.seeds(f.seed, f.seeds) {
		cfg := sim.Config{Seed: seed, Steps: f.steps, Transport: f.transport, Store: f.store, Settle: f.settle,
			ModelScope: f.modelScope}
		r, err := runSimTraced(ctx, cfg, f.traceDir)
		if ctx.Err() != nil {
			// Ctrl-C: the seeds run so far are the partial figures; the
			// interrupted run's counts are left out.
			out.Interrupted, out.Shard.Interrupted = true, true
			break
		}
		if err != nil {
			return out, err
		}
		if out.FirstLost == "" && r.FirstLost != "" {
			out.FirstLost = fmt.Sprintf("seed %d: %s", r.Seed, r.FirstLost)
		}
		out.Add(r)
		out.Seeds++
		out.Shard.Ran = append(out.Shard.Ran, seed)
		if v, _ := (simulateOutput{Result: r}).violated(); v != "" {
			out.Shard.fail("simulate", seed, v)
		}
	}
	out.Drains, out.Settle = sim.Summarise(out.DrainSteps), sim.Summarise(out.SettleSteps)
	return out, nil
}

// writeSimulateJSON prints out as the one JSON report.
func writeSimulateJSON(stdout io.Writer, out simulateOutput, f simulateFlags, took time.Duration) error {
	r := report{Command: "simulate", Outcome: outcomeOK, Seconds: took.Seconds(), Shard: out.Shard, Simulate: &simulateReport{
		Seed: out.Seed, Seeds: out.Seeds, EventsPerSeed: out.Steps, Transport: out.Transport, Store: out.Store, Bug: out.Bug,
		DrainsCompleted: out.DrainsCompleted, Restarts: out.Restarts, UpgradeRestarts: out.UpgradeRestarts,
		CrashRestarts: out.CrashRestarts, LegacyRestarts: out.LegacyRestarts, BrokenStreams: out.BrokenStreams,
		Registrations: out.Registrations, MessagesSent: out.MessagesSent, MessagesLost: out.MessagesLost, Duplicated: out.Duplicated,
		Delivery: out.Delivery, DrainEvents: out.Drains, OpenDrains: out.OpenDrains, SettledDrains: out.SettledDrains,
		StalledDrains: out.StalledDrains, SettleEvents: out.Settle}}
	switch violated, kind := out.violated(); {
	case violated != "":
		r.Outcome, r.Violated, r.Kind = outcomeViolated, violated, kind
	case out.Interrupted:
		r.Outcome, r.Reason = outcomeIncomplete, fmt.Sprintf("interrupted: %d of %d seeds run", out.Seeds, len(f.shard.seeds(f.seed, f.seeds)))
	}
	return writeReport(stdout, r)
}

// printSimulate prints out as text.
func printSimulate(stdout io.Writer, out simulateOutput, f simulateFlags) {
	if f.shard.Count > 1 {
		fmt.Fprintf(stdout, "simulate: shard %s of seeds %d..%d: %d seeds, %d steps each, transport %s, store %s", f.shard, f.seed, f.seed+uint64(f.seeds)-1,
			out.Seeds, out.Steps, out.Transport, out.Store)
	} else {
		fmt.Fprintf(stdout, "simulate: seeds %d..%d, %d steps each, transport %s, store %s", out.Seed, out.Seed+uint64(out.Seeds)-1, out.Steps, out.Transport, out.Store)
	}
	if out.Bug != "" {
		fmt.Fprintf(stdout, ", bug %s", out.Bug)
	}
	fmt.Fprintf(stdout, "\n  drains completed %d, restarts %d (upgrade %d, crash %d, legacy %d)\n",
		out.DrainsCompleted, out.Restarts, out.UpgradeRestarts, out.CrashRestarts, out.LegacyRestarts)
	fmt.Fprintf(stdout, "  registrations %d, messages sent %d, lost %d, duplicated %d\n",
		out.Registrations, out.MessagesSent, out.MessagesLost, out.Duplicated)
	fmt.Fprintf(stdout, "  drain length in events: median %d, p99 %d, max %d; open at the end %d",
		out.Drains.Median, out.Drains.P99, out.Drains.Max, out.OpenDrains)
	if f.settle > 0 {
		fmt.Fprintf(stdout, " (without faults: %d completed, median %d, max %d events; %d stalled)",
			out.SettledDrains, out.Settle.Median, out.Settle.Max, out.StalledDrains)
	}
	fmt.Fprintf(stdout, "\n  broken streams %d\n", out.BrokenStreams)
	fmt.Fprintf(stdout, "  events committed %d, received %d, lost %d, duplicated %d, out of order %d, redelivered after a crash %d\n",
		out.Committed, out.Received, out.Lost, out.Delivery.Duplicated, out.OutOfOrder, out.Redelivered)
	if out.FirstLost != "" {
		fmt.Fprintf(stdout, "  first lost event: %s\n", out.FirstLost)
	}
	if n := len(out.Shard.Failed); n > 0 {
		fmt.Fprintf(stdout, "  failed seeds %d, the first: %s (%s)\n", n, out.Shard.Failed[0].Replay, out.Shard.Failed[0].Violated)
	}
	if out.Interrupted {
		fmt.Fprintf(stdout, "  interrupted: %d of %d seeds run; the figures are partial\n", out.Seeds, len(f.shard.seeds(f.seed, f.seeds)))
	}
}
