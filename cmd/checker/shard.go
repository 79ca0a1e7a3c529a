package main

import (
	"fmt"
	"strconv"
	"strings"
)

// shardSpec is --shard i/n of checker simulate and checker cluster: of the
// seed range first..first+k-1, the invocation runs the seeds s with
// (s-first) mod n = i, 0 ≤ i < n. The split depends on nothing but the
// range and i/n, so n invocations on n machines (a job runner's index
// 0..n-1: GNU parallel's {#}-1, a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX, a CI matrix entry) run every seed exactly once,
// and checker report merge puts their --json reports back together.
type shardSpec struct {
	Index, Count int
}

// maxShards bounds n of --shard i/n: far more machines than a soak run has.
const maxShards = 1_000_000

// parseShard parses "i/n"; "" is the whole range, 0/1.
func parseShard(s string) (shardSpec, error) {
	if s == "" {
		return shardSpec{0, 1}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, ierr := strconv.Atoi(is)
	n, nerr := strconv.Atoi(ns)
	switch {
	case !ok || ierr != nil || nerr != nil:
		return shardSpec{}, fmt.Errorf("--shard %q: want i/n, two integers with 0 <= i < n (e.g. 0/4)", s)
	case n < 1 || n > maxShards:
		return shardSpec{}, fmt.Errorf("--shard %q: n must be in 1..%s", s, commas(maxShards))
	case i < 0 || i >= n:
		return shardSpec{}, fmt.Errorf("--shard %q: i must be in 0..%d (shards are numbered from 0)", s, n-1)
	}
	return shardSpec{i, n}, nil
}

// String is the spec as the flag takes it.
func (s shardSpec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// seeds returns the seeds of first..first+k-1 that belong to the shard, in
// increasing order.
func (s shardSpec) seeds(first uint64, k int) []uint64 {
	var out []uint64
	for j := s.Index; j < k; j += s.Count {
		out = append(out, first+uint64(j))
	}
	return out
}

// seedsReport is what checker simulate and checker cluster say of the
// seeds of one invocation (one shard), in their --json report under
// "seeds": enough for checker report merge to check that the shards of a
// run fit together and to name the seed that reproduces each failure.
type seedsReport struct {
	// Shard is i/n (0/1 for an unsharded run); Index and Count the same
	// as numbers.
	Shard string `json:"spec"`
	Index int    `json:"index"`
	Count int    `json:"count"`
	// First and Seeds are the whole range (all shards): First..First+Seeds-1.
	First uint64 `json:"first_seed"`
	Seeds int    `json:"seeds"`
	// Config is the flags other than the seed range, --shard and output
	// that decide the runs, in a canonical order: the shards of one run
	// must agree on it, and the failures' replay commands use it.
	Config string `json:"config"`
	// Revision is the VCS revision of the checker binary ("" when not
	// stamped; a "+modified" suffix for a modified tree).
	Revision string `json:"revision,omitempty"`
	// Ran lists the seeds this invocation ran to the end.
	Ran []uint64 `json:"ran"`
	// Failed lists those that violated a property.
	Failed []seedFailure `json:"failed"`
	// Interrupted is set when Ctrl-C or SIGTERM stopped the invocation before all
	// of its seeds ran.
	Interrupted bool `json:"interrupted,omitempty"`
}

// seedFailure is one seed that failed: what it violated and the command
// that runs it alone again.
type seedFailure struct {
	Seed     uint64 `json:"seed"`
	Violated string `json:"violated"`
	Replay   string `json:"replay"`
}

// newSeedsReport starts the report of a shard of first..first+k-1.
func newSeedsReport(s shardSpec, first uint64, k int, config string) *seedsReport {
	rev := buildVersion().Revision
	if rev != "" && buildVersion().Modified {
		rev += "+modified"
	}
	return &seedsReport{Shard: s.String(), Index: s.Index, Count: s.Count, First: first, Seeds: k, Config: config,
		Revision: rev, Ran: []uint64{}, Failed: []seedFailure{}}
}

// fail records a failed seed of command (simulate or cluster).
func (r *seedsReport) fail(command string, seed uint64, violated string) {
	r.Failed = append(r.Failed, seedFailure{Seed: seed, Violated: violated,
		Replay: strings.TrimSpace(fmt.Sprintf("checker %s --seed %d --seeds 1 %s", command, seed, r.Config))})
}
