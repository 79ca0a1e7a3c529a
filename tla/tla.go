package tla

import (
	_ "embed"
	"regexp"
	"slices"
	"strings"
)

// Module is the text of DrainRegistration.tla.
//
//go:embed DrainRegistration.tla
var Module string

// Definition is one operator definition of the module: its name and its
// text, with the comment lines just above it.
type Definition struct {
	Name string
	Text string
}

var (
	reHead  = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(\([^)]*\))?\s*==`)
	reIdent = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// module is the parsed Module.
type module struct {
	defs  map[string]Definition
	body  map[string]string // the text without comments, for identifiers
	vars  []string
	order []string
}

func parse(text string) module {
	m := module{defs: map[string]Definition{}, body: map[string]string{}}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.HasPrefix(line, "VARIABLES") || strings.HasPrefix(line, "VARIABLE ") {
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				code := strings.TrimSpace(stripComment(lines[i]))
				for _, v := range strings.Split(code, ",") {
					if v = strings.TrimSpace(v); v != "" {
						m.vars = append(m.vars, v)
					}
				}
			}
			continue
		}
		h := reHead.FindStringSubmatch(line)
		if h == nil {
			continue
		}
		start := i
		for start > 0 && strings.HasPrefix(lines[start-1], `\*`) {
			start--
		}
		end := i + 1
		for end < len(lines) && lines[end] != "" && (lines[end][0] == ' ' || lines[end][0] == '\t') {
			end++
		}
		name := h[1]
		m.defs[name] = Definition{Name: name, Text: strings.Join(lines[start:end], "\n")}
		var code []string
		for _, l := range lines[i:end] {
			code = append(code, stripComment(l))
		}
		m.body[name] = strings.Join(code, "\n")
		m.order = append(m.order, name)
		i = end - 1
	}
	return m
}

func stripComment(line string) string {
	if k := strings.Index(line, `\*`); k >= 0 {
		return line[:k]
	}
	return line
}

var parsed = parse(Module)

// Property returns the definition of the operator name, then those of the
// operators its definition uses directly, in the module's order, and the
// variables it reads, directly or through the operators it uses, in the
// order of the module's VARIABLES. ok is false if the module does not
// define name.
func Property(name string) (defs []Definition, reads []string, ok bool) {
	return parsed.property(name)
}

func (m module) property(name string) ([]Definition, []string, bool) {
	if _, ok := m.defs[name]; !ok {
		return nil, nil, false
	}
	direct := map[string]bool{name: true}
	for _, id := range reIdent.FindAllString(m.body[name], -1) {
		if _, ok := m.defs[id]; ok {
			direct[id] = true
		}
	}
	defs := []Definition{m.defs[name]}
	for _, n := range m.order {
		if direct[n] && n != name {
			defs = append(defs, m.defs[n])
		}
	}
	read := map[string]bool{}
	seen := map[string]bool{}
	var walk func(n string)
	walk = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		for _, id := range reIdent.FindAllString(m.body[n], -1) {
			switch {
			case slices.Contains(m.vars, id):
				read[id] = true
			case m.defs[id].Name != "" && id != "vars":
				walk(id)
			}
		}
	}
	walk(name)
	var reads []string
	for _, v := range m.vars {
		if read[v] {
			reads = append(reads, v)
		}
	}
	return defs, reads, true
}
