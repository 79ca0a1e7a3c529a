package tlacfg

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"
)

// ModelValue is a TLC model value: an uninterpreted constant, equal only to
// itself (a cfg line such as `d1 = d1`, or an identifier inside a set).
type ModelValue string

// Constant is one assignment of a CONSTANTS section. Value is an int64, a
// string, a bool, a ModelValue or a []any holding those (a set, in the
// order written).
type Constant struct {
	Name  string
	Value any
	Line  int
}

// Named is a name listed under a keyword, with its line.
type Named struct {
	Name string
	Line int
}

// Config is a parsed .cfg file.
type Config struct {
	File          string
	Constants     []Constant
	Init, Next    Named
	Specification Named
	Invariants    []Named
	Properties    []Named
	Constraints   []Named
	// ActionConstraints are the ACTION_CONSTRAINT(S) names.
	ActionConstraints []Named
	// Symmetry and View are the names after SYMMETRY and VIEW (zero when
	// the file has none); each takes one name.
	Symmetry, View Named
	// ConstantsLine is the line of the first CONSTANT(S) keyword (0: the
	// file has none), where a constant the file leaves unassigned is
	// reported.
	ConstantsLine int
	// CheckDeadlock is nil when the file does not say.
	CheckDeadlock *bool
	// Unsupported lists what was parsed but has no meaning here: the
	// keyword (or "<-" for a substitution) as Name, with its line.
	Unsupported []Named
}

// Constant returns the constant called name, or false.
func (c *Config) Constant(name string) (Constant, bool) {
	for _, k := range c.Constants {
		if k.Name == name {
			return k, true
		}
	}
	return Constant{}, false
}

// Error is a syntax error at a line of a .cfg file.
type Error struct {
	File string
	Line int
	Msg  string
}

// Error formats the error as file:line: message.
func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// ParseFile reads and parses a .cfg file.
func ParseFile(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, string(b))
}

// Parse parses the text of a .cfg file; file names it in errors.
func Parse(file, text string) (*Config, error) {
	toks, err := lex(file, text)
	if err != nil {
		return nil, err
	}
	p := &parser{file: file, toks: toks, cfg: &Config{File: file}}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.cfg, nil
}

type tokKind int

const (
	tIdent tokKind = iota
	tInt
	tString
	tPunct // = , { } <- [ ] :
	tEOF
)

type token struct {
	kind tokKind
	text string
	line int
}

func lex(file, s string) ([]token, error) {
	var toks []token
	line := 1
	errf := func(format string, a ...any) error {
		return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(s[i:], `\*`):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "(*"):
			j, lines, ok := skipComment(s, i)
			if !ok {
				return nil, errf("comment (* is never closed")
			}
			i, line = j, line+lines
		case strings.HasPrefix(s[i:], "----") || strings.HasPrefix(s[i:], "===="):
			// Module-style separator lines are allowed and ignored.
			for i < len(s) && (s[i] == '-' || s[i] == '=') {
				i++
			}
		case c == '"':
			str, j, msg := lexString(s, i)
			if msg != "" {
				return nil, errf("%s", msg)
			}
			toks = append(toks, token{tString, str, line})
			i = j
		case c == '-' && i+1 < len(s) && isDigit(s[i+1]) || isDigit(c):
			j := i + 1
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			toks = append(toks, token{tInt, s[i:j], line})
			i = j
		case isIdentStart(rune(c)):
			j := i
			for j < len(s) && (isIdentStart(rune(s[j])) || isDigit(s[j])) {
				j++
			}
			toks = append(toks, token{tIdent, s[i:j], line})
			i = j
		case strings.HasPrefix(s[i:], "<-"):
			toks = append(toks, token{tPunct, "<-", line})
			i += 2
		case strings.ContainsRune("=,{}[]:", rune(c)):
			toks = append(toks, token{tPunct, string(c), line})
			i++
		default:
			return nil, errf("unexpected character %q", c)
		}
	}
	return append(toks, token{tEOF, "", line}), nil
}

// skipComment skips the (nested) block comment that opens at s[i:] and
// returns the index after it and the newlines it held; ok is false if it
// is never closed.
func skipComment(s string, i int) (next, lines int, ok bool) {
	depth := 0
	for i < len(s) {
		switch {
		case strings.HasPrefix(s[i:], "(*"):
			depth++
			i += 2
		case strings.HasPrefix(s[i:], "*)"):
			depth--
			i += 2
		default:
			if s[i] == '\n' {
				lines++
			}
			i++
		}
		if depth == 0 {
			return i, lines, true
		}
	}
	return i, lines, false
}

// lexString reads the string literal that opens at s[i] and returns its
// value and the index after it, or a message saying why it is not closed.
func lexString(s string, i int) (str string, next int, msg string) {
	j := i + 1
	var b strings.Builder
	for ; j < len(s) && s[j] != '"'; j++ {
		if s[j] == '\n' {
			return "", j, "string is not closed on its line"
		}
		if s[j] == '\\' && j+1 < len(s) {
			j++
		}
		b.WriteByte(s[j])
	}
	if j >= len(s) {
		return "", j, "string is not closed"
	}
	return b.String(), j + 1, ""
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(r rune) bool { return r == '_' || r < 128 && unicode.IsLetter(r) }

type parser struct {
	file string
	toks []token
	pos  int
	cfg  *Config
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token { t := p.toks[p.pos]; p.pos++; return t }

func (p *parser) errAt(t token, format string, a ...any) error {
	return &Error{File: p.file, Line: t.line, Msg: fmt.Sprintf(format, a...)}
}

var keywords = map[string]bool{
	"CONSTANT": true, "CONSTANTS": true, "INIT": true, "NEXT": true, "SPECIFICATION": true,
	"INVARIANT": true, "INVARIANTS": true, "PROPERTY": true, "PROPERTIES": true,
	"CONSTRAINT": true, "CONSTRAINTS": true, "ACTION_CONSTRAINT": true, "ACTION_CONSTRAINTS": true,
	"SYMMETRY": true, "VIEW": true, "CHECK_DEADLOCK": true, "POSTCONDITION": true, "ALIAS": true,
}

func (p *parser) parse() error {
	for p.peek().kind != tEOF {
		t := p.next()
		if t.kind != tIdent || !keywords[t.text] {
			return p.errAt(t, "expected a keyword such as CONSTANTS, SPECIFICATION or INVARIANTS, found %q", t.text)
		}
		switch t.text {
		case "CONSTANT", "CONSTANTS":
			if err := p.constants(t); err != nil {
				return err
			}
		case "INIT", "NEXT", "SPECIFICATION", "SYMMETRY", "VIEW":
			names, err := p.names(t)
			if err != nil {
				return err
			}
			if len(names) != 1 {
				return p.errAt(t, "%s takes exactly one name, found %d", t.text, len(names))
			}
			dst := map[string]*Named{"INIT": &p.cfg.Init, "NEXT": &p.cfg.Next, "SPECIFICATION": &p.cfg.Specification,
				"SYMMETRY": &p.cfg.Symmetry, "VIEW": &p.cfg.View}[t.text]
			if dst.Name != "" {
				return p.errAt(t, "%s given twice (first at line %d)", t.text, dst.Line)
			}
			*dst = names[0]
		case "INVARIANT", "INVARIANTS", "PROPERTY", "PROPERTIES", "CONSTRAINT", "CONSTRAINTS", "ACTION_CONSTRAINT", "ACTION_CONSTRAINTS":
			names, err := p.names(t)
			if err != nil {
				return err
			}
			switch t.text[:4] {
			case "INVA":
				p.cfg.Invariants = append(p.cfg.Invariants, names...)
			case "PROP":
				p.cfg.Properties = append(p.cfg.Properties, names...)
			case "ACTI":
				p.cfg.ActionConstraints = append(p.cfg.ActionConstraints, names...)
			default:
				p.cfg.Constraints = append(p.cfg.Constraints, names...)
			}
		case "CHECK_DEADLOCK":
			v := p.next()
			if v.kind != tIdent || v.text != "TRUE" && v.text != "FALSE" {
				return p.errAt(v, "CHECK_DEADLOCK takes TRUE or FALSE, found %q", v.text)
			}
			b := v.text == "TRUE"
			p.cfg.CheckDeadlock = &b
		default: // ALIAS, POSTCONDITION
			if _, err := p.names(t); err != nil {
				return err
			}
			p.cfg.Unsupported = append(p.cfg.Unsupported, Named{t.text, t.line})
		}
	}
	if p.cfg.Specification.Name != "" && (p.cfg.Init.Name != "" || p.cfg.Next.Name != "") {
		return &Error{File: p.file, Line: p.cfg.Specification.Line, Msg: "SPECIFICATION cannot be combined with INIT/NEXT"}
	}
	if p.cfg.Init.Name != "" && p.cfg.Next.Name == "" || p.cfg.Init.Name == "" && p.cfg.Next.Name != "" {
		line := max(p.cfg.Init.Line, p.cfg.Next.Line)
		return &Error{File: p.file, Line: line, Msg: "INIT and NEXT must be given together"}
	}
	return nil
}

// names reads the identifiers after a keyword, up to the next keyword.
func (p *parser) names(kw token) ([]Named, error) {
	var out []Named
	for {
		t := p.peek()
		if t.kind != tIdent || keywords[t.text] {
			break
		}
		p.next()
		out = append(out, Named{t.text, t.line})
	}
	if len(out) == 0 {
		return nil, p.errAt(kw, "%s names nothing", kw.text)
	}
	return out, nil
}

func (p *parser) constants(kw token) error {
	if p.cfg.ConstantsLine == 0 {
		p.cfg.ConstantsLine = kw.line
	}
	n := 0
	for {
		t := p.peek()
		if t.kind != tIdent || keywords[t.text] {
			break
		}
		p.next()
		op := p.next()
		switch op.text {
		case "=":
			v, err := p.value()
			if err != nil {
				return err
			}
			for _, k := range p.cfg.Constants {
				if k.Name == t.text {
					return p.errAt(t, "constant %s assigned twice (first at line %d)", t.text, k.Line)
				}
			}
			p.cfg.Constants = append(p.cfg.Constants, Constant{t.text, v, t.line})
		case "<-":
			r := p.next()
			if r.kind != tIdent {
				return p.errAt(r, "expected a definition name after <-, found %q", r.text)
			}
			p.cfg.Unsupported = append(p.cfg.Unsupported, Named{"<-", t.line})
		default:
			return p.errAt(op, "expected = or <- after constant %s, found %q", t.text, op.text)
		}
		n++
	}
	if n == 0 {
		return p.errAt(kw, "%s assigns nothing", kw.text)
	}
	return nil
}

func (p *parser) value() (any, error) {
	t := p.next()
	switch t.kind {
	case tInt:
		v, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, p.errAt(t, "integer %s out of range", t.text)
		}
		return v, nil
	case tString:
		return t.text, nil
	case tIdent:
		if keywords[t.text] {
			return nil, p.errAt(t, "expected a value, found keyword %s", t.text)
		}
		switch t.text {
		case "TRUE":
			return true, nil
		case "FALSE":
			return false, nil
		}
		return ModelValue(t.text), nil
	case tPunct:
		if t.text == "{" {
			set := []any{}
			if p.peek().text == "}" {
				p.next()
				return set, nil
			}
			for {
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				set = append(set, v)
				sep := p.next()
				if sep.text == "}" {
					return set, nil
				}
				if sep.text != "," {
					return nil, p.errAt(sep, "expected , or } in a set, found %q", sep.text)
				}
			}
		}
	}
	if t.kind == tEOF {
		return nil, p.errAt(t, "expected a value, found the end of the file")
	}
	return nil, p.errAt(t, "expected a value (integer, \"string\", TRUE, FALSE, model value or {set}), found %q", t.text)
}
