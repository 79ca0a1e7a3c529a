// Package canary is the fixture that .ci/mutate.sh runs gremlins on before
// the real packages: its test leaves one mutant alive on purpose, so a
// gremlins whose test command fails for every mutant (which reports every
// mutant killed) is caught before its figures are believed.
package canary

// AtLeast reports whether x ≥ y. Its test never tries x == y, so the
// boundary mutant (x > y) lives, while the negation (x < y) is killed.
func AtLeast(x, y int) bool { return x >= y }
