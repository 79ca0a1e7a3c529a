package layout

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const module = "github.com/drainproof/drainproof"

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
}

// listPackages returns every package of the module with its non-test
// imports (tests may import across roles: a product test may validate its
// trace with the harness).
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-pgo=off", "-json=ImportPath,Imports", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// role names the folder a package of ours belongs to ("" for the
// standard library and other modules).
func role(path string) string {
	path, _, _ = strings.Cut(path, " ") // "p [q]": p built for q (a profile, a test)
	rel, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return ""
	}
	switch {
	case rel == "tla/names":
		return "names"
	case rel == "tla/tlacfg":
		return "tlacfg"
	case rel == "tla":
		return "tla"
	case strings.HasPrefix(rel, "spec"):
		return "spec"
	}
	return strings.SplitN(rel, "/", 2)[0]
}

// allowed lists, for each role, the roles of ours it may import.
var allowed = map[string][]string{
	"impl":       {"impl", "names"},
	"modelcheck": {},
	"tlacfg":     {},
	"names":      {},
	"tla":        {},
	"spec":       {"spec", "names"},
	"harness":    {"harness", "impl", "spec", "names", "tla", "tlacfg", "modelcheck"},
	"internal":   {"internal"},
	"cmd":        {"cmd", "harness", "impl", "spec", "names", "tla", "tlacfg", "modelcheck"},
}

// violations returns the imports of pkgs that break the rules.
func violations(pkgs []pkg) []string {
	var bad []string
	for _, p := range pkgs {
		from := role(p.ImportPath)
		ok, known := allowed[from]
		if !known {
			bad = append(bad, p.ImportPath+": a folder with no role (add it to the layout test and docs/ARCHITECTURE.md)")
			continue
		}
		for _, imp := range p.Imports {
			to := role(imp)
			if to != "" && !slices.Contains(ok, to) {
				bad = append(bad, p.ImportPath+" imports "+imp+" ("+from+" may not import "+to+")")
			}
		}
	}
	return bad
}

// TestImportRules: the tree keeps its roles apart.
func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; expected the whole module", len(pkgs))
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// TestImportRulesCatch: the check itself rejects the imports it exists
// to stop, so it cannot pass by checking nothing.
func TestImportRulesCatch(t *testing.T) {
	for _, bad := range []pkg{
		{module + "/impl/eventservice", []string{module + "/harness/tracecheck"}},
		{module + "/impl/node", []string{module + "/spec"}},
		{module + "/modelcheck", []string{module + "/spec"}},
		{module + "/spec", []string{module + "/modelcheck"}},
		{module + "/tla/tlacfg", []string{module + "/tla"}},
		{module + "/internal/docs", []string{module + "/impl/store"}},
		{module + "/newfolder/x", nil},
	} {
		if len(violations([]pkg{bad})) == 0 {
			t.Errorf("%s importing %v passed the rules", bad.ImportPath, bad.Imports)
		}
	}
	fine := pkg{module + "/harness/sim", []string{module + "/impl/store", "fmt", "github.com/cockroachdb/pebble/v2"}}
	if v := violations([]pkg{fine}); len(v) > 0 {
		t.Errorf("a harness package importing the product was refused: %v", v)
	}
}
