package tracecheck_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/drainproof/drainproof/harness/tracecheck"
)

func TestZZProfDirs(t *testing.T) {
	root := os.Getenv("ZZ_DIR")
	if root == "" {
		t.Skip()
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*"))
	lines := 0
	cpu0 := cpuTime()
	for rep := 0; rep < 5; rep++ {
		for _, d := range dirs {
			files, _ := filepath.Glob(filepath.Join(d, "*.ndjson"))
			res, err := tracecheck.CheckRun(files, d, nil, tracecheck.Options{})
			if err != nil || res.Verdict != tracecheck.OK {
				t.Fatalf("%s: %v %v", d, err, res.Verdict)
			}
			lines += res.Lines
		}
	}
	cpu := cpuTime() - cpu0
	t.Logf("%d lines, %.0f lines/cpu-s", lines, float64(lines)/cpu.Seconds())
}
