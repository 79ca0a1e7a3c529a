package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drainproof/drainproof/tla/names"
)

// mappingDoc is the one place the model-to-Go mapping is written in
// prose; mappingFrom and mappingTo bound its tables.
const (
	mappingDoc  = "tla/README.md"
	mappingFrom = "## Names: TLA+ to Go"
	mappingTo   = "## Findings"
)

// declared collects what the Go code of the given folders declares: the
// qualifiers (packages and types), "qualifier.name" for each member (the
// package's or the type's), and each member's bare name.
type declared struct {
	quals, members, names map[string]bool
}

func newDeclared() declared {
	return declared{quals: map[string]bool{}, members: map[string]bool{}, names: map[string]bool{}}
}

func declarations(t *testing.T, dirs ...string) declared {
	t.Helper()
	d := newDeclared()
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			d.file(f)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func (d declared) add(qual, name string) {
	d.names[name] = true
	if qual != "" {
		d.members[qual+"."+name] = true
		d.quals[qual] = true
	}
}

func (d declared) file(f *ast.File) {
	pkg := f.Name.Name
	d.quals[pkg] = true
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			qual := pkg
			if decl.Recv != nil && len(decl.Recv.List) == 1 {
				qual = recvType(decl.Recv.List[0].Type)
			}
			d.add(qual, decl.Name.Name)
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					d.add(pkg, spec.Name.Name)
					d.quals[spec.Name.Name] = true
					if st, ok := spec.Type.(*ast.StructType); ok {
						for _, fld := range st.Fields.List {
							for _, n := range fld.Names {
								d.add(spec.Name.Name, n.Name)
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						d.add(pkg, n.Name)
					}
				}
			}
		}
	}
}

// recvType is the name of a method's receiver type.
func recvType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvType(e.X)
	case *ast.IndexExpr:
		return recvType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

var (
	reBacktick = regexp.MustCompile("`([^`]+)`")
	reDotted   = regexp.MustCompile(`\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?`)
	reTLAName  = regexp.MustCompile(`^([A-Z]\w*)(\(.*\))?$`)
	reFileName = regexp.MustCompile(`\.(tla|cfg|go|md|json|ndjson)\b`)
)

// staleInMapping returns the identifiers the mapping's Go columns cite
// that the code does not declare, and the TLA+ names in its first column
// that are neither actions nor operators of the module.
func staleInMapping(doc string, d declared, tlaDefs map[string]bool) []string {
	i := strings.Index(doc, mappingFrom)
	j := strings.Index(doc, mappingTo)
	if i < 0 || j < i {
		return []string{"the mapping's tables (" + mappingFrom + " ... " + mappingTo + ") are missing"}
	}
	var stale []string
	for _, row := range strings.Split(doc[i:j], "\n") {
		if !strings.HasPrefix(row, "| ") || strings.HasPrefix(row, "|---") {
			continue
		}
		cols := strings.Split(row, " | ")
		for _, m := range reBacktick.FindAllStringSubmatch(cols[0], -1) {
			if n := reTLAName.FindStringSubmatch(m[1]); n != nil && !tlaDefs[n[1]] && n[1] != placeholder {
				stale = append(stale, "TLA+ "+m[1])
			}
		}
		for _, col := range cols[1:] {
			for _, m := range reBacktick.FindAllStringSubmatch(col, -1) {
				if reFileName.MatchString(m[1]) {
					continue
				}
				stale = append(stale, staleDotted(m[1], d)...)
			}
		}
	}
	return stale
}

// staleDotted checks each qualified name of a cited Go expression: a
// member of a package or a type of ours must be declared there; a member
// reached through a local variable (b in b.countGate) must be declared on
// some type. Standard library members (Load, Swap) are not ours to check.
func staleDotted(expr string, d declared) []string {
	var stale []string
	for _, m := range reDotted.FindAllStringSubmatch(expr, -1) {
		a, b, c := m[1], m[2], m[3]
		switch {
		case b == placeholder:
			continue
		case d.quals[a] && !d.members[a+"."+b]:
			stale = append(stale, "Go "+a+"."+b+" (in `"+expr+"`)")
			continue
		case !d.quals[a] && isLocal(a) && !d.names[b] && !stdMember[b]:
			stale = append(stale, "Go ."+b+" (in `"+expr+"`)")
			continue
		}
		if c != "" && d.quals[b] && !d.members[b+"."+c] {
			stale = append(stale, "Go "+b+"."+c+" (in `"+expr+"`)")
		}
	}
	return stale
}

// isLocal tells a receiver or local variable (b, s, d, cfg) from a
// qualifier that is not ours (atomic, context).
func isLocal(a string) bool { return len(a) <= 3 && strings.ToLower(a) == a }

// stdMember are the standard library's methods the mapping cites on our
// fields (sync/atomic's).
var stdMember = map[string]bool{"Load": true, "Store": true, "Swap": true, "CompareAndSwap": true, "Or": true, "Add": true}

// placeholder is the mapping's name for any action ("every action A(d)").
const placeholder = "A"

// tlaDefinitions returns the module's operators, constants and the
// model's action names.
func tlaDefinitions(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "tla/DrainRegistration.tla"))
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z]\w*)(\([^)]*\))?\s*==`).FindAllStringSubmatch(string(b), -1) {
		defs[m[1]] = true
	}
	for _, a := range names.Actions() {
		defs[a.String()] = true
	}
	for _, a := range names.Refinements() { // the steps of a full run's refinement mapping (docs/trace.md)
		defs[a.String()] = true
	}
	return defs
}

// TestMappingIsCurrent: every Go identifier the model-to-Go mapping cites
// exists, and every TLA+ name in its first column is an action or an
// operator of the module, so a rename or a removed action fails here.
func TestMappingIsCurrent(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, mappingDoc))
	if err != nil {
		t.Fatal(err)
	}
	d := declarations(t, "impl", "spec", "harness", "modelcheck")
	for _, s := range staleInMapping(string(doc), d, tlaDefinitions(t)) {
		t.Errorf("%s: %s does not exist", mappingDoc, s)
	}
}

// TestMappingCheckCatches: the check finds a renamed method, a missing
// field and a TLA+ action the module does not have.
func TestMappingCheckCatches(t *testing.T) {
	d := newDeclared()
	d.quals["eventservice"], d.quals["Service"] = true, true
	d.add("eventservice", "Service")
	d.add("Service", "Report")
	d.add("Service", "closed")
	doc := mappingFrom + "\n| TLA+ | Go |\n|---|---|\n" +
		"| `ServiceStartReport` | `eventservice.Service.Report`, `Service.closed` |\n" +
		"| `CollectorRegister(d)` | `Service.Observe`, `b.countGate.Load()`, `s.closed.Load()` |\n" + mappingTo
	got := staleInMapping(doc, d, map[string]bool{"ServiceStartReport": true})
	want := []string{"TLA+ CollectorRegister(d)", "Go Service.Observe (in `Service.Observe`)", "Go .countGate (in `b.countGate.Load()`)"}
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("stale %q, want %q", got, want)
	}
}
