package modelcheck

import (
	"fmt"
	"io"
	"strings"
)

// rebuild turns the log chain ending at r into a trace: it follows parent
// refs back to an initial state, then replays the model forwards, at each
// step choosing the successor whose fingerprint is the next one on the
// chain. Only fingerprints were stored; the states are recomputed.
func (c *checker[S]) rebuild(r ref) []Step[S] {
	var fps [][2]uint64
	for r != noParent {
		fp, hi, parent := c.set.entry(r)
		fps = append(fps, [2]uint64{fp, hi})
		r = parent
	}
	for i, j := 0, len(fps)-1; i < j; i, j = i+1, j-1 {
		fps[i], fps[j] = fps[j], fps[i]
	}
	var (
		buf   []byte
		trace []Step[S]
		found bool
		cur   S
	)
	c.m.Init(func(s S) {
		if found {
			return
		}
		var fp, hi uint64
		if buf, fp, hi = c.key(buf, s); [2]uint64{fp, hi} == fps[0] {
			cur, found = s, true
		}
	})
	if !found {
		panic("modelcheck: cannot replay the counterexample: the model's Init is not deterministic")
	}
	trace = append(trace, Step[S]{Action: "Init", Label: "Init", State: cur})
	for _, want := range fps[1:] {
		found = false
		var next S
		var action string
		c.m.Next(cur, func(a string, t S) {
			if found {
				return
			}
			var fp, hi uint64
			if buf, fp, hi = c.key(buf, t); [2]uint64{fp, hi} == want && c.inModel(a, cur, t) {
				next, action, found = t, a, true
			}
		})
		if !found {
			panic("modelcheck: cannot replay the counterexample: the model's Next is not deterministic")
		}
		trace = append(trace, Step[S]{Action: action, Label: c.label(action, cur, next), State: next})
		cur = next
	}
	return trace
}

func (c *checker[S]) label(action string, from, to S) string {
	if d, ok := c.m.(Describer[S]); ok {
		return d.Describe(action, from, to)
	}
	return action
}

// WriteTrace prints a trace for people: numbered steps, each with its
// label, then the variables that step changed (all of them for the first
// state). Models that do not implement VarLister print the whole state
// with %+v. loopStart >= 0 marks where a liveness lasso's loop begins; it
// is WriteLasso without the label of the closing step.
func WriteTrace[S any](w io.Writer, m Model[S], trace []Step[S], loopStart int) error {
	return writeTrace(w, m, trace, loopStart, "", false)
}

// WriteLasso is WriteTrace for a liveness counterexample: after the last
// state it prints TLC's closing line, "Back to state N: <loopLabel>" (N
// counts from 1, as the steps do), or "Stuttering" when loopLabel is empty
// and the last state repeats forever.
func WriteLasso[S any](w io.Writer, m Model[S], trace []Step[S], loopStart int, loopLabel string) error {
	return writeTrace(w, m, trace, loopStart, loopLabel, true)
}

func writeTrace[S any](w io.Writer, m Model[S], trace []Step[S], loopStart int, loopLabel string, labelled bool) error {
	vl, hasVars := m.(VarLister[S])
	var prev [][2]string
	var b strings.Builder
	for i, st := range trace {
		marker := ""
		if loopStart >= 0 && i == loopStart {
			marker = "   <- loop starts here"
		}
		fmt.Fprintf(&b, "%3d  %s%s\n", i+1, st.Label, marker)
		if !hasVars {
			fmt.Fprintf(&b, "       %+v\n", st.State)
			continue
		}
		vars := vl.Vars(st.State)
		width := 0
		for _, v := range vars {
			width = max(width, len(v[0]))
		}
		for j, v := range vars {
			if prev != nil && j < len(prev) && prev[j] == v {
				continue
			}
			fmt.Fprintf(&b, "       %-*s = %s\n", width, v[0], v[1])
		}
		prev = vars
	}
	switch {
	case loopStart < 0:
	case !labelled:
		fmt.Fprintf(&b, "%3d  Back to state %d\n", len(trace)+1, loopStart+1)
	case loopLabel == "":
		fmt.Fprintf(&b, "%3d  Stuttering\n", len(trace)+1)
	default:
		fmt.Fprintf(&b, "%3d  Back to state %d: %s\n", len(trace)+1, loopStart+1, loopLabel)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
