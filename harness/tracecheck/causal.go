package tracecheck

import (
	"errors"
	"fmt"
	"strconv"
)

// This file reads the stamps of a multi-process run's lines (schema
// version 2, docs/trace.md) and checks that an order of the lines
// respects happens-before: each process's lines in the order of its
// clock, every line after the lines it depends on (from), and every
// line of a process before its successor's first (after).

// stamp is a line's place in a multi-process run: its process and
// Lamport clock, the process it succeeds (on a successor's first line)
// and the lines it depends on. proc is empty for an unstamped line.
type stamp struct {
	proc  string
	clock uint64
	after string
	from  []ref
}

// ref names a line of a run: its process and clock.
type ref struct {
	proc  string
	clock uint64
}

// String renders r as PROC:CLOCK.
func (r ref) String() string { return r.proc + ":" + strconv.FormatUint(r.clock, 10) }

// splitStamp reads the stamp keys (p, c, after, from) at the start of the
// line's object into st and returns the offset of the first other key:
// the line's body, the same for every stamp, is what follows. A line
// without a stamp has st.proc empty.
func splitStamp(text []byte, st *stamp) (off int, err error) {
	p := scanner{b: text}
	// The names are those of the last line, mostly: kept, they need no
	// new string.
	proc, after := st.proc, st.after
	*st = stamp{from: st.from[:0]}
	name := func(s []byte, old string) string {
		if string(s) == old {
			return old
		}
		return string(s)
	}
	if !p.expect('{') {
		return 0, p.err
	}
	hasC := false
	for {
		off = p.i
		p.ws()
		if p.peek() != '"' {
			return off, nil
		}
		save := p.i
		k, ok := p.str()
		if !ok {
			return 0, p.err
		}
		switch string(k) {
		case "p", "after":
			if !p.expect(':') {
				return 0, p.err
			}
			s, ok := p.str()
			if !ok {
				return 0, p.err
			}
			if len(s) == 0 {
				return 0, fmt.Errorf("column %d: empty process name", p.i)
			}
			if k[0] == 'p' {
				st.proc = name(s, proc)
			} else {
				st.after = name(s, after)
			}
		case "c":
			if !p.expect(':') {
				return 0, p.err
			}
			if st.clock, ok = p.clock(); !ok {
				return 0, p.err
			}
			hasC = true
		case "from":
			if !p.expect(':') || !p.fromList(&st.from) {
				return 0, p.err
			}
		default:
			if st.proc == "" && (hasC || st.after != "" || len(st.from) > 0) {
				return 0, errors.New(`a stamped line needs "p" (its process) and "c" (its clock)`)
			}
			if st.proc != "" && !hasC {
				return 0, errors.New(`a stamped line needs "c" (its clock)`)
			}
			return save, nil
		}
		switch p.peek() {
		case ',':
			p.i++
		default:
			return 0, errors.New("a line must name its action")
		}
	}
}

// clock reads a Lamport clock: a JSON integer of at least 1.
func (p *scanner) clock() (uint64, bool) {
	p.ws()
	start := p.i
	var n uint64
	over := false
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		d := uint64(p.b[p.i] - '0')
		over = over || n > (1<<64-1-d)/10
		n = n*10 + d
		p.i++
	}
	if p.i == start || n == 0 || over || p.i-start > 1 && p.b[start] == '0' {
		p.i = start
		return 0, p.fail("want a clock (an integer from 1 to 2^64-1)")
	}
	return n, true
}

// fromList reads the array of the lines a line depends on.
func (p *scanner) fromList(out *[]ref) bool {
	if !p.expect('[') {
		return false
	}
	if p.peek() == ']' {
		p.i++
		return true
	}
	for {
		var r ref
		var hasP, hasC bool
		ok := p.object(func(k []byte) bool {
			switch string(k) {
			case "p":
				s, ok := p.str()
				if i := len(*out); i < cap(*out) && (*out)[:i+1][i].proc == string(s) {
					r.proc = (*out)[:i+1][i].proc // the name the slot held: no new string
				} else {
					r.proc = string(s)
				}
				hasP = ok && len(s) > 0
				return ok
			case "c":
				var ok bool
				r.clock, ok = p.clock()
				hasC = ok
				return ok
			}
			return p.fail("unknown key %q in from (p, c)", k)
		})
		if !ok {
			return false
		}
		if !hasP || !hasC {
			return p.fail(`a line of from needs "p" and "c"`)
		}
		*out = append(*out, r)
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return true
		default:
			return p.fail("want ',' or ']'")
		}
	}
}

// causal checks, line by line, that an order of a run's lines respects
// happens-before. It keeps per process the last clock and whether the
// process has ended (a successor started): memory in the number of
// processes, not of lines.
type causal struct {
	procs   map[string]*procState
	stamped int // lines with a stamp; a run's lines are all stamped or none
	lines   int
}

type procState struct {
	last    uint64 // the clock of its last line so far
	lines   int
	endedBy string // the successor that started, ending this process
	done    bool   // its trace has no more lines (a merge knows)
}

// exhausted records that proc's trace has no more lines: a dependency on
// a later line of it is on a line it never wrote.
func (k *causal) exhausted(proc string) {
	if k.procs == nil {
		k.procs = map[string]*procState{}
	}
	ps := k.procs[proc]
	if ps == nil {
		ps = &procState{}
		k.procs[proc] = ps
	}
	ps.done = true
}

// violation is an order that no run can have: the line, and why.
type violation struct{ msg string }

// Error returns why.
func (v *violation) Error() string { return v.msg }

// lostLine is a dependency on a line a killed process lost: the order
// cannot be checked, and neither can the model's steps from there.
type lostLine struct{ msg string }

// Error returns which line.
func (l *lostLine) Error() string { return l.msg }

// add checks the next line of the order; a violation is a *violation, a
// dependency on a killed process's lost tail a *lostLine.
func (k *causal) add(st *stamp) error {
	k.lines++
	if st.proc == "" {
		if k.stamped > 0 {
			return errors.New("a line without a stamp (p, c) in a stamped trace")
		}
		return nil
	}
	if k.stamped < k.lines-1 {
		return errors.New("a stamped line in a trace whose earlier lines have no stamp")
	}
	k.stamped++
	if k.procs == nil {
		k.procs = map[string]*procState{}
	}
	ps := k.procs[st.proc]
	if ps == nil {
		ps = &procState{}
		k.procs[st.proc] = ps
	}
	if ps.endedBy != "" {
		return &violation{fmt.Sprintf("a line of %s after its successor %s started (%s was killed or stopped)", st.proc, ps.endedBy, st.proc)}
	}
	if ps.lines > 0 && st.clock <= ps.last {
		return &violation{fmt.Sprintf("%s's clock %d after its line of clock %d: a process's lines come in the order of its clock", st.proc, st.clock, ps.last)}
	}
	if st.after != "" {
		if ps.lines > 0 {
			return &violation{fmt.Sprintf("%s names its predecessor %s on a line that is not its first", st.proc, st.after)}
		}
		pred := k.procs[st.after]
		if pred == nil {
			pred = &procState{}
			k.procs[st.after] = pred
		}
		if pred.endedBy != "" {
			return &violation{fmt.Sprintf("%s and %s both succeed %s", pred.endedBy, st.proc, st.after)}
		}
		pred.endedBy = st.proc
	}
	for _, f := range st.from {
		q := k.procs[f.proc]
		switch {
		case f.proc == st.proc:
			return &violation{fmt.Sprintf("depends on %s, a line of its own process", f)}
		case q != nil && q.lines > 0 && q.last >= f.clock:
			continue
		case q != nil && (q.endedBy != "" || q.done):
			return &lostLine{fmt.Sprintf("depends on %s, a line %s never wrote (the tail it lost when it was killed)", f, f.proc)}
		}
		return &violation{fmt.Sprintf("depends on %s, which does not come before it (a receive before its send, or a read of a state not yet written)", f)}
	}
	ps.last = st.clock
	ps.lines++
	return nil
}
