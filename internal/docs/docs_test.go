package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository, seen from this package's folder.
const root = "../.."

// protocol is the document that defines the rule codes and sections.
const protocol = "docs/protocol.md"

var (
	// A rule code: R1–R9, D1–D11, N1–N6, E1–E3, L1–L4, C1–C12, F1–F12,
	// F-R1–F-R7 (whatever docs/protocol.md defines).
	reCode = regexp.MustCompile(`\b(F-R[0-9]+|[RDNELCF][0-9]+)\b`)
	// A definition in docs/protocol.md: "- **R1 — …".
	reDefinition = regexp.MustCompile(`(?m)^- \*\*(F-R[0-9]+|[RDNELCF][0-9]+) —`)
	// A section heading of docs/protocol.md: "## 13. The bug table".
	reSection = regexp.MustCompile(`(?m)^## ([0-9]+)\. `)
	// A section citation: "§13" (as in "docs/protocol.md §13").
	reSectionRef = regexp.MustCompile(`§([0-9]+(?:\.[0-9]+)*)`)
	// A relative Markdown link or image: "](docs/img/x.png)".
	reLink = regexp.MustCompile(`\]\(([^)#:\s]+)(?:#[^)]*)?\)`)
)

// outside lists what cites documents the repository does not hold.
var outside = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`\.\./shared|shared/PROTOCOL|PROTOCOL\.md`), "cites the team's shared folder; cite docs/protocol.md"},
	{regexp.MustCompile(`ticdc-protocol-notes|style rule [0-9]`), "cites notes outside the repository; cite docs/protocol.md"},
	{regexp.MustCompile(`(?i)\bseeds? 00[0-9]`), "cites a seed document; cite the pull request (docs/protocol.md §16)"},
	{regexp.MustCompile(`(?i)\bissues? [0-9]`), "cites the project's issue tracker; say what the work was"},
}

// spec is what docs/protocol.md defines.
type spec struct {
	codes    map[string]bool
	sections map[string]bool
}

func readSpec(t *testing.T) spec {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, protocol))
	if err != nil {
		t.Fatal(err)
	}
	s := spec{codes: map[string]bool{}, sections: map[string]bool{}}
	for _, m := range reDefinition.FindAllStringSubmatch(string(b), -1) {
		s.codes[m[1]] = true
	}
	for _, m := range reSection.FindAllStringSubmatch(string(b), -1) {
		s.sections[m[1]] = true
	}
	return s
}

// problems lists what is wrong with the text of the file path (relative
// to root; exists tells whether a relative path exists).
func (s spec) problems(path, text string, exists func(string) bool) []string {
	var out []string
	for i, line := range strings.Split(text, "\n") {
		at := fmt.Sprintf("%s:%d", path, i+1)
		for _, o := range outside {
			if m := o.re.FindString(line); m != "" {
				out = append(out, fmt.Sprintf("%s: %q %s", at, m, o.why))
			}
		}
		for _, m := range reCode.FindAllString(line, -1) {
			if !s.codes[m] {
				out = append(out, fmt.Sprintf("%s: rule code %s is not defined in %s", at, m, protocol))
			}
		}
		for _, m := range reSectionRef.FindAllStringSubmatch(line, -1) {
			if !s.sections[m[1]] {
				out = append(out, fmt.Sprintf("%s: §%s is not a section of %s", at, m[1], protocol))
			}
		}
		if strings.HasSuffix(path, ".md") {
			for _, m := range reLink.FindAllStringSubmatch(line, -1) {
				target := filepath.Join(filepath.Dir(path), m[1])
				if !exists(target) {
					out = append(out, fmt.Sprintf("%s: link %s leads nowhere", at, m[1]))
				}
			}
		}
	}
	return out
}

// cited reports whether the repository file path is one whose citations
// are checked.
func cited(path string) bool {
	switch filepath.Ext(path) {
	case ".go", ".md", ".tla", ".cfg", ".sh":
		return true
	}
	return path == "Makefile" || path == ".ci/run"
}

func exists(rel string) bool {
	_, err := os.Stat(filepath.Join(root, rel))
	return err == nil
}

func TestEveryCitationResolves(t *testing.T) {
	s := readSpec(t)
	if len(s.codes) < 60 || len(s.sections) < 10 {
		t.Fatalf("%s defines %d rule codes and %d sections: the patterns no longer match it", protocol, len(s.codes), len(s.sections))
	}
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel != "." && strings.HasPrefix(d.Name(), ".") && rel != ".ci" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !cited(rel) || rel == "internal/docs/docs_test.go" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for _, pr := range s.problems(rel, string(b), exists) {
			t.Error(pr)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("only %d files checked", files)
	}
}

// The checks catch what they exist for.
func TestProblemsCatches(t *testing.T) {
	s := spec{codes: map[string]bool{"R1": true, "F-R1": true}, sections: map[string]bool{"5": true}}
	none := func(string) bool { return false }
	for _, tc := range []struct {
		text, want string
	}{
		{"see ../../" + "shared/" + "PROTOCOL.md §2", "shared folder"}, // built so the repo cites no such path
		{"// From ticdc-protocol-notes §3.7", "outside the repository"},
		{"(seed 004)", "seed document"},
		{"- impl (issue 5), no model change", "issue tracker"},
		{"R1 and R10", "rule code R10 is not defined"},
		{"F-R1, F-R9", "rule code F-R9"},
		{"docs/protocol.md §9", "§9 is not a section"},
		{"![shot](docs/img/missing.png)", "link docs/img/missing.png leads nowhere"},
	} {
		got := strings.Join(s.problems("x.md", tc.text, none), "\n")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%q: problems %q, want one containing %q", tc.text, got, tc.want)
		}
	}
	if got := s.problems("x.md", "R1, F-R1, docs/protocol.md §5, [x](y.md)", func(string) bool { return true }); len(got) > 0 {
		t.Errorf("a clean line has problems: %v", got)
	}
}
