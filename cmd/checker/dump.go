package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/drainproof/drainproof/modelcheck"
)

// varser is a model that shows a state as its TLA+ variables.
type varser[S any] interface {
	Vars(s S) [][2]string
}

// writeDump writes every distinct state of m's reachable space to path in
// the form TLC's -dump writes them ("State N:", one "/\ var = value" line
// per variable, a blank line), in breadth-first order. It is the whole
// space, as TLC -dump with -continue writes it, whatever the check found;
// states outside a CONSTRAINT or reached only by steps outside an
// ACTION_CONSTRAINT are not stored, as in TLC. Under a VIEW or a SYMMETRY
// TLC stores whichever state of a class it meets first, so the set
// depends on the order of the search: refused.
func writeDump[S any](ctx context.Context, m modelcheck.Model[S], opts modelcheck.Options, path string) (int64, error) {
	vs, ok := any(m).(varser[S])
	if !ok {
		return 0, errors.New("--dump: this model does not show its states as TLA+ variables")
	}
	if opts.UseView || opts.UseSymmetry {
		return 0, errors.New("--dump: under a VIEW or SYMMETRY the states TLC stores depend on its search order; dump the model without them")
	}
	sc, _ := any(m).(modelcheck.Constrained[S])
	ac, _ := any(m).(modelcheck.ActionConstrained[S])
	if !opts.UseConstraint {
		sc, ac = nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("--dump: %w", err)
	}
	w := bufio.NewWriter(f)
	seen := map[string]struct{}{}
	var queue []S
	var n int64
	var buf []byte
	store := func(s S) {
		if sc != nil && !sc.Constraint(s) {
			return
		}
		buf = m.Encode(buf[:0], s)
		if _, dup := seen[string(buf)]; dup {
			return
		}
		seen[string(buf)] = struct{}{}
		queue = append(queue, s)
		n++
		fmt.Fprintf(w, "State %d:\n", n)
		for _, v := range vs.Vars(s) {
			fmt.Fprintf(w, "/\\ %s = %s\n", v[0], v[1])
		}
		w.WriteString("\n")
	}
	m.Init(store)
	for len(queue) > 0 {
		if ctx.Err() != nil {
			f.Close()
			return n, ctx.Err()
		}
		s := queue[0]
		queue = queue[1:]
		m.Next(s, func(action string, t S) {
			if ac != nil && !ac.ActionConstraint(action, s, t) {
				return
			}
			store(t)
		})
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return n, fmt.Errorf("--dump: %w", err)
	}
	if err := f.Close(); err != nil {
		return n, fmt.Errorf("--dump: %w", err)
	}
	return n, nil
}

// readDump reads a state dump (TLC's -dump, or checker check --dump) as a
// set of states, each in a canonical form: its variables sorted by name,
// each value canonical (see canonValue). Two dumps hold the same states
// exactly when their sets are equal, whatever the order of the states,
// of their variables, of set elements or of function and record fields,
// and however TLC broke its long lines.
func readDump(path string) (map[string]struct{}, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]struct{}{}
	for _, block := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n\n") {
		block = strings.TrimSpace(block)
		if block == "" {
			continue
		}
		head, body, ok := strings.Cut(block, "\n")
		if !ok || !strings.HasPrefix(head, "State ") {
			return nil, fmt.Errorf("%s: a state block starts %q, not \"State N:\"", path, head)
		}
		var vars []string
		for _, part := range strings.Split(" "+strings.Join(strings.Fields(body), " "), " /\\ ")[1:] {
			name, val, ok := strings.Cut(part, " = ")
			if !ok {
				return nil, fmt.Errorf("%s: %s: %q is not \"var = value\"", path, head, part)
			}
			cv, err := canonValue(val)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %s: %w", path, head, name, err)
			}
			vars = append(vars, strings.TrimSpace(name)+"="+cv)
		}
		slices.Sort(vars)
		out[strings.Join(vars, " ")] = struct{}{}
	}
	return out, nil
}

// canonValue parses a TLA+ value as TLC prints it (integers, strings,
// TRUE and FALSE, model values, sets {…}, sequences <<…>>, records
// [f |-> v, …], functions (k :> v @@ …)) and returns a canonical spelling:
// set elements sorted, a record and a function both as a map with sorted
// keys (a record's field is the string that names it, so [r1 |-> x] and
// ("r1" :> x) and (r1 :> x) are one key).
func canonValue(s string) (string, error) {
	p := &valParser{s: s}
	v, err := p.value()
	if err != nil {
		return "", err
	}
	p.ws()
	if p.i != len(p.s) {
		return "", fmt.Errorf("trailing text %q", p.s[p.i:])
	}
	return v, nil
}

type valParser struct {
	s string
	i int
}

func (p *valParser) ws() {
	for p.i < len(p.s) && unicode.IsSpace(rune(p.s[p.i])) {
		p.i++
	}
}

func (p *valParser) eat(tok string) bool {
	p.ws()
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *valParser) value() (string, error) {
	p.ws()
	if p.i >= len(p.s) {
		return "", errors.New("a value is missing")
	}
	switch {
	case p.eat("{"):
		elems, err := p.list("}")
		if err != nil {
			return "", err
		}
		slices.Sort(elems)
		elems = slices.Compact(elems)
		return "{" + strings.Join(elems, ",") + "}", nil
	case p.eat("<<"):
		elems, err := p.list(">>")
		if err != nil {
			return "", err
		}
		return "<<" + strings.Join(elems, ",") + ">>", nil
	case p.eat("["):
		return p.pairs("|->", ",", "]")
	case p.eat("("):
		return p.pairs(":>", "@@", ")")
	case p.s[p.i] == '"':
		j := p.i + 1
		for j < len(p.s) && p.s[j] != '"' {
			if p.s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(p.s) {
			return "", errors.New("an unterminated string")
		}
		str, err := strconv.Unquote(p.s[p.i : j+1])
		if err != nil {
			return "", fmt.Errorf("string %s: %w", p.s[p.i:j+1], err)
		}
		p.i = j + 1
		return strconv.Quote(str), nil
	}
	j := p.i
	if p.s[j] == '-' {
		j++
	}
	for j < len(p.s) && (unicode.IsLetter(rune(p.s[j])) || unicode.IsDigit(rune(p.s[j])) || p.s[j] == '_') {
		j++
	}
	if j == p.i {
		return "", fmt.Errorf("unexpected %q", p.s[p.i:min(len(p.s), p.i+10)])
	}
	tok := p.s[p.i:j]
	p.i = j
	return tok, nil // an integer, TRUE, FALSE or a model value
}

// list reads values separated by commas up to end.
func (p *valParser) list(end string) ([]string, error) {
	var out []string
	if p.eat(end) {
		return out, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if p.eat(end) {
			return out, nil
		}
		if !p.eat(",") {
			return nil, fmt.Errorf("want , or %s at %q", end, p.s[p.i:min(len(p.s), p.i+10)])
		}
	}
}

// pairs reads key arrow value pairs separated by sep up to end, as a map
// with keys unquoted and sorted.
func (p *valParser) pairs(arrow, sep, end string) (string, error) {
	var out []string
	if p.eat(end) {
		return "map()", nil
	}
	for {
		k, err := p.value()
		if err != nil {
			return "", err
		}
		if uq, err := strconv.Unquote(k); err == nil {
			k = uq
		}
		if !p.eat(arrow) {
			return "", fmt.Errorf("want %s after %s", arrow, k)
		}
		v, err := p.value()
		if err != nil {
			return "", err
		}
		out = append(out, k+":"+v)
		if p.eat(end) {
			slices.Sort(out)
			return "map(" + strings.Join(out, ",") + ")", nil
		}
		if !p.eat(sep) {
			return "", fmt.Errorf("want %s or %s at %q", sep, end, p.s[p.i:min(len(p.s), p.i+10)])
		}
	}
}
