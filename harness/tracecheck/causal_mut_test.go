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

// A clock is any integer from 1 to 2^64-1: the largest is read exactly,
// one more (or more digits) is refused as an overflow.
func TestClockRange(t *testing.T) {
	for text, want := range map[string]uint64{
		`{"p":"a","c":18446744073709551615,"action":"X"}`: 1<<64 - 1,
		`{"p":"a","c":18446744073709551609,"action":"X"}`: 1<<64 - 7,
		`{"p":"a","c":1,"action":"X"}`:                    1,
	} {
		var st stamp
		if _, err := splitStamp([]byte(text), &st); err != nil || st.clock != want {
			t.Errorf("%s: clock %d, %v; want %d", text, st.clock, err, want)
		}
	}
	for _, text := range []string{
		`{"p":"a","c":18446744073709551616,"action":"X"}`,
		`{"p":"a","c":18446744073709551620,"action":"X"}`,
		`{"p":"a","c":99999999999999999999,"action":"X"}`,
		`{"p":"a","c":0,"action":"X"}`,
		`{"p":"a","c":01,"action":"X"}`,
	} {
		var st stamp
		if _, err := splitStamp([]byte(text), &st); err == nil {
			t.Errorf("%s: accepted (clock %d)", text, st.clock)
		}
	}
}
