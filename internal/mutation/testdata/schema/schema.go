// Package schema is the fixture of the mutation harness's mutant
// schemata: the constructs a schema must switch faithfully, or leave out.
package schema

import (
	"io"
	"strings"
	tm "time"
)

// size is constant: its mutants cannot be switched at run time.
const size = 2 + 1

// table's length is a constant expression too.
var table [size * 2]int

// threshold's initializer runs before any test.
var threshold = 10 - 3

// flag is a named boolean: a comparison assigned to it is of its type.
type flag bool

// Above reports x > threshold as a flag.
func Above(x int) flag {
	var f flag = x > threshold
	return f
}

// Sum adds 1 to n, counting with a for loop's post statement.
func Sum(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i
	}
	return s
}

// Count counts the words of s, with an increment in a statement list and
// one in a switch's case.
func Count(s string) (words, long int) {
	for _, w := range strings.Fields(s) {
		words++
		switch {
		case len(w) > 4:
			long++
		}
	}
	return words, long
}

// Join joins two strings: its + has no mutant that builds.
func Join(a, b string) string { return a + b }

// Later is d after t, in the time package's types.
func Later(t tm.Time, d tm.Duration) tm.Time { return t.Add(d * 2) }

// Max is the larger of two ordered values.
func Max[T int | float64](a, b T) T {
	if a-b > 0 {
		return a
	}
	return b
}

// Neg negates x, once through the nested sites of an expression.
func Neg(x, y int) bool { return -x+y < y*2 }

// Calls counts the calls of next: an operand with an effect is
// evaluated once in the schema as in the original.
var Calls int

func next() int { Calls++; return Calls }

// Twice compares two calls of next.
func Twice() bool { return next() < next() }

// Tick adds to a counter in a labelled statement.
func Tick(n int) int {
	c := 0
loop:
	c++
	if c < n {
		goto loop
	}
	return c
}

// Slots is the length of table.
func Slots() int { return len(table) }

// Failed reports whether err is set, and whether it is io.EOF: a
// comparison with nil, and one of interfaces.
func Failed(err error) (set, eof bool) { return err != nil, err == io.EOF }

// Spread is a sum written over three lines, a comment among them.
func Spread(a, b, c int) int {
	return a + // the first term
		b*
			c
}

// Set reports whether a function, a slice and a map are set: operands
// that compare with nil only.
func Set(f func(), s []int, m map[int]int) (bool, bool, bool) { return f != nil, nil != s, m == nil }
