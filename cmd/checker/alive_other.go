//go:build !unix

package main

// processAlive answers true where a process cannot be probed, so no
// folder is ever removed on a guess.
func processAlive(int) bool { return true }
