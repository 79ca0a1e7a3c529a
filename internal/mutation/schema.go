package mutation

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/tools/go/packages"
)

// SchemaEnv is the environment variable a schema binary reads at start:
// the number of the mutant it runs (none, the original program, when it
// is unset or 0).
const SchemaEnv = "DRAINPROOF_MUTANT"

// Schema is a package's test binary built once with many of its mutants
// in it, each behind a switch on the number SchemaEnv gives at run time
// (mutant schemata, after Untch, Offutt and Harrold): a mutant then costs
// a run of its tests, not a build and link of the binary. Each mutated
// operator becomes a call of a function literal whose arguments are the
// operands and which applies the original operator or, for the mutant
// whose number is set, the mutated one:
//
//	a < b   becomes   func(drainproofX int, drainproofY int) bool { switch drainproofMutant {
//	                    case 7: return drainproofX <= drainproofY; case 8: return drainproofX >= drainproofY };
//	                    return drainproofX < drainproofY }(a, b)
//
// (on one line: no line of the file moves), so each operand is evaluated
// once, in order, as in the original, and written once however deep the
// sites nest. An increment becomes a switch statement of x++ and x--.
// A mutant is left out (and judged by a build of its own) where no such
// call can stand: a constant expression (an array length, a constant's
// value, a case of constants), an increment in a for loop's init or an
// if's, a type the file cannot name, and any site the compiler refuses
// in the schema's build.
type Schema struct {
	// Bin is the test binary.
	Bin string
	// IDs numbers the mutants the binary holds (from 1).
	IDs map[Mutant]int
	// Out are the mutants left out, each with its reason.
	Out map[Mutant]string
}

// schemaVar is the package-level variable a schema's sites switch on.
const schemaVar = "drainproofMutant"

// site is an operator of the package that some mutants change: the
// expression or statement holding it (from, to: byte offsets in its
// file), the operator's offset and text, and the result type to write
// for an expression.
type site struct {
	from, to, op int
	tok          token.Token
	typ          string
	// xTyp and yTyp are the operands' types (yTyp empty for a unary
	// operator), and y the offset where the second operand starts.
	xTyp, yTyp string
	y          int
	// xNil or yNil: that operand is nil, written as it is (a function,
	// a slice or a map compares with nil only, not with a variable).
	xNil, yNil bool
	stmt       bool // an increment or decrement: a statement
	post       bool // a for loop's post statement: an assignment form
	ms         []Mutant
	ids        []int
}

// Schematize builds r's package's test binary with as many of ms in it
// as can be (see Schema), in r.Dir (buildArgs such as -tags go to the
// build). Mutants the compiler refuses in the schema are left out and the
// build is tried again without them.
func (r Runner) Schematize(ctx context.Context, ms []Mutant, buildArgs []string) (*Schema, error) {
	cfg := &packages.Config{
		Context: ctx,
		Mode:    packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:     r.Root,
		Env:     append(os.Environ(), r.Env...),
	}
	if i := slices.Index(buildArgs, "-tags"); i >= 0 && i+1 < len(buildArgs) {
		cfg.BuildFlags = []string{"-tags", buildArgs[i+1]}
	}
	pkgs, err := packages.Load(cfg, "./"+filepath.ToSlash(r.Pkg))
	if err != nil {
		return nil, fmt.Errorf("%s: loading the package: %v", r.Pkg, err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		return nil, fmt.Errorf("%s: loading the package: %v", r.Pkg, packages.PrintErrors(pkgs))
	}
	p := pkgs[0]
	s := &Schema{Bin: filepath.Join(r.Dir, "schema.test"), IDs: map[Mutant]int{}, Out: map[Mutant]string{}}
	want := map[string][]Mutant{} // by the file's base name
	for _, m := range ms {
		want[filepath.Base(m.File)] = append(want[filepath.Base(m.File)], m)
	}
	type fileSites struct {
		abs   string
		src   []byte
		sites []*site
	}
	var files []*fileSites
	for _, f := range p.Syntax {
		abs := p.Fset.File(f.Pos()).Name()
		base := filepath.Base(abs)
		if len(want[base]) == 0 {
			continue
		}
		src, err := os.ReadFile(abs)
		if err != nil {
			return nil, err
		}
		fs := &fileSites{abs: abs, src: src}
		fs.sites = findSites(p.Fset, f, p.Types, p.TypesInfo, want[base], s.Out)
		files = append(files, fs)
	}
	for _, m := range ms {
		if _, out := s.Out[m]; !out && !slices.ContainsFunc(files, func(fs *fileSites) bool {
			return slices.ContainsFunc(fs.sites, func(st *site) bool { return slices.Contains(st.ms, m) })
		}) {
			s.Out[m] = "no operator of the package's build there"
		}
	}
	// Number the mutants, then build; drop the sites the compiler
	// refuses and build again.
	id := 0
	for _, fs := range files {
		for _, st := range fs.sites {
			st.ids = nil
			for range st.ms {
				id++
				st.ids = append(st.ids, id)
			}
		}
	}
	pkgDir, err := filepath.Abs(filepath.Join(r.Root, r.Pkg))
	if err != nil {
		return nil, err
	}
	for round := 0; ; round++ {
		repl := map[string]string{}
		for i, fs := range files {
			if len(fs.sites) == 0 {
				continue
			}
			// The file keeps its base name (the compiler's errors name
			// the overlay's file), in a folder of its own.
			d := filepath.Join(r.Dir, "schema", strconv.Itoa(i))
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
			name := filepath.Join(d, filepath.Base(fs.abs))
			if err := os.WriteFile(name, rewrite(fs.src, fs.sites), 0o644); err != nil {
				return nil, err
			}
			repl[fs.abs] = name
		}
		helper := filepath.Join(r.Dir, "schema_switch.go")
		if err := os.WriteFile(helper, []byte(switchFile(p.Name)), 0o644); err != nil {
			return nil, err
		}
		repl[filepath.Join(pkgDir, "zz_drainproof_schema.go")] = helper
		ov := filepath.Join(r.Dir, "schema_overlay.json")
		if err := writeOverlay(ov, repl); err != nil {
			return nil, err
		}
		args := append([]string{"test", "-c", "-vet=off", "-ldflags=-w", "-gcflags=-e", "-overlay", ov, "-o", s.Bin}, buildArgs...)
		out, err := r.goCmd(ctx, append(args, "./"+filepath.ToSlash(r.Pkg))...)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		dropped := 0
		for _, e := range compileErrors(out) {
			for _, fs := range files {
				if filepath.Base(fs.abs) != e.file {
					continue
				}
				fs.sites = slices.DeleteFunc(fs.sites, func(st *site) bool {
					if !st.spans(fs.src, e.line) {
						return false
					}
					for _, m := range st.ms {
						s.Out[m] = "the compiler refused it in the schema: " + e.msg
					}
					dropped++
					return true
				})
			}
		}
		if dropped == 0 || round > 20 {
			return nil, fmt.Errorf("%s: the schema does not build, and its errors name no mutant's site:\n%s", r.Pkg, out)
		}
	}
	for _, fs := range files {
		for _, st := range fs.sites {
			for i, m := range st.ms {
				s.IDs[m] = st.ids[i]
			}
		}
	}
	return s, nil
}

// BaselineSchema runs every test of s's binary with no mutant set, within
// r.Timeout: they must pass, as the unmutated tests do, or the schema
// does not behave as the package and no verdict of it means anything.
func (r Runner) BaselineSchema(ctx context.Context, s *Schema) (time.Duration, []byte, error) {
	start := time.Now()
	r.Env = append(slices.Clone(r.Env), SchemaEnv+"=0")
	st, out, err := r.runBinary(ctx, s.Bin, r.Timeout)
	if err == nil && st != Lived {
		err = fmt.Errorf("%s: the schema's tests do not pass with no mutant set (%s)", r.Pkg, st)
	}
	return time.Since(start), out, err
}

// switchFile is the file added to the package: the variable the sites
// switch on, read from SchemaEnv once at start.
func switchFile(pkg string) string {
	return "package " + pkg + `

import (
	drainproofOS "os"
	drainproofStrconv "strconv"
)

var ` + schemaVar + ` = func() int { n, _ := drainproofStrconv.Atoi(drainproofOS.Getenv("` + SchemaEnv + `")); return n }()
`
}

// findSites returns the sites of f that the mutants want change, each
// with its mutants in want's order; a mutant whose site cannot be
// switched goes to out with the reason.
func findSites(fset *token.FileSet, f *ast.File, pkg *types.Package, info *types.Info, want []Mutant, out map[Mutant]string) []*site {
	at := func(pos token.Pos) (line, col int) {
		p := fset.Position(pos)
		return p.Line, p.Column
	}
	byPos := map[[2]int][]Mutant{}
	for _, m := range want {
		byPos[[2]int{m.Line, m.Column}] = append(byPos[[2]int{m.Line, m.Column}], m)
	}
	tf := fset.File(f.Pos())
	off := func(p token.Pos) int { return tf.Offset(p) }
	qual := qualifier(f, pkg)
	var sites []*site
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		parent := ast.Node(nil)
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		stack = append(stack, n)
		tok, opPos, ok := operator(n)
		if !ok {
			return true
		}
		l, c := at(opPos)
		ms := byPos[[2]int{l, c}]
		if len(ms) == 0 {
			return true
		}
		leave := func(why string) {
			for _, m := range ms {
				out[m] = why
			}
		}
		st := &site{from: off(n.Pos()), to: off(n.End()), op: off(opPos), tok: tok, ms: ms}
		switch n := n.(type) {
		case *ast.IncDecStmt:
			st.stmt = true
			switch p := parent.(type) {
			case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause, *ast.LabeledStmt:
			case *ast.ForStmt:
				if p.Post != n || !simpleOperand(n.X) {
					leave("an increment in a for loop's init")
					return true
				}
				tv, ok := info.Types[n.X]
				name, named := typeName(tv.Type, qual)
				if !ok || !named {
					leave("a for loop's post statement on a type the file cannot name")
					return true
				}
				st.post, st.typ = true, name
			default:
				leave("an increment where a statement cannot stand")
				return true
			}
		case ast.Expr:
			tv, ok := info.Types[n]
			if !ok {
				leave("no type recorded")
				return true
			}
			if tv.Value != nil {
				leave("a constant expression")
				return true
			}
			name, named := typeName(tv.Type, qual)
			if !named {
				leave("a type the file cannot name: " + types.TypeString(tv.Type, nil))
				return true
			}
			st.typ = name
			// The operands are the literal's arguments: evaluated once,
			// in order, and written once however deep the sites nest.
			var x, y ast.Expr
			switch n := n.(type) {
			case *ast.BinaryExpr:
				x, y = n.X, n.Y
				st.y = off(n.Y.Pos())
			case *ast.UnaryExpr:
				x = n.X
			}
			xt, yt := info.Types[x].Type, types.Type(nil)
			if y != nil {
				yt = info.Types[y].Type
				st.xNil, st.yNil = isUntypedNil(xt), isUntypedNil(yt)
				if st.xNil {
					xt = yt
				}
				if st.yNil {
					yt = xt
				}
			}
			if st.xTyp, named = typeName(xt, qual); !named {
				leave("an operand of a type the file cannot name")
				return true
			}
			if y != nil {
				if st.yTyp, named = typeName(yt, qual); !named {
					leave("an operand of a type the file cannot name")
					return true
				}
			}
		}
		sites = append(sites, st)
		return true
	})
	return sites
}

// simpleOperand reports whether x is an identifier or a selector of
// identifiers: read twice, it is the same variable and has no effect.
func simpleOperand(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.Ident:
		return true
	case *ast.SelectorExpr:
		return simpleOperand(x.X)
	}
	return false
}

// qualifier names the packages f imports as f does, and pkg itself
// without a name; any other package makes a name the file cannot use.
func qualifier(f *ast.File, pkg *types.Package) types.Qualifier {
	names := map[string]string{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		names[path] = name
	}
	return func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		if n, ok := names[p.Path()]; ok && n != "_" && n != "." {
			return n
		}
		return "\x00" // not nameable here
	}
}

// typeName writes t as the file would; false when it cannot (a package
// it does not import, an untyped value other than a bool).
func typeName(t types.Type, q types.Qualifier) (string, bool) {
	if t == nil {
		return "", false
	}
	if b, ok := t.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
		if b.Kind() == types.UntypedBool {
			return "bool", true
		}
		return "", false
	}
	s := types.TypeString(t, q)
	return s, !strings.Contains(s, "\x00")
}

func isUntypedNil(t types.Type) bool {
	b, ok := t.(*types.Basic)
	return ok && b.Kind() == types.UntypedNil
}

// spans reports whether the site covers the line of its file.
func (st *site) spans(src []byte, line int) bool {
	first := 1 + bytes.Count(src[:st.from], []byte("\n"))
	last := first + bytes.Count(src[st.from:st.to], []byte("\n"))
	return line >= first && line <= last
}

// rewrite writes src with each site switched on its mutants' numbers.
// Sites nest (an operand holds another site): each is written with the
// ones inside it already switched.
func rewrite(src []byte, sites []*site) []byte {
	sorted := slices.Clone(sites)
	slices.SortFunc(sorted, func(a, b *site) int {
		if a.from != b.from {
			return a.from - b.from
		}
		return b.to - a.to // the outer one first
	})
	var b bytes.Buffer
	var emit func(from, to int, inner []*site)
	emit = func(from, to int, inner []*site) {
		at := from
		for i := 0; i < len(inner); i++ {
			st := inner[i]
			if st.from < at || st.to > to {
				continue // inside one written already
			}
			b.Write(src[at:st.from])
			j := i + 1
			for j < len(inner) && inner[j].from < st.to {
				j++
			}
			writeSite(&b, src, st, inner[i+1:j], emit)
			at = st.to
			i = j - 1
		}
		b.Write(src[at:to])
	}
	emit(0, len(src), sorted)
	return b.Bytes()
}

// writeSite writes one site switched: each mutant's form, then the
// original as the default.
func writeSite(b *bytes.Buffer, src []byte, st *site, inner []*site, emit func(int, int, []*site)) {
	opLen := len(st.tok.String())
	// form writes the site with its operator written as op.
	form := func(op string) {
		emit(st.from, st.op, inner)
		b.WriteString(op)
		emit(st.op+opLen, st.to, inner)
	}
	switch {
	case st.post: // x++ in a for loop's post: an assignment
		x := src[st.from:st.op]
		b.Write(x)
		fmt.Fprintf(b, " = func() %s { v := ", st.typ)
		b.Write(x)
		fmt.Fprintf(b, "; switch %s {", schemaVar)
		for i, m := range st.ms {
			fmt.Fprintf(b, " case %d: v%s;", st.ids[i], replacement[m.Type][st.tok])
		}
		fmt.Fprintf(b, " default: v%s }; return v }()", st.tok)
	case st.stmt:
		fmt.Fprintf(b, "switch %s {", schemaVar)
		for i, m := range st.ms {
			fmt.Fprintf(b, " case %d: ", st.ids[i])
			form(replacement[m.Type][st.tok].String())
			b.WriteString(";")
		}
		b.WriteString(" default: ")
		form(st.tok.String())
		b.WriteString(" }")
	case st.yTyp == "": // a unary operator: -x
		fmt.Fprintf(b, "func(drainproofX %s) %s { switch %s {", st.xTyp, st.typ, schemaVar)
		for i, m := range st.ms {
			fmt.Fprintf(b, " case %d: return %sdrainproofX;", st.ids[i], replacement[m.Type][st.tok])
		}
		fmt.Fprintf(b, " }; return %sdrainproofX }(", st.tok)
		emit(st.op+opLen, st.to, inner)
		b.WriteString(")")
	default: // a binary operator: x op y
		x, y := "drainproofX", "drainproofY"
		var params []string
		if st.xNil {
			x = "nil"
		} else {
			params = append(params, "drainproofX "+st.xTyp)
		}
		if st.yNil {
			y = "nil"
		} else {
			params = append(params, "drainproofY "+st.yTyp)
		}
		fmt.Fprintf(b, "func(%s) %s { switch %s {", strings.Join(params, ", "), st.typ, schemaVar)
		for i, m := range st.ms {
			fmt.Fprintf(b, " case %d: return %s %s %s;", st.ids[i], x, replacement[m.Type][st.tok], y)
		}
		fmt.Fprintf(b, " }; return %s %s %s }(", x, st.tok, y)
		if !st.xNil {
			emit(st.from, st.op, inner)
		}
		if !st.xNil && !st.yNil {
			b.WriteString(",")
		}
		if !st.yNil {
			b.Write(src[st.op+opLen : st.y]) // the space after the operator, its newlines kept
			emit(st.y, st.to, inner)
		} else {
			// nil is not passed; the newlines of the site stay.
			b.WriteString(strings.Repeat("\n", bytes.Count(src[st.op:st.to], []byte("\n"))))
		}
		if st.xNil {
			b.WriteString(strings.Repeat("\n", bytes.Count(src[st.from:st.op], []byte("\n"))))
		}
		b.WriteString(")")
	}
}

// compileError is one error of a failed build: the file's base name,
// the line, the message.
type compileError struct {
	file string
	line int
	msg  string
}

var compileErrorLine = regexp.MustCompile(`(?m)^\s*(?:\S*/)?([^/\s:]+\.go):(\d+):(?:\d+:)?\s*(.*)$`)

func compileErrors(out []byte) []compileError {
	var es []compileError
	for _, m := range compileErrorLine.FindAllSubmatch(out, -1) {
		n, err := strconv.Atoi(string(m[2]))
		if err != nil {
			continue
		}
		es = append(es, compileError{string(m[1]), n, string(m[3])})
	}
	return es
}
