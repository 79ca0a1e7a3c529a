package coordinator_test

import (
	"fmt"

	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/node"
)

// A drain in the heartbeat transport: DRAINING, the maintainers' work,
// STOPPING, and completion only once a STOPPING heartbeat with admission
// closed reports a zero broker count.
func Example() {
	c, _ := coordinator.New(coordinator.Config{Transport: node.TransportHeartbeat})
	c.AddNode("T", 1, 0)
	c.ObserveVersion("T", 1, node.VersionBrokerDrain)
	d, _ := c.DrainNode("T", 0)
	fmt.Println("remaining:", d.Remaining)

	cmd, _ := c.NextCommand(1)
	fmt.Println("send:", cmd.Target, "epoch", cmd.Epoch)
	c.ObserveResponse(node.Response{From: "T", Epoch: 1, Liveness: node.Draining}, 2)
	c.ReportProgress("T", coordinator.Progress{})
	cmd, _ = c.NextCommand(3)
	fmt.Println("send:", cmd.Target, "epoch", cmd.Epoch)
	c.ObserveResponse(node.Response{From: "T", Epoch: 1, Liveness: node.Stopping}, 4)
	d, _ = c.DrainNode("T", 5)
	fmt.Println("after the response alone, complete:", d.Complete)

	c.ObserveHeartbeat(node.Heartbeat{From: "T", Epoch: 1, Liveness: node.Stopping, HasCount: true, Count: 2, AdmissionClosed: true}, 6)
	d, _ = c.DrainNode("T", 7)
	fmt.Println("broker serves 2, remaining:", d.Remaining)
	c.ObserveHeartbeat(node.Heartbeat{From: "T", Epoch: 1, Liveness: node.Stopping, HasCount: true, Count: 0, AdmissionClosed: true}, 8)
	d, _ = c.DrainNode("T", 9)
	fmt.Println("complete:", d.Complete, "drained epoch", d.DrainedEpoch)
	// Output:
	// remaining: 1
	// send: DRAINING epoch 1
	// send: STOPPING epoch 1
	// after the response alone, complete: false
	// broker serves 2, remaining: 2
	// complete: true drained epoch 1
}
