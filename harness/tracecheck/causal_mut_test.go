package tracecheck

import "testing"

// A stamp cut off right after its clock's digits (the end of the text, no
// closing brace) is an error, not a read past the end.
func TestClockAtTheEndOfTheText(t *testing.T) {
	for _, text := range []string{`{"p":"a","c":12`, `{"p":"a","c":7`} {
		var st stamp
		if _, err := splitStamp([]byte(text), &st); err == nil {
			t.Errorf("%s: accepted", text)
		}
	}
}
