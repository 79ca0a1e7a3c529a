package sim_test

import (
	"context"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/impl/node"
)

var transports = []node.Transport{node.TransportHeartbeat, node.TransportLogCoord}

// TestRunDeterministic: the same seed gives the same run.
func TestRunDeterministic(t *testing.T) {
	for _, tr := range transports {
		a, err := sim.Run(context.Background(), sim.Config{Seed: 7, Steps: 1500, Transport: tr})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := sim.Run(context.Background(), sim.Config{Seed: 7, Steps: 1500, Transport: tr})
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: seed 7 ran twice differently:\n%+v\n%+v", tr, a, b)
		}
		if a.DrainsCompleted == 0 || a.Restarts == 0 || a.MessagesSent == 0 {
			t.Fatalf("%s: the run did nothing: %+v", tr, a)
		}
	}
}

// seeds returns how many seeds the no-broken-stream test runs:
// DRAINPROOF_SIM_SEEDS, or a short default for the unit run.
func seeds(t *testing.T) int {
	if v := os.Getenv("DRAINPROOF_SIM_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("DRAINPROOF_SIM_SEEDS=%q: want a positive integer", v)
		}
		return n
	}
	return 30
}

// TestRunNoBrokenStreams is D5 end to end: over many seeds and both
// transports, no restart authorised by a completed drain finds a
// dispatcher still registered with T.
func TestRunNoBrokenStreams(t *testing.T) {
	n := seeds(t)
	for _, tr := range transports {
		var total sim.Result
		for seed := 1; seed <= n; seed++ {
			r, err := sim.Run(context.Background(), sim.Config{Seed: uint64(seed), Steps: 1000, Transport: tr})
			if err != nil {
				t.Fatal(err)
			}
			if r.BrokenStreams != 0 {
				t.Errorf("%s seed %d: %d broken streams (%+v)", tr, seed, r.BrokenStreams, r)
			}
			total.Add(r)
		}
		t.Logf("%s: %d seeds, %d drains completed, %d restarts, %d broken streams", tr, n, total.DrainsCompleted, total.Restarts, total.BrokenStreams)
	}
}

// BenchmarkRun runs one 2000-step simulation per iteration.
func BenchmarkRun(b *testing.B) {
	for _, tr := range transports {
		b.Run(string(tr), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				r, err := sim.Run(context.Background(), sim.Config{Seed: uint64(i + 1), Steps: 2000, Transport: tr})
				if err != nil || r.BrokenStreams != 0 {
					b.Fatalf("seed %d: %+v %v", i+1, r, err)
				}
			}
		})
	}
}

// TestOpenDrainsCompleteWithoutFaults is DrainCompletes end to end: a
// drain still open when the faults stop (no more loss, duplication,
// crash, store fault or stale LogCoordinator answer) completes, over both
// transports. With live TTL expiry in the LogCoordinator this needs the
// service to report again and again, changed or not (caught: NoReReport).
func TestOpenDrainsCompleteWithoutFaults(t *testing.T) {
	n := seeds(t)
	for _, tr := range transports {
		var total sim.Result
		for seed := 1; seed <= n; seed++ {
			r, err := sim.Run(context.Background(), sim.Config{Seed: uint64(seed), Steps: 1000, Transport: tr, Settle: 3000})
			if err != nil {
				t.Fatal(err)
			}
			if r.StalledDrains != 0 || r.SettledDrains != r.OpenDrains {
				t.Errorf("%s seed %d: %d drains open when the faults stopped, %d completed after, %d stalled",
					tr, seed, r.OpenDrains, r.SettledDrains, r.StalledDrains)
			}
			total.Add(r)
		}
		if total.OpenDrains == 0 {
			t.Errorf("%s: no drain was open when the faults stopped: the test checks nothing", tr)
		}
		s := sim.Summarise(total.SettleSteps)
		t.Logf("%s: %d seeds, %d drains open at the end, completed without faults in median %d, max %d events",
			tr, n, total.OpenDrains, s.Median, s.Max)
	}
}
