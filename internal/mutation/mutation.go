package mutation

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Mutant is one mutation site: the file (from the module root), its line
// and column (1-based, in bytes) and the mutator.
type Mutant struct {
	File   string
	Line   int
	Column int
	Type   string
}

// String renders m as "file:line:column TYPE", the form of equivalent.txt.
func (m Mutant) String() string { return fmt.Sprintf("%s:%d:%d %s", m.File, m.Line, m.Column, m.Type) }

// Equivalent is an entry of equivalent.txt: a mutant that no test can
// kill, with the one-line argument why.
type Equivalent struct {
	Mutant
	// Code, if set, is the text of the mutant's line (its white space at
	// both ends trimmed): Stale requires the line at the position to be
	// that one, and names where it went when it moved.
	Code string
	Why  string
}

// ParseEquivalents reads the list: one mutant a line, "file:line:col TYPE
// `code` -- argument", where `code`, the text of the mutant's line, may be
// left out; blank lines and lines starting with # are skipped.
func ParseEquivalents(r io.Reader) ([]Equivalent, error) {
	var out []Equivalent
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bad := func() error {
			return fmt.Errorf("line %d: want \"file:line:col TYPE `code` -- argument\" (`code` optional), got %q", n, line)
		}
		site, rest, _ := strings.Cut(line, " ")
		typ, rest, _ := strings.Cut(strings.TrimLeft(rest, " "), " ")
		rest = strings.TrimLeft(rest, " ")
		code := ""
		if strings.HasPrefix(rest, "`") {
			end := strings.IndexByte(rest[1:], '`')
			if end < 0 {
				return nil, bad()
			}
			code, rest = rest[1:1+end], strings.TrimLeft(rest[2+end:], " ")
		}
		why, ok := strings.CutPrefix(rest, "-- ")
		if !ok || typ == "" || strings.TrimSpace(why) == "" {
			return nil, bad()
		}
		pos := strings.Split(site, ":")
		if len(pos) != 3 {
			return nil, fmt.Errorf("line %d: want file:line:col, got %q", n, site)
		}
		l, err1 := strconv.Atoi(pos[1])
		c, err2 := strconv.Atoi(pos[2])
		if err1 != nil || err2 != nil || l < 1 || c < 1 {
			return nil, fmt.Errorf("line %d: bad position %q", n, site)
		}
		out = append(out, Equivalent{Mutant{pos[0], l, c, typ}, code, strings.TrimSpace(why)})
	}
	return out, sc.Err()
}

// Result is one package's run: its mutants by status.
type Result struct {
	Package   string
	Killed    []Mutant
	Lived     []Mutant
	TimedOut  []Mutant
	Uncovered []Mutant
	NotViable []Mutant
	Seconds   float64
	// Population is, for a sample (internal/mutation/sample), the number
	// of mutants it was drawn from; 0 for a run of every mutant.
	Population int
}

// gremlinsJSON is the part of gremlins' -o output that is read.
type gremlinsJSON struct {
	Files []struct {
		FileName  string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
	Elapsed    float64 `json:"elapsed_time"`
	Population int     `json:"population"`
	Sampled    int     `json:"sampled"`
}

// ReadResult reads gremlins' JSON for the package pkg (its folder from the
// module root, which gremlins' file names are relative to).
func ReadResult(pkg string, r io.Reader) (Result, error) {
	var g gremlinsJSON
	if err := json.NewDecoder(r).Decode(&g); err != nil {
		return Result{}, fmt.Errorf("%s: %w", pkg, err)
	}
	res := Result{Package: pkg, Seconds: g.Elapsed}
	if g.Population > g.Sampled {
		res.Population = g.Population
	}
	for _, f := range g.Files {
		for _, m := range f.Mutations {
			mu := Mutant{path.Join(pkg, f.FileName), m.Line, m.Column, m.Type}
			switch m.Status {
			case "KILLED":
				res.Killed = append(res.Killed, mu)
			case "LIVED":
				res.Lived = append(res.Lived, mu)
			case "TIMED OUT":
				res.TimedOut = append(res.TimedOut, mu)
			case "NOT COVERED":
				res.Uncovered = append(res.Uncovered, mu)
			case "NOT VIABLE":
				res.NotViable = append(res.NotViable, mu)
			case "SKIPPED", "RUNNABLE":
			default:
				return Result{}, fmt.Errorf("%s: unknown mutant status %q", pkg, m.Status)
			}
		}
	}
	return res, nil
}

// Judged is a result with the equivalent mutants set aside.
type Judged struct {
	Result
	// Equivalent are the lived mutants the list argues equivalent.
	Equivalent []Mutant
	// Survivors are the lived mutants it does not: each needs a test.
	Survivors []Mutant
}

// Efficacy is killed (timeouts count as killed: the mutant hung the
// suite) over killed plus survivors, in percent; 100 with no mutant.
func (j Judged) Efficacy() float64 {
	killed := len(j.Killed) + len(j.TimedOut)
	if killed+len(j.Survivors) == 0 {
		return 100
	}
	return 100 * float64(killed) / float64(killed+len(j.Survivors))
}

// Interval is the 95% Wilson interval of the efficacy of the population
// a sample was drawn from, in percent (the sample's killed over killed
// plus survivors); ok is false for a run of every mutant, whose efficacy
// is exact.
func (j Judged) Interval() (lo, hi float64, ok bool) {
	if j.Population == 0 {
		return 0, 0, false
	}
	killed := len(j.Killed) + len(j.TimedOut)
	lo, hi = Wilson(killed, killed+len(j.Survivors))
	return lo, hi, true
}

// Judge sets aside the lived mutants that eq lists.
func Judge(r Result, eq []Equivalent) Judged {
	j := Judged{Result: r}
	for _, m := range r.Lived {
		if slices.ContainsFunc(eq, func(e Equivalent) bool { return e.Mutant == m }) {
			j.Equivalent = append(j.Equivalent, m)
		} else {
			j.Survivors = append(j.Survivors, m)
		}
	}
	return j
}

// operators lists, per mutator, the tokens it changes: an equivalent
// mutant's position must hold one of them.
var operators = map[string][]string{
	"CONDITIONALS_BOUNDARY":   {"<=", ">=", "<", ">"},
	"CONDITIONALS_NEGATION":   {"==", "!=", "<=", ">=", "<", ">"},
	"ARITHMETIC_BASE":         {"+", "-", "*", "/", "%"},
	"INCREMENT_DECREMENT":     {"++", "--"},
	"INVERT_NEGATIVES":        {"-"},
	"INVERT_LOGICAL":          {"&&", "||"},
	"INVERT_BITWISE":          {"&^", "&", "|", "^"},
	"INVERT_BWASSIGN":         {"&^=", "&=", "|=", "^="},
	"INVERT_ASSIGNMENTS":      {"+=", "-=", "*=", "/=", "%="},
	"INVERT_LOOPCTRL":         {"break", "continue"},
	"REMOVE_SELF_ASSIGNMENTS": {"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "&^="},
}

// Stale reports why e's mutant no longer exists under root (the module
// root), or "" if its operator is still at its position and, when e
// names its line's code, the line there is that code. A line that moved
// (an edit above it) is reported with the lines that now hold its code.
func Stale(root string, e Equivalent) string {
	ops, ok := operators[e.Type]
	if !ok {
		return "unknown mutator " + e.Type
	}
	b, err := os.ReadFile(path.Join(root, e.File))
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(string(b), "\n")
	if e.Code != "" && (e.Line > len(lines) || strings.TrimSpace(lines[e.Line-1]) != e.Code) {
		var at []string
		for i, l := range lines {
			if strings.TrimSpace(l) == e.Code {
				at = append(at, strconv.Itoa(i+1))
			}
		}
		if len(at) == 0 {
			return fmt.Sprintf("no line of the file is `%s` any more", e.Code)
		}
		return fmt.Sprintf("its line `%s` moved to line %s (update the position)", e.Code, strings.Join(at, ", "))
	}
	if e.Line > len(lines) {
		return fmt.Sprintf("the file has %d lines", len(lines))
	}
	text := lines[e.Line-1]
	if e.Column > len(text) {
		return fmt.Sprintf("line %d has %d columns", e.Line, len(text))
	}
	at := text[e.Column-1:]
	for _, op := range ops {
		if strings.HasPrefix(at, op) {
			return ""
		}
	}
	return fmt.Sprintf("no %s operator at the position (the line is %q)", e.Type, strings.TrimSpace(text))
}
