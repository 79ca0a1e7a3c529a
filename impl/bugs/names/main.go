// Command names prints the bug zoo's bug names, one a line (used by
// run_bugs.sh).
package main

import (
	"fmt"

	"github.com/drainproof/drainproof/impl/bugs"
)

func main() {
	for _, n := range bugs.Names() {
		fmt.Println(n)
	}
}
