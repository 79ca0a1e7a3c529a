package tracecheck_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/trace"
)

// coordLine reports whether a walk's line is one the coordinator's trace
// holds (its actions and the maintainers' reports).
func coordLine(l tracecheck.Line) bool {
	return strings.HasPrefix(l.Action, "Coord") || l.Action == "MaintainerReportProgress"
}

// runWithCoordRestart writes a run under the refinement mapping of a full
// run (h's model): the lines of before, the coordinator's in "coord" and
// the others in "X"; then the coordinator's successor "coord.2" (after
// coord) starts with first; then the lines of after, the coordinator's in
// coord.2 and the others in X. A line's clock is its place in the run, so
// the merged order is the order given.
func runWithCoordRestart(t *testing.T, h tracecheck.Header, before []tracecheck.Line, first tracecheck.Line, after []tracecheck.Line) []string {
	t.Helper()
	dir := t.TempDir()
	h.Mapping = trace.MappingSessions
	bodies := map[string]*bytes.Buffer{}
	for _, p := range []struct{ proc, after string }{{"X", ""}, {"coord", ""}, {"coord.2", "coord"}} {
		hh := h
		hh.Process, hh.After = p.proc, p.after
		bodies[p.proc] = &bytes.Buffer{}
		require.NoError(t, tracecheck.Write(bodies[p.proc], hh, nil))
	}
	clock := 0
	add := func(proc string, l tracecheck.Line, stamp string) {
		clock++
		b, err := json.Marshal(l)
		require.NoError(t, err)
		fmt.Fprintf(bodies[proc], `{"p":%q,"c":%d,%s%s`+"\n", proc, clock, stamp, b[1:])
	}
	for _, l := range before {
		add(map[bool]string{true: "coord", false: "X"}[coordLine(l)], l, "")
	}
	add("coord.2", first, `"after":"coord",`)
	for _, l := range after {
		add(map[bool]string{true: "coord.2", false: "X"}[coordLine(l)], l, "")
	}
	var files []string
	for _, proc := range []string{"X", "coord", "coord.2"} {
		f := filepath.Join(dir, proc+".ndjson")
		require.NoError(t, os.WriteFile(f, bodies[proc].Bytes(), 0o644))
		files = append(files, f)
	}
	return files
}

// num reads an observed integer (an int from Generate, a float64 from JSON).
func num(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case float64:
		return int(x)
	}
	panic(fmt.Sprintf("not a number: %v", v))
}

// observedState is what the lines of a walk observe of the model's state
// after them: T's epoch and liveness, the coordinator's epoch and its
// decisions (T starts at epoch 1, ALIVE; the coordinator undecided).
type observedState struct {
	epoch, coordEpoch, drained, legacy int
	liveness                           string
}

func observeWalk(walk []tracecheck.Line) observedState {
	s := observedState{epoch: 1, coordEpoch: 1, drained: -1, legacy: -1, liveness: "ALIVE"}
	for _, l := range walk {
		for k, v := range l.Vars {
			switch k {
			case "epoch":
				s.epoch = num(v)
			case "coordEpoch":
				s.coordEpoch = num(v)
			case "drainedEpoch":
				s.drained = num(v)
			case "legacyEpoch":
				s.legacy = num(v)
			case "liveness":
				s.liveness = v.(string)
			}
		}
	}
	return s
}

// outstanding reports whether the coordinator's decision names T's
// running process: the upgrade client may restart T on it.
func (s observedState) outstanding() bool {
	return (s.drained != -1 && s.drained >= s.epoch) || (s.legacy != -1 && s.legacy >= s.epoch)
}

// TestCoordRestartMapped: a coordinator restarted after a kill is traced
// as its successor, whose first line (T's join, CoordRejoin) the mapping
// reads as the reset of the coordinator's view and session to Init's at
// T's epoch. Cut anywhere in a walk, the restart is accepted when the dead
// coordinator left no decision outstanding and had not sent STOPPING to
// T's running process, and is incomplete (not rejected) otherwise, the
// reason said; so is a restart while a decision is outstanding that T is
// then restarted on (a drain decision, with T STOPPING; a legacy answer,
// with T ALIVE), and one after STOPPING reached T whose successor hears
// the maintainers' work done only then. A successor that re-drives the drain from nothing is
// accepted through the upgrade restart its own decision authorises; a
// restart after T was restarted on the old decision is accepted. A
// successor that claims what it cannot know is rejected: a STOPPING sent
// at once, a first line that is not CoordRejoin, T back at an epoch it
// has not reached.
func TestCoordRestartMapped(t *testing.T) {
	h, dw, complete, restart, epoch := drainWalk(t)
	type walk struct {
		name  string
		h     tracecheck.Header
		lines []tracecheck.Line
	}
	walks := []walk{{"simulation", h, dw}}
	legacy := configs()["heartbeat"]
	legacy.Versions = []string{"new", "legacy"}
	for _, name := range []string{"heartbeat", "logcoord", "legacy"} {
		cfg, ok := configs()[name]
		if !ok {
			cfg = legacy
		}
		for seed := uint64(1); seed <= 6; seed++ {
			lines, _ := traceOf(t, cfg, seed, 200)
			walks = append(walks, walk{fmt.Sprintf("%s seed %d", name, seed), tracecheck.HeaderFor(cfg, "test"), lines})
		}
	}

	t.Run("every cut of a walk", func(t *testing.T) {
		var ok, outstanding, legacyOut, stopping int
		for wi, w := range walks {
			var cuts []int
			for at := 0; at <= len(w.lines); at += max(5, len(w.lines)/60) {
				cuts = append(cuts, at)
			}
			if wi == 0 { // the simulation's: every cut while its decision is outstanding
				for at := complete + 1; at <= restart; at++ {
					cuts = append(cuts, at)
				}
			}
			t.Run(w.name, func(t *testing.T) {
				for _, at := range cuts {
					s := observeWalk(w.lines[:at])
					res := checkRun(t, runWithCoordRestart(t, w.h, w.lines[:at], rejoin(s.epoch), nil))
					switch {
					case s.outstanding():
						require.Equal(t, tracecheck.Incomplete, res.Verdict, "restart after line %d (%+v): %s", at, s, res.Reason)
						require.Contains(t, res.Reason, "not covered: the coordinator was restarted while its")
						outstanding++
						if s.liveness != "STOPPING" {
							legacyOut++ // a legacy answer: T need not be stopping
						}
					case s.liveness == "STOPPING":
						require.Equal(t, tracecheck.Incomplete, res.Verdict, "restart after line %d (%+v): %s", at, s, res.Reason)
						require.Contains(t, res.Reason, "not covered: the coordinator was restarted after it had sent STOPPING")
						stopping++
					default:
						require.Equal(t, tracecheck.OK, res.Verdict, "restart after line %d (%+v): %s", at, s, res.Reason)
						require.Equal(t, at+1, res.Lines)
						ok++
						continue
					}
					require.Equal(t, "coord.2", res.Process)
					require.Equal(t, 2, res.ProcessLine, "the successor's first line")
				}
			})
		}
		t.Logf("%d restarts accepted, %d incomplete with a decision outstanding (%d of them with T not stopping), %d with T stopping",
			ok, outstanding, legacyOut, stopping)
		require.Positive(t, ok)
		require.Positive(t, legacyOut)
		require.Positive(t, outstanding-legacyOut)
		require.Positive(t, stopping)
	})

	t.Run("the successor drives the drain again", func(t *testing.T) {
		n, sim := 0, false
		for wi, w := range walks {
			send := slices.IndexFunc(w.lines, func(l tracecheck.Line) bool { return l.Action == "CoordSendDraining" })
			if send < 0 {
				continue
			}
			learn := -1
			for i, l := range w.lines[:send] {
				if l.Action == "CoordLearnVersion" {
					learn = i
				}
			}
			s := observeWalk(w.lines[:send])
			if learn < 0 || s.epoch != s.coordEpoch {
				continue // T restarted since the version was learnt
			}
			// Killed before its first command: the successor takes T back,
			// learns its version again (a bootstrap) and takes every later
			// step of the coordinator, the drain's completion included.
			res := checkRun(t, runWithCoordRestart(t, w.h, w.lines[:send], rejoin(s.epoch), slices.Insert(slices.Clone(w.lines[send:]), 0, w.lines[learn])))
			require.Equal(t, tracecheck.OK, res.Verdict, "%s: %s at %s:%d", w.name, res.Reason, res.Process, res.ProcessLine)
			require.Equal(t, len(w.lines)+2, res.Lines)
			n++
			sim = sim || wi == 0
		}
		require.GreaterOrEqual(t, n, 3)
		// The simulation's walk completes the drain and restarts T on it
		// (drainWalk): there the successor's decision authorises T's
		// upgrade restart.
		require.True(t, sim, "the simulation's walk was not restarted before its first command")
	})

	t.Run("a decision outstanding", func(t *testing.T) {
		// Killed right after CoordCompleteDrain; T, the decision in hand,
		// is restarted on it. The successor cannot know of the decision,
		// and the model cannot forget it: incomplete at the successor's
		// first line, not rejected at T's restart. (T is STOPPING then:
		// a drain decision needs it.)
		s := observeWalk(dw[:complete+1])
		require.True(t, s.outstanding())
		var rest []tracecheck.Line
		for _, l := range dw[complete+1 : restart+1] {
			if !coordLine(l) {
				rest = append(rest, l)
			}
		}
		res := checkRun(t, runWithCoordRestart(t, h, dw[:complete+1], rejoin(s.epoch), rest))
		require.Equal(t, tracecheck.Incomplete, res.Verdict, "%s at %s:%d", res.Reason, res.Process, res.ProcessLine)
		require.Equal(t, "coord.2", res.Process)
		require.Equal(t, 2, res.ProcessLine)
		require.Contains(t, res.Reason, fmt.Sprintf("drainedEpoch %d", s.drained))
		// Killed once T was restarted on it: the decision is spent, the
		// successor takes the new process back, a new session.
		res = checkRun(t, runWithCoordRestart(t, h, dw[:restart+1], rejoin(epoch), []tracecheck.Line{progress(3), progress(2)}))
		require.Equal(t, tracecheck.OK, res.Verdict, "%s at %s:%d", res.Reason, res.Process, res.ProcessLine)
		require.Equal(t, restart+4, res.Lines)
	})

	t.Run("T stopping", func(t *testing.T) {
		// Killed once T is STOPPING, before the drain completes. The
		// successor learns T's version, hears T STOPPING, and its new
		// session hears the maintainers' work done: a report the model's
		// maintainers give only at DRAINING, so the reset would turn a
		// correct drain into a rejection; the restart is incomplete.
		k, s, learn, rest, hb := stoppingTail(t, dw, complete)
		rest = append(rest, dw[learn],
			tracecheck.Line{Action: "CoordRecvHeartbeat", Params: map[string]any{"m": hb}, Vars: map[string]any{"coordLiveness": "STOPPING"}},
			progress(0))
		res := checkRun(t, runWithCoordRestart(t, h, dw[:k+1], rejoin(s.epoch), rest))
		require.Equal(t, tracecheck.Incomplete, res.Verdict, "%s at %s:%d", res.Reason, res.Process, res.ProcessLine)
		require.Equal(t, "coord.2", res.Process)
		require.Equal(t, 2, res.ProcessLine)
		require.Contains(t, res.Reason, "after it had sent STOPPING")
	})

	t.Run("a legacy answer outstanding", func(t *testing.T) {
		// A legacy answer, which T may be given while ALIVE: the reset
		// would forget it, and T's restart on it would be rejected.
		n := 0
		for seed := uint64(1); seed <= 20 && n < 3; seed++ {
			lines, _ := traceOf(t, legacy, seed, 300)
			la := slices.IndexFunc(lines, func(l tracecheck.Line) bool { return l.Action == "CoordLegacyRestart" })
			if la < 0 {
				continue
			}
			s := observeWalk(lines[:la+1])
			if !s.outstanding() || s.liveness == "STOPPING" || s.epoch >= int(legacy.MaxEpoch) {
				continue // T can be restarted on the answer, and is not stopping
			}
			h := tracecheck.HeaderFor(legacy, "test")
			up := tracecheck.Line{Action: "UpgradeRestart", Params: map[string]any{"v": "new"}, Vars: map[string]any{"epoch": s.epoch + 1}}
			// Without the restart, T's upgrade restart on the answer is a step.
			res := checkRun(t, runWithCoordRestart(t, h, append(slices.Clone(lines[:la+1]), up), rejoin(s.epoch+1), nil))
			require.Equal(t, tracecheck.OK, res.Verdict, "seed %d: %s at %s:%d", seed, res.Reason, res.Process, res.ProcessLine)
			res = checkRun(t, runWithCoordRestart(t, h, lines[:la+1], rejoin(s.epoch), []tracecheck.Line{up}))
			require.Equal(t, tracecheck.Incomplete, res.Verdict, "seed %d: %s at %s:%d", seed, res.Reason, res.Process, res.ProcessLine)
			require.Equal(t, "coord.2", res.Process)
			require.Contains(t, res.Reason, fmt.Sprintf("legacyEpoch %d", s.legacy))
			n++
		}
		require.Positive(t, n, "no walk of 20 gives a legacy answer to T's running process")
	})

	t.Run("knowledge the successor cannot have", func(t *testing.T) {
		stop := slices.IndexFunc(dw, func(l tracecheck.Line) bool { return l.Action == "CoordSendStopping" })
		require.Positive(t, stop)
		s := observeWalk(dw[:stop])
		require.Equal(t, "DRAINING", s.liveness)
		// The dead coordinator had seen T DRAINING and the work done; the
		// successor sends STOPPING without having seen either.
		res := checkRun(t, runWithCoordRestart(t, h, dw[:stop], rejoin(s.epoch), dw[stop:stop+1]))
		require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
		require.Equal(t, "coord.2", res.Process)
		require.Equal(t, 3, res.ProcessLine, "the STOPPING, after the successor's first line")
		// Its first line is the dead coordinator's decision, not T's join.
		res = checkRun(t, runWithCoordRestart(t, h, dw[:complete], dw[complete], nil))
		require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
		require.Equal(t, "coord.2", res.Process)
		require.Equal(t, 2, res.ProcessLine)
		require.Contains(t, res.Reason, "CoordCompleteDrain as the first line of a restarted coordinator")
		// It takes T back at an epoch T has not reached.
		s = observeWalk(dw[:stop])
		res = checkRun(t, runWithCoordRestart(t, h, dw[:stop], rejoin(s.epoch+1), nil))
		require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
		require.Equal(t, "coord.2", res.Process)
		require.Equal(t, 2, res.ProcessLine)
	})
}

// TestRejoinOfAStoppingNode: a real coordinator drops a member silent for
// its TTL and takes the same process back (CoordRejoin at T's epoch, in
// the coordinator's own trace). If T is STOPPING then, the new session
// hears the maintainers' work done only with T already STOPPING, a report
// the model's maintainers give only at DRAINING: the run is incomplete
// there, not rejected at the report. A rejoin while T is ALIVE stays a
// step, and one that would forget a drained process still running stays
// rejected (TestRefinementMapping).
func TestRejoinOfAStoppingNode(t *testing.T) {
	h, dw, complete, _, _ := drainWalk(t)
	k, s, learn, rest, hb := stoppingTail(t, dw, complete)
	// T dropped and taken back at the same epoch while STOPPING; the new
	// session learns the version, hears T STOPPING, then the work done.
	ls := slices.Concat(dw[:k+1], []tracecheck.Line{rejoin(s.epoch)}, rest, []tracecheck.Line{dw[learn],
		{Action: "CoordRecvHeartbeat", Params: map[string]any{"m": hb}, Vars: map[string]any{"coordLiveness": "STOPPING"}},
		progress(0)})
	res := check(t, encodeWith(t, h, trace.MappingSessions, ls))
	require.Equal(t, tracecheck.Incomplete, res.Verdict, "%+v", res)
	require.Equal(t, k+3, res.Line, "the rejoin (the header, then the lines before it)")
	require.Contains(t, res.Reason, "while T's running process was STOPPING")

	// The same rejoin before T is STOPPING (the first DRAINING line):
	// a step of the mapping; the walk goes on.
	d := slices.IndexFunc(dw, func(l tracecheck.Line) bool { return l.Vars["liveness"] == "DRAINING" })
	require.Positive(t, d)
	ls = append(slices.Clone(dw[:d]), rejoin(observeWalk(dw[:d]).epoch), progress(3), progress(2))
	res = check(t, encodeWith(t, h, trace.MappingSessions, ls))
	require.Equal(t, tracecheck.OK, res.Verdict, "%+v", res)
	require.Equal(t, len(ls), res.Lines)
}

// stoppingTail finds, in a drain walk whose drain completes at line
// complete, the first line k at which T is STOPPING (before the drain
// completes, no decision outstanding), what the walk observes then, the
// coordinator's last CoordLearnVersion before it, and T's lines after it
// up to its first STOPPING heartbeat, whose message is hb.
func stoppingTail(t *testing.T, dw []tracecheck.Line, complete int) (k int, s observedState, learn int, rest []tracecheck.Line, hb any) {
	t.Helper()
	k = slices.IndexFunc(dw, func(l tracecheck.Line) bool { return l.Vars["liveness"] == "STOPPING" })
	require.Positive(t, k)
	require.Less(t, k, complete)
	s = observeWalk(dw[:k+1])
	require.False(t, s.outstanding())
	learn = -1
	for i, l := range dw[:k] {
		if l.Action == "CoordLearnVersion" {
			learn = i
		}
	}
	require.GreaterOrEqual(t, learn, 0)
	for _, l := range dw[k+1:] {
		if coordLine(l) {
			continue
		}
		rest = append(rest, l)
		if m, ok := l.Params["m"].(map[string]any); ok && l.Action == "NodeSendHeartbeat" && m["liveness"] == "STOPPING" {
			hb = m
			break
		}
	}
	require.NotNil(t, hb, "T sends no STOPPING heartbeat after it is STOPPING")
	return k, s, learn, rest, hb
}
