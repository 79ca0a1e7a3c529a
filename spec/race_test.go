//go:build race

package spec_test

// raceEnabled is true in a build with the race detector, where our
// checker runs about ten times slower.
const raceEnabled = true
