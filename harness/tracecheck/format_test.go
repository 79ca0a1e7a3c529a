package tracecheck_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/spec"
)

// This file states the trace parser's contract with JSON: a line is read
// as the JSON value it encodes, whatever the encoding. Every line of an
// accepted trace is written again in equivalent JSON, chosen at random
// (the keys of every object in another order, white space between any
// two tokens, some or all characters of each string escaped), and the
// trace must be checked to the same result; a line written as JSON that
// encoding/json rejects must be an input error naming that line.
//
// The freedoms taken are those docs/trace.md leaves (and one of the
// format's own: a stamped line's from may be given empty): NDJSON keeps a line
// on one line, so the white space is JSON's without the newline (space,
// tab, carriage return); a line of a multi-process run starts with its
// stamp (p, c, after, from), so those keys are shuffled among themselves
// ahead of the others; integers have one JSON form (the format has no
// fractions: 1.0 is not an integer to encoding/json either).

// stampKeys are the keys a stamped line starts with.
var stampKeys = map[string]bool{"p": true, "c": true, "after": true, "from": true}

// reencoder writes JSON values in a random equivalent form.
type reencoder struct {
	r *rand.Rand
	b strings.Builder
	// esc is the chance that a character of a string is escaped.
	esc float64
}

func (e *reencoder) ws() {
	const blanks = " \t\r"
	for n := e.r.IntN(4) - 1; n > 0; n-- {
		e.b.WriteByte(blanks[e.r.IntN(len(blanks))])
	}
}

func (e *reencoder) str(s string) {
	e.b.WriteByte('"')
	for _, c := range s {
		short := map[rune]string{'"': `\"`, '\\': `\\`, '/': `\/`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}[c]
		switch {
		case short != "" && (e.r.Float64() < e.esc || c < 0x20 || c == '"' || c == '\\'):
			if c != '"' && c != '\\' && e.r.IntN(2) == 0 {
				e.b.WriteString(fmt.Sprintf(`\u%04X`, c))
			} else {
				e.b.WriteString(short)
			}
		case c < 0x20 || e.r.Float64() < e.esc:
			hex := `\u%04x`
			if e.r.IntN(2) == 0 {
				hex = `\u%04X`
			}
			if c > 0xffff {
				r1, r2 := utf16.EncodeRune(c)
				e.b.WriteString(fmt.Sprintf(hex+hex, r1, r2))
			} else {
				e.b.WriteString(fmt.Sprintf(hex, c))
			}
		default:
			e.b.WriteRune(c)
		}
	}
	e.b.WriteByte('"')
}

// value writes v (as decoded with UseNumber); top marks a line's object,
// whose stamp keys stay first.
func (e *reencoder) value(v any, top bool) {
	e.ws()
	switch v := v.(type) {
	case map[string]any:
		var stamp, rest []string
		for k := range v {
			if top && stampKeys[k] {
				stamp = append(stamp, k)
			} else {
				rest = append(rest, k)
			}
		}
		slices.Sort(stamp)
		slices.Sort(rest)
		e.r.Shuffle(len(stamp), func(i, j int) { stamp[i], stamp[j] = stamp[j], stamp[i] })
		e.r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		e.b.WriteByte('{')
		for i, k := range append(stamp, rest...) {
			if i > 0 {
				e.b.WriteByte(',')
			}
			e.ws()
			e.str(k)
			e.ws()
			e.b.WriteByte(':')
			e.value(v[k], false)
		}
		e.ws()
		e.b.WriteByte('}')
	case []any:
		e.b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				e.b.WriteByte(',')
			}
			e.value(x, false)
		}
		e.ws()
		e.b.WriteByte(']')
	case string:
		e.str(v)
	case json.Number:
		e.b.WriteString(v.String())
	case bool:
		e.b.WriteString(fmt.Sprint(v))
	case nil:
		e.b.WriteString("null")
	default:
		panic(fmt.Sprintf("unexpected %T", v))
	}
	e.ws()
}

func decodeJSON(t testing.TB, text string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), "%s", text)
	return v
}

// reencode writes a line again, at random, as equivalent JSON: the
// oracle is that encoding/json reads the same value from both. A stamped
// line without from may gain an empty one, which the format reads alike.
func reencode(t testing.TB, r *rand.Rand, text string) string {
	t.Helper()
	v := decodeJSON(t, text)
	if o, ok := v.(map[string]any); ok && o["p"] != nil && o["from"] == nil && r.IntN(3) == 0 {
		o["from"] = []any{} // an empty from: a line that depends on none (docs/trace.md)
	}
	e := &reencoder{r: r, esc: []float64{0, 0.2, 1}[r.IntN(3)]}
	e.value(v, true)
	out := e.b.String()
	require.NotContains(t, out, "\n")
	require.True(t, json.Valid([]byte(out)), "%s", out)
	require.Equal(t, v, decodeJSON(t, out), "%s reads back as another value", out)
	return out
}

// reencodeTrace writes every line of a trace (the header too) again.
func reencodeTrace(t testing.TB, r *rand.Rand, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for l := range strings.Lines(string(data)) {
		if l = strings.TrimSuffix(l, "\n"); l != "" {
			out.WriteString(reencode(t, r, l))
		}
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// sameResult requires two results of one trace to agree on everything
// but the time taken and the text of a line.
func sameResult(t testing.TB, want, got tracecheck.Result, what string) {
	t.Helper()
	want.Seconds, got.Seconds, want.Text, got.Text = 0, 0, "", ""
	require.Equal(t, want, got, what)
}

// formatConfigs are the models the walks are drawn from: the package's
// own, and one whose names need escapes in some encodings ('/', a
// character outside the Basic Multilingual Plane: a surrogate pair).
func formatConfigs() map[string]spec.Config {
	cs := configs()
	odd := cs["heartbeat"]
	odd.Dispatchers, odd.TableTriggers = []string{"d/1", "d\U0001F600"}, []string{"d\U0001F600"}
	odd.Brokers = []string{"b/1", "b\"2"}
	cs["names"] = odd
	return cs
}

// Every equivalent encoding of an accepted trace's lines is accepted with
// the same result: single-process walks of each model, several random
// encodings each.
func TestEquivalentEncodingsCheckAlike(t *testing.T) {
	for name, cfg := range formatConfigs() {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 2; seed++ {
				lines, _ := traceOf(t, cfg, seed, 150)
				data := encode(t, cfg, lines)
				want := check(t, data)
				require.Equal(t, tracecheck.OK, want.Verdict, "%+v", want)
				r := rand.New(rand.NewPCG(seed, 1))
				for k := 0; k < 3; k++ {
					again := reencodeTrace(t, r, data)
					got, err := tracecheck.Check(bytes.NewReader(again), "t.ndjson", nil, tracecheck.Options{})
					require.NoError(t, err, "seed %d, encoding %d", seed, k)
					sameResult(t, want, got, fmt.Sprintf("seed %d, encoding %d", seed, k))
				}
			}
		})
	}
}

// The same holds of a multi-process run: each process's trace written
// again, stamps and all, is merged and checked to the same result.
func TestEquivalentEncodingsOfARunCheckAlike(t *testing.T) {
	for _, name := range []string{"heartbeat", "names"} {
		cfg := formatConfigs()[name]
		t.Run(name, func(t *testing.T) {
			m, err := spec.New(cfg)
			require.NoError(t, err)
			for seed := uint64(1); seed <= 2; seed++ {
				files, err := tracecheck.WriteRun(t.TempDir(), m, seed, 200, "test")
				require.NoError(t, err)
				want, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
				require.NoError(t, err)
				require.Equal(t, tracecheck.OK, want.Verdict, "%+v", want)
				r := rand.New(rand.NewPCG(seed, 2))
				for k := 0; k < 3; k++ {
					dir := t.TempDir()
					var again []string
					for _, f := range files {
						data, err := os.ReadFile(f)
						require.NoError(t, err)
						g := filepath.Join(dir, filepath.Base(f))
						require.NoError(t, os.WriteFile(g, reencodeTrace(t, r, data), 0o644))
						again = append(again, g)
					}
					got, err := tracecheck.CheckRun(again, "run", nil, tracecheck.Options{})
					require.NoError(t, err, "seed %d, encoding %d", seed, k)
					want.ProcessFile, got.ProcessFile = filepath.Base(want.ProcessFile), filepath.Base(got.ProcessFile)
					sameResult(t, want, got, fmt.Sprintf("seed %d, encoding %d", seed, k))
				}
			}
		})
	}
}

// A line changed in meaning, however it is encoded, is read as changed:
// an action renamed (one letter more, which the encoding may escape) is an
// input error naming that line.
func TestARenamedActionInAnyEncodingIsAnInputError(t *testing.T) {
	cfg := formatConfigs()["names"]
	lines, _ := traceOf(t, cfg, 1, 60)
	r := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < len(lines); i += 7 {
		changed := slices.Clone(lines)
		changed[i].Action += "X"
		data := reencodeTrace(t, r, encode(t, cfg, changed))
		_, err := tracecheck.Check(bytes.NewReader(data), "t.ndjson", nil, tracecheck.Options{})
		var ie *tracecheck.InputError
		require.True(t, errors.As(err, &ie), "line %d: want an input error, got %v", i+2, err)
		require.Equal(t, i+2, ie.Line, "%v", err)
		require.Contains(t, err.Error(), "unknown action")
	}
}

// invalidEdits turn a line's JSON into text encoding/json rejects, each
// at a place where a lenient reader could still find a line's meaning:
// escapes that Go has and JSON has not, a bad \u, an integer with a
// leading zero, a trailing or missing comma.
var invalidEdits = []struct {
	name string
	edit func(line string) string
}{
	{"a Go hex escape", func(l string) string { return escapeFirstLetter(l, `\x%02x`) }},
	{"a Go octal escape", func(l string) string { return escapeFirstLetter(l, `\%03o`) }},
	{"a Go long escape", func(l string) string { return escapeFirstLetter(l, `\U%08x`) }},
	{"a bad \\u digit", func(l string) string { return strings.Replace(l, `"action":"`, `"action":"\u00G1`, 1) }},
	{"a short \\u", func(l string) string { return strings.Replace(l, `"action":"`, `"action":"\u41`, 1) }},
	{"a Go-only short escape", func(l string) string { return strings.Replace(l, `"action":"`, `"action":"\a`, 1) }},
	{"a raw tab after an escape", func(l string) string { return strings.Replace(l, `"action":"`, `"action":"\u0041`+"\t", 1) }},
	{"a leading zero", func(l string) string { return replaceInt(l, "0") }},
	{"a leading zero on a negative", func(l string) string { return replaceInt(l, "-0") }},
	{"a trailing comma in an array", func(l string) string { return strings.Replace(l, `"]`, `",]`, 1) }},
	{"a missing comma in an array", func(l string) string {
		i := strings.Index(l, `"read":[`)
		if i < 0 {
			return l
		}
		j := i + strings.Index(l[i:], `]`)
		return l[:i] + strings.Replace(l[i:j], `","`, `" "`, 1) + l[j:]
	}},
	{"a trailing comma in an object", func(l string) string { return strings.Replace(l, `}`, `,}`, 1) }},
	{"a missing comma in an object", func(l string) string { return strings.Replace(l, `,"`, ` "`, 1) }},
}

// escapeFirstLetter writes the first letter of the line's action with a
// Go escape of the given form.
func escapeFirstLetter(l, form string) string {
	i := strings.Index(l, `"action":"`) + len(`"action":"`)
	return l[:i] + fmt.Sprintf(form, l[i]) + l[i+1:]
}

// replaceInt prefixes the first integer value of the line (after a ':')
// with prefix, in place of its sign.
func replaceInt(l, prefix string) string {
	for i := 0; i+1 < len(l); i++ {
		if l[i] != ':' {
			continue
		}
		j := i + 1
		neg := l[j] == '-'
		if neg {
			j++
		}
		if j < len(l) && l[j] >= '1' && l[j] <= '9' {
			if neg && prefix == "0" || !neg && prefix == "-0" {
				continue
			}
			return l[:i+1] + prefix + l[j:]
		}
	}
	return l
}

// A line that is not JSON, where the change leaves text a lenient reader
// might still take, is an input error naming that line: never accepted,
// never a panic.
func TestInvalidJSONIsAnInputError(t *testing.T) {
	cfg := formatConfigs()["names"]
	var texts []string
	for seed := uint64(1); seed <= 4; seed++ {
		lines, _ := traceOf(t, cfg, seed, 200)
		texts = append(texts, string(encode(t, cfg, lines)))
	}
	for _, ed := range invalidEdits {
		t.Run(ed.name, func(t *testing.T) {
			tried := 0
			for _, text := range texts {
				all := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
				for i := 1; i < len(all) && tried < 12; i++ {
					bad := ed.edit(all[i])
					if bad == all[i] {
						continue
					}
					require.False(t, json.Valid([]byte(bad)), "%s: still JSON: %s", ed.name, bad)
					trace := strings.Join(all[:i], "\n") + "\n" + bad + "\n" + strings.Join(all[i+1:], "\n") + "\n"
					_, err := tracecheck.Check(strings.NewReader(trace), "t.ndjson", nil, tracecheck.Options{})
					var ie *tracecheck.InputError
					require.True(t, errors.As(err, &ie), "%s: want an input error, got %v", bad, err)
					require.Equal(t, i+1, ie.Line, "%v", err)
					tried++
				}
			}
			require.Positive(t, tried, "the walks have a line to change")
		})
	}
}
