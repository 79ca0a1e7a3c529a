package coordinator_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/node"
)

// upgradeRestart is restart by the upgrade controller: it waits for the
// coordinator's answer that authorises restarting T's current process
// (complete for it, or the legacy answer naming it).
func upgradeRestart(v node.Version) xStep {
	st := restart(v)
	st.name = "upgrade." + st.name
	st.guard = func(w *xWorld) bool {
		d := w.lastDecision()
		e := w.proc().epoch
		return d != nil && (d.Complete && d.DrainedEpoch == e || d.Legacy && d.LegacyEpoch == e)
	}
	return st
}

// toDraining is the common start: d1 registered on T's first process,
// the coordinator learns its version, the client's first poll starts the
// session, DRAINING (message D) is taken and its response observed, the
// maintainers report no work left.
func toDraining() []xStep {
	return []xStep{register("d1", 1), coordRecv("boot1"), poll(), coordSend("D"), nodeRecv("D"),
		coordRecv("resp:D"), progress()}
}

// xScenarios are the explorer's scenarios; wide adds longer ones.
func xScenarios(wide bool) []xScenario {
	hb, lc := node.TransportHeartbeat, node.TransportLogCoord
	scs := []xScenario{
		{
			// STOPPING's response, its forced heartbeat (count 1: d1 is
			// registered), DRAINING's late heartbeat, a duplicate and a
			// later heartbeat after d1's removal, in every order (C5, C8,
			// F2, F8).
			name: "H/stopping-reordered", transport: hb,
			setup: append(toDraining(), coordSend("S")),
			threads: []xThread{
				{"T", []xStep{nodeRecv("S"), nodeBeat("hb2")}},
				{"net1", []xStep{coordRecv("hb:S"), coordRecv("hb:S")}},
				{"net2", []xStep{coordRecv("resp:S"), coordRecv("hb:D")}},
				{"net3", []xStep{coordRecv("hb2"), poll()}},
				{"collector", []xStep{remove("d1")}},
			},
		},
		{
			// T's first process sends a closed zero (hbZ) and restarts; the
			// new process registers d2, gets the old DRAINING command late
			// (N1: it changes nothing) and heartbeats ALIVE; the old zero
			// and STOPPING response arrive before, between and after, and
			// again (F3, D2, C4).
			name: "H/restart-late-heartbeat", transport: hb,
			setup: append(toDraining(), coordSend("S"), nodeRecv("S"), remove("d1"), nodeBeat("hbZ")),
			threads: []xThread{
				{"T", []xStep{restart(node.VersionBrokerDrain), register("d2", 2), nodeRecv("D"), nodeBeat("hbA2")}},
				{"new", []xStep{coordRecv("hbA2"), coordRecv("boot2"), poll()}},
				{"old", []xStep{coordRecv("resp:S"), coordRecv("hbZ"), poll(), coordRecv("hbZ"), coordRecv("resp:S")}},
			},
		},
		{
			// Variant L: the LogCoordinator holds T(1)'s closed zero; T
			// restarts, registers d2, and is driven to STOPPING at epoch
			// 2; an answer from the old entry is taken at every point of
			// that (D8, C5: the answer of an older epoch is dropped).
			name: "L/restart-late-answer", transport: lc,
			setup: append(toDraining(), coordSend("S"), nodeRecv("S"), coordRecv("resp:S"), remove("d1"),
				nodeReport("R1"), lcRecv("R1")),
			threads: []xThread{
				{"query", []xStep{lcAnswer("A1"), coordRecv("A1"), poll()}},
				{"T2", []xStep{restart(node.VersionBrokerDrain), register("d2", 2), nodeBeat("hbA2"), coordRecv("hbA2"),
					coordRecv("boot2"), coordSend("D2"), nodeRecv("D2"), coordRecv("resp:D2"), coordSend("S2"),
					nodeRecv("S2"), coordRecv("resp:S2"), poll()}},
			},
		},
		{
			// Mid-drain T restarts as a legacy process: the coordinator
			// gives the legacy answer for it, the upgrade controller
			// restarts it as a new process; late messages of every
			// process arrive around that (§9 VersionSafety; the recorded
			// legacy answer names the legacy process only).
			name: "L/legacy-restart", transport: lc, legacy: true,
			setup: toDraining(),
			threads: []xThread{
				{"T", []xStep{restart(node.VersionLegacy), nodeBeat("hbL2"), upgradeRestart(node.VersionBrokerDrain), nodeBeat("hbN3")}},
				{"coord2", []xStep{coordRecv("hbL2"), coordRecv("boot2"), poll()}},
				{"coord3", []xStep{coordRecv("hbN3"), coordRecv("boot3"), poll()}},
				{"late", []xStep{coordRecv("resp:D"), coordRecv("hb:D"), coordRecv("hbL2"), poll()}},
			},
		},
		{
			// After the legacy answer for T(2) and the upgrade restart, T
			// rejoins the membership: the legacy session ends (C9), the
			// new process is drained anew; late messages of the legacy
			// process and of the first arrive around that. The rejoin is
			// outside the model (one session): not trace-validated.
			name: "L/legacy-rejoin", transport: lc, legacy: true, untraced: true,
			setup: append(toDraining(), restart(node.VersionLegacy), nodeBeat("hbL2"), coordRecv("hbL2"), coordRecv("boot2"),
				poll(), upgradeRestart(node.VersionBrokerDrain)),
			threads: []xThread{
				{"member", []xStep{rejoin(), coordRecv("boot3"), poll()}},
				{"late", []xStep{coordRecv("hbL2"), coordRecv("resp:D"), poll()}},
				{"T3", []xStep{nodeBeat("hbN3"), coordRecv("hbN3")}},
			},
		},
		{
			// The coordinator fails over after giving the legacy answer
			// for T(2), around the upgrade restart: the new coordinator
			// knows nothing of the answer, learns T's version again from
			// a bootstrap (the legacy process's, late, or the new one's)
			// and answers for the process it tracks (§9, C8, C4).
			// Outside the model: not trace-validated.
			name: "L/failover-after-legacy", transport: lc, legacy: true, untraced: true,
			setup: append(toDraining(), restart(node.VersionLegacy), nodeBeat("hbL2"), coordRecv("hbL2"), coordRecv("boot2"),
				poll()),
			threads: []xThread{
				{"upgrade", []xStep{upgradeRestart(node.VersionBrokerDrain), nodeBeat("hbN3")}},
				{"failover", []xStep{coordRestart(), coordRecv("boot2"), poll()}},
				{"late", []xStep{coordRecv("hbL2"), coordRecv("boot3"), coordRecv("hbN3"), poll()}},
			},
		},
		{
			// The LogCoordinator's TTL (1 tick): a newer report and an
			// older one delivered late, the clock, answers and expiry
			// passes in every order (L2–L4: Answer and Expire draw the
			// line at the same tick; an older report does not refresh the
			// entry, TiCDC #6155).
			name: "L/ttl", transport: lc, ttl: 1,
			setup: append(toDraining(), coordSend("S"), nodeRecv("S"), coordRecv("resp:S"), nodeReport("R1"),
				remove("d1"), nodeReport("R2")),
			threads: []xThread{
				{"lc", []xStep{lcRecv("R2"), lcRecv("R1")}},
				{"clock", []xStep{tick(), tick()}},
				{"query", []xStep{lcAnswered("A1"), lcExpire(), lcAnswered("A2"), lcExpire(), poll()}},
			},
		},
		{
			// The coordinator fails over while STOPPING's response and
			// heartbeat (count 1) are in flight: the new one learns T from
			// the membership and a bootstrap, the client polls again, the
			// maintainers report again; the old messages and a later
			// closed zero arrive around that (F11; C4, C5, C8 on the new
			// coordinator). Outside the model: not trace-validated.
			name: "H/coordinator-failover", transport: hb, untraced: true,
			setup: append(toDraining(), coordSend("S"), nodeRecv("S")),
			threads: []xThread{
				{"failover", []xStep{coordRestart(), coordRecv("boot1"), poll(), progress()}},
				{"net", []xStep{coordRecv("resp:S"), coordRecv("hb:S")}},
				{"T", []xStep{remove("d1"), nodeBeat("hbZ"), coordRecv("hbZ")}},
			},
			final: func(w *xWorld) error { return poll().do(w) },
		},
	}
	if wide {
		scs = append(scs,
			xScenario{
				// L/restart-late-answer with T(2)'s own reports.
				name: "L/restart-late-answer+report", transport: lc,
				setup: append(toDraining(), coordSend("S"), nodeRecv("S"), coordRecv("resp:S"), remove("d1"),
					nodeReport("R1"), lcRecv("R1")),
				threads: []xThread{
					{"query", []xStep{lcAnswer("A1"), coordRecv("A1"), poll()}},
					{"T2", []xStep{restart(node.VersionBrokerDrain), register("d2", 2), nodeBeat("hbA2"), coordRecv("hbA2"),
						coordRecv("boot2"), coordSend("D2"), nodeRecv("D2"), coordRecv("resp:D2"), coordSend("S2"),
						nodeRecv("S2"), coordRecv("resp:S2"), poll()}},
					{"report2", []xStep{nodeReport("R2"), lcRecv("R2")}},
				},
			},
			xScenario{
				// H/restart-late-heartbeat, then epoch 2 drained too.
				name: "H/restart-then-drain", transport: hb,
				setup: append(toDraining(), coordSend("S"), nodeRecv("S"), remove("d1"), nodeBeat("hbZ")),
				threads: []xThread{
					{"T", []xStep{restart(node.VersionBrokerDrain), register("d2", 2), nodeBeat("hbA2"), remove("d2")}},
					{"coord", []xStep{coordRecv("hbZ"), coordRecv("hbA2"), coordRecv("boot2"), coordSend("D2"), nodeRecv("D2"),
						coordRecv("resp:D2"), coordSend("S2"), nodeRecv("S2"), coordRecv("hb:S2"), poll()}},
					{"late", []xStep{coordRecv("hbZ"), coordRecv("resp:S")}},
				},
			},
		)
	}
	return scs
}

// xRaceLimit is how many interleavings of each scenario run under -race
// or -short (raceBuild).
const xRaceLimit = 100

// TestExploreCoordinator runs every interleaving of each scenario's
// threads through the real coordinator, node, LogCoordinator and event
// service, checking the invariants at every step and validating each
// run's trace, and prints the counts. DRAINPROOF_EXPLORE=wide adds the
// longer scenarios.
func TestExploreCoordinator(t *testing.T) {
	total, elapsed := 0, time.Duration(0)
	limit := 0
	if raceBuild || testing.Short() {
		limit = xRaceLimit
	}
	for _, sc := range xScenarios(xWide()) {
		t.Run(sc.name, func(t *testing.T) {
			ex := xExplore(limit, func(prefix []int) ([]xDecision, error) { return xRun(&sc, prefix) })
			total += ex.runs
			elapsed += ex.elapsed
			scope := "every one"
			if !ex.complete && ex.fail == nil {
				scope = fmt.Sprintf("the first %d: -race or -short", limit)
			}
			t.Logf("%s: %d interleavings (%s), %.0f/s", sc.name, ex.runs, scope, float64(ex.runs)/ex.elapsed.Seconds())
			if ex.fail != nil {
				if on := bugs.Enabled(); len(on) > 0 {
					t.Logf("bugs on: %v", on)
				}
				t.Fatal(ex.fail)
			}
		})
	}
	t.Logf("total: %d interleavings in %v, %.0f/s", total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds())
}

// TestCoordExplorerEnumerates checks the search on threads of known
// lengths (no system): it runs every interleaving exactly once, the
// multinomial count, and with a guard (a step that waits for another
// thread's step) exactly the interleavings that respect it.
func TestCoordExplorerEnumerates(t *testing.T) {
	for _, tc := range []struct {
		lengths []int
		// waits: thread 1's first step waits for thread 0's first.
		waits bool
		want  int
	}{
		{[]int{2, 3, 2}, false, 210}, // 7!/(2!3!2!)
		{[]int{1, 1}, true, 1},
		{[]int{2, 2}, true, 3}, // 4!/(2!2!) = 6, half with thread 0 first
		{[]int{4}, false, 1},
	} {
		seen := map[string]int{}
		ex := xExplore(0, func(prefix []int) ([]xDecision, error) {
			left := slices.Clone(tc.lengths)
			var ds []xDecision
			for {
				var enabled []int
				for i, n := range left {
					blocked := tc.waits && i == 1 && n == tc.lengths[1] && left[0] == tc.lengths[0]
					if n > 0 && !blocked {
						enabled = append(enabled, i)
					}
				}
				if len(enabled) == 0 {
					break
				}
				d := xDecision{enabled: enabled, chosen: enabled[0]}
				if k := len(ds); k < len(prefix) {
					d.chosen = prefix[k]
				}
				ds = append(ds, d)
				left[d.chosen]--
			}
			seen[xDescribe(ds)]++
			return ds, nil
		})
		if ex.runs != tc.want || len(seen) != tc.want || !ex.complete {
			t.Errorf("%v (waits %v): %d runs, %d distinct, complete %v, want %d", tc.lengths, tc.waits, ex.runs, len(seen), ex.complete, tc.want)
		}
	}
	// A limit stops the search after that many runs, and says so.
	ex := xExplore(5, func([]int) ([]xDecision, error) {
		return []xDecision{{enabled: []int{0, 1, 2}}, {enabled: []int{0, 1}}}, nil
	})
	if ex.runs != 5 || ex.complete {
		t.Errorf("limit 5: %d runs, complete %v; want 5, not complete", ex.runs, ex.complete)
	}
}

// TestExploreCoordinatorFails checks that a failing check stops the
// exploration with the schedule and the steps: a scenario whose final
// check always fails.
func TestExploreCoordinatorFails(t *testing.T) {
	sc := xScenario{name: "fails", transport: node.TransportHeartbeat, setup: toDraining(),
		threads: []xThread{{"a", []xStep{tick()}}, {"b", []xStep{tick()}}},
		final:   func(w *xWorld) error { return fmt.Errorf("planted at tick %d", w.now) }}
	ex := xExplore(0, func(prefix []int) ([]xDecision, error) { return xRun(&sc, prefix) })
	if ex.fail == nil || ex.runs != 1 {
		t.Fatalf("runs %d, fail %v; want the first run to fail", ex.runs, ex.fail)
	}
	if got := ex.fail.Error(); !strings.Contains(got, "schedule [0 1]") || !strings.Contains(got, "planted at tick 2") || !strings.Contains(got, "t1@1 tick") {
		t.Errorf("failure %q does not name the schedule and its steps", got)
	}
}
