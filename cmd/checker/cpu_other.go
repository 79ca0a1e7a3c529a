//go:build !unix

package main

import "time"

// cpuTime returns 0: no portable CPU time here.
func cpuTime() time.Duration { return 0 }
