package node_test

import (
	"fmt"

	"github.com/drainproof/drainproof/impl/node"
)

// A node applies liveness commands only for its own epoch, one step at a
// time, and answers with its real epoch.
func Example() {
	n, _ := node.New(node.Config{ID: "T", Epoch: 2, Version: node.VersionBrokerDrain})
	r, _ := n.RecvCommand(node.Command{To: "T", Epoch: 1, Target: node.Draining}, 0)
	fmt.Println(r.Epoch, r.Liveness)
	r, _ = n.RecvCommand(node.Command{To: "T", Epoch: 2, Target: node.Stopping}, 1)
	fmt.Println(r.Epoch, r.Liveness)
	r, hb := n.RecvCommand(node.Command{To: "T", Epoch: 2, Target: node.Draining}, 2)
	fmt.Println(r.Epoch, r.Liveness, hb != nil)
	// Output:
	// 2 ALIVE
	// 2 ALIVE
	// 2 DRAINING true
}
