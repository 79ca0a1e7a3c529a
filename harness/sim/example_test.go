package sim_test

import (
	"context"
	"fmt"

	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/impl/node"
)

// Run simulates a seeded cluster; the correct protocol breaks no stream.
func ExampleRun() {
	r, err := sim.Run(context.Background(), sim.Config{Seed: 1, Steps: 2000, Transport: node.TransportHeartbeat})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("drains completed > 0:", r.DrainsCompleted > 0)
	fmt.Println("broken streams:", r.BrokenStreams)
	// Output:
	// drains completed > 0: true
	// broken streams: 0
}

// A Cluster is driven step by step with actions named after the model's.
func ExampleCluster() {
	c, _ := sim.NewCluster(sim.ClusterConfig{Transport: node.TransportHeartbeat, Dispatchers: 1})
	defer c.Close()
	c.Coord.DrainNode(sim.Target, 0)
	_ = c.Register(0, false) // held inside RegisterTable: counted already
	fmt.Println("count while in flight:", c.Observe().Count)
	_ = c.BrokerRegisterTable()
	fmt.Println("coordinator sends DRAINING:", c.CoordSendDraining())
	fmt.Println("in flight:", c.Bus())
	fmt.Println("broken streams if T restarted now:", c.BrokenStreams())
	// Output:
	// count while in flight: 1
	// coordinator sends DRAINING: true
	// in flight: [cmd{epoch:1 liveness:DRAINING}]
	// broken streams if T restarted now: 1
}
