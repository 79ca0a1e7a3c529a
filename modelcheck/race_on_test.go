//go:build race

package modelcheck_test

// raceEnabled: the race detector is on, and the tests that explore
// hundreds of thousands of states several times over keep to one variant
// (the race detector slows the search tenfold; the variants' figures are
// compared without it).
const raceEnabled = true
