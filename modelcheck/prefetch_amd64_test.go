package modelcheck

import (
	"os"
	"strings"
	"testing"
)

// The processor's PREFETCHW is found as Linux finds it (the flag
// 3dnowprefetch in /proc/cpuinfo), and both prefetch loops run over a
// batch's slots.
func TestPrefetchW(t *testing.T) {
	if info, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		flags := ""
		for _, line := range strings.Split(string(info), "\n") {
			if strings.HasPrefix(line, "flags") {
				flags = line + " "
				break
			}
		}
		if want := strings.Contains(flags, " 3dnowprefetch "); flags != "" && hasPrefetchW != want {
			t.Fatalf("hasPrefetchW = %v, /proc/cpuinfo says %v", hasPrefetchW, want)
		}
	}
	slots := make([]uint64, 1024)
	addrs := make([]*uint64, 0, 128)
	for i := 0; i < 128; i++ {
		addrs = append(addrs, &slots[i*8])
	}
	prefetchLinesAsm(addrs, false)
	if hasPrefetchW {
		prefetchLinesAsm(addrs, true)
	}
	prefetchLines(nil)
}
