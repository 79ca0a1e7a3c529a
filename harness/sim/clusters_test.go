package sim_test

import (
	"slices"
	"testing"

	"github.com/drainproof/drainproof/harness/sim"
)

// TestNewClusterBadConfig: bad counts are refused with an error.
func TestNewClusterBadConfig(t *testing.T) {
	for _, cfg := range []sim.ClusterConfig{
		{Dispatchers: 0},
		{Dispatchers: 2, TableTriggers: 3},
		{Dispatchers: 2, Clusters: -1},
	} {
		if c, err := sim.NewCluster(cfg); err == nil {
			c.Close()
			t.Errorf("NewCluster(%+v) succeeded", cfg)
		}
	}
}

// TestClusterBrokerPerUpstream: with two upstream clusters, dispatcher d
// registers with the broker of cluster d mod 2, and each broker counts
// its own dispatchers while Report sums them.
func TestClusterBrokerPerUpstream(t *testing.T) {
	c, err := sim.NewCluster(sim.ClusterConfig{Dispatchers: 3, TableTriggers: 3, Clusters: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for d := range 3 {
		if err := c.Register(d, false); err != nil {
			t.Fatalf("register d%d: %v", d+1, err)
		}
	}
	if got := []int{c.ClusterOf(0), c.ClusterOf(1), c.ClusterOf(2)}; !slices.Equal(got, []int{0, 1, 0}) {
		t.Fatalf("clusters of d1, d2, d3: %v, want [0 1 0]", got)
	}
	o := c.Observe()
	if !slices.Equal(o.Counts, []int64{2, 1}) {
		t.Fatalf("Observe().Counts = %v, want [2 1]", o.Counts)
	}
	if o.Count != 3 {
		t.Fatalf("reported count %d, want 3", o.Count)
	}
}
