//go:build !race

package spec_test

// raceEnabled is true in a build with the race detector.
const raceEnabled = false
