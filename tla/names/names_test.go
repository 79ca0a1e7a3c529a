package names_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/tla/names"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// module reads tla/DrainRegistration.tla without its comments.
func module(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../DrainRegistration.tla")
	if err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(`\\\*[^\n]*|\(\*(?s:.*?)\*\)`).ReplaceAllString(string(b), "")
}

var reDef = regexp.MustCompile(`(?m)^([A-Z][A-Za-z0-9_]*)(\([^)]*\))?\s*==`)

// definitions maps each operator the module defines to its body.
func definitions(mod string) map[string]string {
	defs := map[string]string{}
	locs := reDef.FindAllStringSubmatchIndex(mod, -1)
	for i, l := range locs {
		end := len(mod)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		defs[mod[l[2]:l[3]]] = mod[l[1]:end]
	}
	return defs
}

// TestVariablesMatchModule: names.Variables is the module's VARIABLES,
// in order.
func TestVariablesMatchModule(t *testing.T) {
	m := regexp.MustCompile(`VARIABLES\s+((?:[A-Za-z]+\s*,\s*)*[A-Za-z]+)`).FindStringSubmatch(module(t))
	if m == nil {
		t.Fatal("no VARIABLES in the module")
	}
	var vars []string
	for _, v := range strings.Split(m[1], ",") {
		if v = strings.TrimSpace(v); v != "" {
			vars = append(vars, v)
		}
	}
	if !slices.Equal(vars, names.Variables()) {
		t.Errorf("VARIABLES %v\nnames.Variables %v", vars, names.Variables())
	}
}

// TestBugsMatchModule: names.ModelBugs is the module's BugNames, in order.
func TestBugsMatchModule(t *testing.T) {
	m := regexp.MustCompile(`(?s)BugNames\s*==\s*\{(.*?)\}`).FindStringSubmatch(module(t))
	if m == nil {
		t.Fatal("no BugNames in the module")
	}
	var bugs []string
	for _, b := range regexp.MustCompile(`"([A-Za-z]+)"`).FindAllStringSubmatch(m[1], -1) {
		bugs = append(bugs, b[1])
	}
	if !slices.Equal(bugs, names.ModelBugs()) {
		t.Errorf("BugNames %v\nnames.ModelBugs %v", bugs, names.ModelBugs())
	}
	for _, b := range names.ImplOnlyBugs() {
		if slices.Contains(bugs, b) {
			t.Errorf("%s is implementation-only but the model has it", b)
		}
	}
}

// actors are the prefixes of the model's action names: the actor, then
// the event.
var actors = regexp.MustCompile(`^(Collector|Service|Broker|Node|Upgrade|Coord|Maintainer|LogCoord|Net)[A-Z]`)

var rePrimed = regexp.MustCompile(`\b[a-z][A-Za-z]*'`)

// TestActionsMatchModule: every names.Action is an operator of the module;
// every operator named actor + event that changes a variable is a
// names.Action or a wrapper of ones (Next's \E disjuncts); and
// ParseAction inverts String.
func TestActionsMatchModule(t *testing.T) {
	defs := definitions(module(t))
	var actionNames []string
	for _, a := range names.Actions() {
		actionNames = append(actionNames, a.String())
		if _, ok := defs[a.String()]; !ok {
			t.Errorf("names.%s is not an operator of DrainRegistration.tla", a)
		}
		if p, ok := names.ParseAction(a.String()); !ok || p != a {
			t.Errorf("ParseAction(%q) = %v, %v", a, p, ok)
		}
	}
	for _, missing := range unnamedActions(defs, actionNames) {
		t.Errorf("the module's action %s has no constant in package names", missing)
	}
	if _, ok := names.ParseAction("NoSuchAction"); ok {
		t.Error("ParseAction accepted an unknown name")
	}
}

// unnamedActions returns the module's actions (actor + event operators
// that prime a variable and call no named action) that are not in known.
func unnamedActions(defs map[string]string, known []string) []string {
	var out []string
	for name, body := range defs {
		if !actors.MatchString(name) || !rePrimed.MatchString(body) || slices.Contains(known, name) {
			continue
		}
		wrapper := false
		for _, k := range known {
			if regexp.MustCompile(`\b` + k + `\b`).MatchString(body) {
				wrapper = true
				break
			}
		}
		if !wrapper {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestUnnamedActionsCatch: the completeness check finds an action the
// constants leave out, so it cannot pass by finding nothing.
func TestUnnamedActionsCatch(t *testing.T) {
	defs := map[string]string{
		"BrokerNewStep":            "    /\\ count' = count + 1\n",
		"BrokerStepsAny":           "    \\E d \\in Dispatchers : BrokerAdmit(d)\n",
		"BrokerRefuses":            "    gateClosed[b]\n",
		"DrainReported":            "    drainedEpoch' = epoch\n",
		names.BrokerAdmit.String(): "    /\\ pc' = 1\n",
	}
	got := unnamedActions(defs, []string{names.BrokerAdmit.String()})
	if !slices.Equal(got, []string{"BrokerNewStep"}) {
		t.Errorf("unnamed actions %v, want [BrokerNewStep]", got)
	}
}

// TestRefinementsAreNotActions: the refinement steps of a full run's
// trace (docs/trace.md, "Every run") round-trip through ParseAction,
// are numbered past the model's actions and are not operators of the
// module (a step of the model would be named in Actions instead).
func TestRefinementsAreNotActions(t *testing.T) {
	defs := definitions(module(t))
	require := func(ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			t.Errorf(format, args...)
		}
	}
	require(len(names.Refinements()) > 0, "no refinement step")
	for _, a := range names.Refinements() {
		p, ok := names.ParseAction(a.String())
		require(ok && p == a, "ParseAction(%q) = %v, %v", a, p, ok)
		require(a.IsRefinement() && a >= names.NumActions, "%s is numbered among the actions", a)
		_, inModule := defs[a.String()]
		require(!inModule, "%s is an operator of the module: an action, not a refinement step", a)
	}
	for _, a := range names.Actions() {
		require(!a.IsRefinement(), "action %s reads as a refinement step", a)
	}
}
