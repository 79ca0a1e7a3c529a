package main

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunJudges: a package below its target exits 1, one at it exits 0,
// and a missing result or a bad list is an error, not a pass.
func TestRunJudges(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	eq := write("eq.txt", "impl/x/x.go:2:1 CONDITIONALS_BOUNDARY -- argued\n")
	write("impl_x.json", `{"files":[{"file_name":"x.go","mutations":[
		{"type":"CONDITIONALS_BOUNDARY","status":"KILLED","line":1,"column":1},
		{"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":2,"column":1}]}]}`)
	write("impl_y.json", `{"files":[{"file_name":"y.go","mutations":[
		{"type":"CONDITIONALS_BOUNDARY","status":"KILLED","line":1,"column":1},
		{"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":2,"column":1}]}]}`)
	bad := write("bad.txt", "impl/x/x.go:2:1 CONDITIONALS_BOUNDARY\n")
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"-equivalent", eq, dir, "impl/x"}, 0},
		{[]string{"-equivalent", eq, dir, "impl/y"}, 1},
		{[]string{"-equivalent", eq, dir, "impl/missing"}, 1},
		{[]string{"-equivalent", bad, dir, "impl/x"}, 2},
		{[]string{dir}, 2},
	} {
		if got := run(c.args); got != c.want {
			t.Errorf("report %v: exit %d, want %d", c.args, got, c.want)
		}
	}
}
