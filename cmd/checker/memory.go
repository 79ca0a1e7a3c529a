package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// defaultMemoryShare is the share of the machine's memory (or of the
// cgroup's limit, if lower) that a run may hold by default.
const defaultMemoryShare = 0.75

// machineMemory returns the memory this process may use: the lower of
// MemTotal and the cgroup (v2) limit, or 0 where neither can be read.
func machineMemory() int64 {
	var total int64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				if err == nil {
					total = kb * 1024
				}
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if limit, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && limit > 0 && (total == 0 || limit < total) {
			total = limit
		}
	}
	return total
}

// memoryBudget turns the --memory flag into bytes: "" is the default
// share of machineMemory, "0" no budget, otherwise a size such as 512MiB,
// 4GiB or 1073741824 (binary units; KB, MB, GB, TB mean the same).
func memoryBudget(flag string) (int64, error) {
	if flag == "" {
		return int64(defaultMemoryShare * float64(machineMemory())), nil
	}
	s := strings.TrimSpace(flag)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n < 0 || n*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("--memory %q: want a size such as 512MiB or 4GiB, or 0 for no budget", flag)
	}
	return int64(n * float64(mult)), nil
}
