// Package selective is the fixture of the mutation harness's test
// selection: each function is run by one test, or by none, and one
// mutant sits where no coverage block holds it.
package selective

// limit is set before any test runs: no coverage block holds its
// initializer.
var limit = 4 - 1

// Small reports whether x is below the limit; only TestSmall runs it.
func Small(x int) bool { return x < limit }

// Big reports whether x is above 10; only TestBig runs it.
func Big(x int) bool { return x > 10 }

// Never is run by no test.
func Never(x int) int { return x + 1 }

// Sign names x's sign; TestSign runs it.
func Sign(x int) string {
	switch {
	case x < 0:
		return "negative"
	}
	return "not negative"
}
