package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/drainproof/drainproof/modelcheck"
)

// runCoverage prints, per action of m, the successors it generated and
// the new states it found over the whole reachable space (check
// --coverage), listing last the actions that never found a new state.
func runCoverage[S any](ctx context.Context, m modelcheck.Model[S], out output) int {
	cov, err := modelcheck.Coverage(ctx, m, 0)
	if err != nil {
		fmt.Fprintf(out.stderr, "checker check --coverage: %v\n", err)
		if out.hold != nil {
			// The run's report, incomplete for want of its coverage.
			r := *out.hold
			if r.Outcome == outcomeOK {
				r.Outcome = outcomeIncomplete
			}
			if r.Reason == "" {
				r.Reason = fmt.Sprintf("coverage: %v", err)
			}
			if werr := writeReport(out.stdout, r); werr != nil {
				fmt.Fprintf(out.stderr, "checker check: %v\n", werr)
				return exitUsage
			}
		}
		return exitIncomplete
	}
	if n, ok := any(m).(interface{ ActionNames() []string }); ok {
		cov = modelcheck.SortCoverage(cov, n.ActionNames())
	}
	var idle []string
	for _, c := range cov {
		if c.Reached == 0 {
			idle = append(idle, c.Action)
		}
	}
	if out.json {
		r := report{Command: "check", Outcome: outcomeOK, Check: &checkReport{Model: out.name, Mode: "exhaustive"}}
		if out.hold != nil {
			r = *out.hold
		}
		if idle == nil {
			idle = []string{}
		}
		r.Coverage = &coverageReport{Actions: cov, Idle: idle}
		if err := writeReport(out.stdout, r); err != nil {
			fmt.Fprintf(out.stderr, "checker check --coverage: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	fmt.Fprintln(out.stdout, "Coverage: per action, the successors it generated, the new states it found first (TLC's -coverage), and the distinct states it leads to")
	tw := tabwriter.NewWriter(out.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  action\tgenerated\tnew\treached\t\n")
	for _, c := range cov {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t\n", c.Action, commas(c.Generated), commas(c.Distinct), commas(c.Reached))
	}
	tw.Flush()
	if len(idle) > 0 {
		fmt.Fprintf(out.stdout, "Actions that never change the state: %v\n", idle)
	}
	return exitOK
}
