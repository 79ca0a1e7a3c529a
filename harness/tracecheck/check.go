package tracecheck

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/drainproof/drainproof/spec"
)

// Options bound the search.
type Options struct {
	// MaxCandidates bounds the candidate set; a trace that needs more is
	// incomplete. 0 means DefaultMaxCandidates.
	MaxCandidates int
}

// DefaultMaxCandidates is the default of Options.MaxCandidates.
const DefaultMaxCandidates = 4096

// Checker validates one trace, line by line, against one model: it holds
// the set of model states that agree with the lines so far (the
// candidates), deduplicated by fingerprint. It is not safe for concurrent
// use.
type Checker struct {
	m           *spec.Model
	opts        Options
	actions     []actionDef
	actionIdx   nameIndex
	dispatchers []string
	brokers     []string
	versions    []spec.Version

	cur, next []spec.State
	arena     []check             // the observed values of the lines parsed (line.ck0, ck1)
	seen      map[uint64]struct{} // fingerprints of next, once it is large
	seed      maphash.Seed
	maxCands  int
	maxEpoch  int8
	maxMsgs   int
	maxReg    int

	lose        actionDef  // the environment's loss of a message
	loseReg     actionDef  // the environment's loss of a REGISTER
	unnamedSend bool       // a step sent a message its line does not name
	sessions    bool       // the refinement mapping of a full run (refine.go)
	scratch     spec.State // the state an environment step is taken from
}

// smallSet is the size up to which the candidate set is deduplicated by
// comparing states; beyond it, by fingerprint.
const smallSet = 8

// NewChecker returns a checker at the model's initial state.
func NewChecker(m *spec.Model, opts Options) (*Checker, error) {
	if opts.MaxCandidates <= 0 {
		opts.MaxCandidates = DefaultMaxCandidates
	}
	acts, err := boundActions(m)
	if err != nil {
		return nil, err
	}
	acts = append(slices.Clip(acts), refinementDefs()...) // a copy: the bound actions are shared
	c := &Checker{m: m, opts: opts, actions: acts,
		dispatchers: m.Config().Dispatchers, brokers: m.Config().Brokers, seen: map[uint64]struct{}{}, seed: maphash.MakeSeed(),
		maxEpoch: int8(m.Config().MaxEpoch), maxMsgs: m.Config().MaxMsgs, maxReg: m.Config().MaxReg}
	names := make([]string, len(acts))
	for i, a := range acts {
		names[i] = a.name
		switch a.name {
		case loseAction:
			c.lose = a
		case loseRegAction:
			c.loseReg = a
		}
	}
	c.actionIdx = newNameIndex(names)
	if c.lose.msg == nil || c.loseReg.pair == nil {
		return nil, fmt.Errorf("tracecheck: spec has no action %s(m) or %s(d, b)", loseAction, loseRegAction)
	}
	for _, v := range m.Config().Versions {
		if ver, ok := spec.ParseVersion(v); ok {
			c.versions = append(c.versions, ver)
		}
	}
	s := m.InitState()
	normalize(&s)
	c.cur = append(c.cur, s)
	return c, nil
}

// Candidates returns the number of states that agree with the lines so
// far.
func (c *Checker) Candidates() int { return len(c.cur) }

// MaxCandidates returns the largest candidate set seen so far.
func (c *Checker) MaxCandidates() int { return c.maxCands }

// boundError is a line that a larger bound would explain (a count past
// -MaxReg..MaxReg, an integer past the Go transcription's int8 values,
// more candidates than --max-candidates): the trace is incomplete, not
// rejected, and msg names the bound.
type boundError struct{ msg string }

// Error returns the bound the trace leaves.
func (e *boundError) Error() string { return e.msg }

// outsideError is a line that no bound could make valid: an epoch past
// the header's MaxEpoch, more messages in flight than MaxMsgs (no state
// of the model with the header's constants has it, and TLC's trace spec
// rejects it too), or a restarted coordinator whose first line is not
// CoordRejoin (the refinement mapping's rule; TLC does not read the
// stamps that say a process restarted). The trace is rejected there.
type outsideError struct{ msg string }

// Error says why no bound explains the line.
func (e *outsideError) Error() string { return e.msg }

// lineEpoch returns the largest epoch the line names (a saturated 127
// for one past the int8 range).
func (c *Checker) lineEpoch(ln *line) int8 {
	e := int8(-1)
	if ln.hasMsg {
		e = max(e, ln.msg.msg.Epoch)
	}
	if ln.hasReply {
		e = max(e, ln.reply.msg.Epoch)
	}
	for _, ck := range c.checks(ln) {
		if isEpoch(ck) {
			e = max(e, ck.want)
		}
	}
	return e
}

// step applies the compiled line to the candidates. It returns false when
// no candidate explains it (the candidates are left as they were).
func (c *Checker) step(ln *line) (ok bool, err error) {
	c.unnamedSend = false
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprint(r)
			if strings.Contains(msg, "MaxReg") {
				msg += fmt.Sprintf(" (the header's MaxReg = %d; a larger MaxReg would explain the line)", c.maxReg)
			}
			ok, err = false, &boundError{msg}
		}
	}()
	if ln.pastEpochs {
		return false, &outsideError{fmt.Sprintf("the line names epoch %d, past the header's MaxEpoch = %d: no state of the model has it", c.lineEpoch(ln), c.maxEpoch)}
	}
	if ln.peak > int32(c.maxMsgs) {
		return false, &outsideError{fmt.Sprintf("%d messages are in flight at this line, each received by a later line, past the header's MaxMsgs = %d: the model's network holds at most %d",
			ln.peak, c.maxMsgs, c.maxMsgs)}
	}
	if ln.pastRange {
		return false, &boundError{"an integer past -128..127, the range of the Go transcription's values (a wider type would explain the line; TLC's integers have no bound)"}
	}
	if err := c.restartCovered(ln); err != nil {
		return false, err
	}
	c.next = c.next[:0]
	clear(c.seen)
	for i := range c.cur {
		s := &c.cur[i]
		c.apply(s, ln)
		if len(c.next) > c.opts.MaxCandidates {
			return false, &boundError{fmt.Sprintf("more than %d candidate states (--max-candidates; a larger bound may explain the trace)", c.opts.MaxCandidates)}
		}
	}
	if len(c.next) == 0 {
		return false, nil
	}
	c.cur, c.next = c.next, c.cur
	c.maxCands = max(c.maxCands, len(c.cur))
	return true, nil
}

// apply adds to c.next every successor of s by the line's action (with
// its parameters) that agrees with the line's observations, and reports
// whether there was one.
func (c *Checker) apply(s *spec.State, ln *line) bool {
	found := false
	c.successors(s, ln, func(t spec.State) {
		normalize(&t)
		if !agrees(&t, c.checks(ln)) {
			return
		}
		if ln.lose {
			if ln.isSendReg {
				t = c.loseRegister(t, int(ln.idx), int(ln.b))
			} else {
				t = c.loseMsg(t, ln.sentMsg())
			}
		}
		c.add(t)
		found = true
	})
	return found
}

// loseRegister is the environment's loss of REGISTER(d, b) (the model's
// NetLoseRegister) from t.
func (c *Checker) loseRegister(t spec.State, d, b int) spec.State {
	c.scratch = t // not a local: its address, passed to a func value, would escape
	if v, ok := c.loseReg.pair(&c.scratch, d, b); ok {
		return v
	}
	return t
}

// loseMsg is the environment's loss of msg (the model's NetLose) from t.
func (c *Checker) loseMsg(t spec.State, msg spec.Msg) spec.State {
	for i := 0; i < int(t.NetLen); i++ {
		if c.m.Msg(t.Net[i]) == msg {
			c.scratch = t
			if v, ok := c.lose.msg(&c.scratch, t.Net[i]); ok {
				return v
			}
		}
	}
	return t
}

// successors calls f for every successor of s by the line's action whose
// parameters match the line's.
func (c *Checker) successors(s *spec.State, ln *line, f func(t spec.State)) {
	a := &c.actions[ln.act]
	switch ln.refine {
	case refineStutter:
		f(*s)
		return
	case refineOrStutter:
		defer f(*s)
	}
	switch a.shape {
	case shapeRefine:
		if t, ok := c.rejoin(s, ln); ok {
			f(t)
		}
	case shapeNullary:
		if t, ok := a.nullary(s); ok && c.sendsAsSaid(s, &t, ln.hasMsg, &ln.msg) {
			f(t)
		}
	case shapeIndex:
		lo, hi := 0, len(c.dispatchers)
		if a.param == "b" {
			hi = len(c.brokers)
		}
		if ln.hasIdx {
			lo, hi = int(ln.idx), int(ln.idx)+1
		}
		for d := lo; d < hi; d++ {
			if t, ok := a.index(s, d); ok {
				f(t)
			}
		}
	case shapePair:
		dlo, dhi := 0, len(c.dispatchers)
		if ln.hasIdx {
			dlo, dhi = int(ln.idx), int(ln.idx)+1
		}
		blo, bhi := 0, len(c.brokers)
		if ln.hasB {
			blo, bhi = int(ln.b), int(ln.b)+1
		}
		for d := dlo; d < dhi; d++ {
			for b := blo; b < bhi; b++ {
				if t, ok := a.pair(s, d, b); ok {
					f(t)
				}
			}
		}
	case shapeVersion:
		for _, v := range c.versions {
			if ln.hasV && ln.v != v {
				continue
			}
			if t, ok := a.version(s, v); ok {
				f(t)
			}
		}
	case shapeRecv, shapeMsg:
		for i := 0; i < int(s.NetLen); i++ {
			id := s.Net[i]
			if ln.hasMsg && !ln.msg.matches(c.m.Msg(id)) {
				continue
			}
			if a.shape == shapeMsg {
				if t, ok := a.msg(s, id); ok {
					f(t)
				}
				continue
			}
			for keep := int8(0); keep < 2; keep++ {
				if ln.keep >= 0 && ln.keep != keep {
					continue
				}
				if t, ok := a.recv(s, id, keep == 1); ok && c.repliesAsSaid(s, &t, ln) {
					f(t)
				}
			}
		}
	}
}

// sendsAsSaid reports whether the step s -> t sent the message the line
// names (has), or none if it names none; a step that sends a message the
// line does not name is noted in c.unnamedSend.
func (c *Checker) sendsAsSaid(s, t *spec.State, has bool, mp *msgPattern) bool {
	for i := 0; i < int(t.NetLen); i++ {
		if id := t.Net[i]; !netHas(s, id) {
			if !has {
				c.unnamedSend = true
				return false
			}
			return mp.matches(c.m.Msg(id))
		}
	}
	return !has
}

// repliesAsSaid reports whether a receive's step s -> t replied as the
// line says: the reply it names is in
// flight after the step, and the step added no other message (as
// TraceDrainRegistration.tla's ReplyAsSaid). Being in flight is not
// enough: another message already in flight would pass for a reply the
// model did not send. A reply equal to a message already in flight adds
// nothing, so nothing else is required of it.
func (c *Checker) repliesAsSaid(s, t *spec.State, ln *line) bool {
	if !ln.hasReply {
		return true
	}
	named := false
	for i := 0; i < int(t.NetLen); i++ {
		mid := t.Net[i]
		if c.m.Msg(mid) == ln.reply.msg {
			named = true
			continue
		}
		if !netHas(s, mid) {
			return false // a message the step sent that is not the named reply
		}
	}
	return named
}

func netHas(s *spec.State, id uint16) bool {
	for i := 0; i < int(s.NetLen); i++ {
		if s.Net[i] == id {
			return true
		}
	}
	return false
}

// agrees reports whether t has every observed value.
func agrees(t *spec.State, checks []check) bool {
	for _, ck := range checks {
		if getVar(t, ck.v, int(ck.idx)) != ck.want {
			return false
		}
	}
	return true
}

// add puts t in c.next unless a state with its fingerprint is there.
func (c *Checker) add(t spec.State) {
	if len(c.next) < smallSet {
		for i := range c.next {
			if c.next[i] == t {
				return
			}
		}
		c.next = append(c.next, t)
		return
	}
	if len(c.seen) == 0 {
		for i := range c.next {
			c.seen[maphash.Comparable(c.seed, c.next[i])] = struct{}{}
		}
	}
	fp := maphash.Comparable(c.seed, t)
	if _, dup := c.seen[fp]; dup {
		return
	}
	c.seen[fp] = struct{}{}
	c.next = append(c.next, t)
}
