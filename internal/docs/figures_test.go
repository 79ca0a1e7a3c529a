package docs

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/drainproof/drainproof/harness/drainmodel"
	"github.com/drainproof/drainproof/modelcheck"
	drainspec "github.com/drainproof/drainproof/spec"
	"github.com/drainproof/drainproof/tla"
	"github.com/drainproof/drainproof/tla/tlacfg"
)

// reViolatedIn is a figure docs/protocol.md quotes from the checker: "our
// model finds `DrainSafety` violated in 20 states
// (`tla/MCDrainRegistrationVariantH.cfg`".
var reViolatedIn = regexp.MustCompile("`(\\w+)`\\s+violated\\s+in\\s+(\\d+)\\s+states\\s+\\(`(tla/[\\w.]+\\.cfg)`")

// section returns the text of section n of docs/protocol.md.
func section(t *testing.T, text string, n int) string {
	t.Helper()
	start := regexp.MustCompile(`(?m)^## ` + strconv.Itoa(n) + `\. `).FindStringIndex(text)
	if start == nil {
		t.Fatalf("%s has no section %d", protocol, n)
	}
	rest := text[start[1]:]
	if end := regexp.MustCompile(`(?m)^## `).FindStringIndex(rest); end != nil {
		rest = rest[:end[0]]
	}
	return rest
}

// Each counterexample length docs/protocol.md quotes is the one the
// checker finds now (one worker, as checker check --workers 1 and checker
// verify run a safety violation: a shortest counterexample).
func TestProtocolCounterexampleFigures(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, protocol))
	if err != nil {
		t.Fatal(err)
	}
	quoted := reViolatedIn.FindAllStringSubmatch(string(b), -1)
	if len(quoted) == 0 {
		t.Fatalf("%s quotes no \"`P` violated in N states (`tla/X.cfg`\": the pattern no longer matches it", protocol)
	}
	for _, q := range quoted {
		property, cfg := q[1], q[3]
		states, _ := strconv.Atoi(q[2])
		m, opts, err := drainmodel.Load(filepath.Join(root, cfg), true)
		if err != nil {
			t.Fatal(err)
		}
		opts.Workers = 1
		res, err := modelcheck.Check(context.Background(), m, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Violated != property || len(res.Trace) != states {
			t.Errorf("%s says %s is violated in %d states of %s; the checker finds %q violated in %d (checker check --config %s --workers 1)",
				protocol, property, states, cfg, res.Violated, len(res.Trace), cfg)
		}
	}
}

// §15 lists what the model checks: the safety invariants are those the
// default model (tla/MCDrainRegistration.cfg) checks, the action and
// liveness properties those the model defines, and every other invariant
// the model defines is a part of a listed one (DrainSafetyClosed of
// DrainSafety, say).
func TestProtocolListsWhatTheModelChecks(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, protocol))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(strings.Fields(section(t, string(b), 15)), " ")
	m := regexp.MustCompile(`the safety invariants (.*?); the action properties (.*?); the liveness propert(?:y|ies) (.*?)\.`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%s §15 no longer reads \"the safety invariants …; the action properties …; the liveness property …\": %s", protocol, s)
	}
	names := func(text string) []string {
		var out []string
		for _, n := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(text, -1) {
			out = append(out, n[1])
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	cfg, err := tlacfg.ParseFile(filepath.Join(root, "tla", "MCDrainRegistration.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	var checked []string
	for _, inv := range cfg.Invariants {
		checked = append(checked, inv.Name)
	}
	model, err := drainspec.New(drainspec.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what       string
		doc, model []string
	}{
		{"safety invariants (tla/MCDrainRegistration.cfg's INVARIANTS)", names(m[1]), sorted(checked)},
		{"action properties", names(m[2]), sorted(model.ActionProperties())},
		{"liveness properties", names(m[3]), sorted(model.LivenessProperties())},
	} {
		if !slices.Equal(c.doc, c.model) {
			t.Errorf("%s §15 lists the %s %v; the model has %v", protocol, c.what, c.doc, c.model)
		}
	}
	listed := names(m[1])
	for _, inv := range model.Invariants() {
		if slices.Contains(listed, inv) {
			continue
		}
		part := false
		for _, l := range listed {
			defs, _, _ := tla.Property(l)
			part = part || slices.ContainsFunc(defs, func(d tla.Definition) bool { return d.Name == inv })
		}
		if !part {
			t.Errorf("%s §15 leaves out the invariant %s, which is no part of a listed one", protocol, inv)
		}
	}
}
