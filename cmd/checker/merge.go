package main

import (
	"cmp"
	"context"
	"encoding/json"

	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/drainproof/drainproof/harness/cluster"
)

// mergeReport is checker report merge's: the shards of one sharded run
// of checker simulate or checker cluster put back together.
type mergeReport struct {
	// Command is the merged command (simulate or cluster); Config its
	// flags (seedsReport.Config); First..First+Seeds-1 the seed range,
	// split into Shards shards.
	Command  string `json:"command"`
	Config   string `json:"config"`
	Revision string `json:"revision,omitempty"`
	First    uint64 `json:"first_seed"`
	Seeds    int    `json:"seeds"`
	Shards   int    `json:"shards"`
	// Rows are the shards, in shard order.
	Rows []mergeRow `json:"rows"`
	// Ran lists every seed run, in increasing order; Failed the seeds
	// that failed, by seed, each with its replay command.
	Ran    []uint64      `json:"ran"`
	Failed []seedFailure `json:"failed"`
	// Interrupted names the shards Ctrl-C stopped.
	Interrupted []string `json:"interrupted,omitempty"`
	// Totals are the figures summed over the shards, in the order the
	// text prints them.
	Totals []figure `json:"totals"`
	// DrainLatencyMS is a cluster run's drain latency over every
	// completed drain of every seed (nearest rank).
	DrainLatencyMS *latencySummary `json:"drain_latency_ms,omitempty"`
}

// mergeRow is one shard of a merge.
type mergeRow struct {
	Shard   string   `json:"shard"`
	File    string   `json:"file"`
	Ran     int      `json:"ran"`
	Failed  int      `json:"failed"`
	Figures []figure `json:"figures"`
}

// figure is one named count.
type figure struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

// latencySummary is a distribution's size, median, 99th percentile and
// maximum.
type latencySummary struct {
	N   int   `json:"n"`
	P50 int64 `json:"p50"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

// shardInput is one report read by merge.
type shardInput struct {
	file string
	r    report
}

// runReport is `checker report`: its one subcommand is merge.
func runReport(_ context.Context, args []string, stdout, stderr io.Writer) int {
	const about = "usage: checker report merge [--json] FILE|DIR...\n\n" +
		"Combine the --json reports of the shards of one checker simulate or checker cluster run (--shard i/n)\n" +
		"into one verdict and one table; a directory stands for its *.json files. Every failure is listed with\n" +
		"the seed and the command that reproduce it. Exit 1 if a seed failed, 2 on an unreadable or malformed\n" +
		"report, reports of different commands, flags, seed ranges or revisions, or a shard missing or given twice,\n" +
		"3 if a shard was interrupted.\n"
	// The subcommand is the first argument that is not a flag: flags
	// before it (checker report --json merge …) are merge's.
	var flags []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-h", "-help", "--help", "--h":
			fmt.Fprint(stdout, about)
			return exitOK
		}
		flags, args = append(flags, args[0]), args[1:]
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, "checker report: no subcommand (want merge)\n")
		return exitUsage
	}
	switch args[0] {
	case "merge":
		return runMerge(append(flags, args[1:]...), stdout, stderr, about)
	case "help":
		fmt.Fprint(stdout, about)
		return exitOK
	}
	fmt.Fprintf(stderr, "checker report: unknown subcommand %q (want merge)\n", args[0])
	return exitUsage
}

// runMerge is `checker report merge`.
func runMerge(args []string, stdout, stderr io.Writer, about string) int {
	fs := flag.NewFlagSet("checker report merge", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object (see docs/checker.md, \"JSON output\")")
	fs.SetOutput(io.Discard)
	// Flags may come before, between or after the files.
	var paths []string
	for rest := args; ; {
		if slices.Contains(rest, "-h") || slices.Contains(rest, "--help") || slices.Contains(rest, "-help") {
			fmt.Fprint(stdout, about)
			return exitOK
		}
		if err := fs.Parse(rest); err != nil {
			fmt.Fprintf(stderr, "checker report merge: %v\n", err)
			return exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		paths, rest = append(paths, fs.Arg(0)), fs.Args()[1:]
	}
	if len(paths) == 0 {
		fmt.Fprintln(stderr, "checker report merge: no report given (FILE|DIR...)")
		return exitUsage
	}
	inputs, err := readShardReports(paths)
	if err != nil {
		fmt.Fprintf(stderr, "checker report merge: %v\n", err)
		return exitUsage
	}
	m, err := mergeShards(inputs)
	if err != nil {
		fmt.Fprintf(stderr, "checker report merge: %v\n", err)
		return exitUsage
	}
	code := exitOK
	out := report{Command: "report", Outcome: outcomeOK, Merge: m}
	switch {
	case len(m.Failed) > 0:
		code = exitViolation
		out.Outcome, out.Violated, out.Kind = outcomeViolated, fmt.Sprintf("seed %d: %s", m.Failed[0].Seed, m.Failed[0].Violated), inputs[0].r.Kind
		for _, in := range inputs {
			if in.r.Outcome == outcomeViolated {
				out.Kind = in.r.Kind
				break
			}
		}
	case len(m.Interrupted) > 0:
		code = exitIncomplete
		out.Outcome, out.Reason = outcomeIncomplete, "interrupted: shard "+strings.Join(m.Interrupted, ", ")
	}
	for _, in := range inputs {
		out.Seconds += in.r.Seconds
	}
	if *asJSON {
		if err := writeReport(stdout, out); err != nil {
			fmt.Fprintf(stderr, "checker report merge: %v\n", err)
			return exitUsage
		}
		return code
	}
	printMerge(stdout, m, out.Outcome)
	return code
}

// readShardReports reads the reports the paths name; a directory stands
// for its *.json files.
func readShardReports(paths []string) ([]shardInput, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		m, err := filepath.Glob(filepath.Join(p, "*.json"))
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: a directory without *.json reports", p)
		}
		files = append(files, m...)
	}
	var out []shardInput
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var r report
		dec := json.NewDecoder(strings.NewReader(string(b)))
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s: not a JSON report of checker: %v", f, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s: more than one JSON object (one --json report a file)", f)
		}
		if err := checkShardReport(f, r); err != nil {
			return nil, err
		}
		out = append(out, shardInput{file: f, r: r})
	}
	return out, nil
}

// checkShardReport checks one report on its own.
func checkShardReport(f string, r report) error {
	switch {
	case r.Command == "":
		return fmt.Errorf("%s: not a JSON report of checker (no command)", f)
	case r.Outcome == outcomeError:
		return fmt.Errorf("%s: the shard did not run to a verdict: %s", f, r.Error)
	case r.Command != "simulate" && r.Command != "cluster":
		return fmt.Errorf("%s: a report of checker %s; merge takes those of simulate and cluster", f, r.Command)
	case r.Shard == nil:
		return fmt.Errorf("%s: the report has no shard block (a checker older than --shard?)", f)
	}
	s := r.Shard
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count || s.Seeds < 1 {
		return fmt.Errorf("%s: shard %d/%d of %d seeds is not a shard", f, s.Index, s.Count, s.Seeds)
	}
	want := shardSpec{s.Index, s.Count}.seeds(s.First, s.Seeds)
	ran := slices.Clone(s.Ran)
	if s.Interrupted {
		want = want[:min(len(want), len(ran))]
	}
	if !slices.Equal(ran, want) {
		return fmt.Errorf("%s: shard %d/%d ran seeds %v, its share of %d..%d is %v", f, s.Index, s.Count, abbrev(ran),
			s.First, s.First+uint64(s.Seeds)-1, abbrev(want))
	}
	for _, fl := range s.Failed {
		if !slices.Contains(ran, fl.Seed) {
			return fmt.Errorf("%s: seed %d failed but is not among the seeds the shard ran", f, fl.Seed)
		}
	}
	switch r.Command {
	case "simulate":
		if r.Simulate == nil {
			return fmt.Errorf("%s: a simulate report without its simulate figures", f)
		}
	case "cluster":
		if len(r.ClusterRuns) != len(ran) {
			return fmt.Errorf("%s: %d cluster results for %d seeds run", f, len(r.ClusterRuns), len(ran))
		}
	}
	return nil
}

// abbrev shortens a long seed list for a message.
func abbrev(s []uint64) string {
	if len(s) <= 8 {
		return fmt.Sprint(s)
	}
	return fmt.Sprintf("%v … %d (%d seeds)", s[:4], s[len(s)-1], len(s))
}

// mergeShards checks that the inputs are the shards of one run, each
// once, all present, and merges them.
func mergeShards(in []shardInput) (*mergeReport, error) {
	first := in[0]
	f0 := first.r.Shard
	byIndex := map[int]shardInput{}
	for _, x := range in {
		s := x.r.Shard
		differ := func(what string, a, b any) error {
			return fmt.Errorf("%s and %s are not shards of one run: %s %v and %v", first.file, x.file, what, a, b)
		}
		switch {
		case x.r.Command != first.r.Command:
			return nil, differ("command", first.r.Command, x.r.Command)
		case s.Config != f0.Config:
			return nil, differ("flags", fmt.Sprintf("%q", f0.Config), fmt.Sprintf("%q", s.Config))
		case s.First != f0.First || s.Seeds != f0.Seeds:
			return nil, differ("seed range", fmt.Sprintf("%d..%d", f0.First, f0.First+uint64(f0.Seeds)-1),
				fmt.Sprintf("%d..%d", s.First, s.First+uint64(s.Seeds)-1))
		case s.Count != f0.Count:
			return nil, differ("shard count", f0.Count, s.Count)
		case s.Revision != "" && f0.Revision != "" && s.Revision != f0.Revision:
			return nil, differ("checker revision", f0.Revision, s.Revision)
		}
		if y, dup := byIndex[s.Index]; dup {
			return nil, fmt.Errorf("shard %d/%d given twice: %s and %s", s.Index, s.Count, y.file, x.file)
		}
		byIndex[s.Index] = x
	}
	var missing []string
	for i := 0; i < f0.Count; i++ {
		if _, ok := byIndex[i]; !ok {
			missing = append(missing, shardSpec{i, f0.Count}.String())
		}
	}
	if len(missing) > 0 {
		if len(missing) > 10 {
			missing = append(missing[:10], fmt.Sprintf("… (%d in all)", len(missing)))
		}
		return nil, fmt.Errorf("shard %s of %d missing", strings.Join(missing, ", "), f0.Count)
	}
	m := &mergeReport{Command: first.r.Command, Config: f0.Config, First: f0.First, Seeds: f0.Seeds, Shards: f0.Count,
		Ran: []uint64{}, Failed: []seedFailure{}}
	var latencies []int64
	for i := 0; i < f0.Count; i++ {
		x := byIndex[i]
		s := x.r.Shard
		if m.Revision == "" {
			m.Revision = s.Revision
		}
		m.Ran = append(m.Ran, s.Ran...)
		m.Failed = append(m.Failed, s.Failed...)
		if s.Interrupted {
			m.Interrupted = append(m.Interrupted, s.Shard)
		}
		var figs []figure
		if x.r.Command == "simulate" {
			figs = simulateFigures(x.r.Simulate)
		} else {
			var lat []int64
			figs, lat = clusterFigures(x.r.ClusterRuns)
			latencies = append(latencies, lat...)
		}
		m.Rows = append(m.Rows, mergeRow{Shard: s.Shard, File: x.file, Ran: len(s.Ran), Failed: len(s.Failed), Figures: figs})
		if i == 0 {
			m.Totals = slices.Clone(figs)
			continue
		}
		for j := range figs {
			if strings.HasSuffix(figs[j].Name, "_max") {
				m.Totals[j].Value = max(m.Totals[j].Value, figs[j].Value)
			} else {
				m.Totals[j].Value += figs[j].Value
			}
		}
	}
	slices.Sort(m.Ran)
	slices.SortFunc(m.Failed, func(a, b seedFailure) int { return cmp.Compare(a.Seed, b.Seed) })
	if m.Command == "cluster" {
		p50, p99, mx := percentiles(latencies)
		m.DrainLatencyMS = &latencySummary{N: len(latencies), P50: p50, P99: p99, Max: mx}
	}
	return m, nil
}

// simulateFigures are the counts of a simulate report that add up across
// shards (a name ending in _max is a maximum).
func simulateFigures(s *simulateReport) []figure {
	return []figure{
		{"seeds", int64(s.Seeds)}, {"events_committed", int64(s.Committed)}, {"events_received", int64(s.Received)},
		{"events_lost", int64(s.Lost)}, {"events_duplicated", int64(s.Delivery.Duplicated)},
		{"events_out_of_order", int64(s.OutOfOrder)}, {"events_redelivered", int64(s.Redelivered)},
		{"drains_completed", int64(s.DrainsCompleted)}, {"drain_events_max", int64(s.DrainEvents.Max)},
		{"open_drains", int64(s.OpenDrains)}, {"settled_drains", int64(s.SettledDrains)}, {"stalled_drains", int64(s.StalledDrains)},
		{"restarts", int64(s.Restarts)}, {"broken_streams", int64(s.BrokenStreams)}, {"registrations", int64(s.Registrations)},
		{"messages_sent", int64(s.MessagesSent)}, {"messages_lost", int64(s.MessagesLost)},
	}
}

// clusterFigures are the counts of a shard's cluster runs that add up
// across shards, and the latencies of its completed drains.
func clusterFigures(runs []*cluster.Result) ([]figure, []int64) {
	var committed, read, lost, dup, ooo, regs, complete, legacy, incomplete, faults, restarts, violations int64
	var lat []int64
	for _, r := range runs {
		committed += r.EventsCommitted
		read += int64(r.EventsRead)
		lost += int64(r.Lost)
		dup += int64(r.Duplicated)
		ooo += int64(r.OutOfOrder)
		regs += int64(r.Registrations)
		faults += int64(len(r.Faults))
		restarts += int64(r.Restarts)
		violations += int64(len(r.Violations))
		for _, d := range r.Drains {
			switch {
			case d.Complete:
				complete++
				lat = append(lat, d.TookMS)
			case d.Legacy:
				legacy++
			default:
				incomplete++
			}
		}
	}
	return []figure{
		{"seeds", int64(len(runs))}, {"events_committed", committed}, {"events_read", read}, {"events_lost", lost},
		{"events_duplicated", dup}, {"events_out_of_order", ooo}, {"registrations", regs}, {"drains_complete", complete},
		{"drains_legacy", legacy}, {"drains_not_complete", incomplete}, {"faults", faults}, {"restarts", restarts},
		{"violations", violations},
	}, lat
}

// mergeColumns are the figures the text table shows per shard.
var mergeColumns = map[string][]string{
	"simulate": {"events_committed", "events_lost", "events_duplicated", "drains_completed", "stalled_drains", "broken_streams"},
	"cluster":  {"events_committed", "events_lost", "events_duplicated", "drains_complete", "drains_not_complete", "faults", "restarts"},
}

// printMerge prints a merge as text: the verdict, one row a shard, the
// totals, the failures with their replay commands.
func printMerge(w io.Writer, m *mergeReport, outcome string) {
	verdict := map[string]string{outcomeOK: "PASS", outcomeViolated: "FAIL", outcomeIncomplete: "INCOMPLETE"}[outcome]
	fmt.Fprintf(w, "merge %s: %d shards of checker %s %s, seeds %d..%d: %d run, %d failed\n", verdict, m.Shards, m.Command,
		m.Config, m.First, m.First+uint64(m.Seeds)-1, len(m.Ran), len(m.Failed))
	cols := mergeColumns[m.Command]
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "shard\tseeds\tfailed\t%s\tfile\t\n", strings.ReplaceAll(strings.Join(cols, "\t"), "_", " "))
	value := func(figs []figure, name string) int64 {
		for _, f := range figs {
			if f.Name == name {
				return f.Value
			}
		}
		return 0
	}
	row := func(shard string, ran, failed int, figs []figure, file string) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t", shard, ran, failed)
		for _, c := range cols {
			fmt.Fprintf(tw, "%d\t", value(figs, c))
		}
		fmt.Fprintf(tw, "%s\t\n", file)
	}
	for _, r := range m.Rows {
		row(r.Shard, r.Ran, r.Failed, r.Figures, r.File)
	}
	row("total", len(m.Ran), len(m.Failed), m.Totals, "")
	tw.Flush()
	if l := m.DrainLatencyMS; l != nil {
		fmt.Fprintf(w, "drain latency ms over %d completed drains: p50 %d, p99 %d, max %d\n", l.N, l.P50, l.P99, l.Max)
	}
	for _, f := range m.Failed {
		fmt.Fprintf(w, "FAILED seed %d: %s\n  replay: %s\n", f.Seed, f.Violated, f.Replay)
	}
	if len(m.Interrupted) > 0 {
		fmt.Fprintf(w, "interrupted: shard %s (the figures are partial)\n", strings.Join(m.Interrupted, ", "))
	}
}
