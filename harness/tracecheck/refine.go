package tracecheck

import (
	"fmt"

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

// The refinement a line takes (line.refine).
const (
	refineNone      = iota
	refineStutter   // the line is a stutter step of the model
	refineOrStutter // the line is the model's step or a stutter step
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
				return nil
			}
		}
		return fmt.Errorf("%s must observe coordEpoch, the epoch T rejoins with", a.name)
	}
	if !c.sessions {
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
	e := int8(spec.None)
	for _, ck := range c.checks(ln) {
		if ck.v == varCoordEpoch {
			e = ck.want
		}
	}
	gone := func(x int8) bool { return x == spec.None || x < s.Epoch }
	if e < s.CoordEpoch || e > s.Epoch || !gone(s.DrainedEpoch) || !gone(s.LegacyEpoch) {
		return spec.State{}, false
	}
	t := *s
	t.CoordEpoch, t.CoordVersion, t.CoordLiveness, t.CoordCount = e, spec.VersionUnknown, spec.Alive, spec.None
	t.Work, t.DrainedEpoch, t.LegacyEpoch = 1, spec.None, spec.None
	return t, true
}
