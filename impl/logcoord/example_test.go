package logcoord_test

import (
	"fmt"

	"github.com/drainproof/drainproof/impl/logcoord"
	"github.com/drainproof/drainproof/impl/node"
)

// The LogCoordinator caches a node's reports and answers with the report
// or "unknown".
func Example() {
	c := logcoord.New(logcoord.Config{TTL: 10})
	fmt.Println(c.Answer("T", 0).Known)
	c.OnReport(node.Report{From: "T", Epoch: 1, Count: 2, AdmissionClosed: true}, 1)
	c.OnReport(node.Report{From: "T", Epoch: 1, Count: 0, AdmissionClosed: false}, 2) // open: never replaces closed
	a := c.Answer("T", 3)
	fmt.Println(a.Known, a.Epoch, a.Count, a.AdmissionClosed)
	fmt.Println(c.Answer("T", 20).Known) // expired
	// Output:
	// false
	// true 1 2 true
	// false
}
