package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drainproof/drainproof/harness/cluster"
	"github.com/stretchr/testify/require"
)

// TestParseShard: i/n with 0 <= i < n, every other spelling refused with
// a message that says what is wanted.
func TestParseShard(t *testing.T) {
	for in, want := range map[string]shardSpec{"": {0, 1}, "0/1": {0, 1}, "3/4": {3, 4}, "0/50": {0, 50}} {
		got, err := parseShard(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"0/0", "3/2", "2/2", "-1/2", "junk", "1/", "/2", "1/2/3", "a/b", "1/2000000"} {
		_, err := parseShard(in)
		require.Error(t, err, in)
		require.Contains(t, err.Error(), "--shard", in)
	}
}

// TestShardsPartitionSeeds: for every n, the n shards' seeds are the
// whole range, each seed once, each in shard (s-first) mod n.
func TestShardsPartitionSeeds(t *testing.T) {
	for n := 1; n <= 7; n++ {
		for k := 1; k <= 20; k++ {
			var all []uint64
			for i := 0; i < n; i++ {
				for _, s := range (shardSpec{i, n}).seeds(100, k) {
					require.Equal(t, i, int(s-100)%n)
					all = append(all, s)
				}
			}
			slices.Sort(all)
			want := make([]uint64, k)
			for j := range want {
				want[j] = 100 + uint64(j)
			}
			require.Equal(t, want, all, "n %d k %d", n, k)
		}
	}
}

// TestShardFlagsRefused: a bad --shard is one line and exit 2 for both
// commands, before anything runs.
func TestShardFlagsRefused(t *testing.T) {
	for _, cmd := range []string{"simulate", "cluster"} {
		for _, s := range []string{"0/0", "3/2", "junk"} {
			code, out, errOut := runCLI(t, cmd, "--shard", s)
			require.Equal(t, exitUsage, code, "%s --shard %s", cmd, s)
			require.Empty(t, out)
			require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			require.Contains(t, errOut, "--shard")
		}
	}
}

// writeShard writes a cluster shard's report, made by the code checker
// cluster --json uses, whose seeds in bad carry a violation.
func writeShard(t *testing.T, dir string, sh shardSpec, first uint64, k int, config string, bad ...uint64) string {
	t.Helper()
	rep := newSeedsReport(sh, first, k, config)
	var results []*cluster.Result
	for _, s := range sh.seeds(first, k) {
		res := &cluster.Result{Seed: s, Nodes: 3, EventsCommitted: 100, EventsRead: 100,
			Drains: []cluster.Drain{{Node: "n1", Complete: true, TookMS: int64(s)}}}
		if slices.Contains(bad, s) {
			res.Violations = []string{fmt.Sprintf("table t1: lost event ts %d", s)}
			res.Lost = 1
		}
		results = append(results, res)
		rep.Ran = append(rep.Ran, s)
		if len(res.Violations) > 0 {
			rep.fail("cluster", s, res.Violations[0])
		}
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("shard-%d-%s.json", sh.Index, strings.ReplaceAll(config, " ", ""))))
	require.NoError(t, err)
	require.NoError(t, writeReport(f, clusterReport(results, rep)))
	require.NoError(t, f.Close())
	return f.Name()
}

// shardDir returns a folder with the 2 shards of a cluster run of seeds
// 1..3 whose seeds bad failed.
func shardDir(t *testing.T, bad ...uint64) string {
	dir := t.TempDir()
	writeShard(t, dir, shardSpec{0, 2}, 1, 3, "--nodes 3", bad...)
	writeShard(t, dir, shardSpec{1, 2}, 1, 3, "--nodes 3", bad...)
	return dir
}

// TestMergeVerdicts: merge lists every failure with its seed and replay
// command (exit 1), passes a clean set (exit 0), and refuses, naming
// the file or shard, a missing shard, a duplicated one, a shard of other
// flags, of another seed range, of another command, a malformed file and
// a report whose seeds are not its shard's.
func TestMergeVerdicts(t *testing.T) {
	dir := t.TempDir()
	cfg := "--nodes 3 --duration 1s"
	s0 := writeShard(t, dir, shardSpec{0, 3}, 1, 10, cfg)
	s1 := writeShard(t, dir, shardSpec{1, 3}, 1, 10, cfg, 5)
	s2 := writeShard(t, dir, shardSpec{2, 3}, 1, 10, cfg, 3, 9)

	code, out, errOut := runCLI(t, "report", "merge", s0, s1, s2)
	require.Equal(t, exitViolation, code, errOut)
	require.Contains(t, out, "merge FAIL: 3 shards of checker cluster --nodes 3 --duration 1s, seeds 1..10: 10 run, 3 failed")
	for _, s := range []uint64{3, 5, 9} {
		require.Contains(t, out, fmt.Sprintf("FAILED seed %d: table t1: lost event ts %d\n  replay: checker cluster --seed %d --seeds 1 %s", s, s, s, cfg))
	}
	require.Contains(t, out, "drain latency ms over 10 completed drains: p50 5, p99 10, max 10")

	code, out, _ = runCLI(t, "report", "merge", "--json", s2, s0, s1)
	require.Equal(t, exitViolation, code)
	r := decodeReport(t, out, "report")
	require.Equal(t, outcomeViolated, r.Outcome)
	require.Equal(t, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, r.Merge.Ran)
	var failed []uint64
	for _, f := range r.Merge.Failed {
		failed = append(failed, f.Seed)
	}
	require.Equal(t, []uint64{3, 5, 9}, failed)
	require.Contains(t, r.Merge.Totals, figure{"events_lost", 3})
	require.Contains(t, r.Merge.Totals, figure{"events_committed", 1000})

	clean := t.TempDir()
	for i := 0; i < 2; i++ {
		writeShard(t, clean, shardSpec{i, 2}, 7, 3, cfg)
	}
	code, out, errOut = runCLI(t, "report", "merge", clean)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "merge PASS: 2 shards")

	other := writeShard(t, t.TempDir(), shardSpec{2, 3}, 1, 10, "--nodes 5 --duration 1s")
	otherRange := writeShard(t, t.TempDir(), shardSpec{2, 3}, 1, 11, cfg)
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"command": "cluster", "outcome": `), 0o644))
	notShard := filepath.Join(t.TempDir(), "check.json")
	require.NoError(t, os.WriteFile(notShard, []byte(`{"command": "check", "outcome": "ok"}`), 0o644))
	// A shard whose seeds are not its share: its report says 1/3 but it ran seed 1.
	lying := filepath.Join(t.TempDir(), "lying.json")
	b, err := os.ReadFile(s0)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(lying, []byte(strings.Replace(strings.Replace(string(b), `"spec": "0/3"`, `"spec": "1/3"`, 1),
		`"index": 0`, `"index": 1`, 1)), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{s0, s1}, "shard 2/3 of 3 missing"},
		{[]string{s0, s1, s1, s2}, "shard 1/3 given twice"},
		{[]string{s0, s1, other}, "not shards of one run: flags"},
		{[]string{s0, s1, otherRange}, "not shards of one run: seed range 1..10 and 1..11"},
		{[]string{s0, bad}, "bad.json: not a JSON report"},
		{[]string{notShard}, "check.json: a report of checker check"},
		{[]string{lying}, "lying.json: shard 1/3 ran seeds [1 4 7 10], its share of 1..10 is [2 5 8]"},
		{[]string{filepath.Join(dir, "nonexistent.json")}, "no such file"},
		{[]string{t.TempDir()}, "a directory without *.json reports"},
		{nil, "no report given"},
	} {
		code, out, errOut := runCLI(t, append([]string{"report", "merge"}, c.args...)...)
		require.Equal(t, exitUsage, code, "%v: %s", c.args, errOut)
		require.Empty(t, out)
		require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
		require.Contains(t, errOut, c.want)
	}
}

// checkerBinary returns a command that runs this test binary as the
// checker (TestMain's DRAINPROOF_CHECKER_MAIN), so that GNU parallel can
// run it as a program without a separate build.
func checkerBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	return self
}

// parallelPath returns GNU parallel, or skips without it (CI must have
// it: .ci/run installs Debian's parallel).
func parallelPath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("parallel"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no GNU parallel: .ci/run must install Debian's parallel for the sharding test")
	}
	t.Skip("no GNU parallel on this machine (apt-get install -y parallel)")
	return ""
}

// runSharded runs `checker ARGS --shard {}/n --json` for the n shards
// under GNU parallel (-j2), each shard's report into dir, and returns the
// merge of dir, decoded, and merge's exit code.
func runSharded(t *testing.T, n int, args ...string) (report, int) {
	t.Helper()
	par, self := parallelPath(t), checkerBinary(t)
	dir := t.TempDir()
	shards := make([]string, n)
	for i := range shards {
		shards[i] = fmt.Sprint(i)
	}
	// parallel runs each job through a shell: the command line is quoted.
	line := self + " " + strings.Join(args, " ") + " --shard {}/" + fmt.Sprint(n) + " --json > " + dir + "/shard-{}.json"
	cmd := exec.Command(par, append([]string{"-j2", "--halt", "never", line, ":::"}, shards...)...)
	cmd.Env = append(os.Environ(), "DRAINPROOF_CHECKER_MAIN=1")
	out, err := cmd.CombinedOutput()
	// parallel exits with the number of failed jobs: a shard that found a
	// violation exits 1; only the reports decide.
	if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		t.Fatalf("parallel: %v\n%s", err, out)
	}
	code, stdout, stderr := runCLI(t, "report", "merge", "--json", dir)
	require.NotEqual(t, exitUsage, code, "merge: %s\nparallel said: %s", stderr, out)
	return decodeReport(t, stdout, "report"), code
}

// failedSeeds returns the seeds of failures.
func failedSeeds(fs []seedFailure) []uint64 {
	out := []uint64{}
	for _, f := range fs {
		out = append(out, f.Seed)
	}
	return out
}

// TestShardsUnderParallelEqualOneRun: checker simulate split into 3
// shards run by GNU parallel and merged gives the unsharded run's
// verdict, seeds and failures, and its summed figures exactly (the
// simulator is deterministic); checker cluster over loopback, 2 seeds in
// 2 shards, the unsharded run's verdict and seeds.
func TestShardsUnderParallelEqualOneRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the checker as processes under GNU parallel")
	}
	args := []string{"simulate", "--seed", "3", "--seeds", "10", "--steps", "400", "--settle", "600"}
	merged, mcode := runSharded(t, 3, args...)
	code, out, errOut := runCLI(t, append(args, "--json")...)
	require.NotEqual(t, exitUsage, code, errOut)
	whole := decodeReport(t, out, "simulate")
	require.Equal(t, code, mcode)
	require.Equal(t, whole.Outcome, merged.Outcome)
	require.Equal(t, whole.Shard.Ran, merged.Merge.Ran)
	require.Equal(t, failedSeeds(whole.Shard.Failed), failedSeeds(merged.Merge.Failed))
	require.Equal(t, simulateFigures(whole.Simulate), merged.Merge.Totals, "the shards' figures add up to the whole run's")

	dir := t.TempDir()
	bin, err := buildDaemon(context.Background(), dir, false)
	require.NoError(t, err)
	cargs := []string{"cluster", "--binary", bin, "--seed", "1", "--seeds", "2", "--duration", "2s", "--upgrade", "--faults", "kill,pause"}
	merged, mcode = runSharded(t, 2, cargs...)
	code, out, errOut = runCLI(t, append(cargs, "--json")...)
	require.NotEqual(t, exitUsage, code, errOut)
	whole = decodeReport(t, out, "cluster")
	require.Equal(t, code, mcode)
	require.Equal(t, whole.Outcome, merged.Outcome, "whole: %v; merged: %v", whole.Shard.Failed, merged.Merge.Failed)
	require.Equal(t, whole.Shard.Ran, merged.Merge.Ran)
	require.Equal(t, failedSeeds(whole.Shard.Failed), failedSeeds(merged.Merge.Failed))
	var seeds []uint64
	for _, r := range whole.ClusterRuns {
		seeds = append(seeds, r.Seed)
	}
	require.Equal(t, []uint64{1, 2}, seeds)
}
