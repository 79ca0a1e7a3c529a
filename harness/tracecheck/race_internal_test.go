//go:build race

package tracecheck

// raceEnabled is true in a build with the race detector, where the
// field-mutation test runs about ten times slower: it then tries one
// mutant per line kind and field instead of two.
const raceEnabled = true
