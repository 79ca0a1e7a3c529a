package node_test

import (
	"fmt"

	"github.com/drainproof/drainproof/impl/node"
)

// A node applies liveness commands only for its own epoch, one step at a
// time, and answers with its real epoch.
func Example() {
	n, _ := node.New(node.Config{ID: "T", Epoch: 2, Version: node.VersionBrokerDrain})
	r, _ := n.RecvCommand(node.Command{To: "T", Epoch: 1, Target: node.Draining})
	fmt.Println(r.Epoch, r.Liveness)
	r, _ = n.RecvCommand(node.Command{To: "T", Epoch: 2, Target: node.Stopping})
	fmt.Println(r.Epoch, r.Liveness)
	r, changed := n.RecvCommand(node.Command{To: "T", Epoch: 2, Target: node.Draining})
	fmt.Println(r.Epoch, r.Liveness, changed)
	// Output:
	// 2 ALIVE
	// 2 ALIVE
	// 2 DRAINING true
}
