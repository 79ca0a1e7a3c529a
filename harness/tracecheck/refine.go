package tracecheck

import (
	"fmt"
	"strings"

	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/spec"
	"github.com/drainproof/drainproof/tla/names"
)

// This file is the refinement mapping of a full run's trace (header
// "mapping": "sessions", docs/trace.md "Every run: the refinement
// mapping"). The model drains T once, from Init, with one unit of
// maintainer work; a full run starts its session at the upgrade client's
// first poll, gives 1 to 3 units, rejoins T after an upgrade and drains
// it again, and may hear a stale LogCoordinator. The mapping takes each
// of these onto the model:
//
//   - work: the coordinator's observed work w maps to the model's
//     work = 0 if w = 0, else 1 (None, no session yet, is the one unit a
//     new session starts with). The model's guards read work only as
//     work = 0 or work > 0, so the abstraction keeps every guard's value.
//   - MaintainerReportProgress that leaves w > 0 is a stutter: the
//     abstract state does not change (a report that raises w from 0 is
//     not, and is rejected).
//   - CoordRejoin, the drained node rejoining the membership at epoch e
//     after a restart, resets the coordinator's session to Init's, at
//     epoch e (coordVersion unknown, coordLiveness ALIVE, coordCount
//     None, work 1, drainedEpoch and legacyEpoch None). It is allowed only
//     when the process a drain or a legacy answer named is gone (a
//     restart happened: drainedEpoch, legacyEpoch < epoch) and e is an
//     epoch the model's coordinator could track (coordEpoch <= e <=
//     epoch).
//   - CoordRecvAnswer of an unknown answer may be a stutter: an answer of
//     a stale LogCoordinator (a process the model does not have) that no
//     line sent. The model's coordinator takes an unknown answer without
//     a change, so the stutter hides nothing; a coordinator that changes
//     its state on it (UnknownErasesCount) disagrees with the unchanged
//     state and is rejected.
//   - LogCoordExpire as the first line of a process that succeeds
//     another (its stamp's after: a LogCoordinator restarted after a
//     kill, logcoord.Cache.TraceRestart) may be a stutter: the new
//     process's cache is empty, which is the model's LogCoordExpire when
//     the model's cache holds T's entry and no step when it holds none
//     (the heartbeat transport, where T never reports to it). The line
//     observes the empty entry, so the stutter is possible only from a
//     state whose cache is already empty.
//   - CoordRejoin as the first line of a process that succeeds another
//     (a coordinator restarted after a kill, coordinator.TraceRestart)
//     is the same reset: the new coordinator knows T only from T's join
//     at epoch e. Its guard reads what the dead coordinator decided: a
//     decision still outstanding (drainedEpoch or legacyEpoch naming
//     T's running process), or a predecessor that had tracked a newer
//     epoch than e, is a run the model does not cover (the model has no
//     coordinator crash to forget a decision by, and its coordinator
//     never goes back an epoch): the trace is incomplete there, not
//     rejected. So is a restart after the dead coordinator sent STOPPING
//     to T's running process: the new session hears the maintainers'
//     work done only at STOPPING, a report the model's maintainers give
//     only at DRAINING. Any other coordinator action as a successor's
//     first line is rejected: the new coordinator cannot start with a
//     view of T.

// The refinement a line takes (line.refine).
const (
	refineNone      = iota
	refineStutter   // the line is a stutter step of the model
	refineOrStutter // the line is the model's step or a stutter step
	refineRestart   // the first line of a restarted coordinator: CoordRejoin, if covered
	refineNoView    // a coordinator action as a restarted coordinator's first line
	refineRejoin    // CoordRejoin within a coordinator's trace: covered unless T is stopping
)

// refinementDefs are the refinement steps as actions of the checker.
func refinementDefs() []actionDef {
	return []actionDef{{name: names.CoordRejoin.String(), shape: shapeRefine}}
}

var (
	varWork       = uint8(varIdx.find([]byte("work")))
	varCoordEpoch = uint8(varIdx.find([]byte("coordEpoch")))
)

// setMapping sets the refinement mapping the header names ("" none).
func (c *Checker) setMapping(mapping string) error {
	switch mapping {
	case "":
		c.sessions = false
	case trace.MappingSessions:
		c.sessions = true
	default:
		return fmt.Errorf("unknown mapping %q (known: %q)", mapping, trace.MappingSessions)
	}
	return nil
}

// mapWork is the abstraction of the coordinator's observed work.
func mapWork(w int8) int8 {
	if w == 0 {
		return 0
	}
	return 1
}

// refineLine marks ln's refinement (after its observed values are
// parsed); a refinement step in a trace without the mapping is an error.
func (c *Checker) refineLine(ln *line) error {
	a := &c.actions[ln.act]
	if a.shape == shapeRefine {
		if !c.sessions {
			return fmt.Errorf("%s is a step of the refinement mapping of a full run: the header names no mapping (docs/trace.md)", a.name)
		}
		for _, ck := range c.checks(ln) {
			if ck.v == varCoordEpoch {
				if ln.first {
					ln.refine = refineRestart
				} else {
					ln.refine = refineRejoin
				}
				return nil
			}
		}
		return fmt.Errorf("%s must observe coordEpoch, the epoch T rejoins with", a.name)
	}
	if !c.sessions {
		return nil
	}
	if ln.first && coordAction(a.name) {
		ln.refine = refineNoView
		return nil
	}
	switch a.name {
	case names.MaintainerReportProgress.String():
		for _, ck := range c.checks(ln) {
			if ck.v == varWork && ck.want == 1 {
				ln.refine = refineStutter
			}
		}
	case names.CoordRecvAnswer.String():
		if ln.hasMsg && ln.msg.msg.Epoch == spec.None {
			ln.refine = refineOrStutter
		}
	case names.LogCoordExpire.String():
		if ln.first {
			ln.refine = refineOrStutter
		}
	}
	return nil
}

// rejoin is CoordRejoin from s, the coordinator taking T back at the
// epoch the line observes.
func (c *Checker) rejoin(s *spec.State, ln *line) (spec.State, bool) {
	e := rejoinEpoch(c, ln)
	gone := func(x int8) bool { return x == spec.None || x < s.Epoch }
	if e < s.CoordEpoch || e > s.Epoch || !gone(s.DrainedEpoch) || !gone(s.LegacyEpoch) {
		return spec.State{}, false
	}
	t := *s
	t.CoordEpoch, t.CoordVersion, t.CoordLiveness, t.CoordCount = e, spec.VersionUnknown, spec.Alive, spec.None
	t.Work, t.DrainedEpoch, t.LegacyEpoch = 1, spec.None, spec.None
	return t, true
}

// coordAction reports whether action is one of the coordinator's (its
// trace's lines: the Coord actions and the maintainers' reports).
func coordAction(action string) bool {
	return strings.HasPrefix(action, "Coord") || action == names.MaintainerReportProgress.String()
}

// uncoveredError is a line the model does not cover and no bound would
// explain (a coordinator restarted while its decision was outstanding,
// restartCovered): the trace is incomplete there, and msg says why.
type uncoveredError struct{ msg string }

// Error says what the model does not cover.
func (e *uncoveredError) Error() string { return e.msg }

// restartCovered checks a restarted coordinator's first line against the
// candidates before it is taken (step): an uncoveredError when some
// candidate holds a decision the new coordinator has forgotten, had sent
// STOPPING to T's running process, or had tracked a newer epoch than the
// one T rejoins with (one such candidate is enough: the line is not
// judged on the others, so no run is rejected for a candidate dropped
// here); an outsideError (rejected) when the line is not CoordRejoin. A CoordRejoin
// within a coordinator's trace (T dropped and taken back: at a new epoch
// after an upgrade, or at the same epoch after a silence) is incomplete
// the same way when its guard holds (rejoin) and T's running process is
// stopping; a rejoin its guard refuses is rejected as before. Otherwise every
// candidate takes the line as CoordRejoin, with its guard on T's epoch
// (rejoin).
func (c *Checker) restartCovered(ln *line) error {
	switch ln.refine {
	case refineRejoin:
		for i := range c.cur {
			s := &c.cur[i]
			if _, ok := c.rejoin(s, ln); ok && c.stopping(s) {
				return &uncoveredError{fmt.Sprintf("the coordinator took T back (CoordRejoin at epoch %d) while T's running process was STOPPING or a STOPPING was in flight to it (epoch %d): a real coordinator drops a member silent for its TTL and takes the same process back, and its new session hears the maintainers' work done only with T already STOPPING, which the model's maintainers never report (their report needs DRAINING) (docs/trace.md)", rejoinEpoch(c, ln), s.Epoch)}
			}
		}
		return nil
	case refineNoView:
		return &outsideError{fmt.Sprintf("%s as the first line of a restarted coordinator: a coordinator that succeeds a killed one knows nothing of T until T joins it, so its first line is CoordRejoin (docs/trace.md)",
			c.actions[ln.act].name)}
	case refineRestart:
	default:
		return nil
	}
	e := rejoinEpoch(c, ln)
	for i := range c.cur {
		s := &c.cur[i]
		switch {
		case s.DrainedEpoch != spec.None && s.DrainedEpoch >= s.Epoch:
			return &uncoveredError{fmt.Sprintf("the coordinator was restarted while its drain decision was outstanding (drainedEpoch %d, T's running process): the upgrade client may still restart T on it, and the model has no coordinator crash that forgets it (docs/trace.md)", s.DrainedEpoch)}
		case s.LegacyEpoch != spec.None && s.LegacyEpoch >= s.Epoch:
			return &uncoveredError{fmt.Sprintf("the coordinator was restarted while its legacy answer was outstanding (legacyEpoch %d, T's running process): the upgrade client may still restart T on it, and the model has no coordinator crash that forgets it (docs/trace.md)", s.LegacyEpoch)}
		case c.stopping(s):
			return &uncoveredError{fmt.Sprintf("the coordinator was restarted after it had sent STOPPING to T's running process (epoch %d): the new coordinator's session starts with the maintainers' work unknown and hears it is done only with T already STOPPING, which the model's maintainers never report (their report needs DRAINING; the model has no coordinator crash to restart a session on a stopping node) (docs/trace.md)", s.Epoch)}
		case e < s.CoordEpoch:
			return &uncoveredError{fmt.Sprintf("the restarted coordinator took T back at epoch %d, older than the epoch %d its predecessor tracked: the model's coordinator never goes back an epoch (docs/trace.md)", e, s.CoordEpoch)}
		}
	}
	return nil
}

// stopping reports whether T's running process in s is STOPPING or has a
// STOPPING command in flight to it (one a later line receives: the
// lookahead keeps only those).
func (c *Checker) stopping(s *spec.State) bool {
	if s.Liveness == spec.Stopping {
		return true
	}
	for i := 0; i < int(s.NetLen); i++ {
		if m := c.m.Msg(s.Net[i]); m.Kind == spec.KindCmd && m.Liveness == spec.Stopping && m.Epoch == s.Epoch {
			return true
		}
	}
	return false
}

// rejoinEpoch is the epoch a CoordRejoin line observes (coordEpoch).
func rejoinEpoch(c *Checker, ln *line) int8 {
	e := int8(spec.None)
	for _, ck := range c.checks(ln) {
		if ck.v == varCoordEpoch {
			e = ck.want
		}
	}
	return e
}
