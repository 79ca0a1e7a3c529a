//go:build !race

package tracecheck

// raceEnabled is true in a build with the race detector.
const raceEnabled = false
